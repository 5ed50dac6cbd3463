// Command svbench measures sessionvault against the targets of DESIGN §10 on
// a generated vault (default 10,000 notes and 5,000 commits): one `update` to
// a durable commit in process (with each durability: fsync of the commit's own
// files, and one syncfs of the file system) and as a CLI process, and `git add
// && git commit` of one note, interleaved round by round in the same run —
// on a quiet machine, while another process writes and flushes 64 MB files on
// the same file system ("busy"), and while it writes them without flushing
// ("dirty": the kernel's write-back holds them). It prints the medians, p90s
// and the ratios. Run it with `make bench`.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/history/historytest"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

func main() {
	bin := flag.String("bin", "bin/sessionvault", "the sessionvault binary to time as a CLI process")
	notes := flag.Int("notes", envInt("SESSIONVAULT_BENCH_NOTES", 10000), "notes in the generated vault")
	commits := flag.Int("commits", envInt("SESSIONVAULT_BENCH_COMMITS", 5000), "commits in the generated vault's history")
	rounds := flag.Int("rounds", 40, "timed rounds (each runs every variant once, in random order)")
	keep := flag.Bool("keep", false, "keep the generated vault")
	profile := flag.String("cpuprofile", "", "write a CPU profile of this process (the in-process variant) to the file")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "svbench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "svbench: --cpuprofile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*bin, *notes, *commits, *rounds, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "svbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func run(bin string, notes, commits, rounds int, keep bool) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "svbench-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(work)
	}
	dir := filepath.Join(work, "vault")
	fmt.Fprintf(os.Stderr, "generating a vault of %d notes and %d commits in %s ...\n", notes, commits, dir)
	t0 := time.Now()
	if err := historytest.Generate(dir, notes, commits); err != nil {
		return fmt.Errorf("generating the vault: %w", err)
	}
	fmt.Fprintf(os.Stderr, "generated in %s\n", time.Since(t0).Round(time.Millisecond))
	if err := sh(dir, bin, "init", dir, "--project", "bench"); err != nil {
		return err
	}
	if err := sh(dir, bin, "--vault", dir, "start", "--objective", "benchmark", "--branch", "bench", "--commit", "0"); err != nil {
		return err
	}
	v, err := vault.Open(dir)
	if err != nil {
		return err
	}
	svc := session.New(v) // durability: fsync (the default)
	vs, err := vault.Open(dir)
	if err != nil {
		return err
	}
	vs.Config.Durability = "syncfs"
	svcSyncfs := session.New(vs)

	variants := []struct {
		name string
		op   func(i int) error
	}{
		{"in process, fsync: update, durable commit", func(i int) error {
			_, err := svc.Update(session.UpdateOptions{Project: "bench", Message: "in-process update " + strconv.Itoa(i)})
			return err
		}},
		{"in process, syncfs: update, durable commit", func(i int) error {
			_, err := svcSyncfs.Update(session.UpdateOptions{Project: "bench", Message: "in-process syncfs update " + strconv.Itoa(i)})
			return err
		}},
		{"CLI process: sessionvault update", func(i int) error {
			return sh(dir, bin, "--vault", dir, "update", "cli update "+strconv.Itoa(i))
		}},
		{"git add && git commit (one note)", func(i int) error {
			p := historytest.NotePath(rand.Intn(notes))
			if err := os.WriteFile(filepath.Join(dir, p), historytest.NoteContent(i, 1_000_000+i), 0o644); err != nil {
				return err
			}
			if err := sh(dir, "git", "add", "--", p); err != nil {
				return err
			}
			return sh(dir, "git", "commit", "-q", "-m", "bench "+strconv.Itoa(i))
		}},
	}
	// One warm-up round, untimed.
	for _, vr := range variants {
		if err := vr.op(-1); err != nil {
			return fmt.Errorf("%s: %w", vr.name, err)
		}
	}
	phases := []string{"quiet", "busy", "dirty"}
	times := map[string][][]time.Duration{}
	for _, phase := range phases {
		var stop func() error
		if phase != "quiet" {
			if stop, err = busyWriter(work, phase == "busy"); err != nil {
				return err
			}
		}
		times[phase] = make([][]time.Duration, len(variants))
		for r := 0; r < rounds; r++ {
			for _, k := range rand.Perm(len(variants)) {
				start := time.Now()
				if err := variants[k].op(r); err != nil {
					return fmt.Errorf("%s: %w", variants[k].name, err)
				}
				times[phase][k] = append(times[phase][k], time.Since(start))
			}
			if (r+1)%10 == 0 {
				fmt.Fprintf(os.Stderr, "%s: round %d/%d\n", phase, r+1, rounds)
			}
		}
		if stop != nil {
			if err := stop(); err != nil {
				return err
			}
		}
	}
	if out, err := exec.Command("git", "-C", dir, "status", "--porcelain").Output(); err != nil || len(out) != 0 {
		return fmt.Errorf("git status after the run is not clean (%v): %s", err, out)
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--no-progress").CombinedOutput(); err != nil {
		return fmt.Errorf("git fsck after the run: %v: %s", err, out)
	}
	fmt.Printf("vault: %d notes, %d commits; %d rounds per phase, variants interleaved in random order;\n", notes, commits, rounds)
	fmt.Printf("busy: another process writes and flushes 64 MB files on the same file system; dirty: the same without flushing\n\n")
	fmt.Printf("%-44s %11s %11s %11s %11s %11s %11s\n", "variant", "quiet p50", "quiet p90", "busy p50", "busy p90", "dirty p50", "dirty p90")
	med := map[string][]time.Duration{}
	for _, phase := range phases {
		med[phase] = make([]time.Duration, len(variants))
		for k := range variants {
			med[phase][k] = pct(times[phase][k], 50)
		}
	}
	for k, vr := range variants {
		fmt.Printf("%-44s %11s %11s %11s %11s %11s %11s\n", vr.name, ms(med["quiet"][k]), ms(pct(times["quiet"][k], 90)),
			ms(med["busy"][k]), ms(pct(times["busy"][k], 90)), ms(med["dirty"][k]), ms(pct(times["dirty"][k], 90)))
	}
	for _, phase := range phases {
		m := med[phase]
		fmt.Printf("\n%s: git add && git commit / in-process update (fsync): %.1fx, (syncfs): %.1fx (target: >= 8x; DESIGN §10)\n", phase, float64(m[3])/float64(m[0]), float64(m[3])/float64(m[1]))
		fmt.Printf("%s: syncfs / fsync in process: %.2fx; git / CLI update: %.1fx\n", phase, float64(m[1])/float64(m[0]), float64(m[3])/float64(m[2]))
	}
	fmt.Printf("targets: in-process p50 <= 5 ms quiet, <= 8 ms busy; CLI p50 <= 20 ms\n")
	t1 := time.Now()
	rep, err := svc.Check(nil)
	if err != nil {
		return err
	}
	fmt.Printf("parse every note (check, in process): %d notes in %s (target <= 1 s)\n", rep.Notes, ms(time.Since(t1)))
	fmt.Printf("git status: clean; git fsck: clean\n")
	return benchHook(bin, work, rounds)
}

// benchHook times the PreToolUse decision, process start to exit, on a
// session with 10,000 updates whose start protocol is complete (DESIGN §10:
// p50 <= 5 ms): Edit (allowed after verifying the signed state and the
// gate) and Read (the read-only fast path).
func benchHook(bin, work string, rounds int) error {
	v := filepath.Join(work, "hookvault")
	code := filepath.Join(work, "code")
	steps := [][]string{
		{"git", "init", "-q", "-b", "feat/bench", code},
		{"git", "-C", code, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "--allow-empty", "-m", "start"},
		{bin, "init", v, "--project", "demo"},
		{bin, "--vault", v, "start", "--objective", "hook benchmark"},
		{bin, "--vault", v, "update", "first"},
	}
	for _, st := range steps {
		if err := sh(work, st[0], st[1:]...); err != nil {
			return err
		}
	}
	note := filepath.Join(v, "demo", "session-current-state.md")
	data, err := os.ReadFile(note)
	if err != nil {
		return err
	}
	first := []byte("· note · first ^u-1\n")
	i := bytes.Index(data, first) + len(first)
	var b bytes.Buffer
	b.Write(data[:i])
	for n := 2; n <= 10000; n++ {
		fmt.Fprintf(&b, "- 2026-11-22T10:00:00Z · note · bulk update number %d with a few more words ^u-%d\n", n, n)
	}
	b.Write(data[i:])
	if err := os.WriteFile(note, b.Bytes(), 0o644); err != nil {
		return err
	}
	for _, st := range [][]string{
		{"--vault", v, "accept"},
		{"--vault", v, "evidence", "record", "c-1", "--file", "session-current-state.md"},
		{"--vault", v, "evidence", "record", "c-2"},
		{"--vault", v, "evidence", "record", "c-3", "--run"},
	} {
		if err := sh(code, bin, st...); err != nil {
			return err
		}
	}
	hookBin := bin
	hook := func(tool string) (time.Duration, error) {
		cmd := exec.Command(hookBin, "--vault", v, "hook", "pre-tool-use")
		cmd.Dir = code
		cmd.Stdin = strings.NewReader(`{"session_id":"b","cwd":"` + code + `","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":{"file_path":"` + code + `/x.go"}}`)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			return d, fmt.Errorf("hook denied %s: %v: %s", tool, err, out)
		}
		return d, nil
	}
	fmt.Printf("\nPreToolUse hook, process start to exit, session with 10,000 updates (%d rounds):\n", rounds)
	bins := []string{bin}
	if lean := filepath.Join(filepath.Dir(bin), "sessionvault-hook"); fileExists(lean) {
		bins = append(bins, lean)
	}
	for _, b := range bins {
		hookBin = b
		var edit, read []time.Duration
		for r := 0; r < rounds; r++ {
			d, err := hook("Edit")
			if err != nil {
				return err
			}
			edit = append(edit, d)
			if d, err = hook("Read"); err != nil {
				return err
			}
			read = append(read, d)
		}
		name := filepath.Base(b)
		fmt.Printf("%-50s %10s %10s\n", name+": Edit (verified, gate passed)", ms(pct(edit, 50)), ms(pct(edit, 90)))
		fmt.Printf("%-50s %10s %10s\n", name+": Read (read-only fast path)", ms(pct(read, 50)), ms(pct(read, 90)))
	}
	fmt.Printf("target p50 <= 5 ms (DESIGN §10)\n")
	return nil
}

// busyWriter starts a process that writes a 64 MB file in work, in a loop,
// as another program on a developer's machine would — flushing each (dd
// conv=fsync) when flush is set; the function it returns stops it and
// removes the file.
func busyWriter(work string, flush bool) (func() error, error) {
	file := filepath.Join(work, "busy.bin")
	conv := ""
	if flush {
		conv = " conv=fsync"
	}
	cmd := exec.Command("sh", "-c", "while :; do dd if=/dev/zero of=\"$0\" bs=1M count=64"+conv+" status=none || exit 1; done", file)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the busy writer: %w", err)
	}
	time.Sleep(500 * time.Millisecond) // let it get going
	return func() error {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // killed: its exit status says so
		return os.Remove(file)
	}, nil
}

func sh(dir, name string, argv ...string) error {
	cmd := exec.Command(name, argv...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %v: %w: %s", name, argv, err, out)
	}
	return nil
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
