package history

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// git's split index (Documentation/gitformat-index.txt, "Split index"; git
// 2.1 and later). The entries live in two files: a shared index
// .git/sharedindex.<SHA-1>, an ordinary index file named by its own
// checksum and never modified, and .git/index, which holds a "link"
// extension (the shared index's SHA-1, an EWAH bitmap of the shared entries
// deleted, an EWAH bitmap of those replaced), the replacing entries (in
// shared order, with empty names) and then the entries the shared index
// does not have (sorted). A commit then writes and hashes only .git/index,
// whose size follows the entries changed since the shared index was
// written, not the size of the vault.
//
// As git does, Commit keeps the form the index has unless core.splitIndex
// says otherwise (true: split, false: whole), and writes a new shared index
// when more than splitIndex.maxPercentChange percent (default 20) of the
// entries are not in the shared one.

// splitInfo is what the merged view of a split index knows of its files.
type splitInfo struct {
	sharedID plumbing.Hash // the shared index's checksum: it is .git/sharedindex.<hex>
	shared   *index        // the shared index, parsed
	base     []int32       // per merged entry: its position in shared, or -1
	repl     []bool        // per shared entry: its merged entry may differ from it
}

// SplitIndexFrom is the number of index entries from which `sessionvault
// init` turns git's split index on (and doctor suggests it): about where
// rewriting and hashing the whole index (0.5 MB) costs each commit half a
// millisecond.
const SplitIndexFrom = 5000

// defaultMaxPercentChange is git's splitIndex.maxPercentChange default.
const defaultMaxPercentChange = 20

// sharedIndexExpire is git's splitIndex.sharedIndexExpire default: shared
// index files unused for longer are removed when a new one is written.
const sharedIndexExpire = 14 * 24 * time.Hour

// indexForm is how Commit writes the index.
type indexForm int

const (
	formWhole     indexForm = iota // one file, no link extension
	formSplit                      // .git/index over the current shared index
	formNewShared                  // a new shared index, and .git/index over it
)

// formFor chooses the form of the index x (the edited entries, with split
// set when they came from a split index) as git's write_locked_index does.
func formFor(x *index, s repoConfig) indexForm {
	switch {
	case s.splitMode == 0:
		return formWhole
	case x.split == nil && s.splitMode == 1:
		return formNewShared
	case x.split == nil:
		return formWhole
	}
	notShared := 0
	for _, b := range x.split.base {
		if b < 0 {
			notShared++
		}
	}
	switch s.splitMaxPercent {
	case 0:
		return formNewShared
	case 100:
		return formSplit
	}
	if int64(x.n())*int64(s.splitMaxPercent) < int64(notShared)*100 {
		return formNewShared
	}
	return formSplit
}

// sharedIndexPath is the file of the shared index with checksum id.
func (r *Repo) sharedIndexPath(id plumbing.Hash) string {
	return filepath.Join(r.gitdir, "sharedindex."+id.String())
}

// sharedIndex returns the shared index with checksum id, parsed; the last
// one read is cached (its file never changes).
func (r *Repo) sharedIndex(id plumbing.Hash) (*index, error) {
	if r.shared != nil && r.sharedID == id {
		return r.shared, nil
	}
	path := r.sharedIndexPath(id)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, corrupt("its link extension names %s: %v", path, err)
	}
	if !bytes.Equal(data[max(0, len(data)-20):], id[:]) {
		return nil, corrupt("%s does not end with its name's checksum", path)
	}
	x, err := parseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if x.link != nil {
		return nil, corrupt("shared index %s has a link extension", path)
	}
	r.shared, r.sharedID = x, id
	return x, nil
}

// parseLink decodes a link extension: the shared index's id and the
// positions (ascending) of the shared entries deleted and replaced, each
// below n, the number of shared entries.
func parseLink(b []byte, n int) (id plumbing.Hash, del, rep []int, err error) {
	if len(b) < 20 {
		return id, nil, nil, corrupt("link extension truncated")
	}
	copy(id[:], b)
	if len(b) == 20 {
		return id, nil, nil, nil
	}
	del, rest, err := ewahBits(b[20:], n)
	if err != nil {
		return id, nil, nil, corrupt("link extension, delete bitmap: %v", err)
	}
	rep, rest, err = ewahBits(rest, n)
	if err != nil {
		return id, nil, nil, corrupt("link extension, replace bitmap: %v", err)
	}
	if len(rest) != 0 {
		return id, nil, nil, corrupt("link extension has %d trailing bytes", len(rest))
	}
	return id, del, rep, nil
}

// mergeSplit returns the merged view of the split index main (a parsed
// .git/index with a link extension) over shared: one index whose entries
// are shared's, minus the deleted, with the replaced ones taken from main,
// and main's added entries in their sorted places. The view's data ends with
// 20 zero bytes (no extensions); its treeExt is main's. The view is built
// in buf when it is large enough (any contents: every byte is written),
// else in a new buffer.
func mergeSplit(main, shared *index, id plumbing.Hash, buf []byte) (*index, error) {
	_, del, rep, err := parseLink(main.link, shared.n())
	if err != nil {
		return nil, err
	}
	if len(rep) > main.n() {
		return nil, corrupt("link extension replaces %d entries, .git/index holds %d", len(rep), main.n())
	}
	repl := make([]bool, shared.n())
	for _, p := range rep {
		repl[p] = true
	}
	deleted := make([]bool, shared.n())
	for _, p := range del {
		deleted[p] = true
	}
	for _, p := range rep {
		if deleted[p] {
			return nil, corrupt("shared entry %d is both replaced and deleted", p)
		}
	}
	n := shared.n() - len(del) + main.n() - len(rep)
	var out []byte
	if need := shared.offs[shared.n()] + main.offs[main.n()] + 20; cap(buf) >= need {
		out = buf[:12]
	} else {
		// Room for main to grow: the next merge fits in this buffer.
		out = make([]byte, 12, need+need/8)
	}
	copy(out, shared.data[:12])
	y := &index{version: max(main.version, shared.version), mtimeSec: -1, treeExt: main.treeExt,
		offs: make([]int, 0, n+1)}
	be.PutUint32(out[4:], y.version)
	base := make([]int32, 0, n)
	a, r := len(rep), 0
	addUntil := func(name []byte, stage int) {
		for ; a < main.n(); a++ {
			if name != nil {
				if c := bytes.Compare(main.name(a), name); c > 0 || (c == 0 && main.stage(a) >= stage) {
					return
				}
			}
			y.offs = append(y.offs, len(out))
			base = append(base, -1)
			out = append(out, main.entry(a)...)
		}
	}
	// The shared entries kept as they are come in runs between the ones
	// deleted, replaced or preceded by an added entry: each run is copied
	// at once (an index of 10,000 entries that a commit changed in a few
	// places is a few copies, not 10,000).
	run := -1 // the first shared entry of the run not yet copied, or -1
	// nextAdd is where main's next added entry goes: before the first
	// shared entry it sorts before (shared is in sorted order).
	nextAdd := func() int {
		if a >= main.n() {
			return shared.n()
		}
		name, stage := main.name(a), main.stage(a)
		return sort.Search(shared.n(), func(j int) bool {
			c := bytes.Compare(name, shared.name(j))
			return c < 0 || (c == 0 && stage < shared.stage(j))
		})
	}
	add := nextAdd()
	flush := func(end int) {
		if run < 0 {
			return
		}
		shift := len(out) - shared.offs[run]
		for k := run; k < end; k++ {
			y.offs = append(y.offs, shared.offs[k]+shift)
			base = append(base, int32(k))
		}
		out = append(out, shared.data[shared.offs[run]:shared.offs[end]]...)
		run = -1
	}
	for i := 0; i < shared.n(); i++ {
		if deleted[i] {
			flush(i)
			continue
		}
		if i >= add { // (add is shared.n() once main's added entries are all in)
			// Added entries of main go before shared entry i.
			flush(i)
			addUntil(shared.name(i), shared.stage(i))
			add = nextAdd()
		}
		if r < len(rep) && rep[r] == i {
			flush(i)
			y.offs = append(y.offs, len(out))
			base = append(base, int32(i))
			if out, err = appendNamed(out, main, r, shared.name(i)); err != nil {
				return nil, err
			}
			r++
			continue
		}
		if run < 0 {
			run = i
		}
	}
	flush(shared.n())
	addUntil(nil, 0)
	y.offs = append(y.offs, len(out))
	be.PutUint32(out[8:], uint32(y.n()))
	y.data = append(out, make([]byte, 20)...)
	y.split = &splitInfo{sharedID: id, shared: shared, base: base, repl: repl}
	return y, nil
}

// fixedLen is the length of entry i's fields before its name.
func (x *index) fixedLen(i int) int {
	if x.flags(i)&flagExtended != 0 {
		return entryFixed + 2
	}
	return entryFixed
}

// appendNamed appends main's replacing entry r (whose name must be empty)
// under name.
func appendNamed(out []byte, main *index, r int, name []byte) ([]byte, error) {
	if main.flags(r)&nameMask != 0 {
		return nil, corrupt("replacing entry %d has a name", r)
	}
	fl := main.fixedLen(r)
	start := len(out)
	out = append(out, main.data[main.offs[r]:main.offs[r]+fl]...)
	be.PutUint16(out[start+offFlags:], main.flags(r)&^nameMask|uint16(min(len(name), nameMask)))
	out = append(out, name...)
	return append(out, make([]byte, (fl+len(name)+8)&^7-fl-len(name))...), nil
}

// splitFile returns the .git/index file of x (the edited merged view of a
// split index) over its shared index: the entries that differ from their
// shared entry, with empty names, in shared order; the entries the shared
// index does not have; the link extension; the extensions in ext (framed);
// the SHA-1 trailer.
func (x *index) splitFile(ext []byte) []byte {
	sp := x.split
	sh := sp.shared
	out := make([]byte, 12, 4096)
	copy(out, x.data[:12])
	var rep, del []int
	fromShared := 0
	for k, b := range sp.base {
		if b < 0 {
			continue
		}
		fromShared++
		if !sp.repl[b] {
			continue
		}
		if e := x.entry(k); !bytes.Equal(e, sh.entry(int(b))) {
			rep = append(rep, int(b))
			fl := x.fixedLen(k)
			start := len(out)
			out = append(out, e[:fl]...)
			be.PutUint16(out[start+offFlags:], x.flags(k)&^nameMask)
			out = append(out, make([]byte, (fl+8)&^7-fl)...)
		}
	}
	count := len(rep)
	for k, b := range sp.base {
		if b < 0 {
			out = append(out, x.entry(k)...)
			count++
		}
	}
	if fromShared < sh.n() {
		kept := make([]bool, sh.n())
		for _, b := range sp.base {
			if b >= 0 {
				kept[b] = true
			}
		}
		for i, k := range kept {
			if !k {
				del = append(del, i)
			}
		}
	}
	be.PutUint32(out[8:], uint32(count))
	out = appendLink(out, sp.sharedID, del, rep)
	out = append(out, ext...)
	sum := sha1.Sum(out)
	return append(out, sum[:]...)
}

// appendLink appends a framed link extension.
func appendLink(out []byte, id plumbing.Hash, del, rep []int) []byte {
	start := len(out)
	out = append(out, "link\x00\x00\x00\x00"...)
	out = append(out, id[:]...)
	out = appendEWAH(out, del)
	out = appendEWAH(out, rep)
	be.PutUint32(out[start+4:], uint32(len(out)-start-8))
	return out
}

// newShared makes x (the edited entries) the content of a new shared index:
// it returns the shared file (x's entries and the SHA-1 trailer, no
// extensions, as git writes it), its id, and the .git/index file over it
// (no entries, empty bitmaps, the extensions in ext). x becomes the merged
// view over the new shared index.
func (x *index) newShared(ext []byte) (shared []byte, id plumbing.Hash, main []byte) {
	end := x.offs[x.n()]
	shared = append([]byte(nil), x.data[:end]...)
	sum := sha1.Sum(shared)
	shared = append(shared, sum[:]...)
	id = plumbing.Hash(sum)
	sh := &index{data: shared, version: x.version, offs: x.offs, mtimeSec: -1}
	base := make([]int32, x.n())
	for i := range base {
		base[i] = int32(i)
	}
	x.split = &splitInfo{sharedID: id, shared: sh, base: base, repl: make([]bool, x.n())}
	main = make([]byte, 12, 256)
	copy(main, x.data[:12])
	be.PutUint32(main[8:], 0)
	main = appendLink(main, id, nil, nil)
	main = append(main, ext...)
	msum := sha1.Sum(main)
	return shared, id, append(main, msum[:]...)
}

// writeSharedIndex writes a shared index file (content named by its
// checksum id) unless it exists, through a temporary file and a rename.
// It returns the path, for the commit's durability barrier.
func (r *Repo) writeSharedIndex(data []byte, id plumbing.Hash) (string, error) {
	path := r.sharedIndexPath(id)
	if _, err := os.Lstat(path); err == nil {
		return path, nil
	}
	if err := writeRenamed(r.gitdir, "sharedindex_", 0o644, path, data); err != nil {
		return "", fmt.Errorf("history: write shared index: %w", err)
	}
	return path, nil
}

// removeOldSharedIndexes removes the shared index files other than keep
// that have not been used for sharedIndexExpire (git's rule; git freshens
// a shared index's mtime whenever it writes an index over it). Errors are
// ignored: a file left behind costs only space.
func (r *Repo) removeOldSharedIndexes(keep plumbing.Hash) {
	ents, err := os.ReadDir(r.gitdir)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-sharedIndexExpire)
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "sharedindex.") || name == "sharedindex."+keep.String() {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(r.gitdir, name))
		}
	}
}

// freshenSharedIndex sets the shared index's mtime to now, as git does when
// it writes an index over it, so that no git cleans it up while in use
// (after sharedIndexExpire unused). This Repo does it at most once an hour
// per shared index, not on every commit.
func (r *Repo) freshenSharedIndex(id plumbing.Hash) {
	now := time.Now()
	if id == r.freshID && now.Sub(r.freshAt) < time.Hour {
		return
	}
	if os.Chtimes(r.sharedIndexPath(id), now, now) == nil { // as git: a failure only risks an early cleanup
		r.freshID, r.freshAt = id, now
	}
}

// errEWAH is returned for a malformed EWAH bitmap.
var errEWAH = errors.New("malformed EWAH bitmap")

// ewahBits decodes an EWAH-compressed bitmap as git serialises it
// (ewah/ewah_io.c): the number of bits (uint32), the number of 64-bit words
// (uint32), the words (big-endian; each run-length word has the running bit
// in bit 0, the run length in words in bits 1-32 and the number of literal
// words that follow in bits 33-63), and the position of the last
// run-length word (uint32). It returns the positions of the set bits,
// ascending, which must be below limit, and the bytes after the bitmap.
func ewahBits(b []byte, limit int) (set []int, rest []byte, err error) {
	if len(b) < 8 {
		return nil, nil, errEWAH
	}
	nw := int(be.Uint32(b[4:]))
	if nw < 0 || nw > (len(b)-12)/8 {
		return nil, nil, errEWAH
	}
	words, rest := b[8:8+8*nw], b[8+8*nw+4:]
	pos := 0
	for i := 0; i < nw; {
		rlw := be.Uint64(words[8*i:])
		run, lit := int((rlw>>1)&0xffffffff), int(rlw>>33)
		i++
		if i+lit > nw {
			return nil, nil, errEWAH
		}
		if rlw&1 != 0 && run > 0 {
			if pos+64*run > limit+63 {
				return nil, nil, fmt.Errorf("%w: bit %d set, beyond %d entries", errEWAH, pos+64*run-1, limit)
			}
			for k := pos; k < pos+64*run && k < limit; k++ {
				set = append(set, k)
			}
		}
		pos += 64 * run
		for k := 0; k < lit; k++ {
			for w := be.Uint64(words[8*(i+k):]); w != 0; w &= w - 1 {
				p := pos + bits.TrailingZeros64(w)
				if p >= limit {
					return nil, nil, fmt.Errorf("%w: bit %d set, beyond %d entries", errEWAH, p, limit)
				}
				set = append(set, p)
			}
			pos += 64
		}
		i += lit
	}
	return set, rest, nil
}

// appendEWAH appends the bitmap with the bits at positions (ascending,
// distinct) set, EWAH-compressed as git writes it (see ewahBits).
func appendEWAH(out []byte, positions []int) []byte {
	var words []uint64
	rlw := -1 // the current run-length word
	next := 0 // the word the stream has reached
	for i := 0; i < len(positions); {
		w := positions[i] / 64
		var lit uint64
		for ; i < len(positions) && positions[i]/64 == w; i++ {
			lit |= 1 << (positions[i] % 64)
		}
		if rlw < 0 || w > next {
			words = append(words, uint64(w-next)<<1)
			rlw = len(words) - 1
		}
		words[rlw] += 1 << 33
		words = append(words, lit)
		next = w + 1
	}
	if len(words) == 0 {
		words, rlw = []uint64{0}, 0
	}
	nbits := 0
	if len(positions) > 0 {
		nbits = positions[len(positions)-1] + 1
	}
	out = be.AppendUint32(out, uint32(nbits))
	out = be.AppendUint32(out, uint32(len(words)))
	for _, w := range words {
		out = be.AppendUint64(out, w)
	}
	return be.AppendUint32(out, uint32(rlw))
}

// IndexEntries returns the number of entries in .git/index (0 when there is
// no index file) and whether it is a split index.
func (r *Repo) IndexEntries() (n int, split bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	x, err := r.loadIndex(filepath.Join(r.gitdir, "index"), plumbing.ZeroHash, false)
	if err != nil {
		return 0, false, err
	}
	return x.n(), x.split != nil, nil
}

// SplitIndexSetting returns core.splitIndex as .git/config sets it: -1
// when unset (the index keeps its form), 0 false, 1 true.
func (r *Repo) SplitIndexSetting() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.config().splitMode
}

// EnableSplitIndex sets core.splitIndex = true in .git/config, so that the
// next commit (Commit's or git's) writes a shared index and later ones
// rewrite only .git/index. It appends a [core] section under git's lock
// (config.lock), keeping the rest of the file byte for byte, and fails with
// ErrLocked while another process holds the lock.
func (r *Repo) EnableSplitIndex() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	path := filepath.Join(r.gitdir, "config")
	l, err := acquireLock(path, r.lockTimeout)
	if err != nil {
		return err
	}
	defer l.rollback()
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("history: read %s: %w", path, err)
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		old = append(old, '\n')
	}
	if err := l.write(append(old, "[core]\n\tsplitIndex = true\n"...)); err != nil {
		return err
	}
	return l.commit()
}
