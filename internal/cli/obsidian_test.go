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
	t.Parallel()
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

// vaultLinks checks every wikilink in the notes under root: its target must
// be a path from the vault root that is exactly one note, so that Obsidian
// resolves it to that note whatever other notes share its name. It returns
// the number of links checked.
func vaultLinks(t *testing.T, root string) int {
	t.Helper()
	notes := map[string]bool{}
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.IsDir() && strings.HasPrefix(e.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			notes[filepath.ToSlash(strings.TrimSuffix(rel, ".md"))] = true
		}
		return nil
	})
	linkRe := regexp.MustCompile(`\[\[([^\]|#]+)`)
	links := 0
	for n := range notes {
		data, _ := os.ReadFile(filepath.Join(root, n+".md"))
		for _, m := range linkRe.FindAllStringSubmatch(string(data), -1) {
			links++
			if target := strings.TrimSuffix(strings.TrimSpace(m[1]), ".md"); !notes[target] {
				t.Errorf("%s.md: [[%s]] is not the path of a note from the vault root", n, target)
			}
		}
	}
	return links
}

// Two projects in one vault with sessions of the same id and decisions of
// the same title: every link the engine writes names one note from the vault
// root, while the sessions are active (their decisions link to the current
// state, where an active session lives) and after they end (to the record).
// The session property is the session's id in every note.
func TestLinksAreWrittenFromTheVaultRoot(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "vault")
	mustRun(t, dir, "init", dir, "--project", "web")
	mustRun(t, dir, "init", dir, "--project", "api")
	for _, p := range []string{"web", "api"} {
		mustRun(t, dir, "start", "--project", p, "--objective", "Links in "+p)
		mustRun(t, dir, "decide", "--project", p, "--title", "Use flock", "--choice", "flock", "--rationale", "simple")
	}
	if vaultLinks(t, dir) == 0 {
		t.Fatal("no wikilinks found")
	}
	id := frontMatter(t, filepath.Join(dir, "web", "session-current-state.md"))["session"]
	if other := frontMatter(t, filepath.Join(dir, "api", "session-current-state.md"))["session"]; other != id {
		t.Fatalf("the two projects' sessions should share an id for this test: %s, %s", id, other)
	}
	decisions, _ := filepath.Glob(filepath.Join(dir, "web", "decisions", "*.md"))
	if len(decisions) != 1 {
		t.Fatalf("decisions of web: %v", decisions)
	}
	if s := frontMatter(t, decisions[0])["session"]; s != id {
		t.Errorf("a decision note's session is %q, want the session's id %q, as in the current state", s, id)
	}
	data, _ := os.ReadFile(decisions[0])
	if want := "Decided in [[web/session-current-state|" + id + "]]."; !strings.Contains(string(data), want) {
		t.Errorf("while the session is active, its decision should say %q:\n%s", want, data)
	}

	mustRun(t, dir, "end", "--project", "web", "--summary", "done")
	mustRun(t, dir, "start", "--project", "web", "--objective", "Next", "--continue", id)
	vaultLinks(t, dir)
	data, _ = os.ReadFile(decisions[0])
	if want := "Decided in [[web/sessions/" + id + "|" + id + "]]."; !strings.Contains(string(data), want) {
		t.Errorf("after the session ended, its decision should say %q:\n%s", want, data)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "web", "session-decisions.md"))
	if !strings.Contains(string(log), "(session [[web/sessions/"+id+"|"+id+"]])") {
		t.Errorf("the decisions log should link the ended session's record:\n%s", log)
	}
	state := frontMatter(t, filepath.Join(dir, "web", "session-current-state.md"))
	if want := "[[web/sessions/" + id + "|" + id + "]]"; state["continues"] != want || state["last_session"] != want {
		t.Errorf("continues = %q, last_session = %q, want %q", state["continues"], state["last_session"], want)
	}
	var st struct {
		Data session.State `json:"data"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, dir, "status", "--project", "web", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Data.Continues != id || st.Data.LastSession != id {
		t.Errorf("status --json: continues %q, last_session %q, want the id %q", st.Data.Continues, st.Data.LastSession, id)
	}
	// api's decision still links to api's current state, not to web's record.
	apiDec, _ := filepath.Glob(filepath.Join(dir, "api", "decisions", "*.md"))
	data, _ = os.ReadFile(apiDec[0])
	if !strings.Contains(string(data), "Decided in [[api/session-current-state|"+id+"]].") {
		t.Errorf("ending web's session changed api's decision:\n%s", data)
	}
	assertClean(t, dir)
}

// vault-example opened as an Obsidian vault: the property types, a base of
// sessions and one of decisions, and every wikilink naming exactly one note
// by its path from the vault root.
func TestVaultExampleIsObsidianNative(t *testing.T) {
	t.Parallel()
	root := "../../vault-example"
	if _, err := os.Stat(filepath.Join(root, ".obsidian", "types.json")); err != nil {
		t.Error(err)
	}
	for _, b := range []string{"demo/sessions.base", "demo/decisions.base"} {
		if _, err := os.Stat(filepath.Join(root, b)); err != nil {
			t.Error(err)
		}
	}
	if vaultLinks(t, root) == 0 {
		t.Error("no wikilinks found")
	}
}

// A violations log written before links were written from the vault root
// ("### [[sessions/<id>]]", by an earlier version) keeps one heading per
// session: the session's next violations go under the old heading.
func TestViolationsUnderAnOldStyleHeading(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Old headings")
	id := frontMatter(t, filepath.Join(v, "demo", "session-current-state.md"))["session"]
	logPath := filepath.Join(v, "demo", "session-violations-log.md")
	data, _ := os.ReadFile(logPath)
	old := "\n### [[sessions/" + id + "]]\n\n| Timestamp | Phase | Requirement | Severity | Recovery |\n|-----------|-------|-------------|----------|----------|\n| 2026-11-22T10:00:00Z | START | MUST Read the current state (c-1) | CRITICAL | read it |\n"
	os.WriteFile(logPath, append(data, old...), 0o644)
	if _, _, code := run(t, v, "phase", "advance"); code == 0 {
		t.Fatal("phase advance passed with nothing ticked")
	}
	data, _ = os.ReadFile(logPath)
	if n := strings.Count(string(data), "\n### "); n != 1 {
		t.Errorf("%d session headings, want the old one only:\n%s", n, data)
	}
	if n := strings.Count(string(data), "| START | MUST "); n != 2 {
		t.Errorf("%d violation rows, want the old one and the new one (c-1: the state not read):\n%s", n, data)
	}
	assertClean(t, v)
}
