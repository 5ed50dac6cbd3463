package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/session"
)

// pointSpec is the vault of a curve point: its notes and commits, and the
// updates its session holds before the timed rounds (0: a session just
// started).
type pointSpec struct{ notes, commits, updates int }

// pointResult is a curve point's measurement: the timed updates, and the
// time of the untimed warm-up update before them.
type pointResult struct {
	times []time.Duration
	first time.Duration
	index string // the git index's form after init: "split" or "whole"
}

// curve is an in-process update's time against one parameter: points are
// the parameter's values, ref the one the others are compared with, spec the
// vault of a point.
type curve struct {
	key, title, axis string
	points           []int
	ref              int
	spec             func(x int) pointSpec
}

// curveList returns the curves the options ask for.
func curveList(o options) []curve {
	return []curve{
		{"vault-notes", fmt.Sprintf("vault size (%s commits each)", thousands(o.sizeCommits)), "notes",
			o.sizes, o.sizeRef, func(x int) pointSpec { return pointSpec{x, o.sizeCommits, 0} }},
		{"history-commits", fmt.Sprintf("history length (%s notes each)", thousands(o.historyNotes)), "commits",
			o.histories, o.historyRef, func(x int) pointSpec { return pointSpec{o.historyNotes, x, 0} }},
		{"session-updates", fmt.Sprintf("session length (%s notes, %s commits each)", thousands(o.sessionNotes), thousands(o.sessionCommits)), "updates in the session",
			o.sessions, o.sessionRef, func(x int) pointSpec { return pointSpec{o.sessionNotes, o.sessionCommits, x} }},
	}
}

// pointRunner measures curve points on vaults it generates in work, each
// vault once: a point two curves share (by default 10,000 notes and 5,000
// commits) is generated for the first and timed again, beside the other
// points, for the second.
//
// A curve's points are timed interleaved, round by round (one update on each
// point's vault in turn, the first point of the round rotating), so whatever
// the machine does meanwhile (writeback of the vaults just generated, other
// processes, the page cache) falls on every point alike, and a ratio to the
// reference compares updates made within the same few milliseconds. Timed
// one point after another, the 50,000-commit point measured 0.71x, 1.32x,
// 1.45x and 2.19x its reference in four runs of the same code.
//
// It removes no vault until every point is measured (removeVaults, after the
// curves): on ext4 without a journal (the disks of many virtual machines,
// this benchmark's among them) creating a file scans past every inode of its
// block group deleted in the last minute (six while the inode's table block
// is unwritten: the kernel's recently_deleted check), and a vault generated
// right after the previous point's was removed lands in the groups that
// removal just freed. Each file an update creates (loose objects, lock and
// temporary files: eleven) then scans thousands of inodes: the
// session-length points, each generated a second or two after the removal
// of the previous point's vault, measured about twice the update of the
// vault-size curve's 1,000-note point, the difference system time in that
// scan. The curves measure the update, not the removal of the vault before
// it.
type pointRunner struct {
	bin, work string
	rounds    int
	keep      bool
	vaults    map[pointSpec]*pointVault
	uses      map[pointSpec]int // the curves that time each point
	made      []string          // the vaults generated, removed by removeVaults
}

// pointVault is a curve point's generated vault, its service held open
// between the curves that time it, its warm-up update's time, and the
// updates made on it since its generation.
type pointVault struct {
	dir     string
	svc     *session.Service
	first   time.Duration
	updates int
}

// runCurves measures, prints and records every curve.
func runCurves(o options, work string, figs *figures) error {
	pr := &pointRunner{bin: o.bin, work: work, rounds: o.curveRounds, keep: o.keep, vaults: map[pointSpec]*pointVault{}}
	defer pr.removeVaults()
	fmt.Printf("\ncurves: p50 and p90 of an in-process update to a durable commit (durability batch, the default: fsync of each file where the file system has no ordered journal), %d rounds per point, a curve's points timed interleaved round by round, each point on its own generated vault\n", o.curveRounds)
	fmt.Printf("first update: the untimed warm-up after the vault's generation (session length: the first update after the bulk insert and accept)\n")
	fmt.Printf("git index: its form as init leaves it (split from %s files: init sets core.splitIndex)\n", thousands(history.SplitIndexFrom))
	curves := curveList(o)
	uses := map[pointSpec]int{}
	for _, c := range curves {
		for _, x := range c.points {
			uses[c.spec(x)]++
		}
	}
	pr.uses = uses
	for _, c := range curves {
		res, err := pr.measure(c)
		if err != nil {
			return err
		}
		printCurve(c, res, figs)
	}
	return nil
}

// measure times c's points interleaved (see pointRunner), generating the
// vaults not generated yet, and returns each point's result.
func (pr *pointRunner) measure(c curve) (map[int]pointResult, error) {
	vs := make([]*pointVault, len(c.points))
	for i, x := range c.points {
		v, err := pr.vault(c.spec(x))
		if err != nil {
			return nil, fmt.Errorf("%s curve, point %d: %w", c.key, x, err)
		}
		vs[i] = v
	}
	// A point an earlier curve timed (the one two curves share) has had its
	// rounds: the others get as many updates, untimed, so that every point
	// is timed on a session and a history of the same length since its
	// generation.
	most := 0
	for _, v := range vs {
		most = max(most, v.updates)
	}
	for i, v := range vs {
		for ; v.updates < most; v.updates++ {
			if err := update(v.svc, "curve catch-up update", v.updates); err != nil {
				return nil, fmt.Errorf("%s curve, point %d, catch-up update: %w", c.key, c.points[i], err)
			}
		}
	}
	runtime.GC() // the rounds start from the heap of the services (see vault)
	fmt.Fprintf(os.Stderr, "timing %d updates in process on each of the %d points of the %s curve, interleaved ...\n", pr.rounds, len(vs), c.key)
	times := make([][]time.Duration, len(vs))
	for round := 1; round <= pr.rounds; round++ {
		for k := range vs {
			i := (round + k) % len(vs)
			start := time.Now()
			if err := update(vs[i].svc, "curve update", round); err != nil {
				return nil, fmt.Errorf("%s curve, point %d, update %d: %w", c.key, c.points[i], round, err)
			}
			times[i] = append(times[i], time.Since(start))
		}
	}
	res := map[int]pointResult{}
	for i, x := range c.points {
		res[x] = pointResult{times: times[i], first: vs[i].first, index: indexForm(vs[i].dir)}
		vs[i].updates += pr.rounds
		if pr.uses[c.spec(x)]--; pr.uses[c.spec(x)] == 0 {
			vs[i].svc = nil // no curve left to time it: its heap is garbage for the next ones
		}
	}
	return res, nil
}

// vault returns the point vault of s, generating it (and timing its warm-up
// update) the first time.
func (pr *pointRunner) vault(s pointSpec) (*pointVault, error) {
	if v, ok := pr.vaults[s]; ok {
		return v, nil
	}
	dir := filepath.Join(pr.work, fmt.Sprintf("curve-%dn-%dc-%du", s.notes, s.commits, s.updates))
	pr.made = append(pr.made, dir) // removed after the curves, not now: see pointRunner
	svc, err := pr.prepare(dir, s)
	if err != nil {
		return nil, err
	}
	// The garbage of the generation (its fast-import stream: over 100 MB for
	// 50,000 commits) left a heap goal that grew the heap through the
	// updates, one fresh page (a page fault) per 4 KB allocated: 150 to 300
	// faults per update. Collected before the warm-up update, and again
	// before each curve's rounds.
	runtime.GC()
	start := time.Now()
	if err := update(svc, "curve warm-up update", 0); err != nil {
		return nil, fmt.Errorf("the warm-up update: %w", err)
	}
	v := &pointVault{dir: dir, svc: svc, first: time.Since(start), updates: 1}
	pr.vaults[s] = v
	return v, nil
}

// removeVaults removes the vaults of the points measured (unless -keep),
// once no point is left to time.
func (pr *pointRunner) removeVaults() {
	if pr.keep {
		return
	}
	for _, dir := range pr.made {
		os.RemoveAll(dir)
	}
	pr.made = nil
}

// prepare generates the vault of s in dir, starts a session, grows it to
// s.updates updates and returns the in-process service on the vault.
func (pr *pointRunner) prepare(dir string, s pointSpec) (*session.Service, error) {
	if err := generate(dir, s.notes, s.commits); err != nil {
		return nil, err
	}
	if err := startSession(pr.bin, dir); err != nil {
		return nil, err
	}
	if s.updates > 0 {
		if err := sh(dir, pr.bin, "--vault", dir, "update", "first"); err != nil {
			return nil, fmt.Errorf("the first update: %w", err)
		}
		if err := bulkSession(pr.bin, dir, benchProject, dir, s.updates); err != nil {
			return nil, err
		}
	}
	return openService(dir, "")
}

// printCurve prints and records a curve: per point p50, p90, their ratios to
// the reference point's and the warm-up update.
func printCurve(c curve, res map[int]pointResult, figs *figures) {
	ref := res[c.ref].times
	fmt.Printf("\n%s; reference: %s %s\n", c.title, thousands(c.ref), c.axis)
	fmt.Printf("  %-24s %10s %10s %8s %8s %13s  %s\n", c.axis, "p50", "p90", "p50/ref", "p90/ref", "first update", "git index")
	for _, x := range c.points {
		t := res[x].times
		p50, p90 := pct(t, 50), pct(t, 90)
		r50, r90 := ratio(p50, pct(ref, 50)), ratio(p90, pct(ref, 90))
		label := thousands(x)
		if x == c.ref {
			label += " (ref)"
		}
		fmt.Printf("  %-24s %10s %10s %7.2fx %7.2fx %13s  %s\n", label, ms(p50), ms(p90), r50, r90, ms(res[x].first), res[x].index)
		name := "curve/" + c.key + "/" + strconv.Itoa(x) + "/"
		figs.dur(name+"p50", p50)
		figs.dur(name+"p90", p90)
		figs.ratio(name+"ratio-p50", r50)
		figs.ratio(name+"ratio-p90", r90)
		figs.dur(name+"first-update", res[x].first)
	}
}

// indexForm describes the git index of the vault in dir: "split", "whole",
// or the error reading it.
func indexForm(dir string) string {
	r, err := history.Open(dir)
	if err != nil {
		return err.Error()
	}
	n, split, err := r.IndexEntries()
	switch {
	case err != nil:
		return err.Error()
	case split:
		return "split, " + thousands(n) + " entries"
	}
	return "whole, " + thousands(n) + " entries"
}
