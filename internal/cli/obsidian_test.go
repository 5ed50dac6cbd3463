package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/session"
)

// baseFilter evaluates the subset of the Bases filter language the engine's
// bases use — and/or/not objects, file.inFolder("…"), 'prop == "value"' —
// on one note (its vault path and front matter).
func baseFilter(t *testing.T, f any, path string, props map[string]string) bool {
	t.Helper()
	switch f := f.(type) {
	case string:
		if m := regexp.MustCompile(`^file\.inFolder\("([^"]*)"\)$`).FindStringSubmatch(f); m != nil {
			return strings.HasPrefix(path, m[1]+"/")
		}
		if m := regexp.MustCompile(`^(\w+) == "([^"]*)"$`).FindStringSubmatch(f); m != nil {
			return props[m[1]] == m[2]
		}
		t.Fatalf("filter %q is outside the subset this test evaluates", f)
	case map[string]any:
		for op, list := range f {
			items, _ := list.([]any)
			switch op {
			case "and":
				for _, it := range items {
					if !baseFilter(t, it, path, props) {
						return false
					}
				}
				return true
			case "or":
				for _, it := range items {
					if baseFilter(t, it, path, props) {
						return true
					}
				}
				return false
			case "not":
				for _, it := range items {
					if baseFilter(t, it, path, props) {
						return false
					}
				}
				return true
			}
		}
	}
	t.Fatalf("filter %v is not a filter", f)
	return false
}

func frontMatter(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range n.Keys() {
		out[k], _ = n.Get(k)
		if _, ok := n.Get(k); !ok {
			out[k] = strings.Join(n.GetList(k), ",")
		}
	}
	return out
}

// init declares the engine's property types for Obsidian (merged into an
// existing .obsidian/types.json) and writes a base of the project's sessions
// and one of its decisions, whose filters select exactly the engine's notes
// of that kind and whose columns are properties those notes have.
func TestObsidianTypesAndBases(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	os.MkdirAll(filepath.Join(dir, ".obsidian"), 0o755)
	os.WriteFile(filepath.Join(dir, ".obsidian", "types.json"), []byte(`{"types": {"progress": "text", "mine": "checkbox"}}`), 0o644)
	mustRun(t, dir, "init", dir, "--project", "demo")
	var types struct {
		Types map[string]string `json:"types"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, ".obsidian", "types.json"))
	if err := json.Unmarshal(data, &types); err != nil {
		t.Fatal(err)
	}
	if types.Types["mine"] != "checkbox" || types.Types["progress"] != "text" {
		t.Errorf("the vault's own types were not kept: %v", types.Types)
	}
	if types.Types["started"] != "datetime" || types.Types["duration_minutes"] != "number" || types.Types["alternatives"] != "multitext" {
		t.Errorf("the engine's types are missing: %v", types.Types)
	}
	idle, _ := os.ReadFile(filepath.Join(dir, "demo", "session-current-state.md"))
	if strings.Contains(string(idle), "started: \"\"") {
		t.Errorf("the idle state writes an empty string into a datetime property")
	}

	mustRun(t, dir, "start", "--objective", "Bases")
	mustRun(t, dir, "decide", "--title", "Pick", "--choice", "A", "--rationale", "why")
	mustRun(t, dir, "end", "--summary", "done")
	mustRun(t, dir, "start", "--objective", "Second")

	for _, c := range []struct {
		base string
		want func(rel string, props map[string]string) bool
	}{
		{"demo/sessions.base", func(rel string, p map[string]string) bool {
			return p["type"] == "session" || p["type"] == "session-state"
		}},
		{"demo/decisions.base", func(rel string, p map[string]string) bool { return p["type"] == "decision" }},
	} {
		data, err := os.ReadFile(filepath.Join(dir, c.base))
		if err != nil {
			t.Fatal(err)
		}
		var base struct {
			Filters  any               `yaml:"filters"`
			Formulas map[string]string `yaml:"formulas"`
			Views    []struct {
				Order []string `yaml:"order"`
				Sort  []struct {
					Property string `yaml:"property"`
				} `yaml:"sort"`
			} `yaml:"views"`
		}
		if err := yaml.Unmarshal(data, &base); err != nil {
			t.Fatalf("%s: %v", c.base, err)
		}
		selected := 0
		filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".md") || strings.Contains(p, "/.") {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			props := frontMatter(t, p)
			got, want := baseFilter(t, base.Filters, filepath.ToSlash(rel), props), c.want(rel, props)
			if got != want {
				t.Errorf("%s selects %s: %v, want %v", c.base, rel, got, want)
			}
			if !got {
				return nil
			}
			selected++
			for _, v := range base.Views {
				cols := append([]string(nil), v.Order...)
				for _, s := range v.Sort {
					cols = append(cols, s.Property)
				}
				for _, col := range cols {
					if strings.HasPrefix(col, "file.") || strings.HasPrefix(col, "formula.") {
						continue
					}
					if _, ok := session.PropertyTypes[col]; !ok {
						t.Errorf("%s shows %q, a property the engine has no type for", c.base, col)
					}
					if _, ok := props[col]; !ok && props["type"] != "session-state" {
						t.Errorf("%s shows %q, which %s does not have", c.base, col, rel)
					}
				}
			}
			return nil
		})
		if selected == 0 {
			t.Errorf("%s selects no note", c.base)
		}
		for name, f := range base.Formulas {
			for _, id := range regexp.MustCompile(`[a-z_]+`).FindAllString(f, -1) {
				if id == "if" || id == "to" || id == "toFixed" {
					continue
				}
				if _, ok := session.PropertyTypes[id]; !ok && !strings.Contains(f, id+"(") {
					t.Errorf("%s: formula %s names %q, not a property the engine writes", c.base, name, id)
				}
			}
		}
	}
}

// vault-example opened as an Obsidian vault: the property types, a base of
// sessions and one of decisions, and no wikilink resolving to two notes
// (Obsidian resolves [[a/b]] to the note whose path ends in a/b.md). A link
// resolves to no note only when it names the active session's record, which
// exists once the session ends (issue 10 keeps this open).
func TestVaultExampleIsObsidianNative(t *testing.T) {
	root := "../../vault-example"
	active := "sessions/" + frontMatter(t, filepath.Join(root, "demo", "session-current-state.md"))["session"]
	if _, err := os.Stat(filepath.Join(root, ".obsidian", "types.json")); err != nil {
		t.Error(err)
	}
	for _, b := range []string{"demo/sessions.base", "demo/decisions.base"} {
		if _, err := os.Stat(filepath.Join(root, b)); err != nil {
			t.Error(err)
		}
	}
	var notes []string
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			notes = append(notes, filepath.ToSlash(strings.TrimSuffix(rel, ".md")))
		}
		return nil
	})
	linkRe := regexp.MustCompile(`\[\[([^\]|#]+)`)
	links := 0
	for _, n := range notes {
		data, _ := os.ReadFile(filepath.Join(root, n+".md"))
		for _, m := range linkRe.FindAllStringSubmatch(string(data), -1) {
			target := strings.TrimSuffix(strings.TrimSpace(m[1]), ".md")
			matches := 0
			for _, other := range notes {
				if other == target || strings.HasSuffix(other, "/"+target) {
					matches++
				}
			}
			links++
			if matches > 1 || matches == 0 && target != active {
				t.Errorf("%s.md: [[%s]] resolves to %d notes", n, target, matches)
			}
		}
	}
	if links == 0 {
		t.Error("no wikilinks found")
	}
}
