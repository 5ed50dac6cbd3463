package vault

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// bases.json holds one JSON object: per note path, the commit the engine
// last wrote it in and the identity of the file it wrote,
//
//	{"notes/a.md":{"commit":"<40 hex>","id":[dev,ino,size,mtime,ctime]},...}
//
// Every operation reads a few records and rewrites the file, which holds a
// record for every note the engine ever wrote: one per session, decision
// and task. So the file is not decoded whole. In the form encode
// writes (plain paths in ascending order), a record is found by a binary
// search over the records' places, and rewriting copies the records the
// operation did not change as they are. Any other valid JSON (an older
// binary's, a person's) is decoded whole by encoding/json.

// baseRecords are the base records as one operation sees them: those of
// bases.json and those it put since reading it.
type baseRecords struct {
	file []byte             // bases.json in the plain form (nil when not)
	at   []baseSpan         // file's records, in order
	all  map[string]baseRec // bases.json decoded whole, when not in the plain form
	put  map[string]baseRec // put by this operation
}

// baseSpan is the place of one record in the plain form: file[start:end]
// is `"path":{...}`, and the path is file[start+1:keyEnd].
type baseSpan struct{ start, keyEnd, end int }

// readBaseRecords reads bases.json. The bytes after the object (the tail of
// a longer version, left by a write killed before its truncation) are
// ignored, as in every state file. JSON null is no records. An error means
// data is not such an object.
func readBaseRecords(data []byte) (*baseRecords, error) {
	if at, ok := scanPlainBases(data); ok {
		return &baseRecords{file: data, at: at}, nil
	}
	all := map[string]baseRec{}
	if err := decodeState(data, &all); err != nil {
		return nil, err
	}
	if all == nil { // null
		all = map[string]baseRec{}
	}
	return &baseRecords{all: all}, nil
}

// get returns the record of path rel.
func (b *baseRecords) get(rel string) (baseRec, bool) {
	if r, ok := b.put[rel]; ok {
		return r, true
	}
	if b.all != nil {
		r, ok := b.all[rel]
		return r, ok
	}
	i, ok := slices.BinarySearchFunc(b.at, rel, func(s baseSpan, rel string) int {
		return bytes.Compare(b.file[s.start+1:s.keyEnd], []byte(rel))
	})
	if !ok {
		return baseRec{}, false
	}
	r, _ := parsePlainRecord(b.file[b.at[i].keyEnd:b.at[i].end]) // scanned already
	return r, true
}

// set records r as rel's record.
func (b *baseRecords) set(rel string, r baseRec) {
	if b.put == nil {
		b.put = map[string]baseRec{}
	}
	b.put[rel] = r
}

// encode returns the records as bases.json in the plain form: the paths in
// ascending order, each as {"commit":...,"id":[...]}. It is JSON any
// binary reads. The records of the file not put again are copied as they
// are.
func (b *baseRecords) encode() []byte {
	keys := make([]string, 0, len(b.put))
	for k := range b.put {
		keys = append(keys, k)
	}
	if b.all != nil {
		for k := range b.all {
			if _, ok := b.put[k]; !ok {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	out := make([]byte, 0, len(b.file)+len(keys)*160+2)
	out = append(out, '{')
	appendRec := func(k string) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		r, ok := b.put[k]
		if !ok {
			r = b.all[k]
		}
		out = appendJSONString(out, k)
		out = append(out, `:{"commit":`...)
		out = appendJSONString(out, r.Commit)
		out = append(out, `,"id":`...)
		out = r.ID.appendJSON(out)
		out = append(out, '}')
	}
	k := 0
	for _, s := range b.at {
		key := b.file[s.start+1 : s.keyEnd]
		for k < len(keys) && bytes.Compare([]byte(keys[k]), key) < 0 {
			appendRec(keys[k])
			k++
		}
		if k < len(keys) && string(key) == keys[k] {
			appendRec(keys[k])
			k++
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, b.file[s.start:s.end]...)
	}
	for ; k < len(keys); k++ {
		appendRec(keys[k])
	}
	return append(out, '}')
}

// plainJSON reports whether s can be written between quotes as it is: valid
// UTF-8 with no quote, backslash or control character.
func plainJSON(s []byte) bool {
	ascii := true
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	return ascii || utf8.Valid(s)
}

// appendJSONString appends s as a JSON string: as it is when plainJSON,
// else escaped by encoding/json.
func appendJSONString(b []byte, s string) []byte {
	if plainJSON([]byte(s)) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// scanPlainBases returns the places of data's records when data is in the
// plain form: exactly what encode writes, with paths that plainJSON accepts
// in strictly ascending order. ok is false otherwise; nothing is concluded
// then (the caller decodes it with encoding/json).
func scanPlainBases(data []byte) (at []baseSpan, ok bool) {
	p := basesParser{data: data}
	if !p.lit("{") {
		return nil, false
	}
	if p.lit("}") {
		return nil, true
	}
	at = make([]baseSpan, 0, len(data)/128+1) // a record is about 150 bytes
	for {
		start := p.pos
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		if n := len(at); n > 0 && bytes.Compare(data[at[n-1].start+1:at[n-1].keyEnd], key) >= 0 {
			return nil, false
		}
		keyEnd := p.pos - 1
		if !p.record() {
			return nil, false
		}
		at = append(at, baseSpan{start: start, keyEnd: keyEnd, end: p.pos})
		if p.lit("}") {
			return at, true
		}
		if !p.lit(",") {
			return nil, false
		}
	}
}

// parsePlainRecord reads one record's plain form after its path:
// `":{"commit":"...","id":[...]}` from the path's closing quote on.
func parsePlainRecord(b []byte) (baseRec, bool) {
	p := basesParser{data: b, pos: 1}
	var r baseRec
	ok := p.recordInto(&r)
	return r, ok && p.pos == len(b)
}

// basesParser reads the plain form of bases.json: data[pos:] is what is
// left to read.
type basesParser struct {
	data []byte
	pos  int
}

// record consumes `:{"commit":"...","id":[five integers]}`.
func (p *basesParser) record() bool { return p.recordInto(nil) }

// recordInto is record, keeping what it read in r when r is not nil.
func (p *basesParser) recordInto(r *baseRec) bool {
	if !p.lit(`:{"commit":`) {
		return false
	}
	commit, ok := p.str()
	if !ok || !p.lit(`,"id":[`) {
		return false
	}
	var a [5]int64
	for i := range a {
		if i > 0 && !p.lit(",") {
			return false
		}
		if a[i], ok = p.int(); !ok {
			return false
		}
	}
	if !p.lit("]}") {
		return false
	}
	if r != nil {
		*r = baseRec{Commit: string(commit), ID: fileID{dev: uint64(a[0]), ino: uint64(a[1]), size: a[2], mtime: a[3], ctime: a[4]}}
	}
	return true
}

// lit consumes s when what is left starts with it.
func (p *basesParser) lit(s string) bool {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(s)) {
		return false
	}
	p.pos += len(s)
	return true
}

// str consumes a quoted string that plainJSON accepts and returns its
// content.
func (p *basesParser) str() ([]byte, bool) {
	rest := p.data[p.pos:]
	if len(rest) == 0 || rest[0] != '"' {
		return nil, false
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 || !plainJSON(rest[1:1+end]) {
		return nil, false
	}
	p.pos += end + 2
	return rest[1 : 1+end], true
}

// int consumes a JSON integer that fits an int64: an optional minus, then
// 0 or digits not starting with 0, not followed by a fraction or exponent.
func (p *basesParser) int() (int64, bool) {
	rest := p.data[p.pos:]
	i := 0
	neg := len(rest) > 0 && rest[0] == '-'
	if neg {
		i++
	}
	start := i
	var n uint64
	for ; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
		if n > (1<<63)/10 {
			return 0, false
		}
		n = n*10 + uint64(rest[i]-'0')
		if n > 1<<63 {
			return 0, false
		}
	}
	if i == start || (rest[start] == '0' && i > start+1) {
		return 0, false
	}
	if i < len(rest) && (rest[i] == '.' || rest[i] == 'e' || rest[i] == 'E') {
		return 0, false
	}
	if !neg && n == 1<<63 {
		return 0, false
	}
	p.pos += i
	if neg {
		return -int64(n), true // -(1<<63) wraps to itself: the least int64
	}
	return int64(n), true
}
