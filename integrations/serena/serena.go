// Package serena connects a vault project to Serena's memory tools: it links
// a code repository's .serena/memories folder to the project folder (Serena
// follows directory symlinks), and imports an existing memories tree into
// the vault byte for byte.
package serena

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sessionvault/sessionvault/internal/vault"
)

// Link makes repo/.serena/memories a symlink to projectDir and keeps it out
// of the repository's commits (ExcludeLink). It is a no-op when the link is
// already there. A dangling link (made on another machine, or to a vault
// that moved) is replaced. An existing memories folder with files is not
// replaced: the error says to import it first; nor is a link to another
// folder that exists.
func Link(repo, projectDir string) (created bool, err error) {
	created, err = link(repo, projectDir)
	if err != nil {
		return created, err
	}
	return created, ExcludeLink(repo)
}

// ExcludeLink adds .serena/memories to the repository's .git/info/exclude
// (once), so the machine-specific link is never committed. A folder that is
// not a git repository is left alone.
func ExcludeLink(repo string) error {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--git-path", "info/exclude").Output()
	if err != nil {
		return nil // not a git repository
	}
	p := strings.TrimSpace(string(out))
	if !filepath.IsAbs(p) {
		p = filepath.Join(repo, p)
	}
	const line = "/.serena/memories"
	data, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == line {
			return nil
		}
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, "# the Serena memories link to the sessionvault vault (per machine: sessionvault link serena)\n"+line+"\n"...)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func link(repo, projectDir string) (created bool, err error) {
	target, err := filepath.Abs(projectDir)
	if err != nil {
		return false, err
	}
	mem := filepath.Join(repo, ".serena", "memories")
	fi, err := os.Lstat(mem)
	switch {
	case err == nil && fi.Mode()&os.ModeSymlink != 0:
		cur, err := os.Readlink(mem)
		if err != nil {
			return false, err
		}
		if cur == target {
			return false, nil
		}
		if _, err := os.Stat(mem); err == nil {
			return false, fmt.Errorf("%s already links to %s; remove the link to point it at %s", mem, cur, target)
		}
		// Dangling: repaired.
		if err := os.Remove(mem); err != nil {
			return false, err
		}
	case err == nil && fi.IsDir():
		ents, err := os.ReadDir(mem)
		if err != nil {
			return false, err
		}
		if len(ents) > 0 {
			return false, fmt.Errorf("%s is a folder with %d entries; import it first (`sessionvault import serena %s`), then move it away and run init again", mem, len(ents), mem)
		}
		if err := os.Remove(mem); err != nil {
			return false, err
		}
	case err == nil:
		return false, fmt.Errorf("%s exists and is not a folder", mem)
	case !errors.Is(err, os.ErrNotExist):
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(mem), 0o755); err != nil {
		return false, err
	}
	if err := os.Symlink(target, mem); err != nil {
		return false, fmt.Errorf("linking %s to %s: %w", mem, target, err)
	}
	return true, nil
}

// Memory is one memory file found under a memories folder.
type Memory struct {
	Rel  string // path relative to the memories folder, slash-separated, e.g. "ci/ci-runner.md"
	Data []byte
}

// Skipped is a file the import left out, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Report summarises an import.
type Report struct {
	Found     int       `json:"found"`     // files under the folder
	Imported  int       `json:"imported"`  // written into the vault
	Unchanged int       `json:"unchanged"` // already in the vault, byte-identical
	Skipped   []Skipped `json:"skipped"`
}

// reserved names a memory may not take: the engine's canonical notes.
var reserved = map[string]bool{
	"session-current-state.md": true, "session-history.md": true,
	"session-violations-log.md": true, "session-decisions.md": true,
}

// Scan reads every file under dir (a .serena/memories folder, or a folder
// holding one). Serena lists only *.md files: other files, and hidden folders
// such as .obsidian, are skipped with the reason.
func Scan(dir string) ([]Memory, []Skipped, int, error) {
	if fi, err := os.Stat(filepath.Join(dir, ".serena", "memories")); err == nil && fi.IsDir() {
		dir = filepath.Join(dir, ".serena", "memories")
	}
	// The memories folder may be a symlink (init --serena makes one), and so
	// may a topic folder inside it: Serena follows both, so the scan does too
	// (each real folder once, so a link cycle ends).
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, nil, 0, err
	}
	var mems []Memory
	var skipped []Skipped
	found := 0
	seen := map[string]bool{}
	var walk func(real, prefix string) error
	walk = func(real, prefix string) error {
		if seen[real] {
			return nil
		}
		seen[real] = true
		return filepath.WalkDir(real, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(real, p)
			rel = filepath.ToSlash(filepath.Join(prefix, rel))
			if e.IsDir() {
				return nil
			}
			if e.Type()&fs.ModeSymlink != 0 {
				target, err := filepath.EvalSymlinks(p)
				if err != nil {
					skipped = append(skipped, Skipped{Path: rel, Reason: "a symlink that leads nowhere"})
					return nil
				}
				if fi, err := os.Stat(target); err == nil && fi.IsDir() {
					if hiddenSegment(rel) {
						return nil
					}
					return walk(target, rel)
				}
			}
			found++
			if hiddenSegment(rel) {
				skipped = append(skipped, Skipped{Path: rel, Reason: "in a hidden folder (such as .obsidian, the source vault's settings): not a memory"})
				return nil
			}
			if !strings.HasSuffix(rel, ".md") {
				skipped = append(skipped, Skipped{Path: rel, Reason: "not a .md file: Serena lists only markdown memories"})
				return nil
			}
			if reserved[filepath.Base(rel)] && !strings.Contains(rel, "/") {
				skipped = append(skipped, Skipped{Path: rel, Reason: "has the name of a canonical sessionvault note, which it would replace"})
				return nil
			}
			if err := vault.CheckPath(rel); err != nil {
				skipped = append(skipped, Skipped{Path: rel, Reason: err.Error()})
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			mems = append(mems, Memory{Rel: rel, Data: data})
			return nil
		})
	}
	err = walk(root, "")
	sort.Slice(mems, func(i, j int) bool { return mems[i].Rel < mems[j].Rel })
	return mems, skipped, found, err
}

// Import copies memories into the vault's project folder, byte for byte and
// under their own names, in one commit. A memory already present with the
// same bytes is unchanged; one present with other bytes is skipped (the
// vault's copy wins; nothing is overwritten). Running it twice changes
// nothing the second time.
func Import(v *vault.Vault, project, dir string, progress func(done, total int)) (Report, vault.Result, error) {
	mems, skipped, found, err := Scan(dir)
	if err != nil {
		return Report{}, vault.Result{}, fmt.Errorf("reading %s: %w", dir, err)
	}
	rep := Report{Found: found, Skipped: skipped}
	res, err := v.Transact(func(tx *vault.Tx) (vault.Change, error) {
		for i, m := range mems {
			rel := project + "/" + m.Rel
			cur, err := tx.Read(rel)
			switch {
			case err == nil && bytes.Equal(cur, m.Data):
				rep.Unchanged++
			case err == nil:
				rep.Skipped = append(rep.Skipped, Skipped{Path: m.Rel, Reason: "the vault already has a different " + rel + "; kept the vault's copy"})
			case errors.Is(err, os.ErrNotExist):
				if err := tx.Write(rel, m.Data); err != nil {
					return vault.Change{}, err
				}
				rep.Imported++
			default:
				return vault.Change{}, err
			}
			if progress != nil {
				progress(i+1, len(mems))
			}
		}
		return vault.Change{Operation: "import", Summary: fmt.Sprintf("%d Serena memories from %s", rep.Imported, filepath.Base(dir))}, nil
	})
	return rep, res, err
}

func hiddenSegment(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}
