package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
)

// Issue 15's targets for a long session (history compaction): with
// compaction on, the current-state note of a session of 10,000 updates stays
// under 64 KB, and an update on it costs at most 20% more than an update on
// a fresh session.
const (
	targetLongNoteBytes = 64 << 10
	targetLongRatio     = 1.20
)

// longSessionFigures times updates on three sessions of one vault, each in
// its own project: a session just started, a second one just started (the
// control: its ratio to the first is the measurement's own noise), and one
// that already holds o.longUpdates updates (bulk-inserted, accepted, then
// compacted by the warm-up update as any update past compact_updates would).
// One update on each runs per round, in an order drawn at random per round,
// so that all three meet the same machine, the same repository and the same
// disk. (Separate vaults do not: on a virtual disk two vaults of identical
// content, generated one after the other, differed by up to 1.4x in update
// cost, the first generated the fastest; a likely cause, on ext4 without a
// journal: a file created scans past the inodes of its block group deleted
// in the last minute, such as the temporary files of the first vault's
// updates (see pointRunner). Sharing the repository, a cost the
// long session puts on all of it is paid by the three alike.) The rounds run long enough for the
// long session to compact again (every compact_updates/2 updates), so its
// mean carries compaction's amortised cost. It then checks that no update
// was lost: the state reads every one back through the archive.
func longSessionFigures(o options, work string, figs *figures) error {
	type side struct {
		project, label string
		updates        int
		times          []time.Duration
	}
	fresh := &side{project: "fresh", label: "fresh session"}
	control := &side{project: "control", label: "fresh (control)"}
	long := &side{project: "long", label: thousands(o.longUpdates) + " updates", updates: o.longUpdates}
	sides := []*side{fresh, control, long}
	dir := filepath.Join(work, "long-session")
	if err := generate(dir, o.sessionNotes, o.sessionCommits); err != nil {
		return err
	}
	for _, s := range sides {
		if err := sh(dir, o.bin, "init", dir, "--project", s.project); err != nil {
			return fmt.Errorf("init --project %s: %w", s.project, err)
		}
		if err := sh(dir, o.bin, "--vault", dir, "--project", s.project, "start", "--objective", "benchmark", "--branch", "bench", "--commit", "0"); err != nil {
			return fmt.Errorf("start --project %s: %w", s.project, err)
		}
		if s.updates > 0 {
			if err := sh(dir, o.bin, "--vault", dir, "--project", s.project, "update", "first"); err != nil {
				return fmt.Errorf("the first update: %w", err)
			}
			if err := bulkSession(o.bin, dir, s.project, dir, s.updates); err != nil {
				return err
			}
		}
	}
	svc, err := openService(dir, "")
	if err != nil {
		return err
	}
	update := func(s *side, msg string, i int) error {
		_, err := svc.Update(session.UpdateOptions{Project: s.project, Message: msg + " " + strconv.Itoa(i)})
		if err != nil {
			return fmt.Errorf("%s: %s %d: %w", s.label, msg, i, err)
		}
		return nil
	}
	for _, s := range sides {
		if err := update(s, "long-session warm-up", 0); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "timing %d updates on each of two fresh sessions and one of %s updates, interleaved ...\n", o.longRounds, thousands(o.longUpdates))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 15))
	for i := 1; i <= o.longRounds; i++ {
		order := []*side{fresh, control, long}
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] }) // none always follows another's commit
		for _, s := range order {
			t0 := time.Now()
			if err := update(s, "long-session update", i); err != nil {
				return err
			}
			s.times = append(s.times, time.Since(t0))
		}
	}
	fmt.Printf("\nsession length, compaction on (compact_updates %d; one vault of %s notes, %s commits, a project per session; %d interleaved rounds)\n",
		svc.V.Config.UpdatesKept(), thousands(o.sessionNotes), thousands(o.sessionCommits), o.longRounds)
	fmt.Printf("  %-22s %10s %10s %10s %12s %10s\n", "session", "p50", "p90", "mean", "note", "updates")
	for _, s := range sides {
		st, err := svc.Status(s.project)
		if err != nil {
			return err
		}
		want := s.updates + o.longRounds + 1
		if len(st.Updates) != want {
			return fmt.Errorf("%s: the state reads %d updates back, want %d: an update was lost", s.label, len(st.Updates), want)
		}
		size, kept, err := noteSize(filepath.Join(dir, s.project, "session-current-state.md"))
		if err != nil {
			return err
		}
		mark := ""
		if size >= targetLongNoteBytes {
			mark = " *"
		}
		fmt.Printf("  %-22s %10s %10s %10s %9.1f KB %10s  (%d in the note)%s\n", s.label, ms(pct(s.times, 50)), ms(pct(s.times, 90)), ms(mean(s.times)),
			float64(size)/1024, thousands(len(st.Updates)), kept, mark)
		key := "long-session/" + s.project
		figs.dur(key+"/p50", pct(s.times, 50))
		figs.dur(key+"/p90", pct(s.times, 90))
		figs.dur(key+"/mean", mean(s.times))
		figs.add(key+"/note", "KiB", float64(size)/1024)
	}
	r50, rMean := ratio(pct(long.times, 50), pct(fresh.times, 50)), ratio(mean(long.times), mean(fresh.times))
	c50, cMean := ratio(pct(control.times, 50), pct(fresh.times, 50)), ratio(mean(control.times), mean(fresh.times))
	mark := func(r float64) string {
		if r > targetLongRatio {
			return " *"
		}
		return ""
	}
	fmt.Printf("  long / fresh: p50 %.2fx%s, mean %.2fx%s (target <= %.2fx; note < %d KB); control / fresh: p50 %.2fx, mean %.2fx\n",
		r50, mark(r50), rMean, mark(rMean), targetLongRatio, targetLongNoteBytes>>10, c50, cMean)
	figs.ratio("long-session/ratio-p50", r50)
	figs.ratio("long-session/ratio-mean", rMean)
	figs.ratio("long-session/control-ratio-p50", c50)
	figs.ratio("long-session/control-ratio-mean", cMean)
	return nil
}

// noteSize returns the size in bytes of the note at path and how many
// update lines (`^u-N`) it holds.
func noteSize(path string) (int, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	return len(data), bytes.Count(data, []byte(" ^u-")), nil
}

// mean returns the arithmetic mean of ds (0 for none).
func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}
