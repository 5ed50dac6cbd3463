package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/integrity"
)

// A Service keeps the protocol it read (the MCP server's many calls): the
// same document is neither parsed nor read from the cache file again; a
// change to the document is seen at the next call; and a caller that
// changes the protocol it was given changes nothing a later call returns.
func TestServiceKeepsTheProtocolItRead(t *testing.T) {
	ts, _ := testService(t)
	s := New(ts.V)
	s.Now = ts.Now
	p1, err := s.Protocol("demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(p1.Start) == 0 {
		t.Fatal("the default protocol has no start checklist")
	}
	n, step := len(p1.Start), p1.Start[0].Step
	p1.Start[0].Step = "changed by the caller"
	p1.Start = p1.Start[:0]

	cache := integrity.ProtocolCacheFile("demo")
	if _, err := s.V.ReadState(cache); err != nil {
		t.Fatalf("the first read left no protocol cache: %v", err)
	}
	if err := os.Remove(filepath.Join(s.V.Root, ".sessionvault", "state", cache)); err != nil {
		t.Fatal(err)
	}
	p2, err := s.Protocol("demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Start) != n || p2.Start[0].Step != step {
		t.Fatalf("second read: %d start steps, the first %q; want %d, %q", len(p2.Start), p2.Start[0].Step, n, step)
	}
	if _, err := s.V.ReadState(cache); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the second read parsed the document again (cache file: %v)", err)
	}
	p2.Start[0].Step = "changed by the caller"
	if p, err := s.Protocol("demo"); err != nil || p.Start[0].Step != step {
		t.Fatalf("third read: %v, the first start step %q; want %q", err, p.Start[0].Step, step)
	}

	doc := filepath.Join(s.V.Root, "SESSION-PROTOCOL.md")
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), step) {
		t.Fatalf("%s does not hold the step %q", doc, step)
	}
	if err := os.WriteFile(doc, []byte(strings.Replace(string(data), step, "A step a person renamed", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	p3, err := s.Protocol("demo")
	if err != nil {
		t.Fatal(err)
	}
	if p3.Start[0].Step != "A step a person renamed" {
		t.Fatalf("after the document changed, the first start step is %q", p3.Start[0].Step)
	}
}
