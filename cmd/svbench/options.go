package main

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// options are the parsed flags of a benchmark run.
type options struct {
	bin, hookBin   string
	notes, commits int
	rounds         int
	phaseNames     string
	phases         []phase
	hookUpdates    int
	graphTasks     int
	longUpdates    int
	longRounds     int

	curves                       bool
	curveRounds                  int
	sizes                        intList
	sizeRef, sizeCommits         int
	histories                    intList
	historyRef, historyNotes     int
	sessions                     intList
	sessionRef                   int
	sessionNotes, sessionCommits int

	quick    bool
	jsonPath string
	keep     bool
}

// quickDefaults returns the flag values -quick sets where the command line
// does not set them: vaults of at most a few thousand notes and commits, five
// rounds.
func quickDefaults() map[string]string {
	return map[string]string{
		"notes": "1000", "commits": "500", "rounds": "5", "hook-updates": "1000", "curve-rounds": "5", "graph-tasks": "200",
		"sizes": "200,1000,2000", "size-ref": "1000", "size-commits": "500",
		"histories": "200,1000", "history-ref": "200", "history-notes": "1000",
		"sessions": "10,100,1000", "session-ref": "10", "session-notes": "500", "session-commits": "100",
	}
}

// finish applies -quick to the flags of fs not given on the command line,
// makes the binaries' paths absolute and checks the values.
func (o *options) finish(fs *flag.FlagSet) error {
	if o.quick {
		if err := applyDefaults(fs, quickDefaults()); err != nil {
			return err
		}
	}
	var err error
	if o.bin, err = filepath.Abs(o.bin); err != nil {
		return fmt.Errorf("-bin: %w", err)
	}
	if o.hookBin == "" {
		o.hookBin = filepath.Join(filepath.Dir(o.bin), "sessionvault-hook")
	}
	if o.hookBin, err = filepath.Abs(o.hookBin); err != nil {
		return fmt.Errorf("-hook-bin: %w", err)
	}
	if o.phases, err = selectPhases(o.phaseNames); err != nil {
		return err
	}
	return o.check()
}

// selectPhases returns the phases named in the comma-separated list names,
// in the order they run.
func selectPhases(names string) ([]phase, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		want[strings.TrimSpace(n)] = true
	}
	var out []phase
	for _, p := range allPhases() {
		if want[p.name] {
			out = append(out, p)
			delete(want, p.name)
		}
	}
	if len(want) > 0 {
		return nil, fmt.Errorf("-phases: no phase %s (quiet, busy, dirty)", strings.Join(slices.Sorted(maps.Keys(want)), ", "))
	}
	if len(out) == 0 {
		return nil, errors.New("-phases: no phase selected")
	}
	return out, nil
}

// applyDefaults sets each flag of fs named in values to its value unless the
// command line set it.
func applyDefaults(fs *flag.FlagSet, values map[string]string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, v := range values {
		if given[name] {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			return fmt.Errorf("-quick: -%s=%s: %w", name, v, err)
		}
	}
	return nil
}

// check reports the first flag value that cannot be measured.
func (o *options) check() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"notes", o.notes}, {"commits", o.commits}, {"rounds", o.rounds}, {"hook-updates", o.hookUpdates}, {"graph-tasks", o.graphTasks}, {"long-updates", o.longUpdates}, {"long-rounds", o.longRounds}} {
		if f.v < 1 {
			return fmt.Errorf("-%s must be at least 1 (got %d)", f.name, f.v)
		}
	}
	if !o.curves {
		return nil
	}
	if o.curveRounds < 1 {
		return fmt.Errorf("-curve-rounds must be at least 1 (got %d)", o.curveRounds)
	}
	for _, c := range []struct {
		list     string
		points   intList
		ref      string
		refPoint int
	}{{"sizes", o.sizes, "size-ref", o.sizeRef}, {"histories", o.histories, "history-ref", o.historyRef}, {"sessions", o.sessions, "session-ref", o.sessionRef}} {
		if !slices.Contains(c.points, c.refPoint) {
			return fmt.Errorf("-%s %d is not one of -%s %s", c.ref, c.refPoint, c.list, c.points.String())
		}
	}
	return nil
}

// meta describes the run for the JSON report.
func (o *options) meta() Meta {
	m := Meta{
		Notes: o.notes, Commits: o.commits, Rounds: o.rounds, Phases: o.phaseNames, HookUpdates: o.hookUpdates, Quick: o.quick,
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		Time: time.Now().UTC().Format(time.RFC3339),
	}
	if o.curves {
		m.CurveRounds = o.curveRounds
	}
	if out, err := exec.Command("git", "--version").Output(); err == nil {
		m.GitVersion = strings.TrimSpace(string(out))
	}
	return m
}

// intList is a flag of comma-separated positive integers.
type intList []int

// String returns the list as the flag takes it.
func (l *intList) String() string {
	s := make([]string, len(*l))
	for i, n := range *l {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// Set replaces the list with the comma-separated integers of v.
func (l *intList) Set(v string) error {
	var out intList
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("not a list of integers: %w", err)
		}
		if n < 1 {
			return fmt.Errorf("%d is not a positive integer", n)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}
