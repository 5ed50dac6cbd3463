package session

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestServiceKeepsTheNotesItParsed: the same bytes of a note are parsed
// once and shared by the Docs opened on them, and nothing a caller does to
// one Doc, to the bytes it passed or to the bytes it got back changes
// another Doc or a later parse.
func TestServiceKeepsTheNotesItParsed(t *testing.T) {
	ts, _ := testService(t)
	s := New(ts.V)
	rel := "demo/" + DecisionsNote
	data := []byte("---\nstatus: open\ntags: [a, b]\n---\n# Memo\n\n## Notes\n\n- first\n")
	orig := bytes.Clone(data)

	d1, err := s.ParseDoc(rel, data)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := s.ParseDoc(rel, bytes.Clone(data))
	if err != nil {
		t.Fatal(err)
	}
	if d1.Note != d2.Note {
		t.Fatal("the same bytes were parsed twice")
	}
	if other, err := s.ParseDoc("demo/"+HistoryNote, data); err != nil || other.Note == d1.Note || other.Note.Path() != "demo/"+HistoryNote {
		t.Fatalf("another note with the same bytes shares the parse (%v)", err)
	}
	data[4] = 'X' // the caller reuses its buffer
	if !bytes.Equal(d1.Note.Bytes(), orig) {
		t.Fatal("the parse changed with the caller's buffer")
	}

	s1, _ := d1.Section("Notes")
	d1.Edit(s1.End, s1.End, "- second\n")
	d1.Set("status", "done")
	out, err := d1.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := "---\nstatus: done\ntags: [a, b]\n---\n# Memo\n\n## Notes\n\n- first\n- second\n"
	if string(out) != want {
		t.Fatalf("edited:\n%s\nwant:\n%s", out, want)
	}
	if b, err := d2.Bytes(); err != nil || !bytes.Equal(b, orig) {
		t.Fatalf("d1's edits reached d2: %q (%v)", b, err)
	}
	written := bytes.Clone(out)
	out[5] = 'Y' // the caller changes what it got
	d3, err := s.ParseDoc(rel, written)
	if err != nil {
		t.Fatal(err)
	}
	if got := d3.Prop("status"); got != "done" || !bytes.Equal(d3.Note.Bytes(), written) {
		t.Fatalf("the new version as kept: status %q, bytes %q", got, d3.Note.Bytes())
	}
	if changed, err := s.ParseDoc(rel, out); err != nil || changed.Prop("status") != "" {
		t.Fatalf("the bytes the caller changed read back with the parse of the bytes it was given (status %q, %v)", changed.Prop("status"), err)
	}
	d4, err := s.ParseDoc(rel, written)
	if err != nil || d4.Note != d3.Note {
		t.Fatalf("the new version was parsed again (%v)", err)
	}
	if d0, err := s.ParseDoc(rel, orig); err != nil || d0.Prop("status") != "open" || !bytes.Equal(d0.Note.Bytes(), orig) {
		t.Fatalf("the first version as kept: %v", err)
	}
}

// TestServiceShareParsesAcrossGoroutines: tool calls of the MCP server read
// the same state at once through the Service's memo, while updates write
// it (go test -race finds a parse filled on first use by two goroutines).
func TestServiceShareParsesAcrossGoroutines(t *testing.T) {
	ts, _ := testService(t)
	s := New(ts.V)
	s.Now = ts.Now
	if _, err := s.Start(StartOptions{Project: "demo", Objective: "Share"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(s.V.Root, "demo", CurrentStateNote))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				d, err := s.WithOp("").ParseDoc("demo/"+CurrentStateNote, bytes.Clone(data))
				if err != nil {
					t.Error(err)
					return
				}
				if d.Note.LineOf(0) != 1 {
					t.Error("line of offset 0 is not 1")
				}
				if _, err := s.WithOp("").Current("demo"); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for j := 0; j < 5; j++ {
		if _, err := s.Update(UpdateOptions{Project: "demo", Message: "more"}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}
