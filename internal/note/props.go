package note

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// ErrNotEditable is returned (wrapped) by Set and Delete when the change
// cannot be made by replacing bytes in place, so that the result reads back
// as the receiver with only that property changed. That happens only for
// YAML written in forms Obsidian does not write: a non-empty flow mapping
// ({a: 1}) or a tagged one (!!map), a null ("~") in place of the mapping
// followed by lines a mapping cannot have (a tab-only line), a property
// referenced by an alias, an explicit "? key", a "---" document marker
// inside the front matter (after a lone CR). The receiver is unchanged.
var ErrNotEditable = errors.New("cannot be edited in place")

// maxKeyLen is the longest property name Set writes: YAML limits implicit
// keys to 1024 characters.
const maxKeyLen = 1000

// Set returns a new note whose property key holds value; the receiver is
// unchanged. Only that value's bytes change: the key, the spacing after the
// colon, a trailing comment, every other property and the body stay as they
// were. A value written on several lines (a list, a block scalar), or one
// that cannot be replaced on its own, is replaced from the colon to its last
// line, comments inside included. A property that already holds value (for
// strings: Get(key) == value) changes nothing, and the receiver is returned.
// A missing key is appended at the end of the front matter, indented like
// the existing keys (a front matter block is created when the note has
// none).
//
// value may be a string, an int, a float64, a bool, a time.Time (written as an
// unquoted ISO 8601 UTC timestamp, as Obsidian writes date-time properties),
// a []string (a block-style list, as Obsidian writes lists), or nil (an empty
// value). Strings are written plain when YAML allows it, quoted otherwise
// (wikilinks therefore come out quoted, as Obsidian requires); line breaks in
// strings become spaces. Every edit is read back before it is returned: the
// result holds exactly the new value, every other property and the body as
// they were, or Set fails (see ErrNotEditable).
func (n *Note) Set(key string, value any) (*Note, error) {
	if err := checkKey(key); err != nil {
		return nil, fmt.Errorf("%s: property %q: %w", n.path, key, err)
	}
	nl, indent := n.newline(), n.indent()
	enc, isList, err := encodeValue(value, nl, indent)
	if err != nil {
		return nil, fmt.Errorf("%s: property %q: %w", n.path, key, err)
	}
	want := wantNode(value)
	i := n.property(key)
	if i < 0 {
		return n.insertProperty(key, value, enc, isList, want)
	}
	keyNode, val := n.root.Content[i], n.root.Content[i+1]
	if matches(want, val) {
		return n, nil
	}
	var edits []edit
	if !isList {
		if start, end, ok := n.inlineScalarRange(val); ok {
			edits = append(edits, edit{start, end, enc})
			if s, ok := value.(string); ok {
				for _, q := range quotedForms(oneLine(s), val.Style) {
					edits = append(edits, edit{start, end, q})
				}
			}
		}
	}
	if n.blockRoot() {
		if colon, err := n.afterColon(keyNode); err == nil {
			edits = append(edits, edit{colon, n.valueBlockEnd(i), valueText(enc, isList) + nl})
		}
	}
	if m := n.firstGood(edits, func(m *Note) bool { return n.changedOnly(m, key, want) }); m != nil {
		return m, nil
	}
	return nil, n.notEditable(keyNode, "set", key)
}

// Delete returns a new note without property key (its lines removed). A
// missing key returns the receiver. Deleting a property that Set added
// gives back the bytes from before the Set, when the note had front matter
// (an empty block, "---" twice, stays behind when Set created it; an empty
// front matter written "~" or "{}", which Set replaced, does not come back).
func (n *Note) Delete(key string) (*Note, error) {
	i := n.property(key)
	if i < 0 {
		return n, nil
	}
	k := n.root.Content[i]
	var edits []edit
	if n.blockRoot() {
		start := n.lineStart(n.offsetInFile(k.Line, k.Column))
		// First the property's lines only; then with the blank and comment
		// lines up to the next property too (a line of blanks yaml.v3
		// rejects once it follows nothing, " \t", must go with it).
		for _, end := range []int{n.valueBlockEnd(i), n.nextPropertyLine(i)} {
			edits = append(edits, edit{start, end, ""})
			if w := breakBefore(n.src[n.yamlStart:start]); w > 0 && n.src[start-1] != '\n' {
				// The line before ends with a lone CR (or NEL, LS, PS),
				// which does not end a line for the delimiter: removing the
				// property's lines would glue what follows to it. Remove
				// that break instead of the property's last one.
				last := 1
				if end-2 >= start && n.src[end-2] == '\r' && n.src[end-1] == '\n' {
					last = 2
				}
				if end-last >= start && n.src[end-1] == '\n' {
					edits = append(edits, edit{start - w, end - last, ""})
				}
			}
		}
	}
	if m := n.firstGood(edits, func(m *Note) bool { return n.changedOnly(m, key, nil) }); m != nil {
		return m, nil
	}
	return nil, n.notEditable(k, "delete", key)
}

// edit replaces src[start:end] with repl.
type edit struct {
	start, end int
	repl       string
}

// firstGood applies each edit in turn to the receiver's bytes and returns the
// first result that parses and passes ok, or nil.
func (n *Note) firstGood(edits []edit, ok func(*Note) bool) *Note {
	for _, e := range edits {
		m, err := Parse(n.path, splice(n.src, e.start, e.end, []byte(e.repl)))
		if err == nil && ok(m) {
			return m
		}
	}
	return nil
}

func (n *Note) notEditable(k *yaml.Node, op, key string) error {
	return fmt.Errorf("%s:%d: %s property %q: %w", n.path, n.fileLine(k.Line, k.Column), op, key, ErrNotEditable)
}

// changedOnly reports whether m is the receiver with property key holding a
// value that matches want (want nil: with key deleted): the other properties
// in the same order with the same values, the body byte for byte the same.
func (n *Note) changedOnly(m *Note, key string, want *yaml.Node) bool {
	if !bytes.Equal(n.Body(), m.Body()) {
		return false
	}
	var keys []string
	for _, k := range n.Keys() {
		if k != key || want != nil {
			keys = append(keys, k)
		}
	}
	if want != nil && n.property(key) < 0 {
		keys = append(keys, key)
	}
	got := m.Keys()
	if len(got) != len(keys) {
		return false
	}
	for j, k := range keys {
		if got[j] != k {
			return false
		}
		mv, _ := m.Node(k)
		if k == key {
			if !matches(want, mv) {
				return false
			}
			continue
		}
		if nv, _ := n.Node(k); !sameNode(nv, mv, true) {
			return false
		}
	}
	return true
}

// wantNode describes the value Set writes for value, for matches: a scalar
// with Tag "" stands for a string (any non-null scalar with that text, as Get
// reads it).
func wantNode(value any) *yaml.Node {
	scalar := func(tag, v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v} }
	switch v := value.(type) {
	case nil:
		return scalar("!!null", "")
	case string:
		return scalar("", oneLine(v))
	case int:
		return scalar("!!int", strconv.Itoa(v))
	case int64:
		return scalar("!!int", strconv.FormatInt(v, 10))
	case float64:
		if v == float64(int64(v)) {
			return scalar("!!int", formatFloat(v))
		}
		return scalar("!!float", formatFloat(v))
	case bool:
		return scalar("!!bool", strconv.FormatBool(v))
	case time.Time:
		return scalar("!!timestamp", FormatTime(v))
	case []string:
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, item := range v {
			seq.Content = append(seq.Content, scalar("", oneLine(item)))
		}
		return seq
	}
	return nil
}

// matches reports whether the value node got holds the value want describes
// (see wantNode).
func matches(want, got *yaml.Node) bool {
	if want == nil || got == nil || want.Kind != got.Kind || len(want.Content) != len(got.Content) {
		return false
	}
	switch want.Kind {
	case yaml.ScalarNode:
		tag := got.ShortTag()
		switch want.Tag {
		case "":
			return tag != "!!null" && got.Value == want.Value
		case "!!null":
			return tag == "!!null"
		}
		return tag == want.Tag && got.Value == want.Value
	case yaml.SequenceNode:
		for i := range want.Content {
			if !matches(want.Content[i], got.Content[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// sameNode reports whether two value nodes hold the same data (positions,
// styles and comments aside). An alias is followed when deref is set (the
// aliased value must be the same), else compared by name: an anchored value
// is compared where it is defined, and following every alias can take
// exponential time ("billion laughs").
func sameNode(a, b *yaml.Node, deref bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.ShortTag() != b.ShortTag() || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode && a.ShortTag() == "!!null" {
		return true
	}
	if a.Value != b.Value {
		return false
	}
	if a.Kind == yaml.AliasNode && deref {
		return sameNode(a.Alias, b.Alias, false)
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i], deref) {
			return false
		}
	}
	return true
}

// checkKey reports a property name Set does not write: not UTF-8, or too
// long for a YAML key.
func checkKey(key string) error {
	if !utf8.ValidString(key) {
		return errors.New("property name is not valid UTF-8")
	}
	if len(yamlKey(key)) > maxKeyLen {
		return fmt.Errorf("property name is longer than %d bytes", maxKeyLen)
	}
	return nil
}

// newline returns the line ending the front matter uses ("\r\n" or "\n").
func (n *Note) newline() string {
	if i := bytes.IndexByte(n.src, '\n'); i > 0 && n.src[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// indent returns the indentation of the front matter's properties: the
// spaces before the first key (or before the empty value that stands for
// no properties), or "" when there is none.
func (n *Note) indent() string {
	col := 1
	switch {
	case n.root != nil:
		col = n.root.Column
	case n.nullRoot != nil:
		col = n.nullRoot.Column
	}
	if col < 1 {
		col = 1
	}
	return strings.Repeat(" ", col-1)
}

// blockRoot reports whether the front matter is a block mapping (one
// property per line), the form whose lines Set and Delete edit.
func (n *Note) blockRoot() bool {
	return n.root != nil && n.root.Style&yaml.FlowStyle == 0
}

// valueText returns the bytes that follow "key:" for an encoded value.
func valueText(enc string, isList bool) string {
	if isList || enc == "" {
		return enc
	}
	return " " + enc
}

func (n *Note) insertProperty(key string, value any, enc string, isList bool, want *yaml.Node) (*Note, error) {
	nl, indent := n.newline(), n.indent()
	// props are the ways to write the property, without its indentation
	// and final line break, best first.
	props := []string{yamlKey(key) + ":" + valueText(enc, isList)}
	if s, ok := value.(string); ok {
		for _, q := range quotedForms(oneLine(s), 0) {
			props = append(props, yamlKey(key)+": "+q)
		}
	}
	var edits []edit
	for _, prop := range props {
		switch {
		case !n.hasFM:
			edits = append(edits, edit{0, 0, "---" + nl + prop + nl + "---" + nl})
		case n.root != nil && n.root.Style&yaml.FlowStyle != 0:
			// "{}": the first property replaces it. A non-empty flow
			// mapping cannot take a block-style line.
			if start, end, ok := n.emptyFlowRange(n.root); ok {
				edits = append(edits, edit{start, end, prop})
			}
		case n.nullRoot != nil:
			// "~" or "null": the first property replaces it.
			if start, end, ok := n.inlineScalarRange(n.nullRoot); ok {
				edits = append(edits, edit{start, end, prop})
			}
		default:
			edits = append(edits, edit{n.docEnd, n.docEnd, indent + prop + nl})
		}
	}
	if m := n.firstGood(edits, func(m *Note) bool { return n.changedOnly(m, key, want) }); m != nil {
		return m, nil
	}
	line := 1
	if n.hasFM {
		line = n.LineOf(n.docEnd)
	}
	return nil, fmt.Errorf("%s:%d: add property %q: %w", n.path, line, key, ErrNotEditable)
}

// emptyFlowRange returns the byte range of an empty flow mapping ("{}",
// possibly with blanks or comments inside).
func (n *Note) emptyFlowRange(v *yaml.Node) (int, int, bool) {
	if v.Kind != yaml.MappingNode || len(v.Content) != 0 || v.Line == 0 {
		return 0, 0, false
	}
	start := n.offsetInFile(v.Line, v.Column)
	if start >= n.yamlEnd || n.src[start] != '{' {
		return 0, 0, false
	}
	for i := start + 1; i < n.yamlEnd; {
		switch c := n.src[i]; {
		case c == '}':
			return start, i + 1, true
		case c == ' ' || c == '\t':
			i++
		case c == '#':
			i = n.lineContentEnd(i)
		case isYAMLBreak(n.src[i:n.yamlEnd]) > 0:
			i += isYAMLBreak(n.src[i:n.yamlEnd])
		default:
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// yamlKey returns key as a YAML mapping key on one line, quoted when needed.
// A key holding a line break YAML knows (yaml.v3 writes NEL, LS and PS as
// they are, inside quotes) is double-quoted with escapes: a key cannot go on
// to a second line.
func yamlKey(key string) string {
	out, err := yaml.Marshal(key)
	if err != nil || strings.ContainsAny(key, "\r\n\u0085\u2028\u2029") {
		return strconv.Quote(key)
	}
	t := strings.TrimSuffix(string(out), "\n")
	if strings.ContainsAny(t, "\n") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, ">") {
		return strconv.Quote(key)
	}
	return t
}

// quotedForms returns s quoted for YAML on one line: single-quoted first
// when the old value was single-quoted (keeping the person's choice), then
// double-quoted. Set falls back on them when the plain form would not read
// back as s where it lands (e.g. "'A'#" would become "A#").
func quotedForms(s string, old yaml.Style) []string {
	var out []string
	if old&yaml.SingleQuotedStyle != 0 {
		if q, ok := quoteStyle(s, yaml.SingleQuotedStyle); ok && q[0] == '\'' {
			out = append(out, q)
		}
	}
	if q, ok := quoteStyle(s, yaml.DoubleQuotedStyle); ok {
		out = append(out, q)
	}
	// strconv.Quote's escapes are all YAML double-quoted escapes, and it
	// escapes every line break YAML knows (NEL, LS, PS).
	return append(out, strconv.Quote(s))
}

// quoteStyle renders s as a one-line YAML scalar in the given quoting style.
func quoteStyle(s string, style yaml.Style) (string, bool) {
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: style})
	if err != nil {
		return "", false
	}
	t := strings.TrimSuffix(string(out), "\n")
	if t == "" || strings.ContainsAny(t, "\n\r") || t[0] != '"' && t[0] != '\'' {
		return "", false
	}
	return t, true
}

// oneLine turns the line breaks of a property string into spaces, as Set
// writes it.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", " "), "\n", " ")
}

// encodeValue renders value as YAML text: a scalar, or for a list the bytes
// that follow "key:" (a newline and "- item" lines indented two spaces past
// indent, the indentation of the key, or " []").
func encodeValue(value any, nl, indent string) (string, bool, error) {
	switch v := value.(type) {
	case nil:
		return "", false, nil
	case string:
		if !utf8.ValidString(v) {
			return "", false, errors.New("value is not valid UTF-8")
		}
		return encodeString(v), false, nil
	case int:
		return strconv.Itoa(v), false, nil
	case int64:
		return strconv.FormatInt(v, 10), false, nil
	case float64:
		return formatFloat(v), false, nil
	case bool:
		return strconv.FormatBool(v), false, nil
	case time.Time:
		return FormatTime(v), false, nil
	case []string:
		if len(v) == 0 {
			return " []", true, nil
		}
		var b strings.Builder
		for _, item := range v {
			if !utf8.ValidString(item) {
				return "", false, errors.New("list item is not valid UTF-8")
			}
			b.WriteString(nl + indent + "  - " + encodeString(item))
		}
		return b.String(), true, nil
	}
	return "", false, fmt.Errorf("unsupported property value type %T", value)
}

// formatFloat renders v in the shortest form that reads back as v (0.85,
// 3); YAML reads a whole number back as an int.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// FormatTime renders t as the engine writes times: ISO 8601 in UTC with
// second precision, e.g. 2026-11-22T14:30:00Z.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// timeLayouts are the forms ParseTime reads: RFC 3339 with a zone (what the
// engine writes), and the forms Obsidian's date and date-time properties
// write — without a zone, to the minute or second, and a bare date.
var timeLayouts = []struct {
	layout string
	zoned  bool
}{
	{time.RFC3339Nano, true},
	{"2006-01-02T15:04:05.999999999", false},
	{"2006-01-02T15:04", false},
	{"2006-01-02 15:04:05", false},
	{"2006-01-02 15:04", false},
	{"2006-01-02", false},
}

// ParseTime reads a time property in any form ParseTime's layouts list: one
// with a zone as written, one without in loc (the vault's zone; nil means the
// machine's local zone), a bare date as midnight in loc. The error names the
// forms it reads.
func ParseTime(v string, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.Local
	}
	v = strings.TrimSpace(v)
	for _, l := range timeLayouts {
		var t time.Time
		var err error
		if l.zoned {
			t, err = time.Parse(l.layout, v)
		} else {
			t, err = time.ParseInLocation(l.layout, v, loc)
		}
		if err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: write 2026-11-23T10:30:00Z (the engine's form), 2026-11-23T10:30, 2026-11-23T10:30:00 or 2026-11-23 (Obsidian's; local time in the vault's time_zone)", v)
}

// Scalar renders s as a one-line YAML scalar the way Set writes strings:
// plain when YAML reads it back as the same string, otherwise double-quoted.
func Scalar(s string) string { return encodeString(s) }

// ListValue renders items as the bytes that follow "key:" for a block-style
// list ("\n  - a\n  - b"), or " []" when empty.
func ListValue(items []string) string {
	enc, _, _ := encodeValue(items, "\n", "")
	return enc
}

// encodeString renders s as a one-line YAML scalar: plain when YAML reads it
// back as the same string, otherwise double-quoted. Newlines become spaces
// (property values are single-line).
func encodeString(s string) string {
	s = oneLine(s)
	if s == "" {
		return `""`
	}
	if isTimestamp(s) {
		return s
	}
	out, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	t := strings.TrimSuffix(string(out), "\n")
	if strings.ContainsAny(t, "\n") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, ">") {
		return strconv.Quote(s)
	}
	return t
}

func isTimestamp(s string) bool {
	_, err := time.Parse(time.RFC3339, s)
	return err == nil && !strings.ContainsAny(s, " #")
}

// inlineScalarRange returns the byte range of a scalar value written on one
// line (plain, single- or double-quoted), without any trailing comment.
func (n *Note) inlineScalarRange(v *yaml.Node) (int, int, bool) {
	if v.Kind != yaml.ScalarNode || v.Line == 0 {
		return 0, 0, false
	}
	start := n.offsetInFile(v.Line, v.Column)
	line := n.src[start:n.lineContentEnd(start)]
	switch {
	case v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
	case v.Style&yaml.DoubleQuotedStyle != 0, v.Style&yaml.SingleQuotedStyle != 0:
		if i := quotedEnd(line); i > 0 {
			return start, start + i, true
		}
	default:
		// A plain scalar on one line is its text as written; one that goes
		// on to the next line (or has a tag or anchor first) is not found
		// here.
		if v.Value != "" && bytes.HasPrefix(line, []byte(v.Value)) {
			return start, start + len(v.Value), true
		}
	}
	return 0, 0, false
}

// quotedEnd returns the length of the single- or double-quoted scalar that
// b starts with, when it ends on the same line; else 0.
func quotedEnd(b []byte) int {
	if len(b) == 0 || b[0] != '"' && b[0] != '\'' {
		return 0
	}
	q := b[0]
	for i := 1; i < len(b); i++ {
		switch {
		case q == '"' && b[i] == '\\':
			i++
		case b[i] == q && q == '\'' && i+1 < len(b) && b[i+1] == '\'':
			i++
		case b[i] == q:
			return i + 1
		}
	}
	return 0
}

// afterColon returns the offset just after the ':' that ends key k.
func (n *Note) afterColon(k *yaml.Node) (int, error) {
	off := n.offsetInFile(k.Line, k.Column)
	end := n.lineContentEnd(off)
	i := off
	if q := quotedEnd(n.src[off:end]); q > 0 {
		i += q
	}
	for ; i < end; i++ {
		if n.src[i] == ':' && (i+1 == end || n.src[i+1] == ' ' || n.src[i+1] == '\t') {
			return i + 1, nil
		}
	}
	return 0, &ParseError{Path: n.path, Line: n.LineOf(off), Msg: fmt.Sprintf("cannot find the ':' after property %q", k.Value)}
}

// nextPropertyLine returns the offset where the line of the property after
// root.Content[i] starts, or the end of the YAML document.
func (n *Note) nextPropertyLine(i int) int {
	if i+2 < len(n.root.Content) {
		next := n.root.Content[i+2]
		return n.lineStart(n.offsetInFile(next.Line, next.Column))
	}
	return n.docEnd
}

// valueBlockEnd returns the offset of the line start where the value of the
// property whose key is root.Content[i] ends: the next property's line (less
// the blank lines, and the comment lines no more indented than the keys, just
// before it, which belong to it), or the end of the YAML document.
func (n *Note) valueBlockEnd(i int) int {
	end := n.nextPropertyLine(i)
	k := n.root.Content[i]
	floor := n.lineEnd(n.offsetInFile(k.Line, k.Column))
	indent := n.root.Column - 1
	for end > floor {
		prev := n.lineStart(end - 1)
		line := n.src[prev:n.lineContentEnd(prev)]
		t := bytes.TrimLeft(line, " \t")
		if len(bytes.TrimRight(t, " \t")) == 0 || t[0] == '#' && len(line)-len(t) <= indent {
			end = prev
			continue
		}
		break
	}
	if end < floor {
		end = floor
	}
	return end
}

// breakBefore returns the length of the line break b ends with, or 0.
func breakBefore(b []byte) int {
	for _, w := range []int{3, 2, 1} {
		if len(b) >= w && isYAMLBreak(b[len(b)-w:]) == w {
			return w
		}
	}
	return 0
}
