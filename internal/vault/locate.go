package vault

import (
	"os"

	"github.com/sessionvault/sessionvault/internal/config"
)

// Locate says which vault folder serves a command run for the folder cwd
// ("" = the working directory), and for which project. It is the one place
// the CLI, the MCP server and the hooks find the vault. The sources, first
// one that gives a folder wins:
//
//  1. flagDir (the --vault flag), when not empty;
//  2. $SESSIONVAULT_VAULT, when not empty;
//  3. this machine's link for the code repository holding cwd (config.LinkFor:
//     the per-user repos.yaml that `sessionvault hooks install` writes); the
//     link's project replaces an empty project;
//  4. the nearest folder at or above cwd holding .sessionvault/ (Find).
//
// project is returned as given unless a link fills it in ("" still means the
// vault's default project). The working directory is read, and the links
// file and the folders above cwd are looked at, only when flagDir and
// $SESSIONVAULT_VAULT are both empty. The folder is not checked to be a
// vault: Open does that. When no source gives a folder, the error is Find's,
// an errs.VaultNotFound ("no vault at or above CWD ...; run `sessionvault
// init` or pass --vault"), or the working directory's when it cannot be read;
// the folder returned is then "".
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
	if l, ok := config.LinkFor(cwd); ok {
		if project == "" {
			project = l.Project
		}
		return l.Vault, project, nil
	}
	dir, err := Find(cwd)
	if err != nil {
		return "", project, err
	}
	return dir, project, nil
}
