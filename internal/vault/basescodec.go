package vault

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// bases.json holds one JSON object: per note path, the commit the engine
// last wrote it in and the identity of the file it wrote,
//
//	{"notes/a.md":{"commit":"<40 hex>","id":[dev,ino,size,mtime,ctime]},...}
//
// It is rewritten by every operation and read by the next one, so it is
// encoded and decoded here without reflection: encoding/json took about
// 5 ms for the records of 1,000 notes, each operation.

// encodeBases returns recs as bases.json: the paths in sorted order, each
// record as {"commit":...,"id":[...]} (fileID.MarshalJSON). It is JSON any
// binary reads as json.Marshal's form.
func encodeBases(recs map[string]baseRec) []byte {
	keys := make([]string, 0, len(recs))
	size := 2
	for k, r := range recs {
		keys = append(keys, k)
		size += len(k) + len(r.Commit) + 128
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		r := recs[k]
		b = appendJSONString(b, k)
		b = append(b, `:{"commit":`...)
		b = appendJSONString(b, r.Commit)
		b = append(b, `,"id":`...)
		b = r.ID.appendJSON(b)
		b = append(b, '}')
	}
	return append(b, '}')
}

// plainJSON reports whether s can be written between quotes as it is: valid
// UTF-8 with no quote, backslash or control character.
func plainJSON(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(s)
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

// decodeBases reads bases.json. The form encodeBases writes is read
// directly; any other valid JSON (spaces, other key order, escaped paths,
// an older binary's layout) is read by encoding/json, which gives the same
// records. As for every state file, bytes after the object (the tail of a
// longer version, left by a write killed before its truncation) are
// ignored. JSON null is no records (never a nil map). An error means the
// file is not such an object.
func decodeBases(data []byte) (map[string]baseRec, error) {
	if recs, ok := decodeBasesPlain(data); ok {
		return recs, nil
	}
	recs := map[string]baseRec{}
	if err := decodeState(data, &recs); err != nil {
		return nil, err
	}
	if recs == nil { // null
		recs = map[string]baseRec{}
	}
	return recs, nil
}

// decodeBasesPlain decodes data when it is exactly in encodeBases's form
// with plain strings; ok is false otherwise (nothing is concluded: the
// caller decodes it with encoding/json).
func decodeBasesPlain(data []byte) (recs map[string]baseRec, ok bool) {
	p := basesParser{rest: data}
	if !p.lit("{") {
		return nil, false
	}
	recs = make(map[string]baseRec, bytes.Count(data, []byte(`"commit"`)))
	if p.lit("}") {
		return recs, true
	}
	for {
		key, ok1 := p.str()
		if !ok1 || !p.lit(`:{"commit":`) {
			return nil, false
		}
		commit, ok2 := p.str()
		if !ok2 || !p.lit(`,"id":[`) {
			return nil, false
		}
		var a [5]int64
		for i := range a {
			if i > 0 && !p.lit(",") {
				return nil, false
			}
			if a[i], ok = p.int(); !ok {
				return nil, false
			}
		}
		if !p.lit("]}") {
			return nil, false
		}
		recs[string(key)] = baseRec{Commit: string(commit), ID: fileID{dev: uint64(a[0]), ino: uint64(a[1]), size: a[2], mtime: a[3], ctime: a[4]}}
		if p.lit("}") {
			return recs, true
		}
		if !p.lit(",") {
			return nil, false
		}
	}
}

// basesParser reads the plain form of bases.json from rest.
type basesParser struct{ rest []byte }

// lit consumes s when rest starts with it.
func (p *basesParser) lit(s string) bool {
	if !bytes.HasPrefix(p.rest, []byte(s)) {
		return false
	}
	p.rest = p.rest[len(s):]
	return true
}

// str consumes a quoted string that plainJSON accepts and returns its
// content.
func (p *basesParser) str() ([]byte, bool) {
	if len(p.rest) == 0 || p.rest[0] != '"' {
		return nil, false
	}
	end := bytes.IndexByte(p.rest[1:], '"')
	if end < 0 || !plainJSON(p.rest[1:1+end]) {
		return nil, false
	}
	s := p.rest[1 : 1+end]
	p.rest = p.rest[end+2:]
	return s, true
}

// int consumes a JSON integer that fits an int64: an optional minus, then
// 0 or digits not starting with 0, not followed by a fraction or exponent.
func (p *basesParser) int() (int64, bool) {
	i := 0
	if i < len(p.rest) && p.rest[i] == '-' {
		i++
	}
	start := i
	for i < len(p.rest) && p.rest[i] >= '0' && p.rest[i] <= '9' {
		i++
	}
	if i == start || (p.rest[start] == '0' && i > start+1) {
		return 0, false
	}
	if i < len(p.rest) && (p.rest[i] == '.' || p.rest[i] == 'e' || p.rest[i] == 'E') {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p.rest[:i]), 10, 64)
	if err != nil {
		return 0, false
	}
	p.rest = p.rest[i:]
	return n, true
}
