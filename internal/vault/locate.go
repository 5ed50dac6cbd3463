package vault

import (
	"errors"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
)

// Locate says which vault folder serves a command run for the folder cwd
// ("" = the working directory), and for which project: config.Locate (the
// --vault flag, $SESSIONVAULT_VAULT, this machine's repository link, the
// folders above cwd), with "no vault" as errs.VaultNotFound ("no vault at or
// above CWD ...; run `sessionvault init` or pass --vault"). The folder is not
// checked to be a vault: Open does that.
func Locate(flagDir, project, cwd string) (string, string, error) {
	dir, project, err := config.Locate(flagDir, project, cwd)
	return dir, project, noVault(err)
}

// IsVault reports whether dir holds a vault (a .sessionvault folder).
func IsVault(dir string) bool { return config.IsVault(dir) }

// Find returns the nearest folder at or above start that is a vault, or an
// errs.VaultNotFound error.
func Find(start string) (string, error) {
	dir, err := config.FindVault(start)
	return dir, noVault(err)
}

// noVault gives config.ErrNoVault its error code, keeping the message.
func noVault(err error) error {
	if errors.Is(err, config.ErrNoVault) {
		return &errs.Error{Code: errs.VaultNotFound, Message: err.Error(), Err: err}
	}
	return err
}
