package note

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// mustParse parses src or fails the test.
func mustParse(t *testing.T, src string) *Note {
	t.Helper()
	n, err := Parse("x.md", []byte(src))
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return n
}

// Fuzzing found: the mapping's keys are indented, and the new key went to
// column 0, outside the mapping (yaml.v3 ignored it).
func TestSetNewKeyTakesTheKeysIndentation(t *testing.T) {
	n := mustParse(t, "---\n 0: \n---")
	m, err := n.Set("new", "v")
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Bytes()) != "---\n 0: \n new: v\n---" {
		t.Errorf("got %q", m.Bytes())
	}
	if v, ok := m.Get("new"); !ok || v != "v" {
		t.Errorf("Get(new) = %q, %v", v, ok)
	}
	// List items go two spaces past the key, wherever the key is.
	n = mustParse(t, "---\n   a: 1\n---\n")
	m, err = n.Set("tags", []string{"p", "q"})
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Bytes()) != "---\n   a: 1\n   tags:\n     - p\n     - q\n---\n" {
		t.Errorf("got %q", m.Bytes())
	}
	if got := m.GetList("tags"); len(got) != 2 {
		t.Errorf("GetList(tags) = %q", got)
	}
}

// Fuzzing found: "0: 'A'#" set to A became "0: A#", which reads back as A#.
func TestSetValueGluedToWhatFollows(t *testing.T) {
	src := "---\n0: 'A'#\n ---"
	n := mustParse(t, src)
	same, err := n.Set("0", "A")
	if err != nil || string(same.Bytes()) != src {
		t.Fatalf("setting the value it has: %q, %v", same.Bytes(), err)
	}
	m, err := n.Set("0", "B")
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Bytes()) != "---\n0: 'B'#\n ---" {
		t.Errorf("got %q, want the single quotes kept", m.Bytes())
	}
	if v, _ := m.Get("0"); v != "B" {
		t.Errorf("Get = %q", v)
	}
}

// Fuzzing found: yaml.v3 ends a line at a lone CR; the package counted only
// LFs, so positions after it were off, and deleting the added property
// removed the closing delimiter.
func TestLoneCRInFrontMatter(t *testing.T) {
	src := "---\n\r \n---"
	n := mustParse(t, src)
	m, err := n.Set("new", "v")
	if err != nil {
		t.Fatal(err)
	}
	back, err := m.Delete("new")
	if err != nil || string(back.Bytes()) != src {
		t.Fatalf("set then delete: %q, %v", back.Bytes(), err)
	}
	n = mustParse(t, "---\na: 1\rb: 2\n---\nbody\n")
	m, err = n.Delete("a")
	if err != nil || string(m.Bytes()) != "---\nb: 2\n---\nbody\n" {
		t.Fatalf("delete a: %q, %v", m.Bytes(), err)
	}
	m, err = n.Delete("b")
	if err != nil || string(m.Bytes()) != "---\na: 1\n---\nbody\n" {
		t.Fatalf("delete b: %q, %v", m.Bytes(), err)
	}
}

func TestDuplicateKeyIsAParseError(t *testing.T) {
	cases := []struct {
		src       string
		line      int
		key       string
		firstLine int
	}{
		{"---\na: 1\na: 2\n---\n", 3, "a", 2},
		{"---\r\ntitle: x\r\n# c\r\n'title': y\r\n---\r\n", 4, "title", 2},
		{"---\n a: 1\n b: 2\n \"a\": 3\n---\n", 4, "a", 2},
	}
	for _, c := range cases {
		_, err := Parse("x.md", []byte(c.src))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("%q: err = %v, want *ParseError", c.src, err)
		}
		want := `front matter: property "` + c.key + `" is defined twice (first on line ` + string(rune('0'+c.firstLine)) + `)`
		if pe.Line != c.line || pe.Msg != want {
			t.Errorf("%q: line %d %q, want line %d %q", c.src, pe.Line, pe.Msg, c.line, want)
		}
	}
	// The same name in a nested mapping is another property's business.
	mustParse(t, "---\na: 1\nb:\n  a: 2\n---\n")
}

func TestContentAfterTheFirstDocumentIsAParseError(t *testing.T) {
	// yaml.v3 decodes the first document only: "b" was silently dropped.
	for _, src := range []string{"---\n a: 1\nb: 2\n---\n", "---\na: 1\n...\nb: 2\n---\n", "---\na: 1\n--- x\n---\n"} {
		if _, err := Parse("x.md", []byte(src)); err == nil {
			t.Errorf("%q parsed", src)
		}
	}
}

func TestNewPropertyGoesBeforeADocumentEndMarker(t *testing.T) {
	src := "---\na: 1\n...\n---\nbody\n"
	n := mustParse(t, src)
	m, err := n.Set("b", "2")
	if err != nil || string(m.Bytes()) != "---\na: 1\nb: \"2\"\n...\n---\nbody\n" {
		t.Fatalf("got %q, %v", m.Bytes(), err)
	}
	back, err := m.Delete("b")
	if err != nil || string(back.Bytes()) != src {
		t.Fatalf("delete: %q, %v", back.Bytes(), err)
	}
}

func TestSetOnEmptyForms(t *testing.T) {
	for src, want := range map[string]string{
		"---\n{}\n---\n":         "---\ns: v\n---\n",
		"---\n{ } # none\n---\n": "---\ns: v # none\n---\n",
		"---\n~\n---\n":          "---\ns: v\n---\n",
		"---\n# only\n---\n":     "---\n# only\ns: v\n---\n",
		"---\n---\n":             "---\ns: v\n---\n",
		"---\r\n---\r\nbody\r\n": "---\r\ns: v\r\n---\r\nbody\r\n",
	} {
		m, err := mustParse(t, src).Set("s", "v")
		if err != nil || string(m.Bytes()) != want {
			t.Errorf("%q: got %q, %v; want %q", src, m.Bytes(), err, want)
		}
	}
}

func TestSetSameValueChangesNothing(t *testing.T) {
	src := "---\ns: \"x\" # c\nn: 10\nt: 2026-11-22T14:30:00Z\ne:\nl: [a, b]\nq: '1'\n---\n"
	n := mustParse(t, src)
	for _, c := range []struct {
		key string
		val any
	}{
		{"s", "x"}, {"n", 10}, {"n", "10"}, {"t", time.Date(2026, 11, 22, 14, 30, 0, 0, time.UTC)},
		{"e", nil}, {"l", []string{"a", "b"}}, {"q", "1"},
	} {
		m, err := n.Set(c.key, c.val)
		if err != nil || string(m.Bytes()) != src {
			t.Errorf("Set(%s, %v) = %q, %v", c.key, c.val, m.Bytes(), err)
		}
	}
	// Same text, another type: an int replaces the string '1'.
	m, err := n.Set("q", 1)
	if err != nil || !strings.Contains(string(m.Bytes()), "\nq: 1\n") {
		t.Errorf("Set(q, 1) = %q, %v", m.Bytes(), err)
	}
}

func TestSetInAFlowMapping(t *testing.T) {
	n := mustParse(t, "---\n{a: x, b: 1}\n---\n")
	m, err := n.Set("a", "y, z")
	if err != nil || string(m.Bytes()) != "---\n{a: \"y, z\", b: 1}\n---\n" {
		t.Errorf("got %q, %v", m.Bytes(), err)
	}
	if _, err := n.Set("c", "v"); !errors.Is(err, ErrNotEditable) {
		t.Errorf("adding to a flow mapping: %v, want ErrNotEditable", err)
	}
	if _, err := n.Delete("a"); !errors.Is(err, ErrNotEditable) {
		t.Errorf("deleting from a flow mapping: %v, want ErrNotEditable", err)
	}
}

func TestSetRefusesToChangeAnAliasedValue(t *testing.T) {
	n := mustParse(t, "---\na: &x 1\nb: *x\n---\n")
	if _, err := n.Set("a", "2"); !errors.Is(err, ErrNotEditable) {
		t.Errorf("err = %v, want ErrNotEditable (b would change too)", err)
	}
	if m, err := n.Set("b", "2"); err != nil || string(m.Bytes()) != "---\na: &x 1\nb: \"2\"\n---\n" {
		t.Errorf("Set(b) = %q, %v", m.Bytes(), err)
	}
}

func TestManyAliasesStayFast(t *testing.T) {
	src := "---\na: &a [x,x,x,x,x,x,x,x,x]\n"
	for i, prev := 0, "a"; i < 8; i++ {
		name := string(rune('b' + i))
		src += name + ": &" + name + " [" + strings.Repeat("*"+prev+",", 8) + "*" + prev + "]\n"
		prev = name
	}
	n := mustParse(t, src+"---\n")
	start := time.Now()
	if _, err := n.Set("new", "v"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Set took %v", d)
	}
}
