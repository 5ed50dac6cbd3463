package history

import (
	"crypto/sha1"
	"errors"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func TestIndexRoundTrip(t *testing.T) {
	long := strings.Repeat("l", 5000) // longer than the 12-bit name length
	names := []string{"a", "b/c.md", long, "x" + strings.Repeat("y", 4094)}
	x := emptyIndex()
	var ops []idxOp
	sortStrings(names)
	for i, n := range names {
		h := plumbing.Hash{byte(i + 1)}
		ops = append(ops, idxOp{entry: makeEntry(n, statData{size: uint32(i), mtimeSec: 7}, 0o100644, h)})
	}
	data := x.apply(ops, nil).file(nil)
	if sum := sha1.Sum(data[:len(data)-20]); string(sum[:]) != string(data[len(data)-20:]) {
		t.Fatal("bad checksum")
	}
	y, err := parseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	if y.n() != len(names) {
		t.Fatalf("%d entries", y.n())
	}
	for i, n := range names {
		if string(y.name(i)) != n || y.hash(i) != (plumbing.Hash{byte(i + 1)}) || y.stage(i) != 0 || y.mode(i) != 0o100644 {
			t.Fatalf("entry %d: name %d bytes", i, len(y.name(i)))
		}
		if off := y.offs[i+1] - y.offs[i]; off%8 != 0 || data[y.offs[i+1]-1] != 0 {
			t.Fatalf("entry %d not padded", i)
		}
		if pos, cnt := y.search(n); pos != i || cnt != 1 {
			t.Fatalf("search(%d) = %d, %d", i, pos, cnt)
		}
	}
	// Insert, replace and delete in one rebuild.
	z := y.apply([]idxOp{
		{pos: 0, entry: makeEntry("0", statData{}, 0o100644, plumbing.Hash{9})},
		{pos: 1, del: 1, entry: makeEntry("b/c.md", statData{}, 0o100755, plumbing.Hash{8})},
		{pos: 3, del: 1},
	}, nil).file(nil)
	w, err := parseIndex(z)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 0; i < w.n(); i++ {
		got = append(got, string(w.name(i))[:1])
	}
	if strings.Join(got, "") != "0abl" || w.mode(2) != 0o100755 {
		t.Fatalf("after ops: %v", got)
	}
}

func TestParseIndexErrors(t *testing.T) {
	base := emptyIndex().apply([]idxOp{{entry: makeEntry("a", statData{}, 0o100644, plumbing.Hash{1})}}, nil).file(nil)
	withExt := func(sig string) []byte {
		b := append([]byte(nil), base[:len(base)-20]...)
		b = append(b, sig...)
		b = append(b, 0, 0, 0, 2, 'x', 'y')
		sum := sha1.Sum(b)
		return append(b, sum[:]...)
	}
	if _, err := parseIndex(withExt("TREE")); err != nil {
		t.Fatalf("optional extension: %v", err)
	}
	for _, sig := range []string{"sdir", "abcd"} {
		if _, err := parseIndex(withExt(sig)); !errors.Is(err, ErrUnsupportedIndex) {
			t.Fatalf("%s: %v", sig, err)
		}
	}
	zero := append(append([]byte(nil), base[:len(base)-20]...), make([]byte, 20)...)
	if _, err := parseIndex(zero); !errors.Is(err, ErrUnsupportedIndex) {
		t.Fatalf("zero checksum: %v", err)
	}
	v4 := append([]byte(nil), base...)
	v4[7] = 4
	if _, err := parseIndex(v4); !errors.Is(err, ErrUnsupportedIndex) {
		t.Fatalf("v4: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("DIRX"), base[:40]} {
		if _, err := parseIndex(bad); err == nil || errors.Is(err, ErrUnsupportedIndex) {
			t.Fatalf("corrupt index accepted: %v", err)
		}
	}
}
