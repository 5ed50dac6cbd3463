package vault

import (
	"errors"
	"os"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
)

// CheckWritable returns nil when this binary may write the vault: its
// format (Config.Version, read when the vault was opened) is at most
// config.FormatVersion. Otherwise it is errs.VaultFormatNewer naming the
// vault's format and the newest this binary writes. No file is read.
// Every write path calls it first (Transact, TransactOnce, SyncRemote); a
// write that goes around them (a state file) calls it itself.
func (v *Vault) CheckWritable() error {
	if err := config.CheckWritable(v.Config.Version); err != nil {
		return FormatError(err)
	}
	return nil
}

// FormatError gives a *config.NewerFormatError in err's chain its code,
// errs.VaultFormatNewer (message unchanged; details "format", the vault's,
// and "writes_up_to", this binary's); other errors come back as they are.
func FormatError(err error) error {
	var nf *config.NewerFormatError
	if !errors.As(err, &nf) {
		return err
	}
	return newerFormat(nf)
}

// newerFormat is nf as an errs.VaultFormatNewer error.
func newerFormat(nf *config.NewerFormatError) *errs.Error {
	return (&errs.Error{Code: errs.VaultFormatNewer, Message: nf.Error(), Err: nf}).
		With("format", nf.Version).With("writes_up_to", config.FormatVersion)
}

// NewerFormat reports whether the vault is in a format newer than this
// binary writes (CheckWritable fails): reading works, writing does not.
func (v *Vault) NewerFormat() bool { return v.Config.Version > config.FormatVersion }

// checkFetchedFormat refuses to merge what `remote sync` fetched from
// remote (FETCH_HEAD) when the config it holds declares a format newer
// than this binary writes: errs.VaultFormatNewer naming that format and
// this binary's. A fetched tree without a config, or with one that does
// not parse, passes (the merge deals with it as before).
func (v *Vault) checkFetchedFormat(remote string) error {
	fetched, err := v.git("rev-parse", "FETCH_HEAD")
	if err != nil {
		return errs.Wrap(errs.GitWriteFailed, err, "reading what was fetched")
	}
	data, err := v.ReadAt(fetched, config.File)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	version, err := config.VersionOf(data)
	if err != nil || version <= config.FormatVersion {
		return nil
	}
	return newerFormat(&config.NewerFormatError{What: "the vault on the remote " + remote, Version: version}).
		With("remote", remote).With("fetched", fetched)
}
