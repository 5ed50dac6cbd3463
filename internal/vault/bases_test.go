package vault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// someBases returns n base records shaped like the engine's: a note path,
// a commit, the identity of the file written.
func someBases(n int) map[string]baseRec {
	recs := make(map[string]baseRec, n)
	for i := range n {
		recs[fmt.Sprintf("projects/demo/tasks/task-%05d.md", i)] = baseRec{
			Commit: fmt.Sprintf("%040x", i*7919),
			ID:     fileID{dev: 65024, ino: uint64(12256645 + i), size: int64(900 + i%300), mtime: 1795735014882420751 + int64(i), ctime: 1795735014882505092 + int64(i)},
		}
	}
	return recs
}

// len returns the number of records.
func (b *baseRecords) len() int {
	if b.all != nil {
		n := len(b.all)
		for k := range b.put {
			if _, ok := b.all[k]; !ok {
				n++
			}
		}
		return n
	}
	n := len(b.at)
	for k := range b.put {
		if _, ok := slices.BinarySearchFunc(b.at, k, func(s baseSpan, k string) int {
			return bytes.Compare(b.file[s.start+1:s.keyEnd], []byte(k))
		}); !ok {
			n++
		}
	}
	return n
}

// recordsOf returns every record of b.
func recordsOf(t testing.TB, b *baseRecords) map[string]baseRec {
	t.Helper()
	m := map[string]baseRec{}
	for k, r := range b.all {
		m[k] = r
	}
	for _, s := range b.at {
		r, ok := parsePlainRecord(b.file[s.keyEnd:s.end])
		if !ok {
			t.Fatalf("record %q does not parse", b.file[s.start:s.end])
		}
		m[string(b.file[s.start+1:s.keyEnd])] = r
	}
	for k, r := range b.put {
		m[k] = r
	}
	if n := b.len(); n != len(m) {
		t.Fatalf("len() = %d, the records are %d", n, len(m))
	}
	for k, r := range m {
		if g, ok := b.get(k); !ok || g != r {
			t.Fatalf("get(%q) = %+v, %v; want %+v", k, g, ok, r)
		}
	}
	return m
}

// newRecords returns records holding m, as an operation that set each.
func newRecords(m map[string]baseRec) *baseRecords {
	b := &baseRecords{}
	for k, r := range m {
		b.set(k, r)
	}
	return b
}

// The base records the engine saved are what the next operation reads,
// through this vault and through another opening of it (another process);
// the file keeps the form older binaries read: per note, the commit and
// the file's identity as five numbers.
func TestBasesSavedAreRead(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	want := someBases(50)
	want["odd/ne\"w & <x>.md"] = baseRec{Commit: "abc", ID: fileID{dev: 1<<63 + 5, ino: 1<<64 - 1, size: 0, mtime: -1, ctime: 1}}
	if err := v.saveBases(newRecords(want)); err != nil {
		t.Fatal(err)
	}
	v.basesRec = nil // the next operation
	if got := recordsOf(t, v.bases()); !reflect.DeepEqual(got, want) {
		t.Errorf("this vault reads back %d records, not the %d saved (or other values)", len(got), len(want))
	}
	other, err := Open(v.Root)
	if err != nil {
		t.Fatal(err)
	}
	if got := recordsOf(t, other.bases()); !reflect.DeepEqual(got, want) {
		t.Errorf("another opening reads %d records, not the %d saved (or other values)", len(got), len(want))
	}
	data, err := os.ReadFile(filepath.Join(v.Root, ".sessionvault", "state", basesName))
	if err != nil {
		t.Fatal(err)
	}
	if rec := `"projects/demo/tasks/task-00001.md":{"commit":"0000000000000000000000000000000000001eef","id":[65024,12256646,901,1795735014882420752,1795735014882505093]}`; !strings.Contains(string(data), rec) {
		t.Errorf("bases.json does not hold the record in its usual form %s:\n%.300s", rec, data)
	}
}

// Records written by an older binary (its own JSON layout, spaces, the
// keys in another order) are read; a record whose identity is not five
// numbers makes the file unreadable, and every note is compared with HEAD.
func TestBasesReadOthersAndRefuseBroken(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	state := filepath.Join(v.Root, ".sessionvault", "state", basesName)
	os.MkdirAll(filepath.Dir(state), 0o755)
	old := `{ "a.md" : { "id" : [ 1, 2, 3, -4, 5 ], "commit" : "c1" }, "b.md": {"commit": "c2", "id": [6,7,8,9,10]} }`
	if err := os.WriteFile(state, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]baseRec{
		"a.md": {Commit: "c1", ID: fileID{dev: 1, ino: 2, size: 3, mtime: -4, ctime: 5}},
		"b.md": {Commit: "c2", ID: fileID{dev: 6, ino: 7, size: 8, mtime: 9, ctime: 10}},
	}
	v.basesRec = nil // the next operation
	if got := recordsOf(t, v.bases()); !reflect.DeepEqual(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	for _, broken := range []string{
		`{"a.md":{"commit":"c1","id":[1,2,3,4]}}`,
		`{"a.md":{"commit":"c1","id":[1,2,3,4,5,6]}}`,
		`{"a.md":{"commit":"c1","id":[1,2,3,4,"5"]}}`,
		`{"a.md":{"commit":"c1","id":[1,2,3,4,5.5]}}`,
		`{"a.md":{"commit":"c1","id":{"dev":1}}}`,
		`{"a.md":{"commit":"c1","id":[1,2,3,4,99999999999999999999]}}`,
	} {
		if err := os.WriteFile(state, []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		v.basesRec = nil
		if got := recordsOf(t, v.bases()); len(got) != 0 {
			t.Errorf("%s: read %v, want no records (the file is unreadable)", broken, got)
		}
	}
}

// A record another process saved after this vault last read the file is
// what this vault's next operation reads (a running server beside CLI
// calls); a removed file is no records.
func TestBasesChangedOutsideAreReadAgain(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	first := someBases(20)
	if err := v.saveBases(newRecords(first)); err != nil {
		t.Fatal(err)
	}
	v.basesRec = nil
	if got := recordsOf(t, v.bases()); !reflect.DeepEqual(got, first) {
		t.Fatal("the saved records are not read back")
	}
	other, err := Open(v.Root)
	if err != nil {
		t.Fatal(err)
	}
	second := someBases(20)
	second["projects/demo/tasks/task-00003.md"] = baseRec{Commit: "other", ID: fileID{dev: 1, ino: 2, size: 3, mtime: 4, ctime: 5}}
	if err := other.saveBases(newRecords(second)); err != nil {
		t.Fatal(err)
	}
	v.basesRec = nil
	if got := recordsOf(t, v.bases()); !reflect.DeepEqual(got, second) {
		t.Errorf("after another process saved, this vault reads %v for task 3, want %v", got["projects/demo/tasks/task-00003.md"], second["projects/demo/tasks/task-00003.md"])
	}
	os.Remove(filepath.Join(v.Root, ".sessionvault", "state", basesName))
	v.basesRec = nil
	if got := recordsOf(t, v.bases()); len(got) != 0 {
		t.Errorf("after the file was removed, this vault still has %d records", len(got))
	}
}

// An operation's records that could not be saved are not what the next
// operation reads: it reads the file.
func TestBasesNotSavedAreNotKept(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	if err := v.saveBases(newRecords(someBases(3))); err != nil {
		t.Fatal(err)
	}
	v.basesRec = nil
	recs := v.bases()
	recs.set("new.md", baseRec{Commit: "c"})
	state := filepath.Join(v.Root, ".sessionvault", "state", basesName)
	os.Remove(state)
	if err := os.Mkdir(state, 0o755); err != nil { // a folder in its place: the save fails
		t.Fatal(err)
	}
	if err := v.saveBases(recs); err == nil {
		t.Fatal("saving over a folder succeeded")
	}
	os.Remove(state)
	if err := os.WriteFile(state, newRecords(someBases(3)).encode(), 0o644); err != nil {
		t.Fatal(err)
	}
	v.basesRec = nil
	if got := recordsOf(t, v.bases()); len(got) != 3 {
		t.Errorf("the next operation has %d records, want the file's 3 (the unsaved record kept)", len(got))
	}
}

// Setting records keeps the others as they were and the paths in order,
// whether each is new, replaced, first or last.
func TestBasesSetKeepsTheOthers(t *testing.T) {
	t.Parallel()
	base := someBases(10)
	file := newRecords(base).encode()
	for _, put := range []map[string]baseRec{
		{},
		{"a-first.md": {Commit: "new first"}},
		{"z-last.md": {Commit: "new last"}},
		{"projects/demo/tasks/task-00004.md": {Commit: "replaced", ID: fileID{ino: 9}}},
		{"projects/demo/tasks/task-00004.mda": {Commit: "between"}, "projects/demo/tasks/task-00000.md": {Commit: "first replaced"}, "zz.md": {Commit: "z"}, "projects/demo/tasks/task-00009.md": {Commit: "last replaced"}},
		{"we\"ird\tname.md": {Commit: "escaped"}},
	} {
		b, err := readBaseRecords(file)
		if err != nil || b.file == nil {
			t.Fatalf("the plain form is not read as such: %v", err)
		}
		want := maps.Clone(base)
		for k, r := range put {
			b.set(k, r)
			want[k] = r
		}
		if got := recordsOf(t, b); !reflect.DeepEqual(got, want) {
			t.Errorf("put %v: records before saving differ", put)
		}
		saved := b.encode()
		again, err := readBaseRecords(saved)
		if err != nil {
			t.Fatalf("put %v: the saved file does not read: %v\n%s", put, err, saved)
		}
		if got := recordsOf(t, again); !reflect.DeepEqual(got, want) {
			t.Errorf("put %v: the saved file reads %v, want %v", put, got, want)
		}
		var legacy map[string]legacyRec
		if err := json.Unmarshal(saved, &legacy); err != nil || len(legacy) != len(want) {
			t.Errorf("put %v: encoding/json reads %d records (%v), want %d", put, len(legacy), err, len(want))
		}
		_, escaped := put["we\"ird\tname.md"]
		if plain := again.file != nil; plain == escaped {
			t.Errorf("put %v: read back in the plain form: %v", put, plain)
		}
	}
}

// BenchmarkBases times what one operation spends on the base records of
// n notes the engine wrote (a session, decision or task note each):
// reading the file, finding one record, setting it, and writing the file.
// "plain" is the form the engine writes; "whole" a file in another layout,
// decoded whole by encoding/json as every operation did before (the
// baseline).
func BenchmarkBases(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		plain := newRecords(someBases(n)).encode()
		whole, err := json.MarshalIndent(someBases(n), "", " ")
		if err != nil {
			b.Fatal(err)
		}
		for _, form := range []struct {
			name string
			data []byte
		}{{"plain", plain}, {"whole", whole}} {
			b.Run(fmt.Sprintf("%s/%d", form.name, n), func(b *testing.B) {
				v := newVault(b)
				state := filepath.Join(v.Root, ".sessionvault", "state", basesName)
				rel := "projects/demo/tasks/task-00001.md"
				b.ReportAllocs()
				for i := range b.N {
					b.StopTimer()
					if err := os.WriteFile(state, form.data, 0o644); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					v.basesRec = nil
					recs := v.bases()
					if _, ok := recs.get(rel); !ok {
						b.Fatal("no record")
					}
					recs.set(rel, baseRec{Commit: "c", ID: fileID{ino: uint64(i)}})
					if err := v.saveBases(recs); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// legacyRec is a base record as binaries before the plain form read it:
// encoding/json, the identity through fileID's UnmarshalJSON (an array of
// exactly five integers).
type legacyRec struct {
	Commit string `json:"commit"`
	ID     fileID `json:"id"`
}

// readBaseRecords reads any bytes as encoding/json did: the same records,
// or an error where it gave one; and what encode writes reads back as the
// records written.
func FuzzReadBaseRecords(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add(newRecords(someBases(3)).encode())
	f.Add([]byte(`{"a.md":{"commit":"c","id":[1,2,3,4,5]}}tail of an older version"}}`))
	f.Add([]byte(`{"a.md":{"commit":"c","id":[1,2,3,4,5]},"a.md":{"commit":"d","id":[0,-0,3,4,5]}}`))
	f.Add([]byte(`{"b.md":{"commit":"c","id":[1,2,3,4,5]},"a.md":{"commit":"d","id":[0,-0,3,4,5]}}`))
	f.Add([]byte(`{"a\u0026b.md":{"commit":"c","id":[1,2,3,4,5]}}`))
	f.Add([]byte(`{"a.md":{"id":[1,2,3,4,5],"commit":"c"}}`))
	f.Add([]byte(`{"a.md":{"commit":"c","id":[01,2,3,4,5]}}`))
	f.Add([]byte(`{"a.md":{"commit":"c","id":[1,2,3,4,5e0]}}`))
	f.Add([]byte(`{"a.md":{"commit":"c","id":[1,2,3,4,9223372036854775808]}}`))
	f.Add([]byte(`{"a.md":{"Commit":"c","id":[1,2,3,4,5],"extra":1}}`))
	f.Add([]byte("{\"\xff.md\":{\"commit\":\"c\",\"id\":[1,2,3,4,5]}}"))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"a.md":{"commit":"c","id":[null,1,2,3, null ]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := readBaseRecords(data)
		var want map[string]legacyRec
		werr := json.NewDecoder(bytes.NewReader(data)).Decode(&want)
		if (err != nil) != (werr != nil) {
			t.Fatalf("%q: error %v, encoding/json's %v", data, err, werr)
		}
		if err != nil {
			return
		}
		got := recordsOf(t, b)
		if len(got) != len(want) {
			t.Fatalf("%q: %d records, encoding/json %d", data, len(got), len(want))
		}
		for k, w := range want {
			if g, ok := got[k]; !ok || g.Commit != w.Commit || g.ID != w.ID {
				t.Fatalf("%q: record %q = %+v, encoding/json %+v", data, k, g, w)
			}
		}
		b.set("n.md", baseRec{Commit: "set"})
		got["n.md"] = baseRec{Commit: "set"}
		again, err := readBaseRecords(b.encode())
		if err != nil {
			t.Fatalf("%q: written: %v", data, err)
		}
		if g := recordsOf(t, again); !reflect.DeepEqual(g, got) {
			t.Fatalf("%q: written and read back: %v; want %v", data, g, got)
		}
	})
}

// A bases.json holding JSON null (or an empty object) means no records;
// the next operation commits and records its note.
func TestBasesNullIsNoRecords(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	for _, content := range []string{"null", "{}", "null\n\"tail\"}"} {
		state := filepath.Join(v.Root, ".sessionvault", "state", basesName)
		if err := os.WriteFile(state, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Transact(appendOp("n.md", "after "+content, nil)); err != nil {
			t.Fatalf("bases.json %q: %v", content, err)
		}
		v.basesRec = nil
		if rec, ok := v.bases().get("n.md"); !ok || rec.Commit == "" {
			t.Errorf("bases.json %q: the operation's note has no record after it", content)
		}
	}
}
