package history

import (
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// verifiedBlobsMax bounds the files a verifiedBlobs remembers; past it the
// memory starts again (the files racily clean at one time are few: those
// written in the index's last second).
const verifiedBlobsMax = 1024

// verifiedMargin is how much older than the index file's stamp a file's
// mtime and ctime must be for verifiedBlobs to remember its hash.
const verifiedMargin = 100 * time.Millisecond

// verifiedBlob is a work-tree file's stat data when it was hashed, and its
// blob id.
type verifiedBlob struct {
	sd   statData
	hash plumbing.Hash
}

// verifiedBlobs remembers the blob ids of work-tree files this Repo read and
// hashed because their index entries were racily clean (git's racy-git
// rule: an entry written in the index file's second cannot vouch for the
// file), so that the next index write in the same second does not read and
// hash the same unchanged file again. A long session's archive note (about
// 1 MB), written by a compaction, was re-hashed by every commit of the rest
// of that second.
//
// It only vouches for a file whose whole stat data (inode, size, mtime and
// ctime in nanoseconds) is unchanged since it was hashed, and only when
// both of those times were older, by verifiedMargin, than a timestamp the
// same file system put on the index file before the file was read: a write
// begun after the read would bear a later time, so equal stat data proves
// equal content even on a file system whose clock ticks coarsely. What it
// cannot see is one write(2) that was still copying when the file was read
// (the kernel stamps the times when a write begins): the margin leaves that
// only to a single write call that has been copying for over 100 ms, the
// exposure git itself has for a write spanning its last index write of a
// second. Where the stat data has no real ctime (statHasChangeTime: not
// Linux) it vouches for nothing. The zero value is empty and ready.
type verifiedBlobs struct {
	m map[string]verifiedBlob
}

// lookup returns the blob id remembered for the file at rel (slash path)
// when its stat data is still sd.
func (v *verifiedBlobs) lookup(rel string, sd statData) (plumbing.Hash, bool) {
	b, ok := v.m[rel]
	if !ok || b.sd != sd {
		return plumbing.ZeroHash, false
	}
	return b.hash, true
}

// remember records that the file at rel, with stat data sd, hashed to h,
// when sd's mtime and ctime are older by verifiedMargin than clock, the
// stamp of a file on the same device (the index file) written before the
// file was read. Otherwise it forgets rel.
func (v *verifiedBlobs) remember(rel string, sd statData, h plumbing.Hash, clock fileStamp) {
	before := clock.mtime - int64(verifiedMargin)
	if !statHasChangeTime || uint32(clock.dev) != sd.dev || !olderThan(sd.mtimeSec, sd.mtimeNsec, before) || !olderThan(sd.ctimeSec, sd.ctimeNsec, before) {
		delete(v.m, rel)
		return
	}
	if v.m == nil || len(v.m) >= verifiedBlobsMax {
		v.m = make(map[string]verifiedBlob)
	}
	v.m[rel] = verifiedBlob{sd: sd, hash: h}
}

// olderThan reports whether the time sec.nsec (as the index stores it: the
// seconds truncated to 32 bits) is strictly before t (nanoseconds since the
// epoch).
func olderThan(sec, nsec uint32, t int64) bool {
	full := int64(sec)
	if tsec := t / 1e9; tsec>>32 != 0 { // past 2106 the index's seconds wrap; take t's high bits
		full |= tsec &^ 0xffffffff
	}
	return full*1e9+int64(nsec) < t
}
