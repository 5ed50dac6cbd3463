package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra/doc"
)

// The generated references in docs/ (cli/, mcp-tools.md, errors.md) are what
// the code makes now: a command, flag, tool or error code changed without
// `make docs` fails here.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	t.Parallel()
	fresh := t.TempDir()
	if err := WriteDocs(fresh, "", DocWriters{Markdown: doc.GenMarkdownTree}); err != nil {
		t.Fatal(err)
	}
	docs := filepath.Join("..", "..", "docs")
	stale := 0
	filepath.WalkDir(fresh, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(fresh, p)
		want, _ := os.ReadFile(p)
		if got, err := os.ReadFile(filepath.Join(docs, rel)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/%s is not what the code makes now", filepath.ToSlash(rel))
			stale++
		}
		return nil
	})
	ents, _ := os.ReadDir(filepath.Join(docs, "cli"))
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(fresh, "cli", e.Name())); err != nil {
			t.Errorf("docs/cli/%s documents no command", e.Name())
			stale++
		}
	}
	if stale > 0 {
		t.Errorf("%d generated docs are stale: run `make docs`", stale)
	}
}

// shBlocks returns the ```sh blocks of a markdown file, in order
// (```console blocks are shown, not run).
func shBlocks(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case !in && strings.TrimSpace(l) == "```sh":
			in = true
		case in && strings.TrimSpace(l) == "```":
			in = false
		case in:
			out.WriteString(l + "\n")
		}
	}
	return out.String()
}

// Every command of the README's and the getting-started guide's shell blocks
// runs as written, in a fresh shell with a fresh HOME and the binaries on
// PATH, in order; the sessions they run end COMPLETE.
func TestReadmeCommandsRun(t *testing.T) {
	t.Parallel()
	bin := robustBinary(t)
	for _, doc := range []string{"README.md", "docs/getting-started.md"} {
		t.Run(doc, func(t *testing.T) {
			script := shBlocks(t, filepath.Join("..", "..", filepath.FromSlash(doc)))
			if !strings.Contains(script, "sessionvault") {
				t.Fatalf("%s has no sh block that runs sessionvault", doc)
			}
			home := t.TempDir()
			pathDir := filepath.Join(home, "bin")
			if err := os.MkdirAll(pathDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(bin, filepath.Join(pathDir, "sessionvault")); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
			cmd.Dir = home
			cmd.Env = append(gitEnv(home), "PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"), "SESSIONVAULT_CONFIG_DIR=")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: the commands fail: %v\n%s", doc, err, out)
			}
			if n := strings.Count(script, "sessionvault end"); n > 0 && strings.Count(string(out), "in phase COMPLETE") != n {
				t.Errorf("%s: %d sessions ended, not all COMPLETE:\n%s", doc, n, out)
			}
		})
	}
}

// Every relative link of the README and docs/ leads to a file that exists.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), filepath.FromSlash(target))); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, target)
			}
		}
	}
}

// `make demo` (scripts/demo.sh on a copy of vault-example/) runs through and
// its session ends COMPLETE, with no evidence recorded by hand.
func TestDemoEndsComplete(t *testing.T) {
	t.Parallel()
	bin := robustBinary(t)
	home := t.TempDir()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "demo.sh"), bin)
	cmd.Env = append(gitEnv(home), "PATH="+os.Getenv("PATH"), "TMPDIR="+home, "SESSIONVAULT_CONFIG_DIR=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the demo fails: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "in phase COMPLETE") || strings.Contains(string(out), "in phase VIOLATION") {
		t.Errorf("the demo's session does not end COMPLETE:\n%s", out)
	}
	if strings.Contains(string(out), "evidence record c-") && strings.Contains(string(out), "$ sessionvault evidence record") {
		t.Errorf("the demo records evidence by hand:\n%s", out)
	}
}
