package markdown

import "testing"

func TestSectionsRangesIgnoreCodeFences(t *testing.T) {
	src := []byte("# Title\n\nintro\n\n## A\n\ntext\n```\n## not a heading\n```\n### A.1\n\nsub\n## B ##\r\n\n| x | y |\n|---|---|\n| 1 | a \\| b |\n")
	d := New().Parse(src)
	var titles []string
	for _, s := range d.Sections {
		titles = append(titles, s.Title)
	}
	if len(d.Sections) != 4 || titles[1] != "A" || titles[3] != "B" {
		t.Fatalf("sections = %q", titles)
	}
	a, _ := d.Find(2, "a")
	b, _ := d.Find(2, "B")
	if a.End != b.Start || string(src[a.Start:a.BodyStart]) != "## A\n" || a.Line != 5 {
		t.Errorf("section A = %+v (B starts at %d)", a, b.Start)
	}
	if b.End != len(src) || string(src[b.Start:b.BodyStart]) != "## B ##\r\n" {
		t.Errorf("section B = %+v", b)
	}
	tables := d.TablesIn(b.BodyStart, b.End)
	if len(tables) != 1 {
		t.Fatalf("tables in B = %d", len(tables))
	}
	rows := TableRows(src, tables[0])
	if len(rows) != 2 || rows[1][1] != "a | b" {
		t.Errorf("rows = %q", rows)
	}
}

// Wikilinks are found as Obsidian shows them: targets without alias or
// fragment, none from code or embeds.
func TestWikiLinks(t *testing.T) {
	src := []byte("## Phase 1\n\n- [ ] [[demo/tasks/login|login]] build it\n- [[demo/tasks/api#Resume prompt]] and [[#Local]]\n\n`[[demo/tasks/in-code]]`\n\n```\n[[demo/tasks/fenced]]\n```\n\n![[diagram.png]] | [[plain]]\n")
	got := New().WikiLinks(src)
	want := []string{"demo/tasks/login", "demo/tasks/api", "plain"}
	if len(got) != len(want) {
		t.Fatalf("links = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("links = %q, want %q", got, want)
		}
	}
}
