package history

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// The on-disk index (versions 2 and 3), read and patched as bytes. An entry
// is: ctime sec, ctime nsec, mtime sec, mtime nsec, dev, ino, mode, uid, gid,
// size (ten big-endian uint32), the 20-byte object id, 16 bits of flags
// (assume-valid, extended, 2-bit stage, 12-bit name length), in version 3
// 16 more flag bits when "extended" is set, the path, and 1 to 8 NULs padding
// the entry to a multiple of 8 bytes.
const (
	entryFixed   = 62
	offMtimeSec  = 8
	offMode      = 24
	offSize      = 36
	offHash      = 40
	offFlags     = 60
	flagValid    = 0x8000
	flagExtended = 0x4000
	nameMask     = 0x0fff
)

var be = binary.BigEndian

type index struct {
	data     []byte // the whole file, trailing checksum included
	version  uint32
	offs     []int      // entry offsets; offs[len(offs)-1] is the end of the entries
	stamp    fileStamp  // of the file read; zero when there was none
	mtimeSec int64      // the file's mtime (seconds); -1 when there was none
	treeExt  []byte     // the TREE extension's data, if any
	link     []byte     // the link extension's data (a split index), if any
	split    *splitInfo // set on the merged view of a split index
}

func (x *index) n() int { return len(x.offs) - 1 }

// emptyIndex is a version 2 index with no entries, for a repository that has
// no index file yet.
func emptyIndex() *index {
	data := make([]byte, 12, 32)
	copy(data, "DIRC")
	be.PutUint32(data[4:], 2)
	data = append(data, make([]byte, 20)...)
	return &index{data: data, version: 2, offs: []int{12}, mtimeSec: -1}
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("history: .git/index is corrupt: "+format, args...)
}

// parseIndex walks the entries and extensions of an index file. It does not
// verify the trailing checksum (git does so only in fsck). It fails with
// ErrUnsupportedIndex for version 4, a required (lowercase) extension other
// than "link" (a split index: see mergeSplit), such as "sdir" (sparse
// index), and an all-zero checksum.
func parseIndex(data []byte) (*index, error) {
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, corrupt("bad header")
	}
	x := &index{data: data, version: be.Uint32(data[4:]), mtimeSec: -1}
	switch x.version {
	case 2, 3:
	case 4:
		return nil, fmt.Errorf("%w: version 4 (path compression)", ErrUnsupportedIndex)
	default:
		return nil, corrupt("unknown version %d", x.version)
	}
	end := len(data) - 20
	if bytes.Equal(data[end:], make([]byte, 20)) {
		return nil, fmt.Errorf("%w: all-zero checksum (index.skipHash)", ErrUnsupportedIndex)
	}
	n := int(be.Uint32(data[8:]))
	if n > (end-12)/entryFixed {
		return nil, corrupt("%d entries do not fit", n)
	}
	x.offs = make([]int, 0, n+1)
	off := 12
	for i := 0; i < n; i++ {
		if off+entryFixed > end {
			return nil, corrupt("entry %d truncated", i)
		}
		flags := be.Uint16(data[off+offFlags:])
		nameOff := off + entryFixed
		if flags&flagExtended != 0 {
			if x.version < 3 {
				return nil, corrupt("extended flags in a version 2 index")
			}
			nameOff += 2
		}
		nl := int(flags & nameMask)
		if nl == nameMask {
			if nameOff+nl > end {
				return nil, corrupt("entry %d truncated", i)
			}
			z := bytes.IndexByte(data[nameOff+nl:end], 0)
			if z < 0 {
				return nil, corrupt("entry %d has no name terminator", i)
			}
			nl += z
		}
		x.offs = append(x.offs, off)
		off += (nameOff - off + nl + 8) &^ 7
		if off > end {
			return nil, corrupt("entry %d truncated", i)
		}
	}
	x.offs = append(x.offs, off)
	for p := off; p < end; {
		if p+8 > end {
			return nil, corrupt("extension header truncated")
		}
		sig := data[p : p+4]
		size := int(be.Uint32(data[p+4:]))
		if size < 0 || p+8+size > end {
			return nil, corrupt("extension %q truncated", sig)
		}
		switch {
		case string(sig) == "TREE":
			x.treeExt = data[p+8 : p+8+size]
		case string(sig) == "link":
			x.link = data[p+8 : p+8+size]
		case sig[0] < 'A' || sig[0] > 'Z':
			return nil, fmt.Errorf("%w: required extension %q", ErrUnsupportedIndex, sig)
		}
		p += 8 + size
	}
	return x, nil
}

func (x *index) nameAt(off int) []byte {
	flags := be.Uint16(x.data[off+offFlags:])
	no := off + entryFixed
	if flags&flagExtended != 0 {
		no += 2
	}
	nl := int(flags & nameMask)
	if nl == nameMask {
		nl += bytes.IndexByte(x.data[no+nl:], 0)
	}
	return x.data[no : no+nl]
}

func (x *index) name(i int) []byte  { return x.nameAt(x.offs[i]) }
func (x *index) stage(i int) int    { return int(be.Uint16(x.data[x.offs[i]+offFlags:])>>12) & 3 }
func (x *index) mode(i int) uint32  { return be.Uint32(x.data[x.offs[i]+offMode:]) }
func (x *index) flags(i int) uint16 { return be.Uint16(x.data[x.offs[i]+offFlags:]) }

// skipWorktree reports whether entry i has the skip-worktree flag (version
// 3 extended flags): its file is deliberately absent from the work tree.
func (x *index) skipWorktree(i int) bool {
	off := x.offs[i]
	return be.Uint16(x.data[off+offFlags:])&flagExtended != 0 && be.Uint16(x.data[off+entryFixed:])&0x4000 != 0
}

func (x *index) hash(i int) (h plumbing.Hash) {
	copy(h[:], x.data[x.offs[i]+offHash:])
	return h
}

// search returns the position of the first entry whose path is >= p, and
// how many entries (stages) have exactly path p.
func (x *index) search(p string) (pos, count int) {
	n := x.n()
	pos = sort.Search(n, func(i int) bool { return string(x.name(i)) >= p })
	for pos+count < n && string(x.name(pos+count)) == p {
		count++
	}
	return pos, count
}

// hasPrefix reports whether an entry's path starts with prefix, ignoring
// the entries at positions in skip.
func (x *index) hasPrefix(prefix string, skip map[int]bool) bool {
	n := x.n()
	i := sort.Search(n, func(i int) bool { return string(x.name(i)) >= prefix })
	for ; i < n && bytes.HasPrefix(x.name(i), []byte(prefix)); i++ {
		if !skip[i] {
			return true
		}
	}
	return false
}

// stat data of entry i, for comparisons with lstat.
func (x *index) statAt(i int) statData {
	d := x.data[x.offs[i]:]
	return statData{
		ctimeSec: be.Uint32(d[0:]), ctimeNsec: be.Uint32(d[4:]),
		mtimeSec: be.Uint32(d[8:]), mtimeNsec: be.Uint32(d[12:]),
		dev: be.Uint32(d[16:]), ino: be.Uint32(d[20:]),
		mode: be.Uint32(d[24:]),
		uid:  be.Uint32(d[28:]), gid: be.Uint32(d[32:]),
		size: be.Uint32(d[36:]),
	}
}

// racy reports whether entry i's mtime is not older than the index file's
// (whole seconds, like a git built without nanosecond timestamps): its stat
// data cannot prove the content unchanged.
func (x *index) racy(i int) bool {
	return x.mtimeSec >= 0 && int64(be.Uint32(x.data[x.offs[i]+offMtimeSec:])) >= x.mtimeSec
}

// makeEntry builds a stage-0 entry as `git add` writes it.
func makeEntry(path string, sd statData, mode uint32, h plumbing.Hash) []byte {
	nl := len(path)
	b := make([]byte, (entryFixed+nl+8)&^7)
	for k, v := range [...]uint32{sd.ctimeSec, sd.ctimeNsec, sd.mtimeSec, sd.mtimeNsec,
		sd.dev, sd.ino, mode, sd.uid, sd.gid, sd.size} {
		be.PutUint32(b[4*k:], v)
	}
	copy(b[offHash:], h[:])
	be.PutUint16(b[offFlags:], uint16(min(nl, nameMask)))
	copy(b[entryFixed:], path)
	return b
}

// statMatches reports whether lstat data matches an entry's stat data in
// every field git compares (nanoseconds included: stricter than a git
// built without them, which only costs a re-hash).
func statMatches(e, st statData) bool {
	return e.mtimeSec == st.mtimeSec && e.mtimeNsec == st.mtimeNsec &&
		e.ctimeSec == st.ctimeSec && e.ctimeNsec == st.ctimeNsec &&
		e.ino == st.ino && e.dev == st.dev &&
		e.uid == st.uid && e.gid == st.gid &&
		e.size == st.size && e.mode == gitMode(st.mode)
}

// idxOp replaces del (0 or 1) entries at position pos by entry (nil: none).
type idxOp struct {
	pos   int
	del   int
	entry []byte
}

// entry returns entry i's bytes, padding included.
func (x *index) entry(i int) []byte { return x.data[x.offs[i]:x.offs[i+1]] }

// apply returns a new index holding x's entries with ops applied (ops
// sorted by pos): the header and the entries, then 20 zero bytes in place
// of extensions and checksum (see file). It builds it in buf when buf is
// large enough. When x is the merged view of a split index, the result
// keeps, for every entry, the shared index position it came from: an entry
// replaced by an op keeps its predecessor's.
func (x *index) apply(ops []idxOp, buf []byte) *index {
	if y := x.applyInPlace(ops); y != nil {
		return y
	}
	extra := 0
	for _, op := range ops {
		extra += len(op.entry)
	}
	entEnd := x.offs[x.n()]
	out := buf[:0]
	if cap(out) < entEnd+extra+20 {
		out = make([]byte, 0, entEnd+extra+20+4096)
	}
	out = append(out, x.data[:12]...)
	y := &index{version: x.version, mtimeSec: -1, offs: make([]int, 0, x.n()+len(ops)+1)}
	var base []int32
	var repl []bool
	if x.split != nil {
		base = make([]int32, 0, cap(y.offs))
		repl = slices.Clone(x.split.repl)
	}
	// copyRange appends entries [from, to) of x.
	copyRange := func(from, to int) {
		shift := len(out) - x.offs[from]
		for i := from; i < to; i++ {
			y.offs = append(y.offs, x.offs[i]+shift)
		}
		out = append(out, x.data[x.offs[from]:x.offs[to]]...)
		if base != nil {
			base = append(base, x.split.base[from:to]...)
		}
	}
	prev := 0
	for _, op := range ops {
		copyRange(prev, op.pos)
		if op.entry != nil {
			y.offs = append(y.offs, len(out))
			out = append(out, op.entry...)
			if base != nil {
				from := int32(-1)
				if op.del > 0 {
					from = x.split.base[op.pos]
				}
				if from >= 0 {
					repl[from] = true
				}
				base = append(base, from)
			}
		}
		prev = op.pos + op.del
	}
	copyRange(prev, x.n())
	y.offs = append(y.offs, len(out))
	be.PutUint32(out[8:], uint32(y.n()))
	y.data = append(out, make([]byte, 20)...)
	if x.split != nil {
		y.split = &splitInfo{sharedID: x.split.sharedID, shared: x.split.shared, base: base, repl: repl}
	}
	return y
}

// applyInPlace is apply when every op replaces one entry by one of the same
// length (a note committed again): the entries are patched in x's data, and
// x, whose storage the result takes over, must not be used again. It
// returns nil when the ops are not all such replacements.
func (x *index) applyInPlace(ops []idxOp) *index {
	for _, op := range ops {
		if op.del != 1 || op.entry == nil || len(op.entry) != x.offs[op.pos+1]-x.offs[op.pos] {
			return nil
		}
	}
	for _, op := range ops {
		copy(x.data[x.offs[op.pos]:], op.entry)
		if x.split != nil {
			if b := x.split.base[op.pos]; b >= 0 {
				x.split.repl[b] = true
			}
		}
	}
	end := x.offs[x.n()]
	y := &index{data: append(x.data[:end], make([]byte, 20)...), version: x.version, offs: x.offs, mtimeSec: -1, split: x.split}
	x.data, x.offs, x.split = nil, nil, nil
	return y
}

// file returns the index file holding x's entries as a whole (unsplit)
// index, with the extensions in ext (already framed; nil for none) and the
// SHA-1 trailer. It reuses x.data's storage: x.data becomes the file, and
// x.treeExt points into it.
func (x *index) file(ext []byte) []byte {
	end := x.offs[x.n()]
	out := append(x.data[:end], ext...)
	sum := sha1.Sum(out)
	x.data = append(out, sum[:]...)
	x.treeExt, x.link, x.split = nil, nil, nil
	if len(ext) >= 8 && string(ext[:4]) == "TREE" {
		x.treeExt = x.data[end+8 : end+8+int(be.Uint32(ext[4:]))]
	}
	return x.data
}

// smudgeRacy does git's ce_smudge_racily_clean_entry for every entry except
// those at positions in skip: an entry whose mtime is not older than the
// old index file's, whose stat data (size and mtime seconds) still matches
// the file, but whose content differs, gets size 0, so that git re-hashes it
// instead of trusting the stat data once the new index is newer than the
// file. A file whose content v vouches for (hashed earlier, stat data
// unchanged since) is not read again; the files it reads and hashes are
// remembered in v. It modifies x.data in place.
func (x *index) smudgeRacy(root string, skip map[int]bool, v *verifiedBlobs) {
	if x.mtimeSec < 0 {
		return
	}
	ms := uint32(x.mtimeSec)
	var cand []int
	for i := 0; i < x.n(); i++ {
		off := x.offs[i]
		if be.Uint32(x.data[off+offMtimeSec:]) < ms || skip[i] {
			continue
		}
		flags := be.Uint16(x.data[off+offFlags:])
		if flags&flagValid != 0 || (flags>>12)&3 != 0 || be.Uint32(x.data[off+offSize:]) == 0 {
			continue // assume-valid, conflicted, or size 0 (smudged or empty: git compares content anyway)
		}
		cand = append(cand, i)
	}
	if len(cand) == 0 {
		return
	}
	// hashed holds what check read and hashed, for v.
	type hashed struct {
		sd   statData
		hash plumbing.Hash
	}
	// check reports whether entry i must be smudged.
	check := func(i int, buf *[]byte, out *hashed) bool {
		e := x.statAt(i)
		rel := string(x.name(i))
		full := filepath.Join(root, filepath.FromSlash(rel))
		st, err := lstat(full)
		if err != nil || st.size != e.size || st.mtimeSec != e.mtimeSec || gitMode(st.mode) == 0 {
			return false // stat differs: git already sees the file as modified
		}
		if h, ok := v.lookup(rel, st); ok {
			return h != x.hash(i)
		}
		h, err := hashFileInto(full, st, buf)
		if err != nil {
			return true
		}
		*out = hashed{sd: st, hash: h}
		return h != x.hash(i)
	}
	smudge := make([]bool, len(cand))
	read := make([]hashed, len(cand))
	workers := min(runtime.GOMAXPROCS(0), (len(cand)+15)/16)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			buf := make([]byte, 0, 4096)
			for k := w; k < len(cand); k += workers {
				smudge[k] = check(cand[k], &buf, &read[k])
			}
		}(w)
	}
	wg.Wait()
	for k, i := range cand {
		if !read[k].hash.IsZero() {
			v.remember(string(x.name(i)), read[k].sd, read[k].hash, x.stamp)
		}
		if smudge[k] {
			be.PutUint32(x.data[x.offs[i]+offSize:], 0)
			if x.split != nil && x.split.base[i] >= 0 {
				x.split.repl[x.split.base[i]] = true
			}
		}
	}
}

// hashFileInto hashes a work-tree file like hashWorktreeFile, reading it
// into *buf (grown as needed) to avoid allocations.
func hashFileInto(full string, st statData, buf *[]byte) (plumbing.Hash, error) {
	if st.mode&sIFMT == sIFLNK {
		h, _, err := hashWorktreeFile(full, st)
		return h, err
	}
	f, err := os.Open(full)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
	}
	*buf = b
	return hashObject(plumbing.BlobObject, b), nil
}

// hashWorktreeFile returns the blob id and content of a regular file or the
// target of a symlink.
func hashWorktreeFile(full string, st statData) (plumbing.Hash, []byte, error) {
	var content []byte
	var err error
	if st.mode&sIFMT == sIFLNK {
		var t string
		t, err = os.Readlink(full)
		content = []byte(t)
	} else {
		content, err = os.ReadFile(full)
	}
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return hashObject(plumbing.BlobObject, content), content, nil
}
