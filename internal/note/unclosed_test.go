package note

import (
	"errors"
	"strings"
	"testing"
)

// A quote a person left open in Obsidian is reported on the line that opens
// it, not on the line where the YAML parser noticed, and with no line number
// of the front matter's own in the message.
func TestUnclosedQuoteNamesItsLine(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
	}{
		{"double", "---\ntype: s\nobjective: \"bench\nmode: coding\ntags:\n  - a\n---\nbody\n", 3},
		{"single", "---\ntype: s\nsummary: 'it''s\nmode: coding\n---\nbody\n", 3},
		{"in a list", "---\ntags:\n  - \"a\n  - b\nmode: x\n---\n", 3},
	} {
		_, err := Parse("n.md", []byte(tc.src))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: %v, want a ParseError", tc.name, err)
		}
		if pe.Line != tc.line || !strings.Contains(pe.Msg, "opens a quote it does not close") || strings.Contains(pe.Msg, "yaml: line") {
			t.Errorf("%s: line %d, %q; want line %d naming the open quote", tc.name, pe.Line, pe.Msg, tc.line)
		}
	}
	// Quotes closed on their line are not blamed for another error.
	_, err := Parse("n.md", []byte("---\ntype: \"s\"\nsummary: 'a ''b'''\nbad: [\n---\n"))
	var pe *ParseError
	if !errors.As(err, &pe) || strings.Contains(pe.Msg, "opens a quote") {
		t.Errorf("closed quotes: %v", err)
	}
}
