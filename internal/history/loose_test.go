package history

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestLooseObjectsReadAsGoGitReadsThem: every loose tree, commit and blob of
// a repository that Commit and git both wrote (executable files, a
// symlink, a submodule entry, nested folders, names with spaces) reads the
// same through readLoose as through go-git's storage; a loose object cut
// short is an error naming its file; packed objects are still read.
func TestLooseObjectsReadAsGoGitReadsThem(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "alpha\n")
	writeFile(t, dir, "deep/er/folder/b c.md", "beta\n")
	writeFile(t, dir, "run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.md", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, r, "ours", "a.md", "deep/er/folder/b c.md", "run.sh", "link")
	git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("ab", 20)+",sub")
	git(t, dir, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-q", "-m", "git's")
	writeFile(t, dir, "a.md", "alpha 2\n")
	mustCommit(t, r, "ours again", "a.md")

	objects := strings.Fields(git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname):%(objecttype)"))
	kinds := map[string]int{}
	for _, o := range objects {
		id, kind, _ := strings.Cut(o, ":")
		h := plumbing.NewHash(id)
		kinds[kind]++
		typ, data, ok, err := r.readLoose(h)
		if err != nil || !ok || typ.String() != kind {
			t.Fatalf("readLoose(%s): %v %v %v; want a %s", id, typ, ok, err, kind)
		}
		data = bytes.Clone(data)
		o, err := r.object(typ, h)
		if err != nil {
			t.Fatal(err)
		}
		switch kind {
		case "tree":
			got, err := parseTree(h, data)
			if err != nil {
				t.Fatal(err)
			}
			var want object.Tree
			if err := want.Decode(o); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want.Entries) {
				t.Fatalf("tree %s:\n%+v\nwant (go-git):\n%+v", id, got, want.Entries)
			}
		case "commit":
			got, err := commitTree(h, data)
			var want object.Commit
			if err := want.Decode(o); err != nil {
				t.Fatal(err)
			}
			if err != nil || got != want.TreeHash {
				t.Fatalf("commit %s: tree %s (%v), want %s", id, got, err, want.TreeHash)
			}
		case "blob":
			got, err := r.readBlob(h)
			if err != nil {
				t.Fatal(err)
			}
			rd, _ := o.Reader()
			var want bytes.Buffer
			if _, err := want.ReadFrom(rd); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("blob %s: %q, want %q", id, got, want.Bytes())
			}
		}
	}
	if kinds["tree"] < 5 || kinds["commit"] != 3 || kinds["blob"] < 5 {
		t.Fatalf("objects read: %v", kinds)
	}

	head := plumbing.NewHash(strings.TrimSpace(git(t, dir, "rev-parse", "HEAD^{tree}")))
	hex := head.String()
	path := filepath.Join(dir, ".git", "objects", hex[:2], hex[2:])
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.tree(head); err == nil || !strings.Contains(err.Error(), filepath.Join(hex[:2], hex[2:])) {
		t.Fatalf("a tree cut short: %v; want an error naming its file", err)
	}
	if err := os.WriteFile(path, good, 0o444); err != nil {
		t.Fatal(err)
	}

	git(t, dir, "gc", "-q", "--prune=now")
	packed, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := packed.readLoose(head); ok || err != nil {
		t.Fatalf("after git gc, the root tree is still loose (%v)", err)
	}
	if got, err := packed.ReadFile("deep/er/folder/b c.md"); err != nil || string(got) != "beta\n" {
		t.Fatalf("ReadFile from a pack: %q, %v", got, err)
	}
}
