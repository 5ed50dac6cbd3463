package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
)

// Issue 15's targets for a long session (seed 004 component 7, history
// compaction): with compaction on, the current-state note of a session of
// 10,000 updates stays under 64 KB, and an update on it costs at most 20%
// more than an update on a fresh session.
const (
	targetLongNoteBytes = 64 << 10
	targetLongRatio     = 1.20
)

// longSessionFigures times updates on two vaults of the same size, one whose
// session was just started and one whose session already holds
// o.longUpdates updates (bulk-inserted, accepted, then compacted by the
// warm-up update as any update past compact_updates would), interleaved
// round by round in random order so that both meet the same machine. The rounds run long
// enough for the long session to compact again (every compact_updates/2
// updates), so the mean carries compaction's amortised cost. It then checks
// that no update was lost: the state reads every one back through the
// archive.
func longSessionFigures(o options, work string, figs *figures) error {
	type side struct {
		key, label string
		updates    int
		dir        string
		svc        *session.Service
		times      []time.Duration
	}
	sides := []*side{{key: "fresh", label: "fresh session", updates: 0}, {key: "long", label: thousands(o.longUpdates) + " updates", updates: o.longUpdates}}
	for _, s := range sides {
		s.dir = filepath.Join(work, "long-session-"+s.key)
		if err := generate(s.dir, o.sessionNotes, o.sessionCommits); err != nil {
			return err
		}
		if err := startSession(o.bin, s.dir); err != nil {
			return err
		}
		if s.updates > 0 {
			if err := sh(s.dir, o.bin, "--vault", s.dir, "update", "first"); err != nil {
				return fmt.Errorf("the first update: %w", err)
			}
			if err := bulkSession(o.bin, s.dir, benchProject, s.dir, s.updates); err != nil {
				return err
			}
		}
		svc, err := openService(s.dir, "")
		if err != nil {
			return err
		}
		s.svc = svc
		if err := update(svc, "long-session warm-up", 0); err != nil {
			return fmt.Errorf("%s: the warm-up update: %w", s.label, err)
		}
	}
	fmt.Fprintf(os.Stderr, "timing %d updates on a fresh session and on one of %s updates, interleaved ...\n", o.longRounds, thousands(o.longUpdates))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 15))
	for i := 1; i <= o.longRounds; i++ {
		order := []*side{sides[0], sides[1]}
		if rng.IntN(2) == 1 { // which goes first changes round by round: neither always follows the other's commit
			order[0], order[1] = order[1], order[0]
		}
		for _, s := range order {
			t0 := time.Now()
			if err := update(s.svc, "long-session update", i); err != nil {
				return fmt.Errorf("%s: update %d: %w", s.label, i, err)
			}
			s.times = append(s.times, time.Since(t0))
		}
	}
	fresh, long := sides[0], sides[1]
	fmt.Printf("\nsession length, compaction on (compact_updates %d; %s notes, %s commits each; %d interleaved rounds)\n",
		long.svc.V.Config.UpdatesKept(), thousands(o.sessionNotes), thousands(o.sessionCommits), o.longRounds)
	fmt.Printf("  %-22s %10s %10s %10s %12s %10s\n", "session", "p50", "p90", "mean", "note", "updates")
	for _, s := range sides {
		st, err := s.svc.Status(benchProject)
		if err != nil {
			return err
		}
		want := s.updates + o.longRounds + 1
		if len(st.Updates) != want {
			return fmt.Errorf("%s: the state reads %d updates back, want %d: an update was lost", s.label, len(st.Updates), want)
		}
		size, kept, err := noteSize(filepath.Join(s.dir, benchProject, "session-current-state.md"))
		if err != nil {
			return err
		}
		mark := ""
		if size >= targetLongNoteBytes {
			mark = " *"
		}
		fmt.Printf("  %-22s %10s %10s %10s %9.1f KB %10s  (%d in the note)%s\n", s.label, ms(pct(s.times, 50)), ms(pct(s.times, 90)), ms(mean(s.times)),
			float64(size)/1024, thousands(len(st.Updates)), kept, mark)
		figs.dur("long-session/"+s.key+"/p50", pct(s.times, 50))
		figs.dur("long-session/"+s.key+"/p90", pct(s.times, 90))
		figs.dur("long-session/"+s.key+"/mean", mean(s.times))
		figs.add("long-session/"+s.key+"/note", "KiB", float64(size)/1024)
	}
	r50, rMean := ratio(pct(long.times, 50), pct(fresh.times, 50)), ratio(mean(long.times), mean(fresh.times))
	mark := func(r float64) string {
		if r > targetLongRatio {
			return " *"
		}
		return ""
	}
	fmt.Printf("  long / fresh: p50 %.2fx%s, mean %.2fx%s (target <= %.2fx; note < %d KB)\n", r50, mark(r50), rMean, mark(rMean), targetLongRatio, targetLongNoteBytes>>10)
	figs.ratio("long-session/ratio-p50", r50)
	figs.ratio("long-session/ratio-mean", rMean)
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
