package history

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// isSplit reports whether .git/index has a link extension, and the shared
// index it names.
func isSplit(t *testing.T, dir string) (bool, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := parseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	if x.link == nil {
		return false, ""
	}
	return true, fmt.Sprintf("sharedindex.%x", x.link[:20])
}

// lsFiles is git's view of the index: mode, id, stage, path and the stat
// data, per entry (without git's in-memory flags, which say which file an
// entry came from).
func lsFiles(t *testing.T, dir string) string {
	out := git(t, dir, "ls-files", "--stage", "--debug")
	return regexp.MustCompile(`\tflags: [0-9a-f]+`).ReplaceAllString(out, "")
}

// TestSplitIndex commits into split indexes that git wrote and reads back
// what it wrote: git sees every entry, with its stat data, exactly as in an
// unsplit index, whichever of git and Commit wrote last.
func TestSplitIndex(t *testing.T) {
	r, dir := newRepo(t)
	var paths []string
	for i := 0; i < 300; i++ {
		p := fmt.Sprintf("d%d/n%03d.md", i%7, i)
		writeFile(t, dir, p, fmt.Sprintf("note %d\n", i))
		paths = append(paths, p)
	}
	mustCommit(t, r, "first", paths...)
	git(t, dir, "update-index", "--split-index") // core.splitIndex stays unset
	if ok, _ := isSplit(t, dir); !ok {
		t.Fatal("git did not split the index")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	live := slices.Clone(paths)
	for round := 0; round < 30; round++ {
		var touched []string
		switch round % 3 {
		case 0: // edit two notes
			for k := 0; k < 2; k++ {
				p := live[rng.IntN(len(live))]
				writeFile(t, dir, p, fmt.Sprintf("edit %d\n", round))
				touched = append(touched, p)
			}
		case 1: // add one, delete one
			p := fmt.Sprintf("d%d/new%02d.md", round%7, round)
			writeFile(t, dir, p, "new\n")
			k := rng.IntN(len(live))
			os.Remove(filepath.Join(dir, live[k]))
			touched = append(touched, p, live[k])
			live = append(append(live[:k:k], live[k+1:]...), p)
		case 2: // a person adds and edits with git, then the engine commits
			p := live[rng.IntN(len(live))]
			writeFile(t, dir, p, fmt.Sprintf("person %d\n", round))
			added := fmt.Sprintf("d%d/person%02d.md", round%7, round)
			writeFile(t, dir, added, "person's new note\n")
			git(t, dir, "add", added)
			live = append(live, added)
			git(t, dir, "-c", "user.name=P", "-c", "user.email=p@p", "commit", "-qam", "person")
			checkMergeSplit(t, dir)
			q := live[rng.IntN(len(live))]
			writeFile(t, dir, q, fmt.Sprintf("engine %d\n", round))
			touched = append(touched, q)
		}
		mustCommit(t, r, fmt.Sprintf("round %d", round), touched...)
		checkConsistent(t, dir)
		checkMergeSplit(t, dir)
		if ok, _ := isSplit(t, dir); !ok {
			t.Fatalf("round %d: the index is no longer split", round)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	// What git sees equals what it sees once it rewrote the index whole.
	split := lsFiles(t, dir)
	git(t, dir, "-c", "core.splitIndex=false", "update-index", "--no-split-index")
	if whole := lsFiles(t, dir); whole != split {
		t.Fatalf("git reads our split index differently from the same index unsplit:\n%s\n----\n%s", split, whole)
	}
	if n := strings.Count(split, "\n  ctime:"); n != len(live) {
		t.Fatalf("%d entries, want %d", n, len(live))
	}
}

// TestSplitIndexConfig: core.splitIndex true makes Commit split a whole
// index (a new shared index), false makes it write a whole one, and
// splitIndex.maxPercentChange=0 a new shared index on every commit, with
// unused shared indexes older than two weeks removed.
func TestSplitIndexConfig(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	writeFile(t, dir, "b/c.md", "c\n")
	mustCommit(t, r, "first", "a.md", "b/c.md")
	if ok, _ := isSplit(t, dir); ok {
		t.Fatal("split without being asked")
	}

	git(t, dir, "config", "core.splitIndex", "true")
	writeFile(t, dir, "a.md", "a2\n")
	mustCommit(t, r, "second", "a.md")
	ok, shared := isSplit(t, dir)
	if !ok {
		t.Fatal("core.splitIndex=true: the index was not split")
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", shared)); err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, dir)

	git(t, dir, "config", "splitIndex.maxPercentChange", "0")
	old := filepath.Join(dir, ".git", shared)
	longAgo := time.Now().Add(-30 * 24 * time.Hour)
	writeFile(t, dir, "b/d.md", "d\n")
	mustCommit(t, r, "third", "b/d.md")
	_, shared2 := isSplit(t, dir)
	if shared2 == shared {
		t.Fatal("maxPercentChange=0: no new shared index")
	}
	checkConsistent(t, dir)
	if err := os.Chtimes(old, longAgo, longAgo); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "b/d.md", "d2\n")
	mustCommit(t, r, "fourth", "b/d.md")
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("an unused shared index a month old was kept: %v", err)
	}
	_, shared3 := isSplit(t, dir)
	if _, err := os.Stat(filepath.Join(dir, ".git", shared3)); err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, dir)

	git(t, dir, "config", "core.splitIndex", "false")
	writeFile(t, dir, "a.md", "a3\n")
	mustCommit(t, r, "fifth", "a.md")
	if ok, _ := isSplit(t, dir); ok {
		t.Fatal("core.splitIndex=false: the index is still split")
	}
	checkConsistent(t, dir)
}

// TestSplitIndexCorrupt: a split index whose shared index is missing or
// does not match its name is refused, and nothing is written.
func TestSplitIndexCorrupt(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	mustCommit(t, r, "first", "a.md")
	git(t, dir, "update-index", "--split-index")
	_, shared := isSplit(t, dir)
	path := filepath.Join(dir, ".git", shared)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := headHash(t, dir)
	for name, mutate := range map[string]func(){
		"missing":  func() { os.Remove(path) },
		"mismatch": func() { os.WriteFile(path, append(bytes.Clone(data[:len(data)-1]), data[len(data)-1]^1), 0o644) },
	} {
		mutate()
		r2, _ := Open(dir) // no cached shared index
		writeFile(t, dir, "a.md", name+"\n")
		_, err := r2.Commit(CommitRequest{Paths: []string{"a.md"}, Message: "m", Author: agent})
		if err == nil || !strings.Contains(err.Error(), shared) {
			t.Errorf("%s shared index: err = %v, want one naming %s", name, err, shared)
		}
		if headHash(t, dir) != head {
			t.Errorf("%s shared index: HEAD moved", name)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
			t.Errorf("%s shared index: index.lock left", name)
		}
		os.WriteFile(path, data, 0o644)
	}
	_ = r
}

// TestEWAH: bitmaps survive a round trip, including runs of ones git
// writes for 64 consecutive bits, and malformed ones are refused.
func TestEWAH(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		limit := 1 + rng.IntN(5000)
		var set []int
		for p := 0; p < limit; p++ {
			if rng.IntN(10) < trial%10 {
				set = append(set, p)
			}
		}
		b := appendEWAH(nil, set)
		got, rest, err := ewahBits(append(b, 'x'), limit)
		if err != nil || !slices.Equal(got, set) || string(rest) != "x" {
			t.Fatalf("trial %d: %v, rest %q, %d of %d bits", trial, err, rest, len(got), len(set))
		}
	}
	// A run of 2 words of ones then a literal word with bit 3: bits 0-127, 131.
	var b []byte
	b = be.AppendUint32(b, 132)
	b = be.AppendUint32(b, 2)
	b = be.AppendUint64(b, 1|2<<1|1<<33)
	b = be.AppendUint64(b, 1<<3)
	b = be.AppendUint32(b, 0)
	got, _, err := ewahBits(b, 200)
	if err != nil || len(got) != 129 || got[127] != 127 || got[128] != 131 {
		t.Fatalf("run of ones: %v %v", err, got)
	}
	if _, _, err := ewahBits(b, 130); err == nil {
		t.Fatal("bit 131 of 130 entries accepted")
	}
	if _, _, err := ewahBits(b[:20], 200); err == nil {
		t.Fatal("truncated bitmap accepted")
	}
}

// checkMergeSplit reads dir's split index (git's or ours) with mergeSplit
// and with mergeSplitOneByOne, which copies the shared entries one at a
// time: the merged views are the same, byte for byte.
func checkMergeSplit(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	main, err := parseIndex(data)
	if err != nil || main.link == nil {
		t.Fatalf("the index is not a split index (%v)", err)
	}
	id := plumbing.Hash(main.link[:20])
	sharedData, err := os.ReadFile(filepath.Join(dir, ".git", "sharedindex."+id.String()))
	if err != nil {
		t.Fatal(err)
	}
	shared, err := parseIndex(sharedData)
	if err != nil {
		t.Fatal(err)
	}
	got, err := mergeSplit(main, shared, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Built in a used buffer, the view is the same.
	used := bytes.Repeat([]byte{0xa5}, len(shared.data)+len(main.data)+64)
	again, err := mergeSplit(main, shared, id, used)
	if err != nil {
		t.Fatal(err)
	}
	if &again.data[0] != &used[0] || !bytes.Equal(again.data, got.data) {
		t.Fatalf("mergeSplit in a used buffer: same buffer %v, same view %v", &again.data[0] == &used[0], bytes.Equal(again.data, got.data))
	}
	want, err := mergeSplitOneByOne(main, shared, id)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.data, want.data) || !slices.Equal(got.offs, want.offs) ||
		!slices.Equal(got.split.base, want.split.base) || !slices.Equal(got.split.repl, want.split.repl) {
		t.Fatalf("mergeSplit differs from the entry-by-entry merge: %d entries, want %d", got.n(), want.n())
	}
}

// mergeSplitOneByOne is mergeSplit as it was first written, copying each
// shared entry on its own: the reference checkMergeSplit holds it to.
func mergeSplitOneByOne(main, shared *index, id plumbing.Hash) (*index, error) {
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
	out := make([]byte, 12, shared.offs[shared.n()]+main.offs[main.n()]+20)
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
	for i := 0; i < shared.n(); i++ {
		if deleted[i] {
			continue
		}
		name := shared.name(i)
		addUntil(name, shared.stage(i))
		y.offs = append(y.offs, len(out))
		base = append(base, int32(i))
		if r < len(rep) && rep[r] == i {
			if out, err = appendNamed(out, main, r, name); err != nil {
				return nil, err
			}
			r++
			continue
		}
		out = append(out, shared.entry(i)...)
	}
	addUntil(nil, 0)
	y.offs = append(y.offs, len(out))
	be.PutUint32(out[8:], uint32(y.n()))
	y.data = append(out, make([]byte, 20)...)
	y.split = &splitInfo{sharedID: id, shared: shared, base: base, repl: repl}
	return y, nil
}

// TestReposTakingTurns has two Repos on one repository (two processes, as
// far as each can tell) and git commit changing, adding and deleting notes
// in turns, with reads in between, on a whole index and on a split one:
// each Repo reads the index the other wrote into the buffers of the view it
// held, and git sees every commit's index as it should be.
func TestReposTakingTurns(t *testing.T) {
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("split=%v", split), func(t *testing.T) {
			a, dir := newRepo(t)
			var paths []string
			for i := 0; i < 1500; i++ {
				p := fmt.Sprintf("d%d/n%04d.md", i%5, i)
				writeFile(t, dir, p, fmt.Sprintf("note %d\n", i))
				paths = append(paths, p)
			}
			mustCommit(t, a, "first", paths...)
			if split {
				if err := a.EnableSplitIndex(); err != nil {
					t.Fatal(err)
				}
				writeFile(t, dir, paths[0], "split\n")
				mustCommit(t, a, "split", paths[0])
			}
			if got, _ := isSplit(t, dir); got != split {
				t.Fatalf("split index: %v, want %v", got, split)
			}
			b, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			repos := []*Repo{a, b}
			rng := rand.New(rand.NewPCG(3, 4))
			for step := 0; step < 60; step++ {
				var p string
				switch k := rng.IntN(4); {
				case k == 0: // a new note with a long name: the index grows
					p = fmt.Sprintf("d%d/%s-%d.md", step%5, strings.Repeat("long-name-", 4+rng.IntN(8)), step)
					writeFile(t, dir, p, fmt.Sprintf("new %d\n", step))
					paths = append(paths, p)
				case k == 1 && len(paths) > 100:
					i := rng.IntN(len(paths))
					p = paths[i]
					paths = slices.Delete(paths, i, i+1)
					if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
						t.Fatal(err)
					}
				default:
					p = paths[rng.IntN(len(paths))]
					writeFile(t, dir, p, fmt.Sprintf("step %d\n", step))
				}
				if step%5 == 4 {
					git(t, dir, "add", "-A", "--", p)
					git(t, dir, "commit", "-q", "-m", "git "+p)
				} else {
					mustCommit(t, repos[step%2], fmt.Sprintf("step %d", step), p)
				}
				r := repos[(step+1)%2]
				if n, _, err := r.IndexEntries(); err != nil || n != len(paths) {
					t.Fatalf("step %d: IndexEntries = %d, %v; want %d", step, n, err, len(paths))
				}
				if changed, err := r.Changed([]string{p, paths[0]}); err != nil || len(changed) != 0 {
					t.Fatalf("step %d: Changed = %v, %v; want none", step, changed, err)
				}
				if out := git(t, dir, "status", "--porcelain"); out != "" {
					t.Fatalf("step %d (%s): git status --porcelain:\n%s", step, p, out)
				}
			}
			checkConsistent(t, dir)
		})
	}
}
