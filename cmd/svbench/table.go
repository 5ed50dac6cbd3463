package main

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sessionvault/sessionvault/internal/tasks"

	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/history/historytest"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Targets the main table is read against.
const (
	targetGitOverUpdate    = 8.0 // git add && git commit / in-process update, at least
	targetHookOverRevParse = 1.5 // hook Edit / git rev-parse HEAD, at most
	targetPostOverRevParse = 2.0 // PostToolUse Read / git rev-parse HEAD, at most
	targetPostBashMs       = 3   // PostToolUse of a recorded Bash call, p50
	targetCLIOverUpdate    = 2.5 // CLI update / in-process update, at most
	targetUpdateQuietMs    = 5   // in-process update p50, quiet
	targetUpdateBusyMs     = 8   // in-process update p50, busy
	targetCLIMs            = 20  // CLI update p50
	targetHookMs           = 5   // PreToolUse p50
	targetCheckMs          = 1000
)

// benchProject is the project of the generated vaults.
const benchProject = "bench"

// variant is one row of the main table: key names its figures, op runs it
// once (round i).
type variant struct {
	key, label string
	op         func(i int) error
}

// phase is a load under which every variant is timed.
type phase struct{ name, about string }

// allPhases returns every phase of the main table, in the order they run.
func allPhases() []phase {
	return []phase{
		{"quiet", "nothing else runs"},
		{"busy", fmt.Sprintf("another process writes and flushes %d MB files on the same file system", busyFileMB)},
		{"dirty", "the same without flushing: the kernel's write-back holds them"},
	}
}

// samples are one phase's measurements: per variant, each round's time.
type samples struct {
	times [][]time.Duration
}

// benchVault is the main table's generated vault and three in-process
// services on it, one per durability (batch, the default; fsync; syncfs).
type benchVault struct {
	dir                  string
	notes                int
	batch, fsync, syncfs *session.Service
}

// mainTable measures, prints and records the main table, the peak memory and
// the time to parse every note.
func mainTable(o options, work string, figs *figures) error {
	if _, err := os.Stat(o.hookBin); err != nil {
		return fmt.Errorf("the hook binary (-hook-bin; make build puts it beside -bin): %w", err)
	}
	b, err := setupBenchVault(o.bin, work, o.notes, o.commits)
	if err != nil {
		return err
	}
	h, err := setupHookVault(o.bin, work, o.hookUpdates)
	if err != nil {
		return err
	}
	dw, err := newDeviceWrite(work)
	if err != nil {
		return err
	}
	defer func() { _ = dw.Close() }()
	vs := tableVariants(o, b, h, dw)
	if err := warmUp(vs); err != nil {
		return err
	}
	res := map[string]samples{}
	for _, p := range o.phases {
		if res[p.name], err = runPhase(work, p.name, vs, o.rounds); err != nil {
			return err
		}
	}
	if err := checkClean(b.dir); err != nil {
		return err
	}
	printTable(o, vs, res, figs)
	printBatchHere(b.dir)
	printRatios(o, vs, res, figs)
	if err := printMemory(o, b, h, figs); err != nil {
		return err
	}
	return timeCheck(b, figs)
}

// benchTasks are the task notes the main table's vault gets for the
// switch_task and create_checkpoint rows (switch_task alternates between
// them).
var benchTasks = []string{"bench-a", "bench-b"}

// targetTaskOpOverUpdate is the target of the task operations: switch_task and
// create_checkpoint at 10,000 notes, p50 within 2x one update.
const targetTaskOpOverUpdate = 2

// setupBenchVault generates the main table's vault in work and starts a
// session in it.
func setupBenchVault(bin, work string, notes, commits int) (benchVault, error) {
	b := benchVault{dir: filepath.Join(work, "vault"), notes: notes}
	if err := generate(b.dir, notes, commits); err != nil {
		return b, err
	}
	if err := startSession(bin, b.dir); err != nil {
		return b, err
	}
	var err error
	if b.batch, err = openService(b.dir, ""); err != nil {
		return b, err
	}
	for _, name := range benchTasks {
		if _, err := tasks.New(b.batch).TaskNew(tasks.NewTaskOptions{Project: benchProject, Name: name, KeyFiles: []string{"internal/" + name + ".go"}}); err != nil {
			return b, fmt.Errorf("task new: %w", err)
		}
	}
	if b.fsync, err = openService(b.dir, "fsync"); err != nil {
		return b, err
	}
	b.syncfs, err = openService(b.dir, "syncfs")
	return b, err
}

// generate builds a vault of notes notes and commits commits in dir, saying
// so on stderr.
func generate(dir string, notes, commits int) error {
	fmt.Fprintf(os.Stderr, "generating a vault of %s notes and %s commits in %s ...\n", thousands(notes), thousands(commits), dir)
	t0 := time.Now()
	if err := historytest.Generate(dir, notes, commits); err != nil {
		return fmt.Errorf("generating the vault: %w", err)
	}
	fmt.Fprintf(os.Stderr, "generated in %s\n", time.Since(t0).Round(time.Millisecond))
	return nil
}

// startSession makes dir a vault of benchProject and starts a session.
func startSession(bin, dir string) error {
	if err := sh(dir, bin, "init", dir, "--project", benchProject); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if err := sh(dir, bin, "--vault", dir, "start", "--objective", "benchmark", "--branch", "bench", "--commit", "0"); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	return nil
}

// openService opens the vault in dir with durability (empty: the
// configured default) and returns the session service on it.
func openService(dir, durability string) (*session.Service, error) {
	v, err := vault.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the vault: %w", err)
	}
	if durability != "" {
		v.Config.Durability = durability
	}
	return session.New(v), nil
}

// update records one in-process update with message msg and round i.
func update(svc *session.Service, msg string, i int) error {
	_, err := svc.Update(session.UpdateOptions{Project: benchProject, Message: msg + " " + strconv.Itoa(i)})
	return err
}

// tableVariants returns the rows of the main table.
func tableVariants(o options, b benchVault, h hookEnv, dw *deviceWrite) []variant {
	hookName := filepath.Base(o.hookBin)
	return []variant{
		{"update-in-process", "update in process, durability batch", func(i int) error {
			return update(b.batch, "in-process update", i)
		}},
		{"update-in-process-fsync", "update in process, durability fsync", func(i int) error {
			return update(b.fsync, "in-process fsync update", i)
		}},
		{"update-in-process-syncfs", "update in process, durability syncfs", func(i int) error {
			return update(b.syncfs, "in-process syncfs update", i)
		}},
		{"update-cli", "sessionvault update (CLI process)", func(i int) error {
			return runProc(b.dir, "", o.bin, "--vault", b.dir, "update", "cli update "+strconv.Itoa(i))
		}},
		{"task-save-in-process", "save_context_snapshot in process (batch)", func(i int) error {
			phase := "phase " + strconv.Itoa(i)
			_, err := tasks.New(b.batch).SaveTask(tasks.SaveTaskOptions{Project: benchProject, TaskID: benchTasks[0], Updates: tasks.TaskUpdate{Phase: &phase}})
			return err
		}},
		{"switch-task-in-process", "switch_task in process (batch)", func(i int) error {
			j := i & 1 // warm-up passes -1
			_, err := tasks.New(b.batch).SwitchTask(tasks.SwitchOptions{Project: benchProject, From: benchTasks[j], To: benchTasks[1-j]})
			return err
		}},
		{"checkpoint-in-process", "create_checkpoint in process (batch)", func(i int) error {
			_, err := tasks.New(b.batch).CreateCheckpoint(tasks.CheckpointOptions{Project: benchProject, Label: "bench " + strconv.Itoa(i)})
			return err
		}},
		{"git-add-commit", "git add && git commit (one note)", func(i int) error {
			return gitCommitNote(b, i)
		}},
		{"hook-edit", hookName + " PreToolUse Edit", func(int) error { return h.call(o.hookBin, "Edit") }},
		{"hook-read", hookName + " PreToolUse Read", func(int) error { return h.call(o.hookBin, "Read") }},
		{"hook-post-read", hookName + " PostToolUse Read", func(i int) error { return h.post(o.hookBin, "Read", i) }},
		{"hook-post-bash", hookName + " PostToolUse Bash", func(i int) error { return h.post(o.hookBin, "Bash", i) }},
		{"git-rev-parse", "git rev-parse HEAD (hook's vault)", func(int) error {
			return runProc(h.vault, "", "git", "rev-parse", "HEAD")
		}},
		{"device-write", "one 4 KB write + fdatasync in place", dw.op},
	}
}

// gitCommitNote rewrites a random note of b and commits it with `git add &&
// git commit`, as a user of plain git would.
func gitCommitNote(b benchVault, i int) error {
	p := historytest.NotePath(rand.Intn(b.notes))
	if err := os.WriteFile(filepath.Join(b.dir, p), historytest.NoteContent(i, 1_000_000+i), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := sh(b.dir, "git", "add", "--", p); err != nil {
		return err
	}
	return sh(b.dir, "git", "commit", "-q", "-m", "bench "+strconv.Itoa(i))
}

// warmUp runs every variant once, untimed.
func warmUp(vs []variant) error {
	for _, v := range vs {
		if err := v.op(-1); err != nil {
			return fmt.Errorf("warm-up, %s: %w", v.label, err)
		}
	}
	return nil
}

// runPhase times rounds rounds of every variant under the load of the named
// phase.
func runPhase(work, name string, vs []variant, rounds int) (samples, error) {
	if name == "quiet" {
		return timeRounds(name, vs, rounds)
	}
	stop, err := busyWriter(work, name == "busy")
	if err != nil {
		return samples{}, err
	}
	s, err := timeRounds(name, vs, rounds)
	if serr := stop(); err == nil {
		err = serr
	}
	return s, err
}

// timeRounds times rounds rounds of every variant, in random order per
// round, reporting progress for phase on stderr.
func timeRounds(phase string, vs []variant, rounds int) (samples, error) {
	s := samples{times: make([][]time.Duration, len(vs))}
	for r := 0; r < rounds; r++ {
		for _, k := range rand.Perm(len(vs)) {
			start := time.Now()
			err := vs[k].op(r)
			d := time.Since(start)
			if err != nil {
				return s, fmt.Errorf("%s, %s: %w", phase, vs[k].label, err)
			}
			s.times[k] = append(s.times[k], d)
		}
		if (r+1)%10 == 0 || r+1 == rounds {
			fmt.Fprintf(os.Stderr, "%s: round %d/%d\n", phase, r+1, rounds)
		}
	}
	return s, nil
}

// checkClean fails unless the vault in dir has a clean `git status` and
// `git fsck`.
func checkClean(dir string) error {
	if out, err := exec.Command("git", "-C", dir, "status", "--porcelain").Output(); err != nil || len(out) != 0 {
		return fmt.Errorf("git status after the run is not clean (%v): %s", err, out)
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--no-progress").CombinedOutput(); err != nil {
		return fmt.Errorf("git fsck after the run: %w: %s", err, out)
	}
	return nil
}

// printTable prints p50 and p90 of every variant per phase and records them.
func printTable(o options, vs []variant, res map[string]samples, figs *figures) {
	fmt.Printf("vault: %s notes, %s commits; hook: a session of %s updates in its own vault; %d rounds per phase, variants interleaved in random order\n",
		thousands(o.notes), thousands(o.commits), thousands(o.hookUpdates), o.rounds)
	for _, p := range o.phases {
		fmt.Printf("%s: %s\n", p.name, p.about)
	}
	fmt.Printf("\n%-40s", "variant")
	for _, p := range o.phases {
		fmt.Printf(" %10s %10s", p.name+" p50", p.name+" p90")
	}
	fmt.Println()
	for k, v := range vs {
		fmt.Printf("%-40s", v.label)
		for _, p := range o.phases {
			t := res[p.name].times[k]
			fmt.Printf(" %10s %10s", ms(pct(t, 50)), ms(pct(t, 90)))
			figs.dur(p.name+"/"+v.key+"/p50", pct(t, 50))
			figs.dur(p.name+"/"+v.key+"/p90", pct(t, 90))
		}
		fmt.Println()
	}
}

// ratioRow is a ratio of two variants' p50s, with its target if it has one
// (atLeast says which side of the target passes).
type ratioRow struct {
	key, label string
	num, den   string
	target     float64
	atLeast    bool
}

// ratioRows returns the ratios the table is read by.
func ratioRows() []ratioRow {
	return []ratioRow{
		{"git-add-commit-over-update", "git add && git commit / update in process (batch)", "git-add-commit", "update-in-process", targetGitOverUpdate, true},
		{"fsync-over-batch", "update in process: fsync / batch", "update-in-process-fsync", "update-in-process", 0, false},
		{"syncfs-over-batch", "update in process: syncfs / batch", "update-in-process-syncfs", "update-in-process", 0, false},
		{"git-add-commit-over-update-cli", "git add && git commit / sessionvault update", "git-add-commit", "update-cli", 0, false},
		{"switch-task-over-update", "switch_task / update in process (batch)", "switch-task-in-process", "update-in-process", targetTaskOpOverUpdate, false},
		{"checkpoint-over-update", "create_checkpoint / update in process (batch)", "checkpoint-in-process", "update-in-process", targetTaskOpOverUpdate, false},
		{"task-save-over-update", "save_context_snapshot / update in process (batch)", "task-save-in-process", "update-in-process", 0, false},
		{"hook-edit-over-git-rev-parse", "hook Edit / git rev-parse HEAD", "hook-edit", "git-rev-parse", targetHookOverRevParse, false},
		{"hook-post-read-over-git-rev-parse", "PostToolUse Read / git rev-parse HEAD", "hook-post-read", "git-rev-parse", targetPostOverRevParse, false},
		{"update-cli-over-update", "sessionvault update / update in process", "update-cli", "update-in-process", targetCLIOverUpdate, false},
	}
}

// met reports whether v meets the row's target (always, without one).
func (r ratioRow) met(v float64) bool {
	switch {
	case r.target == 0:
		return true
	case r.atLeast:
		return v >= r.target
	default:
		return v <= r.target
	}
}

// targetText describes the row's target ("" without one).
func (r ratioRow) targetText() string {
	switch {
	case r.target == 0:
		return ""
	case r.atLeast:
		return fmt.Sprintf(">= %gx", r.target)
	default:
		return fmt.Sprintf("<= %gx", r.target)
	}
}

// printRatios prints and records the ratios of p50s per phase, marking a
// missed target.
func printRatios(o options, vs []variant, res map[string]samples, figs *figures) {
	idx := map[string]int{}
	for k, v := range vs {
		idx[v.key] = k
	}
	fmt.Printf("\n%-52s", "ratio of p50s")
	for _, p := range o.phases {
		fmt.Printf(" %8s", p.name)
	}
	fmt.Printf("   target\n")
	for _, r := range ratioRows() {
		fmt.Printf("%-52s", r.label)
		for _, p := range o.phases {
			t := res[p.name].times
			v := ratio(pct(t[idx[r.num]], 50), pct(t[idx[r.den]], 50))
			mark := " "
			if !r.met(v) {
				mark = "*"
			}
			fmt.Printf(" %7.2fx%s", v, mark)
			figs.ratio(p.name+"/ratio/"+r.key, v)
		}
		fmt.Printf("  %s\n", r.targetText())
	}
	printPhaseRatio(vs, idx, res, figs)
	fmt.Printf("* misses its target. Other targets: update in process p50 <= %d ms quiet, <= %d ms busy; CLI update p50 <= %d ms; PreToolUse p50 <= %d ms; PostToolUse of a recorded Bash call p50 <= %d ms\n",
		targetUpdateQuietMs, targetUpdateBusyMs, targetCLIMs, targetHookMs, targetPostBashMs)
}

// targetBusyOverQuiet is the busy phase's in-process update p50 over the
// quiet one's, at most: a busy disk costs the update nothing extra.
const targetBusyOverQuiet = 3.0

// printPhaseRatio prints and records the in-process update's p50 busy over
// quiet, when both phases ran.
func printPhaseRatio(vs []variant, idx map[string]int, res map[string]samples, figs *figures) {
	quiet, okq := res["quiet"]
	busy, okb := res["busy"]
	if !okq || !okb || len(quiet.times) != len(vs) || len(busy.times) != len(vs) {
		return
	}
	k := idx["update-in-process"]
	v := ratio(pct(busy.times[k], 50), pct(quiet.times[k], 50))
	mark := " "
	if v > targetBusyOverQuiet {
		mark = "*"
	}
	fmt.Printf("%-52s %7.2fx%s (busy p50 / quiet p50)  <= %gx\n", "update in process (batch): busy / quiet", v, mark, targetBusyOverQuiet)
	figs.ratio("ratio/update-in-process-busy-over-quiet", v)
	// The floor: the quiet update plus what the busy phase adds to one
	// device write, the least I/O a durable commit can do.
	d := idx["device-write"]
	uq := pct(quiet.times[k], 50)
	floor := ratio(uq+pct(busy.times[d], 50)-pct(quiet.times[d], 50), uq)
	fmt.Printf("%-52s %7.2fx  (quiet update + the busy phase's extra wait for one device write) / quiet update\n", "  floor for any durable update: busy / quiet", floor)
	figs.ratio("ratio/durable-floor-busy-over-quiet", floor)
}

// memoryRuns is how many times each process is run for its peak memory.
const memoryRuns = 9

// printMemory measures (untimed, through the launcher of peakRSS), prints
// and records the median peak memory of a CLI update on b's vault and of a
// hook Edit decision on h's session, and the launcher's floor (/bin/true).
func printMemory(o options, b benchVault, h hookEnv, figs *figures) error {
	in, err := h.input("Edit")
	if err != nil {
		return err
	}
	rows := []struct {
		key, label string
		run        func(i int) (int64, error)
	}{
		{"update-cli", fmt.Sprintf("sessionvault update (CLI process) on the vault of %s notes", thousands(o.notes)), func(i int) (int64, error) {
			return peakRSS(b.dir, "", o.bin, "--vault", b.dir, "update", "memory update "+strconv.Itoa(i))
		}},
		{"hook-edit", fmt.Sprintf("%s PreToolUse Edit on the session of %s updates", filepath.Base(o.hookBin), thousands(o.hookUpdates)), func(int) (int64, error) {
			return peakRSS(h.code, in, o.hookBin, "--vault", h.vault, "pre-tool-use")
		}},
		{"floor", "the launcher's floor (/bin/true)", func(int) (int64, error) { return peakRSS(h.code, "", "true") }},
	}
	fmt.Printf("\npeak memory (max RSS of the process, median of %d runs; a process reads at least the floor):\n", memoryRuns)
	for _, r := range rows {
		var all []int64
		for i := 0; i < memoryRuns; i++ {
			kib, err := r.run(i)
			if err != nil {
				return fmt.Errorf("peak memory of %s: %w", r.key, err)
			}
			all = append(all, kib)
		}
		m := medianInt(all)
		fmt.Printf("  %-68s %10s\n", r.label, mib(m))
		figs.kib("memory/"+r.key+"/maxrss", m)
	}
	return nil
}

// timeCheck times parsing every note of b's vault in process (the check
// command) and records it.
func timeCheck(b benchVault, figs *figures) error {
	t0 := time.Now()
	rep, err := b.batch.Check(nil)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	d := time.Since(t0)
	fmt.Printf("\nparse every note (check, in process): %s notes in %s (target <= %d ms)\n", thousands(rep.Notes), ms(d), targetCheckMs)
	fmt.Printf("git status: clean; git fsck: clean\n")
	figs.dur("check/parse-every-note", d)
	figs.add("check/notes", "notes", float64(rep.Notes))
	return nil
}

// printBatchHere says what durability batch does on the bench vault's file
// system: one journal commit per barrier where the journal orders the
// writes before it, else (ext4 made without a journal, as on many virtual
// machines' disks) an fsync of each file and folder, as fsync does.
func printBatchHere(dir string) {
	r, err := history.Open(dir)
	if err != nil {
		return
	}
	how := "an fsync of each file and folder a commit wrote, as fsync: the file system has no ordered journal"
	if r.CoversWorkTree() {
		how = "a write-out of each file a commit wrote, then one journal commit before the commit is visible and one after"
	}
	fmt.Printf("durability batch on this file system: %s\n", how)
}
