package importer

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A small JSON scanner for transcript lines: it reads the fields the importer needs without decoding the rest.

// ccScan reads JSON from b, checking it as it goes; the first error sticks
// (every later call does nothing) and is in err. Strings are returned as
// their raw contents, escapes not decoded (see ccStr), so a string is passed
// over at the speed of bytes.IndexByte: their escapes and control
// characters are not checked, nor is the text's UTF-8.
type ccScan struct {
	b     []byte
	i     int
	depth int
	err   error
}

// ccMaxDepth bounds nesting, so a line of "[[[[…" cannot exhaust memory.
const ccMaxDepth = 512

// ccJSONError is a syntax error in a transcript line.
type ccJSONError struct{ msg string }

func (e *ccJSONError) Error() string { return e.msg }

func (s *ccScan) fail(msg string) {
	if s.err == nil {
		s.err = &ccJSONError{msg}
	}
}

// unexpected fails on the byte at s.i.
func (s *ccScan) unexpected() {
	if s.i >= len(s.b) {
		s.fail("unexpected end of the line (cut short?)")
		return
	}
	c := s.b[s.i]
	if c < 0x20 || c >= 0x7f {
		s.fail(fmt.Sprintf("unexpected byte 0x%02x at byte %d", c, s.i+1))
		return
	}
	s.fail(fmt.Sprintf("unexpected %q at byte %d", c, s.i+1))
}

// peek skips white space and returns the next byte, 0 at the end or after
// an error.
func (s *ccScan) peek() byte {
	if s.err != nil {
		return 0
	}
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

// enter consumes open ('{' or '[') and reports whether the container has
// a first member.
func (s *ccScan) enter(open, close byte) bool {
	if s.peek() != open {
		s.unexpected()
		return false
	}
	s.i++
	if s.depth++; s.depth > ccMaxDepth {
		s.fail("nested too deep")
		return false
	}
	if s.peek() == close {
		s.i++
		s.depth--
		return false
	}
	return s.err == nil
}

// next consumes the ',' before another member (true) or the container's
// close (false).
func (s *ccScan) next(close byte) bool {
	switch s.peek() {
	case ',':
		s.i++
		return true
	case close:
		s.i++
		s.depth--
		return false
	}
	s.unexpected()
	return false
}

// key reads an object's `"key":` and returns the key's raw contents.
func (s *ccScan) key() []byte {
	if s.peek() != '"' {
		s.unexpected()
		return nil
	}
	k := s.rawStr()
	if s.peek() != ':' {
		s.unexpected()
		return nil
	}
	s.i++
	return k
}

// rawStr reads a string (s.b[s.i] is its '"') and returns its contents.
func (s *ccScan) rawStr() []byte {
	start := s.i + 1
	// Keys, IDs and most values are short: a plain loop finds their end
	// sooner than a call to bytes.IndexByte.
	b := s.b
	q := start
	for end := min(len(b), start+16); q < end; q++ {
		switch b[q] {
		case '"':
			s.i = q + 1
			return b[start:q]
		case '\\':
			return s.longStr(start, q)
		}
	}
	return s.longStr(start, q) // no quote nor backslash before q
}

// longStr finds the end of the string whose contents start at start,
// searching from j.
func (s *ccScan) longStr(start, j int) []byte {
	for {
		k := bytes.IndexByte(s.b[j:], '"')
		if k < 0 {
			s.i = len(s.b)
			s.fail("unexpected end of the line in a string (cut short?)")
			return nil
		}
		q := j + k
		n := 0
		for p := q - 1; p >= start && s.b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 1 {
			j = q + 1
			continue
		}
		s.i = q + 1
		return s.b[start:q]
	}
}

// str reads a string's raw contents; another kind of value is passed over
// and gives nil.
func (s *ccScan) str() []byte {
	if s.peek() == '"' {
		return s.rawStr()
	}
	s.skip()
	return nil
}

// boolean reads true; any other value is passed over and gives false.
func (s *ccScan) boolean() bool {
	if s.peek() == 't' {
		s.literal("true")
		return s.err == nil
	}
	s.skip()
	return false
}

// raw returns the next value's JSON text.
func (s *ccScan) raw() []byte {
	s.peek()
	start := s.i
	s.skip()
	if s.err != nil {
		return nil
	}
	return s.b[start:s.i]
}

// skip passes over one value, checking its syntax.
func (s *ccScan) skip() {
	switch c := s.peek(); {
	case c == '"':
		s.rawStr()
	case c == '{':
		for ok := s.enter('{', '}'); ok; ok = s.next('}') {
			s.key()
			s.skip()
		}
	case c == '[':
		for ok := s.enter('[', ']'); ok; ok = s.next(']') {
			s.skip()
		}
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		s.number()
	default:
		s.unexpected()
	}
}

func (s *ccScan) literal(lit string) {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.unexpected()
		return
	}
	s.i += len(lit)
}

// number passes over a number: -?digits(.digits)?([eE][+-]?digits)?
func (s *ccScan) number() {
	if s.b[s.i] == '-' {
		s.i++
	}
	digits := func() bool {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n > 0
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++ // no leading zeros
	} else if !digits() {
		s.unexpected()
		return
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !digits() {
			s.unexpected()
			return
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !digits() {
			s.unexpected()
		}
	}
}

// ccStr decodes a JSON string's raw contents, at most about max bytes of it
// (cut at a rune boundary; max <= 0: all). Invalid UTF-8 and lone
// surrogates become U+FFFD.
func ccStr(raw []byte, max int) string {
	if max > 0 && len(raw) > 6*max+6 {
		raw = raw[:6*max+6] // an escape gives at least one byte per six
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		if max > 0 && len(raw) > max {
			cut := max
			for cut > 0 && !utf8.RuneStart(raw[cut]) {
				cut--
			}
			raw = raw[:cut]
		}
		if utf8.Valid(raw) {
			return string(raw)
		}
		return strings.ToValidUTF8(string(raw), "\uFFFD")
	}
	n := len(raw)
	if max > 0 {
		n = min(n, max+4)
	}
	b := make([]byte, 0, n)
	for i := 0; i < len(raw); {
		if max > 0 && len(b) >= max {
			break
		}
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(raw) {
			break
		}
		e := raw[i+1]
		i += 2
		switch e {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'u':
			r, ok := ccHexRune(raw[i:])
			if !ok {
				b = append(b, "\uFFFD"...)
				continue
			}
			i += 4
			if r >= 0xd800 && r < 0xdc00 && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if r2, ok := ccHexRune(raw[i+2:]); ok && r2 >= 0xdc00 && r2 < 0xe000 {
					r = 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00)
					i += 6
				}
			}
			if r >= 0xd800 && r < 0xe000 {
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default:
			b = append(b, e) // \" \\ \/ and anything else, as written
		}
	}
	if max > 0 && len(b) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b = b[:cut]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// ccHexRune reads the four hex digits of a `\uXXXX` escape (b starts after
// the "\u").
func ccHexRune(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}
