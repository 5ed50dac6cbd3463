package cli

// End-to-end robustness tests: several real sessionvault processes writing
// to one vault at once, and processes killed with SIGKILL at random points of
// an update. They run the built binary (not Main in process) so that the
// cross-process lock, the journal and git's lock files are exercised exactly
// as in production.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	robustBinOnce sync.Once
	robustBin     string
	robustBinErr  error

	robustDaemonOnce sync.Once
	robustDaemonErr  error
)

// robustBinary builds cmd/sessionvault once per test binary run, into a
// temporary folder, and returns the path of the executable. Tests running in
// parallel may call it at once: the first builds, the others wait for it.
func robustBinary(t *testing.T) string {
	t.Helper()
	robustBinOnce.Do(buildRobustBin)
	if robustBinErr != nil {
		t.Fatal(robustBinErr)
	}
	return robustBin
}

// robustDaemon builds cmd/sessionvault-daemon once, beside the binary
// robustBinary returns (where `serve` finds it), and returns robustBinary's
// path.
func robustDaemon(t *testing.T) string {
	t.Helper()
	bin := robustBinary(t)
	robustDaemonOnce.Do(func() {
		robustDaemonErr = goBuild(filepath.Join(filepath.Dir(bin), DaemonProgram), "sessionvault-daemon")
	})
	if robustDaemonErr != nil {
		t.Fatal(robustDaemonErr)
	}
	return bin
}

// buildRobustBin builds cmd/sessionvault into a temporary folder, setting
// robustBin and robustBinErr. Call it only through robustBinOnce.
func buildRobustBin() {
	dir, err := os.MkdirTemp("", "sessionvault-robust-bin-")
	if err != nil {
		robustBinErr = err
		return
	}
	robustBin = filepath.Join(dir, "sessionvault")
	robustBinErr = goBuild(robustBin, "sessionvault")
}

// goTool is the path of the go command.
func goTool() (string, error) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		goroot, gerr := exec.Command("go", "env", "GOROOT").Output()
		if gerr != nil {
			return "", fmt.Errorf("no go tool on PATH: %w", err)
		}
		gotool = filepath.Join(strings.TrimSpace(string(goroot)), "bin", "go")
	}
	return gotool, nil
}

// goBuild builds ./cmd/NAME into the file out.
func goBuild(out, name string) error {
	gotool, err := goTool()
	if err != nil {
		return err
	}
	cmd := exec.Command(gotool, "build", "-o", out, "github.com/sessionvault/sessionvault/cmd/"+name)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/%s: %v\n%s", name, err, b)
	}
	return nil
}

// svCommand returns the command `sessionvault --vault vault argv...`.
func svCommand(ctx context.Context, bin, vault string, argv ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, bin, append([]string{"--vault", vault}, argv...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return cmd, &out, &errb
}

// svExec runs the built binary to completion (at most 60 s) and returns its
// stdout, stderr and exit code (-1 when it did not exit normally).
func svExec(bin, vault string, argv ...string) (string, string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, out, errb := svCommand(ctx, bin, vault, argv...)
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if cmd.ProcessState != nil && cmd.ProcessState.Exited() {
			code = cmd.ProcessState.ExitCode()
		}
		if code == -1 {
			fmt.Fprintf(errb, "\n[robust_test: %v]", err)
		}
	}
	return out.String(), errb.String(), code
}

func svMustExec(t *testing.T, bin, vault string, argv ...string) string {
	t.Helper()
	out, errOut, code := svExec(bin, vault, argv...)
	if code != 0 {
		t.Fatalf("sessionvault %v: exit %d\nstdout: %s\nstderr: %s", argv, code, out, errOut)
	}
	return out
}

// robustVault creates a vault with project demo and an active session, using
// the built binary.
func robustVault(t *testing.T, bin, objective string) string {
	t.Helper()
	v := filepath.Join(t.TempDir(), "vault")
	svMustExec(t, bin, v, "init", v, "--project", "demo")
	svMustExec(t, bin, v, "start", "--objective", objective)
	return v
}

type robustUpdate struct {
	ID      string `json:"id"`
	Message string `json:"message"`
}

// robustStatus returns the active session's updates from `status --json`,
// failing the test on any note problem the status reports.
func robustStatus(t *testing.T, bin, vault string) []robustUpdate {
	t.Helper()
	out := svMustExec(t, bin, vault, "status", "--json")
	var res struct {
		Success bool `json:"success"`
		Data    struct {
			Updates  []robustUpdate    `json:"updates"`
			Problems []json.RawMessage `json:"problems"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s", err, out)
	}
	if !res.Success {
		t.Fatalf("status --json: success=false\n%s", out)
	}
	if len(res.Data.Problems) != 0 {
		t.Errorf("status --json reports %d problems in the notes: %s", len(res.Data.Problems), res.Data.Problems)
	}
	return res.Data.Updates
}

// checkUpdates checks the session's updates against what was acknowledged:
// every acknowledged message is listed exactly once, under the id the process
// printed; no message is listed twice; ids are distinct; mustHave lists
// messages that must be present; allowed (when non-nil) is the set of every
// message that may appear at all. It returns the messages listed.
func checkUpdates(t *testing.T, ups []robustUpdate, acked map[string]string, mustHave []string, allowed map[string]bool) map[string]int {
	t.Helper()
	count := map[string]int{}
	ids := map[string]string{}
	for _, u := range ups {
		count[u.Message]++
		if prev, dup := ids[u.ID]; dup {
			t.Errorf("update id %s is used twice: by %q and by %q", u.ID, prev, u.Message)
		}
		ids[u.ID] = u.Message
		if allowed != nil && !allowed[u.Message] {
			t.Errorf("status lists update %s %q, which no process was asked to write", u.ID, u.Message)
		}
	}
	var lost, dups []string
	for msg, n := range count {
		if n > 1 {
			dups = append(dups, fmt.Sprintf("%q x%d", msg, n))
		}
	}
	for msg, id := range acked {
		switch {
		case count[msg] == 0:
			lost = append(lost, fmt.Sprintf("%q (acknowledged as %s)", msg, id))
		case id != "" && ids[id] != msg:
			t.Errorf("update %q was acknowledged as %s, but %s is %q in status", msg, id, id, ids[id])
		}
	}
	var missing []string
	for _, msg := range mustHave {
		if _, ack := acked[msg]; count[msg] == 0 && !ack {
			missing = append(missing, fmt.Sprintf("%q", msg))
		}
	}
	sort.Strings(lost)
	sort.Strings(dups)
	if len(lost) > 0 {
		t.Errorf("LOST %d acknowledged updates (exit 0, but not in status --json): %s", len(lost), strings.Join(lost, ", "))
	}
	if len(missing) > 0 {
		t.Errorf("MISSING %d expected updates from status --json: %s", len(missing), strings.Join(missing, ", "))
	}
	if len(dups) > 0 {
		t.Errorf("DUPLICATED updates in status --json: %s", strings.Join(dups, ", "))
	}
	return count
}

// checkUpdateCommits checks that the updates listed are exactly the updates
// committed: one commit with subject "update: <message>" per listed message.
func checkUpdateCommits(t *testing.T, v string, listed map[string]int) {
	t.Helper()
	commits := map[string]int{}
	n := 0
	for _, s := range strings.Split(strings.TrimSpace(git(t, v, "log", "--format=%s")), "\n") {
		if msg, ok := strings.CutPrefix(s, "update: "); ok {
			commits[msg]++
			n++
		} else if strings.HasPrefix(s, "update:") {
			t.Errorf("odd update commit subject %q", s)
			n++
		}
	}
	total := 0
	for msg, c := range listed {
		total += c
		if commits[msg] != c {
			t.Errorf("update %q: listed %d time(s) in the note but has %d update commit(s)", msg, c, commits[msg])
		}
	}
	for msg, c := range commits {
		if listed[msg] == 0 {
			t.Errorf("update %q has %d update commit(s) but is not in the note", msg, c)
		}
	}
	if n != total {
		t.Errorf("git log has %d commits whose subject starts with \"update:\", want %d (one per listed update)", n, total)
	}
}

// checkVaultHealthy checks the vault as a whole: every note parses, git's
// view is clean and consistent, and no git lock file was left behind.
func checkVaultHealthy(t *testing.T, bin, v string) {
	t.Helper()
	if out, errOut, code := svExec(bin, v, "check"); code != 0 {
		t.Errorf("sessionvault check: exit %d\n%s%s", code, out, errOut)
	}
	if locks := gitLockFiles(v); len(locks) > 0 {
		t.Errorf("git lock files left behind: %s", strings.Join(locks, ", "))
	}
	if s := git(t, v, "status", "--porcelain"); s != "" {
		t.Errorf("git status --porcelain not empty:\n%s", s)
	}
	cmd := exec.Command("git", "-C", v, "fsck", "--strict", "--no-progress")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("git fsck --strict: %v\n%s", err, out)
	}
}

// gitLockFiles lists the lock files in .git and .git/refs/heads.
func gitLockFiles(v string) []string {
	var out []string
	for _, pat := range []string{".git/*.lock", ".git/refs/heads/*.lock", ".git/refs/heads/*/*.lock"} {
		m, _ := filepath.Glob(filepath.Join(v, filepath.FromSlash(pat)))
		for _, p := range m {
			rel, _ := filepath.Rel(v, p)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// Eight processes, each making ten updates in a loop, all at once: every call
// succeeds, and every update is in the note once and in its own commit.
func TestConcurrentProcessesLoseNothing(t *testing.T) {
	t.Parallel()
	began := time.Now()
	bin := robustBinary(t)
	v := robustVault(t, bin, "Concurrent writers")
	const procs, per = 8, 10

	type failure struct {
		msg, out, errOut string
		code             int
	}
	var (
		mu       sync.Mutex
		acked    = map[string]string{}
		failures []failure
		wg       sync.WaitGroup
		gate     = make(chan struct{})
	)
	for i := 0; i < procs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			for j := 0; j < per; j++ {
				msg := fmt.Sprintf("p%d-%d", i, j)
				out, errOut, code := svExec(bin, v, "update", msg)
				mu.Lock()
				if code == 0 {
					acked[msg] = strings.TrimSpace(out)
				} else {
					failures = append(failures, failure{msg, out, errOut, code})
				}
				mu.Unlock()
			}
		}()
	}
	close(gate)
	wg.Wait()
	t.Logf("%d processes x %d updates took %v", procs, per, time.Since(began).Round(time.Millisecond))
	for k, f := range failures {
		if k == 5 {
			t.Errorf("... and %d more failed updates", len(failures)-5)
			break
		}
		t.Errorf("update %q: exit %d\nstdout: %s\nstderr: %s", f.msg, f.code, f.out, f.errOut)
	}

	want := make([]string, 0, procs*per)
	allowed := map[string]bool{}
	for i := 0; i < procs; i++ {
		for j := 0; j < per; j++ {
			msg := fmt.Sprintf("p%d-%d", i, j)
			want = append(want, msg)
			allowed[msg] = true
		}
	}
	ups := robustStatus(t, bin, v)
	listed := checkUpdates(t, ups, acked, want, allowed)
	if len(ups) != procs*per {
		t.Errorf("status --json lists %d updates, want %d", len(ups), procs*per)
	}
	checkUpdateCommits(t, v, listed)
	checkVaultHealthy(t, bin, v)
	if b, err := os.ReadFile(filepath.Join(v, ".sessionvault", "state", "journal.json")); err == nil && len(b) > 0 {
		t.Error("journal.json left behind after every operation succeeded")
	}
	t.Logf("total %v", time.Since(began).Round(time.Millisecond))
}

// killOutcome is where a SIGKILL landed in one update process, judged from
// what it left behind.
type killOutcome int

const (
	killedBeforeWrites killOutcome = iota // no trace: still starting, waiting for the lock, or reading
	killedJournalOnly                     // journal written, note not yet replaced
	killedNoteWritten                     // note replaced, commit not made (or not visible)
	killedAfterCommit                     // committed (by itself, or rolled forward by another process of its round) but not acknowledged
	numKillOutcomes
)

var killOutcomeNames = [numKillOutcomes]string{
	"before any write",
	"mid-operation: journal written, note not yet",
	"mid-operation: note written, not committed",
	"committed, not acknowledged",
}

// Update processes are killed with SIGKILL at random points, alone and while
// others queue on the lock; the next operation rolls any interrupted one
// forward. No acknowledged update is lost or duplicated, and the vault and
// its git repository stay sound.
func TestKillDuringWritesLosesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	began := time.Now()
	bin := robustBinary(t)
	v := robustVault(t, bin, "Kill test")
	note := filepath.Join(v, "demo", "session-current-state.md")
	journalPath := filepath.Join(v, ".sessionvault", "state", "journal.json")

	// How long an update takes here, so the kills spread over its whole run:
	// start-up, the lock, the journal, the note, the commit. (A fixed 0-15 ms
	// window would, on a slow machine, only ever hit the process start-up.)
	// Half the kills are aimed at the second half of the run, where the
	// writes and the commit are.
	var d []time.Duration
	for k := 0; k < 3; k++ {
		t0 := time.Now()
		svMustExec(t, bin, v, "update", fmt.Sprintf("calibrate-%d", k))
		d = append(d, time.Since(t0))
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	opTime := d[0]
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0x5e55))
	t.Logf("an update takes about %v; seed %d", opTime.Round(time.Millisecond), seed)
	killDelay := func(n int) time.Duration {
		maxDelay := max(opTime*13/10, 15*time.Millisecond)
		if rng.IntN(2) == 0 {
			return time.Duration(rng.Int64N(int64(maxDelay)*int64(n) + 1))
		}
		lo := opTime / 2
		return lo + time.Duration(rng.Int64N(int64(maxDelay-lo)*int64(n)+1))
	}
	// The estimate follows the machine's load: a lone update that finished
	// before its kill means updates got faster, one killed before writing
	// anything that they got slower.
	adjust := func(f float64) {
		opTime = min(max(time.Duration(float64(opTime)*f), 5*time.Millisecond), 2*time.Second)
	}

	const rounds = 80
	budget := 30 * time.Second
	acked := map[string]string{"calibrate-0": "", "calibrate-1": "", "calibrate-2": ""}
	allowed := map[string]bool{"calibrate-0": true, "calibrate-1": true, "calibrate-2": true, "final": true}
	var (
		outcomes  [numKillOutcomes]int
		completed int
		killed    int
		lockLeft  []string
		roundLog  []string
		unexpect  int
	)
	type proc struct {
		msg      string
		cmd      *exec.Cmd
		out, err *bytes.Buffer
		done     chan struct{}
		kill     bool
		delay    time.Duration
	}
	ran := 0
	for r := 0; r < rounds; r++ {
		if time.Since(began) > budget {
			t.Logf("time budget of %v used up after %d rounds", budget, r)
			break
		}
		ran++
		n := 1
		if r%5 == 4 {
			n = 2 + rng.IntN(2) // 2 or 3 processes at once
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ps := make([]*proc, n)
		someKill := false
		for k := range ps {
			msg := fmt.Sprintf("k%d", r)
			if n > 1 {
				msg = fmt.Sprintf("k%d-%d", r, k)
			}
			allowed[msg] = true
			cmd, out, errb := svCommand(ctx, bin, v, "update", msg)
			p := &proc{msg: msg, cmd: cmd, out: out, err: errb, done: make(chan struct{})}
			// Alone: always killed (unless it finishes first). In a group:
			// each is killed with probability 2/3, at least one is.
			p.kill = n == 1 || rng.IntN(3) > 0 || k == n-1 && !someKill
			someKill = someKill || p.kill
			p.delay = killDelay(n)
			ps[k] = p
		}
		for _, p := range ps {
			if err := p.cmd.Start(); err != nil {
				cancel()
				t.Fatalf("starting %s: %v", p.msg, err)
			}
			go func() { p.cmd.Wait(); close(p.done) }()
		}
		var wg sync.WaitGroup
		for _, p := range ps {
			if !p.kill {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case <-p.done:
				case <-time.After(p.delay):
					p.cmd.Process.Kill()
				}
			}()
		}
		wg.Wait()
		for _, p := range ps {
			<-p.done
		}
		cancel()

		// What the round left behind.
		noteNow, _ := os.ReadFile(note)
		headNote, _ := exec.Command("git", "-C", v, "show", "HEAD:demo/session-current-state.md").Output()
		var jr struct {
			Change struct{ Operation, Summary string }
		}
		if b, err := os.ReadFile(journalPath); err == nil {
			json.Unmarshal(b, &jr) // empty between operations: no journal
		}
		if l := gitLockFiles(v); len(l) > 0 {
			lockLeft = append(lockLeft, fmt.Sprintf("round %d: %s", r, strings.Join(l, ", ")))
		}
		var parts []string
		for _, p := range ps {
			ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
			line := " · " + p.msg + " ^u-" // the end of the update's line in the note
			switch {
			case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
				killed++
				var o killOutcome
				switch {
				case bytes.Contains(headNote, []byte(line)):
					o = killedAfterCommit
				case bytes.Contains(noteNow, []byte(line)):
					o = killedNoteWritten
				case jr.Change.Operation == "update" && jr.Change.Summary == p.msg:
					o = killedJournalOnly
				default:
					o = killedBeforeWrites
				}
				outcomes[o]++
				if n == 1 && o == killedBeforeWrites {
					adjust(1.05)
				}
				parts = append(parts, fmt.Sprintf("%s killed at %v (%s)", p.msg, p.delay.Round(time.Millisecond), killOutcomeNames[o]))
			case ws.Exited() && ws.ExitStatus() == 0:
				completed++
				if n == 1 {
					adjust(0.9)
				}
				acked[p.msg] = strings.TrimSpace(p.out.String())
				parts = append(parts, p.msg+" completed")
			default:
				unexpect++
				t.Errorf("round %d: update %q was not killed by the test but failed (%v)\nstdout: %s\nstderr: %s", r, p.msg, p.cmd.ProcessState, p.out, p.err)
				parts = append(parts, fmt.Sprintf("%s failed: %v", p.msg, p.cmd.ProcessState))
			}
		}
		roundLog = append(roundLog, fmt.Sprintf("round %2d: %s", r, strings.Join(parts, "; ")))
		if unexpect >= 3 {
			t.Errorf("stopping after round %d: %d updates failed on their own", r, unexpect)
			break
		}
	}
	roundsTime := time.Since(began)

	// One normal operation rolls forward whatever the last kill interrupted.
	finalOut, finalErr, finalCode := svExec(bin, v, "update", "final")
	if finalCode != 0 {
		t.Errorf("the update after the kills failed: exit %d\nstdout: %s\nstderr: %s", finalCode, finalOut, finalErr)
	} else {
		acked["final"] = strings.TrimSpace(finalOut)
	}

	mid := outcomes[killedJournalOnly] + outcomes[killedNoteWritten]
	t.Logf("update time estimate at the end: %v", opTime.Round(time.Millisecond))
	t.Logf("%d rounds in %v: %d updates completed, %d killed: %d mid-operation (%d journal only, %d note written but not committed), %d committed but not acknowledged, %d before any write",
		ran, roundsTime.Round(time.Millisecond), completed, killed, mid, outcomes[killedJournalOnly], outcomes[killedNoteWritten], outcomes[killedAfterCommit], outcomes[killedBeforeWrites])
	if len(lockLeft) > 0 {
		t.Logf("git lock files found between rounds (a kill during the commit):\n%s", strings.Join(lockLeft, "\n"))
	}
	defer func() {
		if t.Failed() {
			t.Logf("rounds:\n%s", strings.Join(roundLog, "\n"))
		}
	}()

	ups := robustStatus(t, bin, v)
	listed := checkUpdates(t, ups, acked, []string{"final"}, allowed)
	checkUpdateCommits(t, v, listed)
	checkVaultHealthy(t, bin, v)
	if b, err := os.ReadFile(journalPath); err == nil && len(b) > 0 && finalCode == 0 {
		t.Error("journal.json still present after a successful operation")
	}
	if completed == 0 && unexpect == 0 {
		t.Error("no round completed: the test acknowledged nothing, so it proved nothing")
	}
	if killed == 0 {
		t.Error("no process was killed")
	}
	t.Logf("total %v", time.Since(began).Round(time.Millisecond))
}
