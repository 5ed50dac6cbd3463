package vault

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
)

// Locate takes the first source that gives a folder: --vault,
// $SESSIONVAULT_VAULT, this machine's link for the repository, the nearest
// vault above; a link's project fills in only an empty project.
func TestLocateOrder(t *testing.T) {
	root := t.TempDir()
	t.Setenv("SESSIONVAULT_CONFIG_DIR", filepath.Join(root, "cfg"))
	t.Setenv("SESSIONVAULT_VAULT", "")
	above := filepath.Join(root, "above")
	code := filepath.Join(above, "code")
	sub := filepath.Join(code, "sub")
	linked := filepath.Join(root, "linked")
	for _, d := range []string{filepath.Join(above, config.Dir), sub, linked} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	check := func(name, flagDir, project, cwd, wantDir, wantProject string) {
		t.Helper()
		dir, p, err := Locate(flagDir, project, cwd)
		if err != nil || dir != wantDir || p != wantProject {
			t.Errorf("%s: got %q, %q, %v; want %q, %q", name, dir, p, err, wantDir, wantProject)
		}
	}
	check("nearest vault above", "", "", sub, above, "")
	if _, _, err := config.SaveRepoLink(code, config.RepoLink{Vault: linked, Project: "demo"}); err != nil {
		t.Fatal(err)
	}
	check("link before the vault above", "", "", sub, linked, "demo")
	check("a given project stays", "", "other", sub, linked, "other")
	t.Setenv("SESSIONVAULT_VAULT", "/env")
	check("environment before the link", "", "", sub, "/env", "")
	check("flag first", "/flag", "p", sub, "/flag", "p")

	t.Setenv("SESSIONVAULT_VAULT", "")
	dir, p, err := Locate("", "p", root)
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != errs.VaultNotFound || dir != "" || p != "p" {
		t.Errorf("no vault: got %q, %q, %v; want errs.VaultNotFound", dir, p, err)
	}
}
