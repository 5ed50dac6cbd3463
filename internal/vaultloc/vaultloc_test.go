package vaultloc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Locate takes the flag, then $SESSIONVAULT_VAULT, then the code
// repository's link (its project filling an empty one), then the nearest
// vault above; a source of links that cannot answer stops it.
func TestLocateOrder(t *testing.T) {
	t.Setenv("SESSIONVAULT_VAULT", "")
	base := t.TempDir()
	vault := filepath.Join(base, "v")
	code := filepath.Join(vault, "code", "sub")
	if err := os.MkdirAll(filepath.Join(vault, Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(code, 0o755)
	none := func(string) (Link, bool, error) { return Link{}, false, nil }
	linked := func(string) (Link, bool, error) { return Link{Vault: "/linked", Project: "billing"}, true, nil }
	stale := func(string) (Link, bool, error) { return Link{}, false, ErrMirrorStale }
	for _, c := range []struct {
		name, flag, env, project string
		links                    LinkSource
		dir, proj                string
		err                      error
	}{
		{"flag", "/flag", "/env", "", linked, "/flag", "", nil},
		{"env", "", "/env", "x", linked, "/env", "x", nil},
		{"link", "", "", "", linked, "/linked", "billing", nil},
		{"link, project given", "", "", "demo", linked, "/linked", "demo", nil},
		{"nearest vault", "", "", "", none, vault, "", nil},
		{"links unknown", "", "", "", stale, "", "", ErrMirrorStale},
	} {
		t.Setenv("SESSIONVAULT_VAULT", c.env)
		dir, proj, err := Locate(c.flag, c.project, code, c.links)
		if dir != c.dir || proj != c.proj || !errors.Is(err, c.err) {
			t.Errorf("%s: %q %q %v; want %q %q %v", c.name, dir, proj, err, c.dir, c.proj, c.err)
		}
	}
	t.Setenv("SESSIONVAULT_VAULT", "")
	if _, _, err := Locate("", "", base, none); !errors.Is(err, ErrNoVault) {
		t.Errorf("no vault above: %v", err)
	}
}

// The mirror answers for the links file's bytes it was written from, and
// for none other: an edit of the file makes it stale until written again.
func TestMirrorFollowsTheLinksFile(t *testing.T) {
	dir := t.TempDir()
	yamlPath := filepath.Join(dir, "repos.yaml")
	if links, err := MirroredLinks(yamlPath); err != nil || links != nil {
		t.Errorf("no links file: %v %v; want no links", links, err)
	}
	data := []byte("/code:\n  vault: /v\n")
	os.WriteFile(yamlPath, data, 0o644)
	if _, err := MirroredLinks(yamlPath); !errors.Is(err, ErrMirrorStale) {
		t.Errorf("no mirror: %v; want ErrMirrorStale", err)
	}
	code := filepath.Join(dir, "code")
	os.MkdirAll(filepath.Join(code, "sub"), 0o755)
	if err := WriteMirror(yamlPath, data, map[string]Link{CanonicalDir(code): {Vault: "/v"}}); err != nil {
		t.Fatal(err)
	}
	links, err := MirroredLinks(yamlPath)
	if l, ok := LinkIn(links, filepath.Join(code, "sub")); err != nil || !ok || l.Vault != "/v" {
		t.Errorf("mirror: %v %v %v", l, ok, err)
	}
	os.WriteFile(yamlPath, []byte("/code:\n  vault: /w\n"), 0o644) // same size: a hand edit
	if _, err := MirroredLinks(yamlPath); !errors.Is(err, ErrMirrorStale) {
		t.Errorf("after an edit of the links file: %v; want ErrMirrorStale", err)
	}
}
