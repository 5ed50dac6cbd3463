package notemerge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

func TestMerge3(t *testing.T) {
	fm := "---\nstatus: active\nupdated: 2026-11-22T10:00:00Z\nversion: 3\n---\n"
	for _, c := range []struct{ name, o, a, b, want string }{
		{"both append at the end", "x\n", "x\na\n", "x\nb\n", "x\na\nb\n"},
		{"one side only", "x\ny\n", "x\ny\n", "x\nb\ny\n", "x\nb\ny\n"},
		{"same change", "x\n", "x\nsame\n", "x\nsame\n", "x\nsame\n"},
		{"separate places", "1\n2\n3\n4\n5\n", "1\nA\n2\n3\n4\n5\n", "1\n2\n3\n4\n5\nB\n", "1\nA\n2\n3\n4\n5\nB\n"},
		{"modify and delete apart", "1\n2\n3\n4\n", "1\n2a\n3\n4\n", "1\n2\n3\n", "1\n2a\n3\n"},
		{"both modify one line", "1\n2\n3\n", "1\n2a\n3\n", "1\n2b\n3\n", "1\n2a\n2b\n3\n"},
		{"insert before a replaced line", "1\n2\n3\n", "1\nnew\n2\n3\n", "1\n2b\n3\n", "1\nnew\n2b\n3\n"},
		{"no final newline", "x", "x\na\n", "x\nb", "x\na\nb"},
		{"front matter apart", fm + "# T\n", strings.Replace(fm, "version: 3", "version: 4", 1) + "# T\nengine\n", strings.Replace(fm, "status: active", "status: active\nmine: yes", 1) + "# T\n", "---\nstatus: active\nmine: yes\nupdated: 2026-11-22T10:00:00Z\nversion: 4\n---\n# T\nengine\n"},
		{"front matter conflict keeps prefer's", fm + "# T\n",
			strings.Replace(fm, "updated: 2026-11-22T10:00:00Z", "updated: 2026-11-22T09:00:00Z", 1) + "# T\nperson\n",
			strings.Replace(fm, "updated: 2026-11-22T10:00:00Z", "updated: 2026-11-22T11:00:00Z", 1) + "# T\nengine\n",
			strings.Replace(fm, "updated: 2026-11-22T10:00:00Z", "updated: 2026-11-22T11:00:00Z", 1) + "# T\nperson\nengine\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := string(Merge3([]byte(c.o), []byte(c.a), []byte(c.b), []byte(c.b), nil))
			if got != c.want {
				t.Fatalf("Merge3:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// A writer that read the engine's new version and saved it with an edit of
// its own adds the engine's entry too: merged, the entry is there once,
// however the two line diffs place it (an entry put into an empty section
// is "blank, entry" after the heading to one diff, "entry, blank" after the
// blank line to the other), and no blank line is left over.
func TestMerge3EntryBothSidesAdded(t *testing.T) {
	o := "# Current session\n\n## Updates\n\n## Decisions\n\n## Blockers\n\n## End checklist\n\n- [ ] one ^e-1\n"
	engine := strings.Replace(o, "## Decisions\n\n", "## Decisions\n\n- d one ^d-1\n\n", 1)
	person := strings.Replace(engine, "## Updates\n", "## Updates\n\n- u one ^u-1\n", 1)
	want := strings.Replace(engine, "## Updates\n", "## Updates\n\n- u one ^u-1\n", 1)
	for _, c := range []struct{ name, a, b string }{
		{"theirs first", person, engine},
		{"ours first", engine, person},
		{"theirs with a person line", person + "- person line\n", engine},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := string(Merge3([]byte(o), []byte(c.a), []byte(c.b), []byte(c.b), nil))
			if n := strings.Count(got, "^d-1"); n != 1 {
				t.Fatalf("^d-1 %d times:\n%s", n, got)
			}
			if w := want + strings.TrimPrefix(c.a, person); c.a != engine && got != w {
				t.Fatalf("Merge3:\n%s\nwant:\n%s", got, w)
			}
			if c.a == engine && got != want {
				t.Fatalf("Merge3:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// Lines either side adds are never lost, whatever the two sides did.
func TestMerge3KeepsEveryAddedLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		var o []string
		for i := 0; i < rng.IntN(30); i++ {
			o = append(o, fmt.Sprintf("base %d", i))
		}
		edit := func(side string) ([]string, []string) {
			x := append([]string(nil), o...)
			var added []string
			for k := 0; k < 1+rng.IntN(4); k++ {
				l := fmt.Sprintf("%s added %d", side, k)
				at := rng.IntN(len(x) + 1)
				x = append(x[:at], append([]string{l}, x[at:]...)...)
				added = append(added, l)
			}
			if len(x) > 2 && rng.IntN(3) == 0 { // drop an ancestor line
				for i, l := range x {
					if strings.HasPrefix(l, "base") {
						x = append(x[:i], x[i+1:]...)
						break
					}
				}
			}
			return x, added
		}
		a, addedA := edit("a")
		b, addedB := edit("b")
		got := string(Merge3(joinLines(o), joinLines(a), joinLines(b), joinLines(b), nil))
		lines := strings.Split(got, "\n")
		count := map[string]int{}
		for _, l := range lines {
			count[l]++
		}
		for _, l := range append(addedA, addedB...) {
			if count[l] != 1 {
				t.Fatalf("round %d: %q appears %d times\no=%q\na=%q\nb=%q\ngot=%q", round, l, count[l], o, a, b, got)
			}
		}
	}
}

// The other writer's version never deletes an entry line the engine's
// version still has; the engine's own deletions go through.
func TestMerge3KeepsEntriesAnotherWriterDropped(t *testing.T) {
	o := "# T\n- a ^u-1\n- b ^u-2\ntext\n"
	stale := "# T\ntext\nperson line\n" // a buffer saved without the entries
	if got := string(Merge3([]byte(o), []byte(stale), []byte(o), []byte(o), nil)); got != "# T\n- a ^u-1\n- b ^u-2\ntext\nperson line\n" {
		t.Fatalf("restore: %q", got)
	}
	mine := "# T\n- a ^u-1\n- b ^u-2\n- c ^u-3\ntext\n"
	if got := string(Merge3([]byte(o), []byte(stale), []byte(mine), []byte(mine), nil)); got != "# T\n- a ^u-1\n- b ^u-2\n- c ^u-3\ntext\nperson line\n" {
		t.Fatalf("merge: %q", got)
	}
	ended := "# T\ntext\n" // the engine reset the section itself
	if got := string(Merge3([]byte(o), []byte(o+"more\n"), []byte(ended), []byte(ended), nil)); got != "# T\ntext\nmore\n" {
		t.Fatalf("the engine's own deletion: %q", got)
	}
}

// Both versions added a block after an ancestor that ends in a blank line:
// the block is in the merge once, with each side's new lines (a blank last
// line does not show that b kept o's end).
func TestMerge3BothAddedAfterATrailingBlankLine(t *testing.T) {
	o := "## Next steps\n\n"
	a := o + "\n## Notes\n\n- line 1\n- line 2\n- line 3\n"
	b := o + "\n## Notes\n\n- line 1\n- line 2\n- line 4\n"
	got := string(Merge3([]byte(o), []byte(a), []byte(b), []byte(b), nil))
	if want := o + "\n## Notes\n\n- line 1\n- line 2\n- line 3\n- line 4\n"; got != want {
		t.Fatalf("merge:\n%s\nwant:\n%s", got, want)
	}
}

// blockID reads a block id as the expression `\s\^([A-Za-z0-9][A-Za-z0-9-]*)\s*$`
// does, on lines made of the characters that matter.
func TestBlockIDMatchesTheExpression(t *testing.T) {
	re := regexp.MustCompile(`\s\^([A-Za-z0-9][A-Za-z0-9-]*)\s*$`)
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{" ", "\t", "\n", "\r", "^", "-", "a", "Z", "7", "x", "·", "_", "\v"}
	for i := 0; i < 200_000; i++ {
		var b strings.Builder
		for k := 0; k < rng.IntN(12); k++ {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		l := b.String()
		want := ""
		if m := re.FindStringSubmatch(l); m != nil {
			want = m[1]
		}
		if got := blockID(l); got != want {
			t.Fatalf("blockID(%q) = %q, want %q", l, got, want)
		}
	}
}

// A line of text both sides added at different places (one side's save
// made from a copy the other had merged already, beside a line that moved)
// is there once, where a put it; a line one side holds twice stays twice.
func TestMerge3AddsALineBothAddedOnce(t *testing.T) {
	o := "# N\n\n- e1 ^u-1\n\np1\nX\n"
	a := "# N\n\n- e1 ^u-1\n\np1\nX\np2\np3\np5\n"
	b := "# N\n\n- e1 ^u-1\n- e2 ^u-2\n\np1\np2\np3\nX\np4\np4\n"
	got := string(Merge3([]byte(o), []byte(a), []byte(b), []byte(b), nil))
	if want := "# N\n\n- e1 ^u-1\n- e2 ^u-2\n\np1\nX\np2\np3\np5\np4\np4\n"; got != want {
		t.Fatalf("Merge3:\n%s\nwant:\n%s", got, want)
	}
}

// Blank lines and markup alone that both sides add are each side's own:
// a "---" both put in is kept twice.
func TestMerge3KeepsMarkupBothAdded(t *testing.T) {
	o := "# T\nx\n"
	a := "# T\n---\nx\n"
	b := "# T\nx\n---\n"
	if got, want := string(Merge3([]byte(o), []byte(a), []byte(b), []byte(b), nil)), "# T\n---\nx\n---\n"; got != want {
		t.Errorf("Merge3 = %q, want %q", got, want)
	}
}

// Whatever both sides do, every line either added is in the merge, and a
// line both added (at any places) is there once (twice at most on the quick
// path).
func TestMerge3KeepsLinesBothAddedOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 500; round++ {
		var o []string
		for i := 0; i < rng.IntN(20); i++ {
			o = append(o, fmt.Sprintf("base %d", i))
		}
		shared := []string{}
		for k := 0; k < 1+rng.IntN(3); k++ {
			shared = append(shared, fmt.Sprintf("both %d", k))
		}
		edit := func(side string) ([]string, []string) {
			x := append([]string(nil), o...)
			own := []string{}
			for k := 0; k < rng.IntN(3); k++ {
				own = append(own, fmt.Sprintf("%s own %d", side, k))
			}
			for _, l := range append(append([]string(nil), shared...), own...) {
				at := rng.IntN(len(x) + 1)
				x = append(x[:at], append([]string{l}, x[at:]...)...)
			}
			if len(x) > 2 && rng.IntN(3) == 0 { // move an ancestor line
				for i, l := range x {
					if strings.HasPrefix(l, "base") {
						x = append(x[:i], x[i+1:]...)
						at := rng.IntN(len(x) + 1)
						x = append(x[:at], append([]string{l}, x[at:]...)...)
						break
					}
				}
			}
			return x, own
		}
		a, ownA := edit("a")
		b, ownB := edit("b")
		// The quick path (a only appended lines, b ends as o does) puts
		// a's lines after b's without comparing lines: a line both
		// added can be there twice, never lost.
		quick := len(o) > 0 && bytes.HasPrefix(joinLines(a), joinLines(o)) && bytes.HasSuffix(joinLines(b), []byte(lastOf(o)))
		got := string(Merge3(joinLines(o), joinLines(a), joinLines(b), joinLines(b), nil))
		count := map[string]int{}
		for _, l := range strings.Split(got, "\n") {
			count[l]++
		}
		for _, l := range append(append(shared, ownA...), ownB...) {
			if want := 1; count[l] != want && !(quick && count[l] == 2) {
				t.Fatalf("round %d: %q appears %d times\no=%q\na=%q\nb=%q\ngot=%q", round, l, count[l], o, a, b, got)
			}
		}
		for _, l := range o { // both sides kept every ancestor line (one may have moved it)
			if count[l] == 0 {
				t.Fatalf("round %d: %q is lost\no=%q\na=%q\nb=%q\ngot=%q", round, l, o, a, b, got)
			}
		}
	}
}

// A line one side moved is no line it added: the other side's new copy of
// it stays, and so does the moved one; a line a put back because protect
// keeps it is no line a added either. Each case: how many times the line
// is in the merge.
func TestMerge3MovedLinesAreNoAdditions(t *testing.T) {
	link := func(l []byte) bool { return IsEntryLine(l) || strings.HasPrefix(string(l), "- [[") }
	for _, c := range []struct {
		name, o, a, b, line string
		protect             func([]byte) bool
		want                int
	}{
		{"b moves X, a adds X", "X\nM\nN\n", "X\nM\nQ\nN\nX\n", "M\nX\nN\n", "X", nil, 2},
		{"b moves X, a adds X at the end", "X\nM\nN\nR\n", "X\nM\nN\nQ\nR\nX\n", "M\nX\nN\nR\n", "X", nil, 2},
		{"a moves X, b adds X", "X\nM\nN\n", "M\nX\nN\n", "X\nM\nN\nP\nX\n", "X", nil, 2},
		{"a rewrites lines around X, b adds X", "h\nP\nX\nR\nz\n", "h\nX\nP2\nz\n", "h\nP\nX\nR\nz\nX\n", "X", nil, 2},
		{"a's deleted link put back, b adds it elsewhere", "## S1\n- [[Foo]]\n## S2\nz\n", "## S1\n## S2\nz\n",
			"## S1\n- [[Foo]]\n## S2\n- [[Foo]]\nz\n", "- [[Foo]]", link, 2},
		{"front matter lists each gain one", "---\ntags:\n  - a\nrelated:\n  - r\n---\nbody\n",
			"---\ntags:\n  - a\n  - x\nrelated:\n  - r\n---\nbody\n", "---\ntags:\n  - a\nrelated:\n  - r\n  - x\n---\nbody\nmore\n", "  - x", nil, 2},
		{"both add a line, CRLF on one side", "x\r\np1\r\nz\r\n", "x\r\np1\r\nz\r\np2\r\n", "x\r\np2\np1\r\nz\r\nq\n", "p2", nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := string(Merge3([]byte(c.o), []byte(c.a), []byte(c.b), []byte(c.b), c.protect))
			n := 0
			for _, l := range strings.Split(got, "\n") {
				if strings.TrimRight(l, "\r") == c.line {
					n++
				}
			}
			if n != c.want {
				t.Fatalf("%q is in the merge %d times, want %d:\n%q", c.line, n, c.want, got)
			}
		})
	}
}

// lastOf is the last of lines with its line ending, "" for none.
func lastOf(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1] + "\n"
}

// joinLines is lines as a note's text, each ended by "\n"; nil for none.
func joinLines(lines []string) []byte {
	if len(lines) == 0 {
		return nil
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}
