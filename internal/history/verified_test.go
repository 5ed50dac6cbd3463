package history

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestRacyFileHashedOnce: a large file committed in the index's second is
// racily clean for the rest of that second. The next commit reads and hashes
// it once and remembers it; a commit after that, with the file unchanged,
// vouches for it from memory; a same-size change within the same second is
// still seen (the entry is smudged, git status shows it modified once the
// index is rewritten in a later second) and the change then commits.
func TestRacyFileHashedOnce(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	big := strings.Repeat("archived update line ·\n", 40000) // ~1 MB, like a long session's archive note
	writeFile(t, dir, "archive.md", big)
	writeFile(t, dir, "p.md", "p-0\n")
	mustCommit(t, r, "first", "archive.md", "p.md")
	full := filepath.Join(dir, "archive.md")
	for attempt := 0; ; attempt++ {
		if attempt == 10 {
			t.Fatal("could not write, commit and change the file within one second in 10 tries")
		}
		waitNextSecond()
		sec := time.Now().Unix()
		writeFile(t, dir, "archive.md", strings.Replace(big, "line", "LINE", 1))
		time.Sleep(verifiedMargin + 30*time.Millisecond) // the index is stamped over verifiedMargin after the file
		mustCommit(t, r, "archive", "archive.md")
		writeFile(t, dir, "p.md", "p-1\n")
		mustCommit(t, r, "p1", "p.md") // archive.md is racily clean: read and hashed, then remembered
		sd, err := lstat(full)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := r.verified.lookup("archive.md", sd); ok != statHasChangeTime {
			if !statHasChangeTime {
				t.Fatal("remembered archive.md on a system whose stat data has no real ctime")
			}
			if time.Now().Unix() != sec {
				continue // the second ended: archive.md was not racy any more
			}
			t.Fatalf("the racily clean archive.md was hashed but not remembered (stat %+v)", sd)
		}
		writeFile(t, dir, "p.md", "p-2\n")
		mustCommit(t, r, "p2", "p.md")                                           // vouched for from memory
		writeFile(t, dir, "archive.md", strings.Replace(big, "line", "LiNE", 1)) // same size, same second
		writeFile(t, dir, "p.md", "p-3\n")
		mustCommit(t, r, "p3", "p.md")
		if time.Now().Unix() == sec {
			break
		}
	}
	waitNextSecond()
	writeFile(t, dir, "p.md", "p-4\n")
	mustCommit(t, r, "p4", "p.md")
	if out := git(t, dir, "status", "--porcelain"); out != " M archive.md\n" {
		t.Fatalf("git status after a same-size change in the racy second: %q, want \" M archive.md\"", out)
	}
	if ch, err := r.Changed([]string{"archive.md", "p.md"}); err != nil || len(ch) != 1 || ch[0] != "archive.md" {
		t.Fatalf("Changed = %v, %v; want [archive.md]", ch, err)
	}
	mustCommit(t, r, "archive again", "archive.md")
	checkConsistent(t, dir)
	if b, _ := r.ReadFile("archive.md"); !strings.Contains(string(b), "LiNE") {
		t.Fatal("archive.md at HEAD lacks the last change")
	}
}

// TestVerifiedBlobsRemember: a file is remembered only when its mtime and
// ctime are older by verifiedMargin than the clock stamp from its own
// device, and lookup needs the same stat data.
func TestVerifiedBlobsRemember(t *testing.T) {
	var v verifiedBlobs
	sd := statData{mtimeSec: 100, mtimeNsec: 5, ctimeSec: 100, ctimeNsec: 5, dev: 7, ino: 9, size: 3}
	h := hashObject(plumbing.BlobObject, []byte("abc"))
	clock := fileStamp{dev: 7, mtime: 100*1e9 + 6 + int64(verifiedMargin)}
	v.remember("a.md", sd, h, clock)
	if !statHasChangeTime { // no real ctime: it vouches for nothing
		if _, ok := v.lookup("a.md", sd); ok {
			t.Fatal("remembered a file on a system whose stat data has no real ctime")
		}
		return
	}
	if got, ok := v.lookup("a.md", sd); !ok || got != h {
		t.Fatalf("lookup after remember = %v, %v", got, ok)
	}
	changed := sd
	changed.mtimeNsec = 6
	if _, ok := v.lookup("a.md", changed); ok {
		t.Fatal("lookup vouched for a file whose mtime changed")
	}
	for name, c := range map[string]fileStamp{
		"same tick":         {dev: 7, mtime: 100*1e9 + 5},
		"within the margin": {dev: 7, mtime: 100*1e9 + 5 + int64(verifiedMargin)},
		"other device":      {dev: 8, mtime: 200 * 1e9},
	} {
		v.remember("a.md", sd, h, c)
		if _, ok := v.lookup("a.md", sd); ok {
			t.Errorf("%s: remembered a file the clock cannot vouch for (and did not forget the earlier one)", name)
		}
	}
	late := sd
	late.ctimeSec = 101 // ctime after the clock (a chmod or touch -d after the stamp)
	v.remember("b.md", late, h, clock)
	if _, ok := v.lookup("b.md", late); ok {
		t.Error("remembered a file whose ctime is not older than the clock")
	}
}
