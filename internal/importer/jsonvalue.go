package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// jobj is a JSON object that keeps its key order (session logs are read in
// source order). Values are *jobj, []any, string, json.Number, bool or nil.
type jobj struct {
	keys []string
	vals map[string]any
}

// get returns the value of the first of keys present with a non-null
// value, or nil. A nil *jobj has no keys.
func (o *jobj) get(keys ...string) any {
	if o == nil {
		return nil
	}
	for _, k := range keys {
		if v, ok := o.vals[k]; ok && v != nil {
			return v
		}
	}
	return nil
}

// str returns the first of keys holding a non-empty string (numbers are
// rendered as text), or "".
func (o *jobj) str(keys ...string) string {
	if o == nil {
		return ""
	}
	for _, k := range keys {
		if s := scalarText(o.vals[k]); strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// obj returns the first of keys holding an object, or nil.
func (o *jobj) obj(keys ...string) *jobj {
	if o == nil {
		return nil
	}
	for _, k := range keys {
		if v, ok := o.vals[k].(*jobj); ok {
			return v
		}
	}
	return nil
}

// scalarText renders strings and numbers; other values give "".
func scalarText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}

// decodeJSON parses data into ordered values. Syntax errors come back as
// *json.SyntaxError with the byte offset of the error.
func decodeJSON(data []byte) (any, error) {
	// json.Unmarshal validates the whole input and reports the offset of
	// the first syntax error; the token decoder below then cannot fail on
	// syntax.
	var probe any
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return decodeValue(dec)
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &jobj{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := dec.Token() // '}'
			return o, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token() // ']'
			return list, err
		}
		return nil, fmt.Errorf("unexpected delimiter %v", t)
	default:
		return t, nil
	}
}

// errorLine returns the 1-based line of a JSON decoding error, or 0 when
// the error carries no offset.
func errorLine(data []byte, err error) int {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	// Offset is just past the offending byte; report that byte's line.
	if off > 0 {
		off--
	}
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}

// walkStrings calls fn for every string value under v, in document order.
func walkStrings(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case []any:
		for _, e := range v {
			walkStrings(e, fn)
		}
	case *jobj:
		for _, k := range v.keys {
			walkStrings(v.vals[k], fn)
		}
	}
}
