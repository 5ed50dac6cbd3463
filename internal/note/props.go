package note

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Set returns a new note whose property key holds value; the receiver is
// unchanged. Only that value's bytes change: the key, the spacing after the
// colon, a trailing comment, every other property and the body stay as they
// were. A missing key is appended at the end of the front matter (a front
// matter block is created when the note has none).
//
// value may be a string, an int, a bool, a time.Time (written as an
// unquoted ISO 8601 UTC timestamp, as Obsidian writes date-time properties),
// a []string (a block-style list, as Obsidian writes lists), or nil (an empty
// value). Strings are written plain when YAML allows it, quoted otherwise
// (wikilinks therefore come out quoted, as Obsidian requires).
func (n *Note) Set(key string, value any) (*Note, error) {
	enc, isList, err := encodeValue(value, n.newline())
	if err != nil {
		return nil, fmt.Errorf("%s: property %q: %w", n.path, key, err)
	}
	i := n.property(key)
	if i < 0 {
		return n.insertProperty(key, enc, isList)
	}
	keyNode, val := n.root.Content[i], n.root.Content[i+1]
	if !isList {
		if start, end, ok := n.inlineScalarRange(val); ok {
			if string(n.src[start:end]) == enc {
				return n, nil
			}
			return Parse(n.path, splice(n.src, start, end, []byte(enc)))
		}
	}
	colon, err := n.afterColon(keyNode)
	if err != nil {
		return nil, err
	}
	end := n.valueBlockEnd(i)
	nl := n.newline()
	repl := " " + enc + nl
	if isList {
		repl = enc + nl
	}
	if string(n.src[colon:end]) == repl {
		return n, nil
	}
	return Parse(n.path, splice(n.src, colon, end, []byte(repl)))
}

// Delete returns a new note without property key (its lines removed). A
// missing key returns the receiver.
func (n *Note) Delete(key string) (*Note, error) {
	i := n.property(key)
	if i < 0 {
		return n, nil
	}
	k := n.root.Content[i]
	start := lineStartAt(n.src, n.offsetInFile(k.Line, k.Column))
	return Parse(n.path, splice(n.src, start, n.valueBlockEnd(i), nil))
}

// newline returns the line ending the front matter uses ("\r\n" or "\n").
func (n *Note) newline() string {
	if i := bytes.IndexByte(n.src, '\n'); i > 0 && n.src[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

func (n *Note) insertProperty(key string, enc string, isList bool) (*Note, error) {
	nl := n.newline()
	line := yamlKey(key) + ":"
	if isList {
		line += enc + nl
	} else {
		line += " " + enc + nl
	}
	if !n.hasFM {
		return Parse(n.path, append([]byte("---"+nl+line+"---"+nl), n.src...))
	}
	at := n.yamlEnd
	if at > n.yamlStart && n.src[at-1] != '\n' {
		line = nl + line
	}
	return Parse(n.path, splice(n.src, at, at, []byte(line)))
}

// yamlKey returns key as a YAML mapping key, quoted when needed.
func yamlKey(key string) string {
	out, err := yaml.Marshal(key)
	if err != nil {
		return strconv.Quote(key)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// encodeValue renders value as YAML text: a scalar, or for a list the bytes
// that follow "key:" (a newline and indented "- item" lines, or " []").
func encodeValue(value any, nl string) (string, bool, error) {
	switch v := value.(type) {
	case nil:
		return "", false, nil
	case string:
		return encodeString(v), false, nil
	case int:
		return strconv.Itoa(v), false, nil
	case int64:
		return strconv.FormatInt(v, 10), false, nil
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
			b.WriteString(nl + "  - " + encodeString(item))
		}
		return b.String(), true, nil
	}
	return "", false, fmt.Errorf("unsupported property value type %T", value)
}

// FormatTime renders t as the engine writes times: ISO 8601 in UTC with
// second precision, e.g. 2026-11-22T14:30:00Z.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Scalar renders s as a one-line YAML scalar the way Set writes strings:
// plain when YAML reads it back as the same string, otherwise double-quoted.
func Scalar(s string) string { return encodeString(s) }

// ListValue renders items as the bytes that follow "key:" for a block-style
// list ("\n  - a\n  - b"), or " []" when empty.
func ListValue(items []string) string {
	enc, _, _ := encodeValue(items, "\n")
	return enc
}

// encodeString renders s as a one-line YAML scalar: plain when YAML reads it
// back as the same string, otherwise double-quoted. Newlines become spaces
// (property values are single-line).
func encodeString(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", " "), "\n", " ")
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
	lineEnd := lineEndAt(n.src, start)
	if lineEnd > n.yamlEnd {
		lineEnd = n.yamlEnd
	}
	line := n.src[start:lineEnd]
	switch v.Style {
	case 0, yaml.TaggedStyle:
		if v.Tag == "!!null" && v.Value == "" {
			return 0, 0, false
		}
		end := len(line)
		for i := 0; i < len(line); i++ {
			if line[i] == '#' && i > 0 && (line[i-1] == ' ' || line[i-1] == '\t') {
				end = i
				break
			}
		}
		raw := strings.TrimRight(string(line[:end]), " \t\r\n")
		if raw != v.Value {
			return 0, 0, false // a multi-line or tagged plain scalar
		}
		return start, start + len(raw), true
	case yaml.DoubleQuotedStyle:
		for i := 1; i < len(line); i++ {
			switch line[i] {
			case '\\':
				i++
			case '"':
				return start, start + i + 1, true
			case '\n':
				return 0, 0, false
			}
		}
	case yaml.SingleQuotedStyle:
		for i := 1; i < len(line); i++ {
			if line[i] == '\'' {
				if i+1 < len(line) && line[i+1] == '\'' {
					i++
					continue
				}
				return start, start + i + 1, true
			}
		}
	}
	return 0, 0, false
}

// afterColon returns the offset just after the ':' that ends key k.
func (n *Note) afterColon(k *yaml.Node) (int, error) {
	off := n.offsetInFile(k.Line, k.Column)
	end := lineEndAt(n.src, off)
	i := off
	if q := n.src[off]; q == '"' || q == '\'' {
		for i = off + 1; i < end && n.src[i] != q; i++ {
			if q == '"' && n.src[i] == '\\' {
				i++
			}
		}
	}
	for ; i < end; i++ {
		if n.src[i] == ':' && (i+1 == len(n.src) || strings.ContainsRune(" \t\r\n", rune(n.src[i+1]))) {
			return i + 1, nil
		}
	}
	return 0, &ParseError{Path: n.path, Line: n.LineOf(off), Msg: fmt.Sprintf("cannot find the ':' after property %q", k.Value)}
}

// valueBlockEnd returns the offset of the line start where the value of the
// property whose key is root.Content[i] ends: the next property's line (less
// the blank and column-0 comment lines just before it, which belong to it),
// or the end of the YAML text.
func (n *Note) valueBlockEnd(i int) int {
	end := n.yamlEnd
	if i+2 < len(n.root.Content) {
		next := n.root.Content[i+2]
		end = lineStartAt(n.src, n.offsetInFile(next.Line, next.Column))
	}
	floor := lineEndAt(n.src, n.offsetInFile(n.root.Content[i].Line, n.root.Content[i].Column))
	for end > floor {
		prev := lineStartAt(n.src, end-1)
		t := bytes.TrimSpace(n.src[prev:end])
		if len(t) == 0 || n.src[prev] == '#' {
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
