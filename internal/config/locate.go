package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNoVault is wrapped by FindVault's and Locate's error when no folder at
// or above the start holds a vault.
var ErrNoVault = errors.New("no vault")

// IsVault reports whether dir holds a vault (a .sessionvault folder).
func IsVault(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, Dir))
	return err == nil && fi.IsDir()
}

// FindVault returns the nearest folder at or above start that is a vault.
// When there is none the error wraps ErrNoVault and says, naming start, how
// to make or name one.
func FindVault(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for {
		if IsVault(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w at or above %s (no .sessionvault folder); run `sessionvault init` or pass --vault", ErrNoVault, start)
		}
		dir = parent
	}
}

// Locate says which vault folder serves a command run for the folder cwd
// ("" = the working directory), and for which project. It is the one place
// the CLI, the MCP server and the hooks (the lean hook binary too) find the
// vault. The sources, first one that gives a folder wins:
//
//  1. flagDir (the --vault flag), when not empty;
//  2. $SESSIONVAULT_VAULT, when not empty;
//  3. this machine's link for the code repository holding cwd (LinkFor: the
//     per-user repos.yaml that `sessionvault hooks install` writes); the
//     link's project replaces an empty project;
//  4. the nearest folder at or above cwd holding .sessionvault/ (FindVault).
//
// project is returned as given unless a link fills it in ("" still means the
// vault's default project). The working directory is read, and the links
// file and the folders above cwd are looked at, only when flagDir and
// $SESSIONVAULT_VAULT are both empty. The folder is not checked to be a
// vault. When no source gives a folder, the error is FindVault's (wrapping
// ErrNoVault), or the working directory's when it cannot be read; the folder
// returned is then "".
func Locate(flagDir, project, cwd string) (string, string, error) {
	if flagDir != "" {
		return flagDir, project, nil
	}
	if dir := os.Getenv("SESSIONVAULT_VAULT"); dir != "" {
		return dir, project, nil
	}
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", project, err
		}
		cwd = wd
	}
	if l, ok := LinkFor(cwd); ok {
		if project == "" {
			project = l.Project
		}
		return l.Vault, project, nil
	}
	dir, err := FindVault(cwd)
	if err != nil {
		return "", project, err
	}
	return dir, project, nil
}
