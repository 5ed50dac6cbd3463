package config

import "github.com/sessionvault/sessionvault/internal/vaultloc"

// ErrNoVault is wrapped by FindVault's and Locate's error when no folder at
// or above the start holds a vault.
var ErrNoVault = vaultloc.ErrNoVault

// IsVault reports whether dir holds a vault (a .sessionvault folder).
func IsVault(dir string) bool { return vaultloc.IsVault(dir) }

// FindVault returns the nearest folder at or above start that is a vault.
// When there is none the error wraps ErrNoVault and says, naming start, how
// to make or name one.
func FindVault(start string) (string, error) { return vaultloc.FindVault(start) }

// Locate says which vault folder serves a command run for the folder cwd
// ("" = the working directory), and for which project (vaultloc.Locate,
// with this machine's repository links read from repos.yaml: LinkFor). A
// links file that does not parse counts as no links.
func Locate(flagDir, project, cwd string) (string, string, error) {
	return vaultloc.Locate(flagDir, project, cwd, func(dir string) (vaultloc.Link, bool, error) {
		l, ok := LinkFor(dir)
		return l, ok, nil
	})
}
