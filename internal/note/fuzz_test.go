package note

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// The fuzz targets below check the round-trip rules (rendering a parsed note
// gives its bytes back; an edit changes only the bytes it must) on any input
// Parse accepts. Their seed corpora are in testdata/fuzz/<FuzzName>/; run one
// with
//
//	go test ./internal/note -run '^$' -fuzz '^FuzzSetGet$' -fuzztime 2m

// maxFuzzNote is the largest input the fuzz targets try: front matter is
// small, and a longer input only slows the search down.
const maxFuzzNote = 4 << 10

// fuzzTimeout bounds the time one fuzz input may take. A Go fuzz worker
// that hangs is not reported; a panic is, with its input.
const fuzzTimeout = 10 * time.Second

// watchdog crashes the fuzz worker when the current input runs longer than
// fuzzTimeout; the caller defers the returned stop.
func watchdog(what string) (stop func() bool) {
	return time.AfterFunc(fuzzTimeout, func() { panic(what + " ran longer than " + fuzzTimeout.String()) }).Stop
}

// fuzzNote parses src for a fuzz target, skipping inputs that are too large
// or that Parse rejects (which must be rejected with a *ParseError).
func fuzzNote(t *testing.T, src string) *Note {
	t.Helper()
	if len(src) > maxFuzzNote {
		t.Skip("input too large")
	}
	n, err := Parse("fuzz.md", []byte(src))
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("Parse error is %T, want *ParseError: %v", err, err)
		}
		t.Skip("Parse rejects the input")
	}
	return n
}

// fuzzString reports whether s is a property name or value the package
// supports: valid UTF-8 on one line, of a reasonable length.
func fuzzString(s string, max int) bool {
	return len(s) <= max && utf8.ValidString(s) && !strings.ContainsAny(s, "\r\n")
}

// notEditable reports whether err is ErrNotEditable for a note written in a
// form Set and Delete are allowed to refuse (see ErrNotEditable): a non-empty
// flow mapping, a tagged mapping, a null ("~") instead of a mapping, a "---"
// document marker inside the front
// matter, an anchor or alias anywhere, a key that is not a one-line
// plain or quoted scalar, or an explicit "? key". Any other error, or
// ErrNotEditable for any other note, is a bug.
func notEditable(n *Note, err error) bool {
	if !errors.Is(err, ErrNotEditable) {
		return false
	}
	if n.root != nil && (n.root.Style&yaml.FlowStyle != 0 && len(n.root.Content) > 0 || n.root.Style&yaml.TaggedStyle != 0) {
		return true
	}
	if n.nullRoot != nil {
		return true // "~" (a tab-only line may follow it, not a mapping)
	}
	for _, l := range n.yamlLines {
		if line := n.src[min(n.yamlStart+l, n.yamlEnd):n.yamlEnd]; bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("...")) {
			return true // a YAML document start or end marker, after a lone CR
		}
	}
	var exotic func(*yaml.Node) bool
	exotic = func(v *yaml.Node) bool {
		if v.Anchor != "" || v.Kind == yaml.AliasNode {
			return true
		}
		for _, c := range v.Content {
			if exotic(c) {
				return true
			}
		}
		return false
	}
	for _, root := range []*yaml.Node{n.root, n.nullRoot} {
		if root != nil && exotic(root) {
			return true
		}
	}
	if n.root == nil {
		return false
	}
	for i := 0; i < len(n.root.Content); i += 2 {
		k := n.root.Content[i]
		if k.Kind != yaml.ScalarNode || k.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			return true
		}
		off := n.offsetInFile(k.Line, k.Column)
		if lead := bytes.TrimLeft(n.src[n.lineStart(off):off], " "); len(lead) > 0 {
			return true // "? key", or a tag before the key
		}
		// An implicit key: its ':' follows on the same line.
		rest := n.src[off:n.lineContentEnd(off)]
		switch {
		case k.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0:
			rest = rest[quotedEnd(rest):]
		case bytes.HasPrefix(rest, []byte(k.Value)):
			rest = rest[len(k.Value):]
		default:
			return true
		}
		if rest = bytes.TrimLeft(rest, " \t"); len(rest) == 0 || rest[0] != ':' {
			return true
		}
	}
	return false
}

// pickKey returns the property to edit: one of n's keys when pick is not
// negative and n has some, else key.
func pickKey(n *Note, pick int, key string) string {
	keys := n.Keys()
	if pick < 0 || len(keys) == 0 {
		return key
	}
	return keys[pick%len(keys)]
}

// getResult is what Get returned for one key.
type getResult struct {
	key, value string
	ok         bool
}

// getAll returns Get of every key of n, in key order.
func getAll(n *Note) []getResult {
	var out []getResult
	for _, k := range n.Keys() {
		v, ok := n.Get(k)
		out = append(out, getResult{k, v, ok})
	}
	return out
}

// checkOthers fails unless m has the properties want (in that order, with
// those Get values) and n's body.
func checkOthers(t *testing.T, n, m *Note, want []getResult) {
	t.Helper()
	got := getAll(m)
	if len(got) != len(want) {
		t.Fatalf("keys %q, want %+v\nbefore: %q\nafter:  %q", m.Keys(), want, n.Bytes(), m.Bytes())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("property %d is %+v, want %+v\nbefore: %q\nafter:  %q", i, got[i], want[i], n.Bytes(), m.Bytes())
		}
	}
	if !bytes.Equal(n.Body(), m.Body()) {
		t.Fatalf("body changed\nbefore: %q\nafter:  %q", n.Bytes(), m.Bytes())
	}
}

// reparse checks that m's bytes parse on their own, and returns the result.
func reparse(t *testing.T, m *Note) *Note {
	t.Helper()
	r, err := Parse("fuzz.md", m.Bytes())
	if err != nil {
		t.Fatalf("result does not parse: %v\n%q", err, m.Bytes())
	}
	return r
}

// FuzzParseIdentity: for any input Parse accepts, Bytes returns it
// unchanged, the body is a suffix of it, and property names are unique.
// Inputs Parse rejects get a *ParseError whose line is inside the input.
func FuzzParseIdentity(f *testing.F) {
	f.Fuzz(func(t *testing.T, src string) {
		defer watchdog("FuzzParseIdentity")()
		if len(src) > maxFuzzNote {
			t.Skip("input too large")
		}
		n, err := Parse("fuzz.md", []byte(src))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse error is %T, want *ParseError: %v", err, err)
			}
			if lines := strings.Count(src, "\n") + 1; pe.Line < 0 || pe.Line > lines {
				t.Fatalf("error line %d outside the input's %d lines: %v", pe.Line, lines, err)
			}
			return
		}
		if string(n.Bytes()) != src {
			t.Fatalf("Bytes() = %q, want the input %q", n.Bytes(), src)
		}
		if !strings.HasSuffix(src, string(n.Body())) || n.BodyOffset()+len(n.Body()) != len(src) {
			t.Fatalf("body %q at %d is not the input's tail", n.Body(), n.BodyOffset())
		}
		seen := map[string]bool{}
		for _, k := range n.Keys() {
			if seen[k] {
				t.Fatalf("property %q parsed twice", k)
			}
			seen[k] = true
		}
	})
}

// FuzzSetGet checks Set on any note Parse accepts, with a one-line string
// value: pick >= 0 sets one of the note's own properties (keys[pick%len]),
// else key. The result parses; Get returns the value; every other property
// keeps its Get value and place; the body is byte for byte the same; setting
// the same value again changes nothing. When key was absent, deleting it
// again gives back the original bytes (for a note without front matter: the
// original after an empty front matter block, which Delete leaves; not for
// front matter written as "~" or "{}", which the first property replaces).
func FuzzSetGet(f *testing.F) {
	f.Fuzz(func(t *testing.T, src string, pick int, key, value string) {
		defer watchdog("FuzzSetGet")()
		n := fuzzNote(t, src)
		key = pickKey(n, pick, key)
		if !fuzzString(key, 100) || !fuzzString(value, 300) {
			t.Skip("unsupported key or value")
		}
		_, existed := n.Node(key)
		want := []getResult{}
		for _, g := range getAll(n) {
			if g.key == key {
				g.value, g.ok = value, true
			}
			want = append(want, g)
		}
		if !existed {
			want = append(want, getResult{key, value, true})
		}

		m, err := n.Set(key, value)
		if notEditable(n, err) {
			t.Skip("note not editable in place")
		}
		if err != nil {
			t.Fatalf("Set(%q, %q): %v\nnote: %q", key, value, err, src)
		}
		if string(n.Bytes()) != src {
			t.Fatal("Set changed the receiver")
		}
		m = reparse(t, m)
		if got, ok := m.Get(key); !ok || got != value {
			t.Fatalf("Get(%q) = %q, %v after Set(%q)\nbefore: %q\nafter:  %q", key, got, ok, value, src, m.Bytes())
		}
		checkOthers(t, n, m, want)

		again, err := m.Set(key, value)
		if err != nil {
			t.Fatalf("second Set(%q, %q): %v\nnote: %q", key, value, err, m.Bytes())
		}
		if !bytes.Equal(again.Bytes(), m.Bytes()) {
			t.Fatalf("setting the same value again changed bytes\nbefore: %q\nafter:  %q", m.Bytes(), again.Bytes())
		}

		if existed || n.nullRoot != nil || n.root != nil && n.root.Style&yaml.FlowStyle != 0 {
			// "~" and "{}" are replaced by the first property: nothing
			// gives them back.
			return
		}
		d, err := m.Delete(key)
		if err != nil {
			t.Fatalf("Delete(%q) of the added property: %v\nnote: %q", key, err, m.Bytes())
		}
		wantBytes := src
		if !n.HasFrontMatter() {
			nl := n.newline()
			wantBytes = "---" + nl + "---" + nl + src
		}
		if string(d.Bytes()) != wantBytes {
			t.Fatalf("Set then Delete of %q:\n got %q\nwant %q", key, d.Bytes(), wantBytes)
		}
	})
}

// FuzzDelete checks Delete of one of the properties (keys[pick%len]) of any
// note Parse accepts: the result parses, the property is gone, every other
// property keeps its Get value and place, the body is byte for byte the
// same, and deleting it again changes nothing.
func FuzzDelete(f *testing.F) {
	f.Fuzz(func(t *testing.T, src string, pick int) {
		defer watchdog("FuzzDelete")()
		n := fuzzNote(t, src)
		if pick < 0 || len(n.Keys()) == 0 {
			t.Skip("no property to delete")
		}
		key := pickKey(n, pick, "")
		var want []getResult
		for _, g := range getAll(n) {
			if g.key != key {
				want = append(want, g)
			}
		}
		m, err := n.Delete(key)
		if notEditable(n, err) {
			t.Skip("note not editable in place")
		}
		if err != nil {
			t.Fatalf("Delete(%q): %v\nnote: %q", key, err, src)
		}
		m = reparse(t, m)
		if _, ok := m.Node(key); ok {
			t.Fatalf("property %q still there after Delete\nbefore: %q\nafter:  %q", key, src, m.Bytes())
		}
		checkOthers(t, n, m, want)
		again, err := m.Delete(key)
		if err != nil || !bytes.Equal(again.Bytes(), m.Bytes()) {
			t.Fatalf("deleting %q again changed the note (%v)", key, err)
		}
	})
}

// FuzzScalar: Scalar and ListValue write any one-line string so that YAML
// reads it back unchanged.
func FuzzScalar(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		defer watchdog("FuzzScalar")()
		if !fuzzString(s, 1000) {
			t.Skip("not a one-line string")
		}
		enc := Scalar(s)
		if strings.ContainsAny(enc, "\r\n") {
			t.Fatalf("Scalar(%q) = %q is not one line", s, enc)
		}
		src := "---\nk: " + enc + "\nl:" + ListValue([]string{s}) + "\n---\n"
		n, err := Parse("fuzz.md", []byte(src))
		if err != nil {
			t.Fatalf("Scalar(%q) = %q does not parse: %v", s, enc, err)
		}
		if got, ok := n.Get("k"); !ok || got != s {
			t.Fatalf("Scalar(%q) = %q reads back as %q, %v", s, enc, got, ok)
		}
		if got := n.GetList("l"); len(got) != 1 || got[0] != s {
			t.Fatalf("ListValue(%q) reads back as %q", s, got)
		}
	})
}
