package vault

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
)

// CheckWritable returns nil when this binary may write the vault: its
// format (FormatVersion: Config.Version, read again when the config file
// changed since) is at most config.FormatVersion. Otherwise it is
// errs.VaultFormatNewer naming the vault's format and the newest this
// binary writes. It costs a stat of the config file while that is
// unchanged. Every write path calls it first (Transact, TransactOnce,
// SyncRemote); a write that goes around them (a state file) calls it
// itself.
func (v *Vault) CheckWritable() error {
	if err := config.CheckWritable(v.FormatVersion()); err != nil {
		return FormatError(err)
	}
	return nil
}

// FormatVersion is the vault's format version as its config file
// (.sessionvault/config.yaml) declares it now: Config.Version, read again
// (the version only, config.VersionOf) when the file's stat identity — its
// size, modification time and file (inode) — is not the one it had when
// the version was last read, and Config.Version updated. A process that
// keeps a vault open (`mcp`, `serve`) so sees a `migrate` that arrived by
// `remote sync` or `git pull`. While the file is unchanged it costs one
// stat. A file that cannot be read or parsed (missing for a moment while
// git replaces it, conflict markers) leaves the version last read.
// Callers that decide by the format read it here, not in Config.Version.
func (v *Vault) FormatVersion() int {
	v.format.mu.Lock()
	defer v.format.mu.Unlock()
	fi := statConfig(v.Root)
	if sameStat(fi, v.format.fi) {
		return v.Config.Version
	}
	v.format.fi = fi
	if fi == nil {
		return v.Config.Version
	}
	data, err := os.ReadFile(filepath.Join(v.Root, filepath.FromSlash(config.File)))
	if err != nil {
		return v.Config.Version
	}
	if version, err := config.VersionOf(data); err == nil {
		v.Config.Version = version
	}
	return v.Config.Version
}

// formatStamp is what FormatVersion knows of the vault's config file: fi,
// its stat taken before Config.Version was last read from it (nil: the
// file was not there, or was not looked at yet). mu serialises
// FormatVersion's reading and its update of Config.Version.
type formatStamp struct {
	mu sync.Mutex
	fi os.FileInfo
}

// statConfig stats the config file of the vault at root, nil when it
// cannot be. The file's identity is taken now: on Windows os.SameFile
// would otherwise look it up later, by path, when the path may name
// another file.
func statConfig(root string) os.FileInfo {
	fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(config.File)))
	if err != nil {
		return nil
	}
	os.SameFile(fi, fi)
	return fi
}

// sameStat reports whether two stats of the config file show the same
// version of it: the same file, size and modification time, or no file
// both times.
func sameStat(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
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
// binary writes (CheckWritable fails): reading works, writing does not. The
// format is FormatVersion's: read again when the config file changed.
func (v *Vault) NewerFormat() bool { return v.FormatVersion() > config.FormatVersion }

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

// CheckMergeFormat is the format check of `sessionvault merge-driver`,
// which git runs, in the work tree's top folder dir, for each note both
// sides of a merge changed: errs.VaultFormatNewer when a side's config
// (.sessionvault/config.yaml) declares a format newer than this binary
// writes, so that the note is not merged by this binary's rules; nil when
// none does, or none can be read. The sides are what git leaves to read
// while the merge runs: `git merge` and `git pull` name each commit merged
// in by a GITHEAD_<commit> variable in environ (MERGE_HEAD is written only
// once the merge stops, and is read too when present); HEAD is the other
// side in a `git pull --rebase` (the commits replayed are this machine's).
func CheckMergeFormat(dir string, environ []string) error {
	type side struct{ rev, name string }
	sides := []side{{"HEAD", "HEAD"}, {"MERGE_HEAD", "MERGE_HEAD"}}
	for _, kv := range environ {
		k, name, _ := strings.Cut(kv, "=")
		commit, ok := strings.CutPrefix(k, "GITHEAD_")
		if !ok || !isHex(commit) {
			continue
		}
		if name == "" || name == commit {
			name = commit[:12]
		}
		sides = append(sides, side{commit, name})
	}
	var in strings.Builder
	for _, s := range sides {
		in.WriteString(s.rev + ":" + config.File + "\n")
	}
	cmd := gitCmd(dir, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := runGit(cmd, []string{"cat-file", "--batch"})
	if err != nil {
		return nil // not in a repository git can read: nothing to check
	}
	for _, s := range sides {
		// Each answer is "<object> <type> <size>\n<content>\n", or
		// "<name> missing\n" (ambiguous, ...) for a side without the file.
		header, rest, ok := bytes.Cut(out, []byte("\n"))
		if !ok {
			return nil
		}
		out = rest
		f := strings.Fields(string(header))
		if len(f) != 3 {
			continue
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size < 0 || size+1 > len(rest) {
			return nil
		}
		data := rest[:size]
		out = rest[size+1:]
		if f[1] != "blob" {
			continue
		}
		version, err := config.VersionOf(data)
		if err != nil || version <= config.FormatVersion {
			continue
		}
		what := "the vault merged in (" + s.name + ")"
		if s.rev == "HEAD" {
			what = "the vault at HEAD"
		}
		return newerFormat(&config.NewerFormatError{What: what, Version: version}).With("side", s.name)
	}
	return nil
}

// isHex reports whether s is a full commit hash (SHA-1 or SHA-256).
func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
