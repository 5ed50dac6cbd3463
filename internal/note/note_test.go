package note

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseRoundTripIsIdentity(t *testing.T) {
	cases := map[string]string{
		"no front matter":       "# Title\n\nbody\n",
		"front matter":          "---\nstatus: active # who knows\ntags:\n  - a\n---\n# T\n",
		"crlf":                  "---\r\nstatus: on\r\n---\r\nbody\r\n",
		"no final newline":      "---\na: 1\n---\nbody",
		"empty front matter":    "---\n---\nbody\n",
		"unclosed front matter": "---\na: 1\nbody\n",
		"leading blank not fm":  "\n---\na: 1\n---\n",
		"only front matter":     "---\na: 1\n---\n",
	}
	for name, src := range cases {
		n, err := Parse(name, []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(n.Bytes()) != src {
			t.Errorf("%s: bytes changed", name)
		}
	}
}

func TestParseKeepsYAML12Strings(t *testing.T) {
	n, err := Parse("x.md", []byte("---\nreviewed: yes\nstatus: on\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := n.Get("status"); v != "on" {
		t.Errorf("status = %q, want the string on", v)
	}
}

func TestParseErrorNamesFileAndLine(t *testing.T) {
	_, err := Parse("proj/session-current-state.md", []byte("---\nstatus: active\nobjective: [unclosed\nprogress: 3\n---\nbody\n"))
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *ParseError", err)
	}
	if pe.Path != "proj/session-current-state.md" || pe.Line != 3 {
		t.Errorf("got %s line %d", pe.Path, pe.Line)
	}
	if !strings.Contains(err.Error(), "proj/session-current-state.md:") {
		t.Errorf("message %q does not name the file", err)
	}
}

func TestTooLarge(t *testing.T) {
	_, err := Parse("big.md", make([]byte, MaxSize+1))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v", err)
	}
}

func TestSetChangesOnlyTheValue(t *testing.T) {
	src := "---\n# a person's comment\nstatus: active   # keep me\nprogress: 10\nowner: \"Ana\"\nnote: 'it''s'\ntags:\n  - x\n  # inner\n  - y\n\n# about extra\nextra: {a: 1}\n---\nbody stays\n"
	n, err := Parse("x.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		key  string
		val  any
		want string
	}{
		{"status", "idle", strings.Replace(src, "status: active", "status: idle", 1)},
		{"progress", 55, strings.Replace(src, "progress: 10", "progress: 55", 1)},
		{"owner", "Bo", strings.Replace(src, `owner: "Ana"`, `owner: Bo`, 1)},
		{"note", "[[a]]", strings.Replace(src, `note: 'it''s'`, `note: '[[a]]'`, 1)},
		{"tags", []string{"q"}, strings.Replace(src, "tags:\n  - x\n  # inner\n  - y\n", "tags:\n  - q\n", 1)},
		{"extra", "z", strings.Replace(src, "extra: {a: 1}\n", "extra: z\n", 1)},
		{"updated", time.Date(2026, 11, 22, 14, 30, 0, 0, time.UTC), strings.Replace(src, "---\nbody", "updated: 2026-11-22T14:30:00Z\n---\nbody", 1)},
	}
	for _, s := range steps {
		got, err := n.Set(s.key, s.val)
		if err != nil {
			t.Fatalf("set %s: %v", s.key, err)
		}
		if string(got.Bytes()) != s.want {
			t.Errorf("set %s:\n got %q\nwant %q", s.key, got.Bytes(), s.want)
		}
	}
	same, _ := n.Set("progress", 10)
	if string(same.Bytes()) != src {
		t.Error("setting the same value changed bytes")
	}
}

func TestSetCreatesFrontMatterAndKeepsCRLF(t *testing.T) {
	n, _ := Parse("x.md", []byte("# T\n"))
	got, err := n.Set("status", "idle")
	if err != nil || string(got.Bytes()) != "---\nstatus: idle\n---\n# T\n" {
		t.Fatalf("got %q %v", got.Bytes(), err)
	}
	n, _ = Parse("x.md", []byte("---\r\na: 1\r\n---\r\nb\r\n"))
	got, _ = n.Set("c", []string{"x"})
	if string(got.Bytes()) != "---\r\na: 1\r\nc:\r\n  - x\r\n---\r\nb\r\n" {
		t.Fatalf("got %q", got.Bytes())
	}
}

func TestDelete(t *testing.T) {
	n, _ := Parse("x.md", []byte("---\na: 1\nb:\n  - x\nc: 3\n---\n"))
	got, _ := n.Delete("b")
	if string(got.Bytes()) != "---\na: 1\nc: 3\n---\n" {
		t.Fatalf("got %q", got.Bytes())
	}
}

func TestReplaceRefusesFrontMatterRange(t *testing.T) {
	n, _ := Parse("x.md", []byte("---\na: 1\n---\nbody\n"))
	if _, err := n.Replace(0, 3, nil); err == nil {
		t.Fatal("edit of the front matter through Replace was allowed")
	}
	got, err := n.Replace(n.BodyOffset(), n.BodyOffset()+4, []byte("BODY"))
	if err != nil || string(got.Bytes()) != "---\na: 1\n---\nBODY\n" {
		t.Fatalf("got %q %v", got.Bytes(), err)
	}
}
