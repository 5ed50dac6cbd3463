package history

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/history/historytest"
)

// benchVault is one generated vault shared by the benchmarks of a run (the
// benchmark functions are called more than once).
var benchVault struct {
	once  sync.Once
	dir   string
	notes int
	repo  *Repo
	err   error
}

func vault(b *testing.B) (string, int, *Repo) {
	benchVault.once.Do(func() {
		notes := 10000
		if s := os.Getenv("SESSIONVAULT_BENCH_NOTES"); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				notes = n
			}
		}
		commits := 5000
		if s := os.Getenv("SESSIONVAULT_BENCH_COMMITS"); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				commits = n
			}
		}
		dir, err := os.MkdirTemp("", "sessionvault-bench-")
		if err != nil {
			benchVault.err = err
			return
		}
		start := time.Now()
		if err := historytest.Generate(dir, notes, commits); err != nil {
			benchVault.err = err
			return
		}
		b.Logf("generated %d notes, %d commits in %v at %s", notes, commits, time.Since(start), dir)
		benchVault.dir, benchVault.notes = dir, notes
		benchVault.repo, benchVault.err = Open(dir)
	})
	if benchVault.err != nil {
		b.Fatal(benchVault.err)
	}
	return benchVault.dir, benchVault.notes, benchVault.repo
}

func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	ms := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))]) / 1e6 }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.9), "p90-ms")
}

// BenchmarkCommitOneNote times Commit of one overwritten random note in a
// generated vault (SESSIONVAULT_BENCH_NOTES notes, default 10,000, and
// SESSIONVAULT_BENCH_COMMITS commits, default 5,000). Only Commit is timed;
// commits come back to back, so the notes committed within the last second
// are racily clean and get re-hashed by every commit. It also reports the
// median and 90th percentile (p50-ms, p90-ms).
func BenchmarkCommitOneNote(b *testing.B) {
	dir, notes, r := vault(b)
	benchCommits(b, dir, notes, r)
}

// BenchmarkCommitOneNoteSyncFS is BenchmarkCommitOneNote with one
// syncfs(2) as the durability barrier (SyncFS) instead of the default
// concurrent fsyncs of the new files and directories.
func BenchmarkCommitOneNoteSyncFS(b *testing.B) {
	dir, notes, _ := vault(b)
	r, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	r.SetDurability(SyncFS)
	benchCommits(b, dir, notes, r)
}

func benchCommits(b *testing.B, dir string, notes int, r *Repo) {
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var d []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		n := rng.Intn(notes)
		p := historytest.NotePath(n)
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), historytest.NoteContent(n, 100000+rng.Intn(1<<30)), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		_, err := r.Commit(CommitRequest{Paths: []string{p}, Message: "update: " + p + "\n\nOperation: update\n", Author: agent})
		d = append(d, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportPercentiles(b, d)
	if out := git(b, dir, "status", "--porcelain"); out != "" {
		b.Fatalf("status not clean:\n%s", out)
	}
}

// BenchmarkCommitOneNoteGitCLI is the comparison: `git add -- P` then
// `git commit -q -m m` on the same vault.
func BenchmarkCommitOneNoteGitCLI(b *testing.B) {
	dir, notes, _ := vault(b)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var d []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		n := rng.Intn(notes)
		p := historytest.NotePath(n)
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), historytest.NoteContent(n, 100000+rng.Intn(1<<30)), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		if out, err := exec.Command("git", "-C", dir, "add", "--", p).CombinedOutput(); err != nil {
			b.Fatalf("git add: %v\n%s", err, out)
		}
		if out, err := exec.Command("git", "-C", dir, "commit", "-q", "-m", "m").CombinedOutput(); err != nil {
			b.Fatalf("git commit: %v\n%s", err, out)
		}
		d = append(d, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, d)
}

// BenchmarkCommitOneNoteColdRepo is BenchmarkCommitOneNote with a new Repo
// for every commit, as a short-lived CLI process has: no cached trees,
// index bytes or pack index.
func BenchmarkCommitOneNoteColdRepo(b *testing.B) {
	dir, notes, _ := vault(b)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var d []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		n := rng.Intn(notes)
		p := historytest.NotePath(n)
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), historytest.NoteContent(n, 100000+rng.Intn(1<<30)), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		r, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		_, err = r.Commit(CommitRequest{Paths: []string{p}, Message: "update: " + p, Author: agent})
		d = append(d, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportPercentiles(b, d)
}

// BenchmarkCommitAfterAnotherRepo times Commit of one note by a Repo
// right after another Repo (another process, as far as the first can tell)
// committed: the index is read again and, split (core.splitIndex, as
// sessionvault init sets it), merged with its shared index. It runs on its
// own generated vault of SESSIONVAULT_BENCH_NOTES notes (default 10,000)
// and reports allocations, which the reload keeps low by building the new
// view in the buffer of the one it replaces.
func BenchmarkCommitAfterAnotherRepo(b *testing.B) {
	notes := 10000
	if s := os.Getenv("SESSIONVAULT_BENCH_NOTES"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			notes = n
		}
	}
	dir := b.TempDir()
	if err := historytest.Generate(dir, notes, 10); err != nil {
		b.Fatal(err)
	}
	timed, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	other, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := timed.EnableSplitIndex(); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	commit := func(r *Repo) time.Duration {
		n := rng.Intn(notes)
		p := historytest.NotePath(n)
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), historytest.NoteContent(n, 100000+rng.Intn(1<<30)), 0o644); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if _, err := r.Commit(CommitRequest{Paths: []string{p}, Message: "update: " + p, Author: agent}); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	commit(timed) // writes the shared index
	if _, split, err := timed.IndexEntries(); err != nil || !split {
		b.Fatalf("the index is not split (%v)", err)
	}
	var d []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		commit(other)
		b.StartTimer()
		d = append(d, commit(timed))
	}
	b.StopTimer()
	reportPercentiles(b, d)
}
