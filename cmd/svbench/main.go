// Command svbench measures sessionvault against its performance targets.
// Run it with `make bench`; it prints, in one run:
//
//   - The main table, on a generated vault (default 10,000 notes and 5,000
//     commits): one `update` to a durable commit in process (durability
//     fsync, the default, and syncfs) and as a CLI process, `git add && git
//     commit` of one note, the PreToolUse hook (sessionvault-hook, Edit and
//     Read) on a session of 10,000 updates and its baseline, `git rev-parse
//     HEAD` as a process — interleaved round by round in random order, on a
//     quiet machine, while another process writes and flushes 64 MB files on
//     the same file system ("busy"), and while it writes them without
//     flushing ("dirty"). Medians, p90s, the ratios, the peak memory of a CLI
//     update and of a hook call, and the time to parse every note.
//   - Curves: an in-process update against vault size, history length and
//     session length, each point on its own generated vault.
//
// It writes the same figures to a JSON file (-json, default bench.json);
// `svbench compare OLD.json NEW.json` prints the change of every figure
// between two such files.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "rss" {
		os.Exit(launchRSS(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "compare" {
		if err := compare(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "svbench compare:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	flag.StringVar(&o.bin, "bin", "bin/sessionvault", "the sessionvault binary to time as a CLI process")
	flag.StringVar(&o.hookBin, "hook-bin", "", "the sessionvault-hook binary (default: sessionvault-hook beside -bin)")
	flag.IntVar(&o.notes, "notes", envInt("SESSIONVAULT_BENCH_NOTES", 10000), "notes in the main table's generated vault")
	flag.IntVar(&o.commits, "commits", envInt("SESSIONVAULT_BENCH_COMMITS", 5000), "commits in the main table's generated vault")
	flag.IntVar(&o.rounds, "rounds", 40, "timed rounds per phase of the main table (each runs every variant once, in random order)")
	flag.StringVar(&o.phaseNames, "phases", "quiet,busy,dirty", "the main table's phases (comma-separated): quiet, busy (beside a writer flushing large files), dirty (the same without flushing)")
	flag.IntVar(&o.hookUpdates, "hook-updates", 10000, "updates in the session the PreToolUse hook is timed on")
	flag.IntVar(&o.graphTasks, "graph-tasks", 1000, "tasks in the vault get_task_graph is timed on")
	flag.IntVar(&o.longUpdates, "long-updates", 10000, "long session: updates the long session holds before its timed rounds")
	flag.IntVar(&o.longRounds, "long-rounds", 300, "long session: interleaved updates timed on each of the fresh and the long session")
	flag.BoolVar(&o.curves, "curves", true, "measure the curves (vault size, history length, session length)")
	flag.IntVar(&o.curveRounds, "curve-rounds", 20, "timed rounds per curve point")
	o.sizes = intList{1000, 10000, 100000}
	flag.Var(&o.sizes, "sizes", "vault-size curve: notes per point (comma-separated)")
	flag.IntVar(&o.sizeRef, "size-ref", 10000, "vault-size curve: the reference point (one of -sizes)")
	flag.IntVar(&o.sizeCommits, "size-commits", 5000, "vault-size curve: commits in each point's vault")
	o.histories = intList{5000, 50000}
	flag.Var(&o.histories, "histories", "history-length curve: commits per point (comma-separated)")
	flag.IntVar(&o.historyRef, "history-ref", 5000, "history-length curve: the reference point (one of -histories)")
	flag.IntVar(&o.historyNotes, "history-notes", 10000, "history-length curve: notes in each point's vault")
	o.sessions = intList{100, 1000, 10000}
	flag.Var(&o.sessions, "sessions", "session-length curve: updates in the session per point (comma-separated)")
	flag.IntVar(&o.sessionRef, "session-ref", 100, "session-length curve: the reference point (one of -sessions)")
	flag.IntVar(&o.sessionNotes, "session-notes", 1000, "session-length curve: notes in each point's vault")
	flag.IntVar(&o.sessionCommits, "session-commits", 500, "session-length curve: commits in each point's vault")
	flag.BoolVar(&o.quick, "quick", false, "a quick trial: small vaults, 5 rounds, small curve points (flags given explicitly win)")
	flag.StringVar(&o.jsonPath, "json", "bench.json", "write the figures to this JSON file (empty: do not write)")
	flag.BoolVar(&o.keep, "keep", false, "keep the generated vaults")
	profile := flag.String("cpuprofile", "", "write a CPU profile of this process (the in-process variants) to the file")
	flag.Usage = usage
	flag.Parse()
	if err := o.finish(flag.CommandLine); err != nil {
		fmt.Fprintln(os.Stderr, "svbench:", err)
		os.Exit(2)
	}
	stop, err := startProfile(*profile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "svbench:", err)
		os.Exit(1)
	}
	err = run(o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "svbench:", err)
		os.Exit(1)
	}
}

// usage prints how to call svbench, its subcommand and its flags.
func usage() {
	out := flag.CommandLine.Output()
	fmt.Fprintf(out, "usage: svbench [flags]            run the benchmarks (make bench)\n")
	fmt.Fprintf(out, "       svbench compare OLD NEW    compare the figures of two -json files (make bench-compare)\n\nflags:\n")
	flag.PrintDefaults()
}

// envInt returns the positive integer in the environment variable name, or
// def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// startProfile starts a CPU profile into file (none when file is empty) and
// returns the function that stops it.
func startProfile(file string) (func(), error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// run generates the vaults, measures the main table and the curves, prints
// them and writes the JSON report.
func run(o options) error {
	work, err := os.MkdirTemp("", "svbench-")
	if err != nil {
		return fmt.Errorf("creating the work folder: %w", err)
	}
	if o.keep {
		fmt.Fprintf(os.Stderr, "keeping the generated vaults in %s\n", work)
	} else {
		defer os.RemoveAll(work)
	}
	var figs figures
	if err := mainTable(o, work, &figs); err != nil {
		return err
	}
	if err := taskGraphFigure(o, work, &figs); err != nil {
		return err
	}
	if err := mcpCallFigures(o, work, &figs); err != nil {
		return err
	}
	if err := longSessionFigures(o, work, &figs); err != nil {
		return err
	}
	if o.curves {
		if err := runCurves(o, work, &figs); err != nil {
			return err
		}
	}
	if o.jsonPath == "" {
		return nil
	}
	if err := writeReport(o.jsonPath, Report{Figures: figs.list, Meta: o.meta()}); err != nil {
		return err
	}
	fmt.Printf("\n%d figures written to %s\n", len(figs.list), o.jsonPath)
	return nil
}
