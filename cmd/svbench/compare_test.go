package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeJSON writes data to a file in a test's folder and returns its path.
func writeJSON(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompareReports(t *testing.T) {
	old := writeJSON(t, "old.json", `{"figures":[
		{"name":"quiet/update-in-process-fsync/p50","unit":"ms","value":4},
		{"name":"quiet/ratio/git-add-commit-over-update-fsync","unit":"x","value":10},
		{"name":"curve/vault-notes/100000/p50","unit":"ms","value":9},
		{"name":"memory/hook-edit/maxrss","unit":"KiB","value":0}],
		"meta":{"notes":10000,"commits":5000,"rounds":40}}`)
	cur := writeJSON(t, "new.json", `{"figures":[
		{"name":"quiet/update-in-process-fsync/p50","unit":"ms","value":5},
		{"name":"quiet/ratio/git-add-commit-over-update-fsync","unit":"x","value":8},
		{"name":"memory/hook-edit/maxrss","unit":"KiB","value":12000},
		{"name":"memory/update-cli/maxrss","unit":"KiB","value":30000}],
		"meta":{"notes":10000,"commits":5000,"rounds":20}}`)
	var out bytes.Buffer
	if err := compare([]string{old, cur}, &out); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	for name, want := range map[string][]string{
		"quiet/update-in-process-fsync/p50":            {"4.000 ms", "5.000 ms", "+25.0%", "1.25x"},
		"quiet/ratio/git-add-commit-over-update-fsync": {"10.00x", "8.00x", "-20.0%", "0.80x"},
		"curve/vault-notes/100000/p50":                 {"9.000 ms", "only in OLD"},
		"memory/update-cli/maxrss":                     {"30000 KiB", "only in NEW"},
		"memory/hook-edit/maxrss":                      {"old is 0"},
	} {
		l, ok := lines[name]
		if !ok {
			t.Errorf("no line for %s in:\n%s", name, out.String())
			continue
		}
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Errorf("line for %s = %q, want it to contain %q", name, l, w)
			}
		}
	}
	if !strings.Contains(out.String(), "differ in rounds (40, 20)") {
		t.Errorf("no note that the rounds differ in:\n%s", out.String())
	}
	// Order: NEW's figures in its order, then those only in OLD.
	if i, j := strings.Index(out.String(), "memory/update-cli"), strings.Index(out.String(), "curve/vault-notes"); i < 0 || j < i {
		t.Errorf("figures only in OLD should come after NEW's:\n%s", out.String())
	}
}

func TestReadReportRejects(t *testing.T) {
	for name, data := range map[string]string{
		"duplicate": `{"figures":[{"name":"a","unit":"ms","value":1},{"name":"a","unit":"ms","value":2}]}`,
		"unnamed":   `{"figures":[{"unit":"ms","value":1}]}`,
		"not json":  `figures: []`,
	} {
		if _, err := readReport(writeJSON(t, "r.json", data)); err == nil {
			t.Errorf("%s: readReport accepted %s", name, data)
		}
	}
	if _, err := readReport(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: got %v, want a wrapped not-exist error", err)
	}
	if err := compare([]string{"only-one.json"}, &bytes.Buffer{}); err == nil {
		t.Error("compare with one file did not fail")
	}
}

func TestReportRoundTrip(t *testing.T) {
	var figs figures
	figs.dur("quiet/update-cli/p50", 12_345_678) // 12.345678 ms: kept to the microsecond
	figs.ratio("quiet/ratio/x", 0)               // no denominator: left out
	figs.kib("memory/hook-edit/maxrss", 2048)
	p := filepath.Join(t.TempDir(), "bench.json")
	if err := writeReport(p, Report{Figures: figs.list, Meta: Meta{Notes: 7}}); err != nil {
		t.Fatal(err)
	}
	r, err := readReport(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Figure{{"quiet/update-cli/p50", "ms", 12.345}, {"memory/hook-edit/maxrss", "KiB", 2048}}
	if len(r.Figures) != len(want) || r.Meta.Notes != 7 {
		t.Fatalf("read back %+v, want figures %+v and 7 notes", r, want)
	}
	for i, f := range want {
		if r.Figures[i] != f {
			t.Errorf("figure %d = %+v, want %+v", i, r.Figures[i], f)
		}
	}
}

func TestInsertBulkUpdates(t *testing.T) {
	note := []byte("## Updates\n\n- 2026-11-22T09:00:00Z · note · first ^u-1\n\n## Next\n")
	got, err := insertBulkUpdates(note, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := "## Updates\n\n- 2026-11-22T09:00:00Z · note · first ^u-1\n" +
		"- 2026-11-22T10:00:00Z · note · bulk update number 2 with a few more words ^u-2\n" +
		"- 2026-11-22T10:00:00Z · note · bulk update number 3 with a few more words ^u-3\n\n## Next\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := insertBulkUpdates([]byte("no updates\n"), 3); err == nil {
		t.Error("a note without the first update was accepted")
	}
}
