package importer

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// Times and text folding for SpecStory chats.

// specStoryNameTime parses the "YYYY-MM-DD_HH-MM[-SS][Z]" start of a
// SpecStory file name ("Z": UTC, else loc).
func specStoryNameTime(base string, loc *time.Location) (time.Time, bool) {
	if len(base) < 16 || base[10] != '_' {
		return time.Time{}, false
	}
	t, start, _, ok, _ := findStamp([]byte(base), loc)
	return t, ok && start == 0
}

// findStamp finds the first date with a time of day in b:
// "2025-10-01 23:30Z", "2026-07-13 13:40:49Z", "2025-11-13 21:12:14-0700",
// "2025-07-20_00-45-12Z", "2025-04-05T09:08:24", "2/13/2025, 9:33:58 AM"
// (month first, or day first when the first number is over 12),
// "13.2.2025, 09:33". A zone written after it is used, else loc. start and
// end delimit it in b; bad reports a date and time of the right shape with
// values out of range ("2025-13-40 25:61Z"), in which case ok is false.
func findStamp(b []byte, loc *time.Location) (t time.Time, start, end int, ok, bad bool) {
	for i := 0; i < len(b); i++ {
		if !isDigit(b[i]) || i > 0 && isDigit(b[i-1]) {
			continue
		}
		if t, n, ok, bad := isoStamp(b[i:], loc); ok || bad {
			return t, i, i + n, ok, bad
		}
		if t, n, ok, bad := localeStamp(b[i:], loc); ok || bad {
			return t, i, i + n, ok, bad
		}
	}
	return time.Time{}, 0, 0, false, false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digits reads exactly n digits at b[i:].
func digits(b []byte, i, n int) (int, bool) {
	if i+n > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[i : i+n] {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// isoStamp reads "YYYY-MM-DD", a separator (' ', 'T' or '_'), "HH:MM[:SS]"
// ("HH-MM[-SS]" after '_'), a fraction and a zone.
func isoStamp(b []byte, loc *time.Location) (time.Time, int, bool, bool) {
	y, ok1 := digits(b, 0, 4)
	mo, ok2 := digits(b, 5, 2)
	d, ok3 := digits(b, 8, 2)
	if !ok1 || !ok2 || !ok3 || b[4] != '-' || b[7] != '-' || len(b) < 13 {
		return time.Time{}, 0, false, false
	}
	sep := b[10]
	if sep != ' ' && sep != 'T' && sep != '_' {
		return time.Time{}, 0, false, false
	}
	tsep := byte(':')
	if sep == '_' {
		tsep = '-'
	}
	h, ok4 := digits(b, 11, 2)
	if !ok4 || len(b) < 16 || b[13] != tsep {
		return time.Time{}, 0, false, false
	}
	mi, ok5 := digits(b, 14, 2)
	if !ok5 {
		return time.Time{}, 0, false, false
	}
	i, sec := 16, 0
	if i+2 < len(b) && b[i] == tsep {
		if s, ok := digits(b, i+1, 2); ok {
			sec, i = s, i+3
			if i < len(b) && b[i] == '.' {
				i++
				for i < len(b) && isDigit(b[i]) {
					i++
				}
			}
		}
	}
	z, n := stampZone(b[i:], loc)
	t, ok := mkTime(y, mo, d, h, mi, sec, z)
	return t, i + n, ok, !ok
}

// stampZone reads "Z", " UTC", "GMT", "+02:00", "-0700" at the start of b.
func stampZone(b []byte, loc *time.Location) (*time.Location, int) {
	i := 0
	if i < len(b) && b[i] == ' ' {
		i++
	}
	switch {
	case i < len(b) && b[i] == 'Z':
		return time.UTC, i + 1
	case bytes.HasPrefix(b[i:], []byte("UTC")), bytes.HasPrefix(b[i:], []byte("GMT")):
		return time.UTC, i + 3
	case i < len(b) && (b[i] == '+' || b[i] == '-'):
		hh, ok := digits(b, i+1, 2)
		j := i + 3
		if j < len(b) && b[j] == ':' {
			j++
		}
		mm, ok2 := digits(b, j, 2)
		if ok && ok2 && hh <= 14 && mm <= 59 {
			off := hh*3600 + mm*60
			if b[i] == '-' {
				off = -off
			}
			return time.FixedZone("", off), j + 2
		}
	}
	return loc, 0
}

// localeStamp reads "M/D/YYYY, h:mm[:ss] [AM|PM]" and "D.M.YYYY, HH:MM[:SS]".
func localeStamp(b []byte, loc *time.Location) (time.Time, int, bool, bool) {
	num := func(i int) (int, int) { // a 1-2 digit number at i and its end
		v, j := 0, i
		for j < len(b) && j < i+2 && isDigit(b[j]) {
			v = v*10 + int(b[j]-'0')
			j++
		}
		return v, j
	}
	a, i := num(0)
	if i == 0 || i >= len(b) || b[i] != '/' && b[i] != '.' {
		return time.Time{}, 0, false, false
	}
	sep := b[i]
	c2, j := num(i + 1)
	if j == i+1 || j >= len(b) || b[j] != sep {
		return time.Time{}, 0, false, false
	}
	y, ok := digits(b, j+1, 4)
	if !ok {
		return time.Time{}, 0, false, false
	}
	k := j + 5
	if k < len(b) && b[k] == ',' {
		k++
	}
	if k >= len(b) || b[k] != ' ' {
		return time.Time{}, 0, false, false
	}
	h, e := num(k + 1)
	if e == k+1 || e >= len(b) || b[e] != ':' {
		return time.Time{}, 0, false, false
	}
	mi, ok := digits(b, e+1, 2)
	if !ok {
		return time.Time{}, 0, false, false
	}
	k, sec := e+3, 0
	if k < len(b) && b[k] == ':' {
		if s, ok := digits(b, k+1, 2); ok {
			sec, k = s, k+3
		}
	}
	ampm := byte(0)
	if k+3 <= len(b) && b[k] == ' ' {
		switch strings.ToUpper(string(b[k+1 : k+3])) {
		case "AM":
			ampm, k = 'a', k+3
		case "PM":
			ampm, k = 'p', k+3
		}
	}
	mo, d := a, c2
	if sep == '.' || ampm == 0 && a > 12 {
		mo, d = c2, a
	}
	if ampm != 0 {
		if h < 1 || h > 12 {
			return time.Time{}, k, false, true
		}
		if h == 12 {
			h = 0
		}
		if ampm == 'p' {
			h += 12
		}
	}
	t, ok := mkTime(y, mo, d, h, mi, sec, loc)
	return t, k, ok, !ok
}

// mkTime builds a time, false when a value is out of range.
func mkTime(y, mo, d, h, mi, s int, loc *time.Location) (time.Time, bool) {
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, 0, loc)
	if t.Day() != d {
		return time.Time{}, false // 2025-02-30
	}
	return t, true
}

// codeLine folds code (a command, a path) into one line of at most
// MaxLineLen bytes: runs of white space become one space.
func codeLine(b []byte) string { return foldLine("", b, false) }

// proseLine folds markdown text into one line of at most MaxLineLen bytes,
// as line does (see appendFold).
func proseLine(b []byte) string { return foldLine("", b, true) }

// foldLine returns prefix and b folded (see appendFold) into one line of at
// most MaxLineLen bytes, cut with "…".
func foldLine(prefix string, b []byte, prose bool) string {
	var buf [MaxLineLen + 8]byte
	return truncate(string(appendFold(append(buf[:0], prefix...), b, prose)), MaxLineLen)
}

// appendFold appends b to out folded into one line, reading only what fits
// in MaxLineLen bytes: runs of white space become one space and, for prose,
// what clean does to markdown, without its regular expressions (about 50 µs
// for 600 bytes, and a chat gives a line per request and tool call):
// outside code spans, backticks, "**", "~~" and "__" (not inside a word)
// go, links become their text, <https://…> its address, and simple HTML
// tags (<br>, <details>, …) a space.
func appendFold(out, b []byte, prose bool) []byte {
	base := len(out)
	space, code := false, false
	special := &foldCode
	if prose {
		special = &foldProse
	}
	for i := 0; i < len(b) && len(out) <= MaxLineLen; {
		if j := i; !special[b[j]] { // a run of ordinary bytes, copied as far as it fits
			for j < len(b) && !special[b[j]] {
				j++
			}
			if space && len(out) > base {
				out = append(out, ' ')
			}
			space = false
			out = append(out, b[i:min(j, i+MaxLineLen+1-len(out))]...)
			i = j
			continue
		}
		c := b[i]
		if prose {
			n, emitted := 0, []byte(nil)
			switch {
			case c == '`':
				code, n = !code, 1
			case code:
			case (c == '*' || c == '~') && i+1 < len(b) && b[i+1] == c:
				n = 2
			case c == '_' && i+1 < len(b) && b[i+1] == '_' && !(i > 0 && isWordByte(b[i-1]) && i+2 < len(b) && isWordByte(b[i+2])):
				n = 2
			case c == '[' || c == '!' && i+1 < len(b) && b[i+1] == '[':
				emitted, n = mdLink(b[i:])
			case c == '<':
				emitted, n = htmlTag(b[i:])
				if n > 0 && emitted == nil {
					space = true
				}
			}
			if n > 0 {
				for _, x := range emitted {
					out, space = foldByte(out, base, x, space)
				}
				i += n
				continue
			}
		}
		out, space = foldByte(out, base, c, space)
		i++
	}
	return out
}

// foldCode and foldProse mark the bytes appendFold looks at: white space,
// and for prose the markdown it removes.
var foldCode, foldProse = func() (code, prose [256]bool) {
	for _, c := range " \t\n\r" {
		code[c], prose[c] = true, true
	}
	for _, c := range "`*~_[!<" {
		prose[c] = true
	}
	return code, prose
}()

// foldByte appends c to out, a run of white space as one space (none
// before the first byte after base, nor at the end).
func foldByte(out []byte, base int, c byte, space bool) ([]byte, bool) {
	if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
		return out, true
	}
	if space && len(out) > base {
		out = append(out, ' ')
	}
	return append(out, c), false
}

// mdLink reads "[text](target)" or "![alt](target)" (a target without
// white space) at the start of b: the text and the length read, or 0.
func mdLink(b []byte) ([]byte, int) {
	i := 0
	if b[0] == '!' {
		i = 1
	}
	end := bytes.IndexByte(b[i+1:min(len(b), i+1+500)], ']')
	if end < 0 {
		return nil, 0
	}
	text := b[i+1 : i+1+end]
	j := i + 1 + end + 1
	if j >= len(b) || b[j] != '(' || bytes.ContainsAny(text, "[\n") {
		return nil, 0
	}
	for k := j + 1; k < len(b) && k < j+2000; k++ {
		switch b[k] {
		case ')':
			return text, k + 1
		case ' ', '\t', '\n', '\r':
			return nil, 0
		}
	}
	return nil, 0
}

// htmlTag reads at the start of b an autolink "<https://…>" (its address
// and its length) or one of the simple tags clean removes (nil and its
// length); the length is 0 for anything else.
func htmlTag(b []byte) ([]byte, int) {
	if bytes.HasPrefix(b, []byte("<http://")) || bytes.HasPrefix(b, []byte("<https://")) {
		for k := 1; k < len(b) && k < 2000; k++ {
			switch b[k] {
			case '>':
				return b[1:k], k + 1
			case ' ', '\t', '\n', '\r', '<':
				return nil, 0
			}
		}
		return nil, 0
	}
	i := 1
	if i < len(b) && b[i] == '/' {
		i++
	}
	j := i
	for j < len(b) && b[j] >= 'a' && b[j] <= 'z' {
		j++
	}
	switch string(b[i:j]) {
	case "br", "sub", "sup", "b", "i", "em", "strong", "code", "details", "summary":
	default:
		return nil, 0
	}
	for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
		j++
	}
	if j < len(b) && b[j] == '/' {
		j++
	}
	if j < len(b) && b[j] == '>' {
		return nil, j + 1
	}
	return nil, 0
}

// refHit is a reference found by scanRefs, at pos.
type refHit struct {
	pos, n int
	pr     bool
}

// scanRefs adds the references in b to r as refs.scan does — GitHub pull
// and issue URLs; "PR #N", "pull request #N", "PR N" (two or more digits),
// "PR-N"/"prN" (three or more); "#N" (two to six digits) after neither a
// word character, '&', '#' nor '/', nor a word of notIssueWords — in order
// of appearance, without its regular expressions (about 150 ns a byte; a
// chat may hold a thousand requests).
func scanRefs(r *refs, b []byte) {
	var buf [16]refHit
	hits := buf[:0]
	for i := 0; i < len(b); { // github\.com/[\w.-]+/[\w.-]+/(pull|issues)/(\d+)
		j := bytes.Index(b[i:], []byte("github.com/"))
		if j < 0 {
			break
		}
		s := i + j
		i = s + 1
		k := s + len("github.com/")
		for part := 0; part < 2 && k >= 0; part++ {
			e := k
			for e < len(b) && (isWordByte(b[e]) || b[e] == '.' || b[e] == '-') {
				e++
			}
			if e == k || e >= len(b) || b[e] != '/' {
				k = -1
			} else {
				k = e + 1
			}
		}
		if k < 0 {
			continue
		}
		pr := bytes.HasPrefix(b[k:], []byte("pull/"))
		switch {
		case pr:
			k += len("pull/")
		case bytes.HasPrefix(b[k:], []byte("issues/")):
			k += len("issues/")
		default:
			continue
		}
		e := k
		for e < len(b) && isDigit(b[e]) {
			e++
		}
		if e > k {
			n, _ := strconv.Atoi(string(b[k:e]))
			hits = append(hits, refHit{s, n, pr})
			i = e
		}
	}
	for s := 0; s+1 < len(b); s++ { // (?i)\b(?:(?:PR|pull request)\s?#\s?(\d{1,6})|PR\s(\d{2,6})|PR-?(\d{3,6}))\b
		if b[s]|0x20 != 'p' || s > 0 && isWordByte(b[s-1]) {
			continue
		}
		if n, end, ok := prRef(b, s); ok {
			hits = append(hits, refHit{s, n, true})
			s = end - 1
		}
	}
	for i := 0; i < len(b); { // (?i)(\b[a-z]+\b)?[\s(]*(?:^|[^\w&#/])#(\d{2,6})\b
		j := bytes.IndexByte(b[i:], '#')
		if j < 0 {
			break
		}
		h := i + j
		i = h + 1
		n, e, ok := refDigits(b, h+1, 2, 6)
		if !ok {
			continue
		}
		if h > 0 {
			if c := b[h-1]; isWordByte(c) || c == '&' || c == '#' || c == '/' {
				continue
			}
			i = e
			if notIssueWord(b, h-1) {
				continue
			}
		}
		hits = append(hits, refHit{h + 1, n, false})
		i = e
	}
	for a := 1; a < len(hits); a++ { // stable, by position
		for k := a; k > 0 && hits[k].pos < hits[k-1].pos; k-- {
			hits[k], hits[k-1] = hits[k-1], hits[k]
		}
	}
	for _, h := range hits {
		r.add(h.n, h.pr)
	}
}

// prRef reads a pull-request reference starting at b[s] ('p' or 'P').
func prRef(b []byte, s int) (n, end int, ok bool) {
	isPR := s+1 < len(b) && b[s+1]|0x20 == 'r'
	if isPR {
		if n, e, ok := hashRef(b, s+2); ok {
			return n, e, true
		}
	}
	if len(b)-s >= len("pull request") && bytes.EqualFold(b[s:s+len("pull request")], []byte("pull request")) {
		if n, e, ok := hashRef(b, s+len("pull request")); ok {
			return n, e, true
		}
	}
	if !isPR {
		return 0, 0, false
	}
	k := s + 2
	if k < len(b) && isSpaceRE(b[k]) {
		if n, e, ok := refDigits(b, k+1, 2, 6); ok {
			return n, e, true
		}
	}
	if k < len(b) && b[k] == '-' {
		if n, e, ok := refDigits(b, k+1, 3, 6); ok {
			return n, e, true
		}
	}
	return refDigits(b, k, 3, 6)
}

// hashRef reads `\s?#\s?(\d{1,6})\b` at b[k].
func hashRef(b []byte, k int) (n, end int, ok bool) {
	if k+1 < len(b) && isSpaceRE(b[k]) && b[k+1] == '#' {
		k++
	}
	if k >= len(b) || b[k] != '#' {
		return 0, 0, false
	}
	k++
	if k < len(b) && isSpaceRE(b[k]) {
		if n, e, ok := refDigits(b, k+1, 1, 6); ok {
			return n, e, true
		}
	}
	return refDigits(b, k, 1, 6)
}

// refDigits reads min to max digits at b[k] followed by a word boundary.
func refDigits(b []byte, k, min, max int) (n, end int, ok bool) {
	e := k
	for e < len(b) && isDigit(b[e]) && e-k <= max {
		n = n*10 + int(b[e]-'0')
		e++
	}
	if e-k < min || e-k > max || e < len(b) && isWordByte(b[e]) {
		return 0, 0, false
	}
	return n, e, true
}

// isSpaceRE reports whether c is \s of a regular expression.
func isSpaceRE(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// notIssueWord reports whether the "#N" whose preceding character is b[k]
// follows a word of notIssueWords ("Step #2"), as reHashRef reads it: the
// word, then spaces and '(', then b[k].
func notIssueWord(b []byte, k int) bool {
	j := k
	for j > 0 && (isSpaceRE(b[j-1]) || b[j-1] == '(') {
		j--
	}
	e := j
	for j > 0 && (b[j-1]|0x20 >= 'a' && b[j-1]|0x20 <= 'z') {
		j--
	}
	if j == e || e-j > 16 || j > 0 && isWordByte(b[j-1]) {
		return false
	}
	var low [16]byte
	for i, c := range b[j:e] {
		low[i] = c | 0x20
	}
	return notIssueWords[string(low[:e-j])]
}
