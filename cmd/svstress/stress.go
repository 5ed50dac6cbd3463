package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Scenarios are the outside writers, one per scenario (see the package doc).
var Scenarios = []string{"append", "truncate", "rename", "stale", "git"}

// Config says what Run does.
type Config struct {
	Bin                      string   // the sessionvault binary
	Writer                   []string // the command that runs a writer: argv before the writer's flags
	WriterEnv                []string // added to the writer's environment
	Updates, Decides, Blocks int      // engine operations per scenario
	KillRate                 float64  // fraction of engine processes killed with SIGKILL
	Scenarios                []string
	Keep                     bool      // keep the vaults
	SplitIndex               bool      // turn on git's split index (core.splitIndex) right after init
	Log                      io.Writer // progress; nil for none
}

func defaultConfig() Config {
	return Config{Updates: 200, Decides: 40, Blocks: 40, KillRate: 0.1}
}

// Report is one scenario's outcome. Every field but the totals must be 0
// (or true) for the scenario to pass.
type Report struct {
	Scenario string
	Vault    string
	Duration time.Duration

	PersonLines    int // lines the outside writer wrote
	PersonLost     int // ... not in the final note
	PersonDup      int // ... in it more than once
	WriterCommits  int // commits the git writer made
	Ops            int // engine operations acknowledged (exit 0)
	Killed         int // engine processes killed (each retried with its --op-id)
	Failed         int // engine operations that failed (not refusals by design)
	Refused        int // refusals by design, with their code
	FailCodes      map[string]int
	EntriesLost    int             // acknowledged entries not in the final note
	EntriesDup     int             // acknowledged entries in it more than once
	DupIDs         int             // block ids that occur more than once in the final note
	CommitsWrong   int             // acknowledged operations without exactly one commit of their own
	ContentWrong   int             // commits whose tree does not hold the bytes their State-Checksum names, or lacks the entry
	OpTimes        []time.Duration // each engine process, start to exit
	FsckClean      bool
	StatusClean    bool
	Problems       []string // the first few problems, for the log
	refusedByCodes map[string]int
}

// Clean reports whether nothing was lost, duplicated or failed.
func (r *Report) Clean() bool {
	return r.PersonLost == 0 && r.PersonDup == 0 && r.Failed == 0 && r.EntriesLost == 0 && r.EntriesDup == 0 &&
		r.DupIDs == 0 && r.CommitsWrong == 0 && r.ContentWrong == 0 && r.FsckClean && r.StatusClean
}

func (r *Report) problem(format string, args ...any) {
	if len(r.Problems) < 8 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// Table renders reports as a markdown table.
func Table(rs []*Report) string {
	var b strings.Builder
	b.WriteString("| scenario | person lines | lost | dup | engine ops | killed+retried | failed | entries lost | dup | dup ids | commits wrong | content wrong | fsck | status | op p50 / max | time |\n")
	b.WriteString("| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --- | --- | --: | --: |\n")
	for _, r := range rs {
		lines := strconv.Itoa(r.PersonLines)
		if r.Scenario == "git" {
			lines = fmt.Sprintf("%d (%d commits)", r.PersonLines, r.WriterCommits)
		}
		p50, max := percentile(r.OpTimes, 50), percentile(r.OpTimes, 100)
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s | %s | %s / %s | %s |\n",
			r.Scenario, lines, r.PersonLost, r.PersonDup, r.Ops, r.Killed, r.Failed, r.EntriesLost, r.EntriesDup,
			r.DupIDs, r.CommitsWrong, r.ContentWrong, okText(r.FsckClean), okText(r.StatusClean),
			p50.Round(time.Millisecond), max.Round(time.Millisecond), r.Duration.Round(100*time.Millisecond))
	}
	return b.String()
}

// percentile returns the p-th percentile (0-100) of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func okText(ok bool) string {
	if ok {
		return "clean"
	}
	return "NOT clean"
}

// Run runs the configured scenarios one after the other.
func Run(cfg Config) ([]*Report, error) {
	var out []*Report
	for _, name := range cfg.Scenarios {
		name = strings.TrimSpace(name)
		if !isScenario(name) {
			return out, fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(Scenarios, ", "))
		}
		r, err := runScenario(cfg, name)
		if r != nil {
			out = append(out, r)
			if cfg.Log != nil {
				for _, p := range r.Problems {
					fmt.Fprintf(cfg.Log, "  %s: %s\n", name, p)
				}
			}
		}
		if err != nil {
			return out, fmt.Errorf("scenario %s: %w", name, err)
		}
	}
	return out, nil
}

func isScenario(name string) bool {
	for _, s := range Scenarios {
		if s == name {
			return true
		}
	}
	return false
}

// ack is one acknowledged engine operation.
type ack struct {
	opID, kind, id, marker string
}

type scenario struct {
	cfg   Config
	name  string
	vault string
	note  string // the current-state note
	env   []string
	rep   *Report
	mu    sync.Mutex
	acks  []ack
	rng   *rand.Rand
	rngMu sync.Mutex
}

func (s *scenario) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		fmt.Fprintf(s.cfg.Log, "svstress: %s: "+format+"\n", append([]any{s.name}, args...)...)
	}
}

func runScenario(cfg Config, name string) (*Report, error) {
	dir, err := os.MkdirTemp("", "svstress-"+name+"-")
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	s := &scenario{cfg: cfg, name: name, vault: filepath.Join(dir, "vault"), rep: &Report{Scenario: name, FailCodes: map[string]int{}, refusedByCodes: map[string]int{}},
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))}
	s.rep.Vault = s.vault
	s.note = filepath.Join(s.vault, "demo", "session-current-state.md")
	s.env = append(os.Environ(), "GIT_AUTHOR_NAME=Pat Person", "GIT_AUTHOR_EMAIL=pat@example.invalid",
		"GIT_COMMITTER_NAME=Pat Person", "GIT_COMMITTER_EMAIL=pat@example.invalid", "GIT_CONFIG_NOSYSTEM=1")
	start := time.Now()
	if _, err := s.sv("init", s.vault, "--project", "demo"); err != nil {
		return nil, err
	}
	if cfg.SplitIndex {
		if _, err := s.git("config", "core.splitIndex", "true"); err != nil {
			return nil, err
		}
	}
	if _, err := s.sv("start", "--objective", "stress: "+name); err != nil {
		return nil, err
	}
	// The person's own section at the end of the note: where `>>` lands.
	f, err := os.OpenFile(s.note, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString("\n## Notes\n\nWritten by hand:\n"); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}

	stop := filepath.Join(dir, "stop")
	writer := exec.Command(cfg.Writer[0], append(cfg.Writer[1:], "-kind", name, "-note", s.note, "-vault", s.vault, "-stop", stop, "-seed", strconv.FormatInt(time.Now().UnixNano(), 10))...)
	writer.Env = append(append([]string(nil), s.env...), cfg.WriterEnv...)
	var wout bytes.Buffer
	writer.Stdout, writer.Stderr = &wout, &wout
	if err := writer.Start(); err != nil {
		return nil, err
	}
	s.logf("writer started; %d updates, %d decisions, %d blockers, kill rate %.2f", cfg.Updates, cfg.Decides, cfg.Blocks, cfg.KillRate)

	var wg sync.WaitGroup
	for _, loop := range []struct {
		kind string
		n    int
	}{{"update", cfg.Updates}, {"decide", cfg.Decides}, {"block", cfg.Blocks}} {
		wg.Add(1)
		go func(kind string, n int) {
			defer wg.Done()
			for i := 1; i <= n; i++ {
				s.engineOp(kind, i)
			}
		}(loop.kind, loop.n)
	}
	wg.Wait()
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		_ = writer.Process.Kill() // it cannot be told to stop
	}
	werr := writer.Wait()
	var count, commits int
	if _, err := fmt.Sscanf(lastLine(wout.String()), "wrote %d (%d commits)", &count, &commits); err != nil || werr != nil {
		return s.rep, fmt.Errorf("writer: %v\n%s", werr, wout.String())
	}
	s.rep.PersonLines, s.rep.WriterCommits = count, commits
	// One more operation: it commits what the writer left and puts back
	// what a stale save dropped.
	s.engineOp("update", 0)
	s.check(count)
	s.rep.Duration = time.Since(start)
	s.logf("done in %s", s.rep.Duration.Round(100*time.Millisecond))
	return s.rep, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// sv runs the binary to completion and returns its stdout.
func (s *scenario) sv(args ...string) (string, error) {
	cmd := exec.Command(s.cfg.Bin, append([]string{"--vault", s.vault}, args...)...)
	cmd.Env = s.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("sessionvault %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), nil
}

func (s *scenario) randFloat() float64 {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.Float64()
}

// refusals are the codes an operation may end with by design in these
// loops (none today: titles are unique, a session is always active).
var refusals = map[string]bool{}

// engineOp runs one engine operation as a process, killing it at a random
// point with probability KillRate and retrying it with the same --op-id
// until it answers.
func (s *scenario) engineOp(kind string, i int) {
	opID := fmt.Sprintf("%s-%s-%d", s.name, kind, i)
	marker := fmt.Sprintf("engine %s %d of %s", kind, i, s.name)
	var args []string
	switch kind {
	case "update":
		args = []string{"update", marker}
	case "decide":
		args = []string{"decide", "--title", marker, "--choice", "the choice " + strconv.Itoa(i), "--rationale", "because " + strconv.Itoa(i)}
	case "block":
		args = []string{"block", marker, "--severity", "low"}
	}
	for try := 0; try < 50; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, s.cfg.Bin, append([]string{"--vault", s.vault, "--json", "--op-id", opID}, args...)...)
		cmd.Env = s.env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			cancel()
			s.fail("start: " + err.Error())
			return
		}
		if i > 0 && s.randFloat() < s.cfg.KillRate {
			delay := time.Duration(s.randFloat() * float64(40*time.Millisecond))
			t := time.AfterFunc(delay, func() { _ = cmd.Process.Signal(syscall.SIGKILL) /* it may have exited already */ })
			defer t.Stop()
		}
		began := time.Now()
		err := cmd.Wait()
		took := time.Since(began)
		cancel()
		s.mu.Lock()
		s.rep.OpTimes = append(s.rep.OpTimes, took)
		s.mu.Unlock()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			s.mu.Lock()
			s.rep.Killed++
			s.mu.Unlock()
			continue
		}
		var res struct {
			Success bool `json:"success"`
			Data    struct {
				ID string `json:"id"`
			} `json:"data"`
			Error struct {
				Code, Name, Message string
			} `json:"error"`
		}
		if jerr := json.Unmarshal(out.Bytes(), &res); jerr != nil {
			s.fail(fmt.Sprintf("%s: no JSON answer (%v): %s %s", opID, err, out.String(), errb.String()))
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if !res.Success {
			code := res.Error.Code + " " + res.Error.Name
			if refusals[res.Error.Code] {
				s.rep.Refused++
				s.rep.refusedByCodes[code]++
				return
			}
			s.rep.Failed++
			s.rep.FailCodes[code]++
			s.rep.problem("%s failed: %s %s", opID, code, res.Error.Message)
			return
		}
		s.rep.Ops++
		s.acks = append(s.acks, ack{opID: opID, kind: kind, id: res.Data.ID, marker: marker})
		return
	}
	s.fail(opID + ": killed 50 times in a row")
}

func (s *scenario) fail(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep.Failed++
	s.rep.FailCodes["harness"]++
	s.rep.problem("%s", msg)
}

var (
	blockIDRe = regexp.MustCompile(`\^([udb]-\d+)\s*$`)
	trailerRe = regexp.MustCompile(`(?m)^([A-Za-z-]+): (.*)$`)
)

// check compares the vault with what was acknowledged and written.
func (s *scenario) check(personCount int) {
	r := s.rep
	final, err := os.ReadFile(s.note)
	if err != nil {
		r.problem("reading the note: %v", err)
		r.EntriesLost = len(s.acks)
		return
	}
	lines := strings.Split(strings.ReplaceAll(string(final), "\r\n", "\n"), "\n")
	count := map[string]int{}
	for _, l := range lines {
		count[l]++
	}
	{
		for i := 1; i <= personCount; i++ {
			switch n := count[personLine(s.name, i)]; {
			case n == 0:
				r.PersonLost++
				r.problem("person line %q lost", personLine(s.name, i))
			case n > 1:
				r.PersonDup++
				r.problem("person line %q %d times", personLine(s.name, i), n)
			}
		}
	}
	// Entries are counted across the note and the archive notes that history
	// compaction moved the older updates to (demo/sessions/<id>/archive.md),
	// as `status` reads them: each exactly once in all.
	logs, err := filepath.Glob(filepath.Join(s.vault, "demo", "sessions", "*", "archive.md"))
	if err != nil {
		r.problem("finding the update logs: %v", err)
	}
	for _, p := range logs {
		data, err := os.ReadFile(p)
		if err != nil {
			r.problem("reading the update log %s: %v", p, err)
			continue
		}
		final = append(append(final, '\n'), data...)
		lines = append(lines, strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")...)
	}
	ids := map[string][]string{}
	for _, l := range lines {
		if m := blockIDRe.FindStringSubmatch(l); m != nil {
			ids[m[1]] = append(ids[m[1]], l)
		}
	}
	for id, ls := range ids {
		if len(ls) > 1 {
			r.DupIDs++
			r.problem("id %s on %d lines: %q", id, len(ls), ls)
		}
	}
	for _, a := range s.acks {
		n := 0
		for _, l := range ids[a.id] {
			if strings.Contains(l, a.marker) {
				n++
			}
		}
		switch {
		case n == 0:
			r.EntriesLost++
			r.problem("entry %s (%s) lost; lines with that id: %q", a.id, a.opID, ids[a.id])
		case n > 1:
			r.EntriesDup++
		}
		// Also exactly once by its text, whatever its id.
		if c := strings.Count(string(final), a.marker+" "); a.kind != "decide" && c > 1 {
			r.EntriesDup++
			r.problem("entry %q %d times", a.marker, c)
		}
	}
	s.checkCommits()
	if out, err := s.git("fsck", "--strict", "--no-dangling", "--no-progress"); err != nil || strings.TrimSpace(out) != "" {
		r.problem("git fsck --strict: %v %s", err, out)
	} else {
		r.FsckClean = true
	}
	if out, err := s.git("status", "--porcelain"); err != nil || out != "" {
		r.problem("git status: %v %q", err, out)
	} else {
		r.StatusClean = true
	}
}

func (s *scenario) git(args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", s.vault}, args...)...)
	cmd.Env = s.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// checkCommits checks that each acknowledged operation has exactly one
// commit, and that each engine commit's tree holds the bytes its
// State-Checksum names, with the entry in its current-state note.
func (s *scenario) checkCommits() {
	r := s.rep
	out, err := s.git("log", "--format=%H%x00%B%x01")
	if err != nil {
		r.problem("git log: %v", err)
		r.CommitsWrong = len(s.acks)
		return
	}
	byOp := map[string][]string{}
	sums := map[string]string{}
	for _, rec := range strings.Split(out, "\x01") {
		hash, body, ok := strings.Cut(strings.TrimSpace(rec), "\x00")
		if !ok {
			continue
		}
		tr := map[string]string{}
		for _, m := range trailerRe.FindAllStringSubmatch(body, -1) {
			tr[m[1]] = strings.TrimSpace(m[2])
		}
		if op := tr["Op-Id"]; op != "" {
			byOp[op] = append(byOp[op], hash)
		}
		if sum := tr["State-Checksum"]; sum != "" {
			sums[hash] = sum
		}
	}
	for _, a := range s.acks {
		cs := byOp[a.opID]
		if len(cs) != 1 {
			r.CommitsWrong++
			r.problem("%s has %d commits", a.opID, len(cs))
			continue
		}
		note, err := s.git("show", cs[0]+":demo/session-current-state.md")
		if err != nil || !strings.Contains(note, a.marker) || !strings.Contains(note, "^"+a.id) {
			r.ContentWrong++
			r.problem("%s: commit %s lacks its entry %s", a.opID, cs[0][:12], a.id)
		}
	}
	for hash, sum := range sums {
		names, err := s.git("diff-tree", "--no-commit-id", "-r", "--name-only", "--root", hash)
		if err != nil {
			r.ContentWrong++
			continue
		}
		paths := strings.Fields(names)
		sort.Strings(paths)
		h := sha256.New()
		for _, p := range paths {
			content, err := s.git("show", hash+":"+p)
			if err != nil {
				content = ""
			}
			h.Write([]byte(p))
			h.Write([]byte{0})
			h.Write([]byte(content))
			h.Write([]byte{0})
		}
		if "sha256:"+hex.EncodeToString(h.Sum(nil)) != sum {
			r.ContentWrong++
			r.problem("commit %s: State-Checksum does not match its tree (%s)", hash[:12], strings.Join(paths, ", "))
		}
	}
}

func personLine(kind string, i int) string { return fmt.Sprintf("- person %s line %d", kind, i) }
