// Package note holds a note as data: its front matter, kept as a yaml.v3 node
// tree over the original bytes, and its body as bytes. Edits replace only the
// bytes they must: one property value, or one byte range of the body.
// Everything else — key order, comments, quoting, line endings, unknown
// properties — is left exactly as it was. The package is pure: no I/O.
package note

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/adrg/frontmatter"
	yaml "go.yaml.in/yaml/v3"
)

// MaxSize is the largest note the engine accepts, in bytes (10 MB).
const MaxSize = 10 << 20

// ErrTooLarge is returned (wrapped in *ParseError) for a note over MaxSize.
var ErrTooLarge = errors.New("note is larger than 10 MB")

// ParseError reports a note that cannot be read as a note: which file, which
// 1-based line (0 when unknown), and why. The note is left untouched.
type ParseError struct {
	Path string
	Line int
	Msg  string
	Err  error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Note is one parsed markdown note. The zero value is not usable; build one
// with Parse. A Note is not safe for concurrent use.
type Note struct {
	path string
	src  []byte

	// hasFM is true when the note starts with a YAML front matter block
	// ("---" on line 1 and a closing "---" line).
	hasFM bool
	// yamlStart and yamlEnd delimit the YAML text between the delimiter lines.
	yamlStart, yamlEnd int
	// bodyStart is the offset of the first byte after the closing delimiter line.
	bodyStart int
	// docEnd is where the YAML document ends: the start of a "..." document
	// end marker line, or yamlEnd. New properties are inserted there.
	docEnd int
	// root is the front matter's top-level mapping (nil when empty or absent).
	root *yaml.Node
	// nullRoot is the front matter's top-level value when it is a null
	// scalar written out ("~", "null"): it holds no properties, and the first
	// property added replaces it.
	nullRoot *yaml.Node
	// yamlLines holds the offset of each line start inside the YAML text,
	// relative to yamlStart, as yaml.v3 counts lines (LF, CRLF, a lone CR,
	// NEL, LS and PS each end a line), so that yaml.v3 node positions map to
	// the right bytes.
	yamlLines []int
	// lines holds the offset of every line start of the note, built on the
	// first LineOf call.
	lines []int
}

// Parse reads src as a note. path is used only in errors. Front matter is
// recognised only when "---" is the first line (Obsidian's rule); it is split
// with adrg/frontmatter and decoded with yaml.v3 (YAML 1.2: "on" and "yes" stay
// strings). It returns *ParseError for invalid YAML (with its line in the
// file), front matter that is not a mapping, or a note over MaxSize.
func Parse(path string, src []byte) (*Note, error) {
	if len(src) > MaxSize {
		return nil, &ParseError{Path: path, Msg: fmt.Sprintf("%d bytes: %v", len(src), ErrTooLarge), Err: ErrTooLarge}
	}
	n := &Note{path: path, src: src}
	if err := n.parseFrontMatter(); err != nil {
		return nil, err
	}
	return n, nil
}

// firstLineIsDelimiter reports whether src starts with a "---" line and
// returns the length of that line including its line ending.
func firstLineIsDelimiter(src []byte) (int, bool) {
	end := bytes.IndexByte(src, '\n')
	if end < 0 {
		return 0, false
	}
	if string(bytes.TrimRight(src[:end], " \t\r")) != "---" {
		return 0, false
	}
	return end + 1, true
}

func (n *Note) parseFrontMatter() error {
	first, ok := firstLineIsDelimiter(n.src)
	if !ok {
		n.bodyStart = 0
		return nil
	}
	var raw []byte
	format := frontmatter.NewFormat("---", "---", func(data []byte, v any) error {
		raw = data
		return nil
	})
	rest, err := frontmatter.Parse(bytes.NewReader(n.src), nil, format)
	if err != nil {
		return &ParseError{Path: n.path, Line: 1, Msg: "reading front matter: " + err.Error(), Err: err}
	}
	if raw == nil {
		// An opening delimiter without a closing one: Obsidian shows the
		// whole note as body, and so do we.
		return nil
	}
	n.hasFM = true
	n.yamlStart = first
	n.yamlEnd = first + len(raw)
	n.docEnd = n.yamlEnd
	n.bodyStart = len(n.src) - len(rest)
	n.yamlLines = yamlLineStarts(raw)
	if hasBOM(raw) {
		// yaml.v3 would skip it (or decode the text as UTF-16), and node
		// positions would no longer match the bytes.
		return &ParseError{Path: n.path, Line: 2, Msg: "front matter starts with a byte order mark"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		line, msg := n.yamlErrorLine(err), "front matter is not valid YAML: "+yamlMessage(err)
		if q := unclosedQuote(raw); q > 0 && n.fileLine(q, 1) <= line {
			// The parser notices an unclosed quote lines later; the line to
			// fix is the one that opens it.
			line = n.fileLine(q, 1)
			msg = "front matter is not valid YAML: this line opens a quote it does not close (" + yamlMessage(err) + ")"
		}
		return &ParseError{Path: n.path, Line: line, Msg: msg, Err: err}
	}
	// yaml.v3 decodes the first document and ignores what follows it;
	// properties there would be invisible, and edits could land there.
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == io.EOF:
	case err != nil:
		return &ParseError{Path: n.path, Line: n.yamlErrorLine(err), Msg: "front matter is not valid YAML: " + err.Error(), Err: err}
	default:
		return &ParseError{Path: n.path, Line: n.fileLine(next.Line, next.Column), Msg: "front matter holds more than one YAML document"}
	}
	n.docEnd = n.documentEnd()
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		if root.Value != "" {
			n.nullRoot = root
		}
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return &ParseError{Path: n.path, Line: n.fileLine(root.Line, root.Column), Msg: "front matter must be a mapping of properties"}
	}
	seen := make(map[string]*yaml.Node, len(root.Content)/2)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if prev, dup := seen[k.Value]; dup {
			return &ParseError{Path: n.path, Line: n.fileLine(k.Line, k.Column),
				Msg: fmt.Sprintf("front matter: property %q is defined twice (first on line %d)", k.Value, n.fileLine(prev.Line, prev.Column))}
		}
		seen[k.Value] = k
	}
	n.root = root
	return nil
}

// hasBOM reports whether b starts with a UTF-8 or UTF-16 byte order mark.
func hasBOM(b []byte) bool {
	return bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) || bytes.HasPrefix(b, []byte("\xfe\xff")) || bytes.HasPrefix(b, []byte("\xff\xfe"))
}

// documentEnd returns the offset of the first "..." document end marker
// line of the YAML text, or yamlEnd. Such a line can only be a marker: at
// column 0 it cannot continue a value of the front matter's mapping.
func (n *Note) documentEnd() int {
	for _, l := range n.yamlLines {
		off := n.yamlStart + l
		if off >= n.yamlEnd {
			break
		}
		if bytes.HasPrefix(n.src[off:n.yamlEnd], []byte("...")) {
			if rest := n.src[off+3 : n.yamlEnd]; len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || isYAMLBreak(rest) > 0 {
				return off
			}
		}
	}
	return n.yamlEnd
}

// fileLine returns the 1-based line in the note of a yaml.v3 position.
func (n *Note) fileLine(line, col int) int {
	return n.LineOf(n.offsetInFile(line, col))
}

// yamlErrorLine returns the 1-based line in the note of a yaml.v3 error
// ("yaml: line 3: ..."), or 1 (the opening delimiter) when the error names
// no line.
func (n *Note) yamlErrorLine(err error) int {
	var line int
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		_, _ = fmt.Sscanf(msg[i+5:], "%d", &line) // no number: line stays 0, then 1
	}
	if te := (*yaml.TypeError)(nil); errors.As(err, &te) {
		return 1
	}
	// yaml.v3 counts parser errors from 0 and scanner errors from 1.
	if strings.Contains(msg, "did not find expected") || strings.Contains(msg, "not allowed in this context") && strings.Contains(msg, "block") {
		line++
	}
	if line <= 0 {
		return 1
	}
	return n.fileLine(line, 1)
}

// yamlMessage is a yaml.v3 error's text without its "yaml: line N:" prefix
// (a line of the front matter, not of the note: ParseError names the note's).
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.HasPrefix(msg, "line ") {
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			return rest
		}
	}
	return msg
}

// unclosedQuote returns the 1-based line of the YAML text raw whose value
// opens a quote that the line does not close (`key: "text`), or 0. A quoted
// scalar may span lines in YAML, but a property a person broke in Obsidian
// is this far more often.
func unclosedQuote(raw []byte) int {
	for i, l := range strings.Split(string(raw), "\n") {
		_, v, ok := strings.Cut(strings.TrimSpace(l), ": ")
		if !ok {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "- ") {
				v, ok = t[2:], true
			}
		}
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch {
		case strings.HasPrefix(v, `"`):
			closed := false
			for j := 1; j < len(v); j++ {
				if v[j] == '\\' {
					j++
					continue
				}
				if v[j] == '"' {
					closed = true
					break
				}
			}
			if !closed {
				return i + 1
			}
		case strings.HasPrefix(v, "'"):
			if strings.Count(v[1:], "'")%2 == 0 { // '' is a quote inside; the closing one is odd
				return i + 1
			}
		}
	}
	return 0
}

// yamlLineStarts returns the offset of each line start in the YAML text b,
// breaking lines where yaml.v3 does.
func yamlLineStarts(b []byte) []int {
	starts := []int{0}
	for i := 0; i < len(b); {
		if w := isYAMLBreak(b[i:]); w > 0 {
			i += w
			starts = append(starts, i)
			continue
		}
		i++
	}
	return starts
}

// isYAMLBreak returns the length of the line break b starts with (CRLF, LF,
// CR, NEL, LS or PS, as yaml.v3 reads them), or 0.
func isYAMLBreak(b []byte) int {
	switch {
	case len(b) == 0:
		return 0
	case b[0] == '\r' && len(b) > 1 && b[1] == '\n':
		return 2
	case b[0] == '\r' || b[0] == '\n':
		return 1
	case bytes.HasPrefix(b, []byte("\u0085")):
		return 2
	case bytes.HasPrefix(b, []byte("\u2028")), bytes.HasPrefix(b, []byte("\u2029")):
		return 3
	}
	return 0
}

func lineStarts(b []byte) []int {
	starts := []int{0}
	for i, c := range b {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// Path returns the path the note was parsed with.
func (n *Note) Path() string { return n.path }

// Bytes returns the note's bytes. Parse followed by Bytes gives the input
// back unchanged. The slice must not be modified.
func (n *Note) Bytes() []byte { return n.src }

// HasFrontMatter reports whether the note has a front matter block.
func (n *Note) HasFrontMatter() bool { return n.hasFM }

// BodyOffset returns the byte offset in Bytes() where the body starts.
func (n *Note) BodyOffset() int { return n.bodyStart }

// Body returns the bytes after the front matter.
func (n *Note) Body() []byte { return n.src[n.bodyStart:] }

// LineOf returns the 1-based line number of byte offset off in the note.
func (n *Note) LineOf(off int) int {
	if n.lines == nil {
		n.lines = lineStarts(n.src)
	}
	// The number of line starts at or before off.
	return sort.Search(len(n.lines), func(i int) bool { return n.lines[i] > off })
}

// Keys returns the front matter's property names in file order.
func (n *Note) Keys() []string {
	if n.root == nil {
		return nil
	}
	keys := make([]string, 0, len(n.root.Content)/2)
	for i := 0; i+1 < len(n.root.Content); i += 2 {
		keys = append(keys, n.root.Content[i].Value)
	}
	return keys
}

// property returns the index of key's key node in root.Content, or -1.
func (n *Note) property(key string) int {
	if n.root == nil {
		return -1
	}
	for i := 0; i+1 < len(n.root.Content); i += 2 {
		if n.root.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// Node returns the yaml.v3 value node of a property, for reading lists and
// nested values. The node must not be modified.
func (n *Note) Node(key string) (*yaml.Node, bool) {
	i := n.property(key)
	if i < 0 {
		return nil, false
	}
	return n.root.Content[i+1], true
}

// KeyLine returns the 1-based line in the note of a property's value, or 0
// when there is no such property.
func (n *Note) KeyLine(key string) int {
	v, ok := n.Node(key)
	if !ok {
		return 0
	}
	return n.fileLine(v.Line, v.Column)
}

// Get returns a scalar property's text as written (after YAML unquoting),
// and whether the property exists and is a non-null scalar.
func (n *Note) Get(key string) (string, bool) {
	v, ok := n.Node(key)
	if !ok || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return "", false
	}
	return v.Value, true
}

// GetList returns a property's values as strings: the items of a sequence,
// or a single scalar as a one-item list. Missing or null gives nil.
func (n *Note) GetList(key string) []string {
	v, ok := n.Node(key)
	if !ok {
		return nil
	}
	switch v.Kind {
	case yaml.SequenceNode:
		out := make([]string, 0, len(v.Content))
		for _, c := range v.Content {
			if c.Kind == yaml.ScalarNode {
				out = append(out, c.Value)
			}
		}
		return out
	case yaml.ScalarNode:
		if v.Tag == "!!null" || v.Value == "" {
			return nil
		}
		return []string{v.Value}
	}
	return nil
}

// Decode decodes the whole front matter into v (a struct with yaml tags).
func (n *Note) Decode(v any) error {
	if n.root == nil {
		return nil
	}
	if err := n.root.Decode(v); err != nil {
		return &ParseError{Path: n.path, Line: 1 + n.root.Line, Msg: "front matter: " + err.Error(), Err: err}
	}
	return nil
}

// offsetInFile converts a yaml.v3 position (1-based line and column, in
// runes, inside the YAML text) to a byte offset in the note.
func (n *Note) offsetInFile(line, col int) int {
	if line < 1 {
		return n.yamlStart
	}
	if line-1 >= len(n.yamlLines) {
		return n.yamlEnd
	}
	off := n.yamlStart + n.yamlLines[line-1]
	for c := 1; c < col && off < n.yamlEnd; c++ {
		_, size := utf8.DecodeRune(n.src[off:n.yamlEnd])
		off += size
	}
	return off
}

// yamlLine returns the index in yamlLines of the line holding offset off of
// the note (off inside the YAML text).
func (n *Note) yamlLine(off int) int {
	rel := off - n.yamlStart
	return sort.Search(len(n.yamlLines), func(i int) bool { return n.yamlLines[i] > rel }) - 1
}

// lineStart returns the offset where the YAML line holding off starts.
func (n *Note) lineStart(off int) int {
	return n.yamlStart + n.yamlLines[n.yamlLine(off)]
}

// lineEnd returns the offset just after the line break of the YAML line
// holding off (or yamlEnd).
func (n *Note) lineEnd(off int) int {
	if i := n.yamlLine(off) + 1; i < len(n.yamlLines) && n.yamlStart+n.yamlLines[i] <= n.yamlEnd {
		return n.yamlStart + n.yamlLines[i]
	}
	return n.yamlEnd
}

// lineContentEnd returns the offset of the line break that ends the YAML line
// holding off (or yamlEnd).
func (n *Note) lineContentEnd(off int) int {
	for i := off; i < n.yamlEnd; i++ {
		if isYAMLBreak(n.src[i:n.yamlEnd]) > 0 {
			return i
		}
	}
	return n.yamlEnd
}

// Replace returns a new note with src[start:end] replaced by repl. It fails
// (and the receiver is unchanged) when the result does not parse, or when
// the range is not inside the body, so body edits can never corrupt the front
// matter.
func (n *Note) Replace(start, end int, repl []byte) (*Note, error) {
	if start < n.bodyStart || end < start || end > len(n.src) {
		return nil, fmt.Errorf("%s: edit range [%d,%d) is outside the body [%d,%d)", n.path, start, end, n.bodyStart, len(n.src))
	}
	return Parse(n.path, splice(n.src, start, end, repl))
}

// WithBody returns a new note with the whole body replaced.
func (n *Note) WithBody(body []byte) (*Note, error) {
	return n.Replace(n.bodyStart, len(n.src), body)
}

func splice(src []byte, start, end int, repl []byte) []byte {
	out := make([]byte, 0, len(src)-(end-start)+len(repl))
	out = append(out, src[:start]...)
	out = append(out, repl...)
	return append(out, src[end:]...)
}
