package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// runProc runs name with argv in dir, with stdin as its standard input (none
// when empty). Its error carries the child's output.
func runProc(dir, stdin, name string, argv ...string) error {
	cmd := exec.Command(name, argv...)
	cmd.Dir = dir
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %v: %w: %s", name, argv, err, out)
	}
	return nil
}

// peakRSS runs name with argv in dir, with stdin as its standard input,
// through a launcher (this program again, as `svbench rss NAME ARGV...`)
// and returns the child's peak resident memory in KiB. Linux keeps a
// process's peak across fork and exec, so a child started directly from
// this program, whose own memory holds whole vaults, would report this
// program's peak; the launcher is small, and its size at the fork is the
// floor of what is measured (memoryFloor).
func peakRSS(dir, stdin, name string, argv ...string) (int64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("finding this program to launch %s: %w", name, err)
	}
	cmd := exec.Command(self, append([]string{"rss", name}, argv...)...)
	cmd.Dir = dir
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s %v: %w: %s", name, argv, err, errb.String())
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the launcher of %s printed %q: %w", name, out, err)
	}
	return kib, nil
}

// launchRSS is `svbench rss NAME ARGV...`: it runs the command with this
// process's standard input and prints its peak resident memory in KiB; a
// command that fails has its output on stderr and exit status 1.
func launchRSS(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: svbench rss NAME [ARG]...")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = os.Stdin
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v: %s", err, out)
		return 1
	}
	fmt.Println(maxRSSKiB(cmd.ProcessState))
	return 0
}

// sh runs name with argv in dir; its error carries the child's output.
func sh(dir, name string, argv ...string) error { return runProc(dir, "", name, argv...) }

// busyFileMB is the size of the file the busy writer writes over and over.
const busyFileMB = 64

// busyWriter starts a process that writes a file of busyFileMB MB in work, in a loop,
// as another program on a developer's machine would — flushing each (dd
// conv=fsync) when flush is set; the function it returns stops it and
// removes the file.
func busyWriter(work string, flush bool) (func() error, error) {
	file := filepath.Join(work, "busy.bin")
	conv := ""
	if flush {
		conv = " conv=fsync"
	}
	loop := fmt.Sprintf("while :; do dd if=/dev/zero of=\"$0\" bs=1M count=%d%s status=none || exit 1; done", busyFileMB, conv)
	cmd := exec.Command("sh", "-c", loop, file)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the busy writer: %w", err)
	}
	time.Sleep(500 * time.Millisecond) // let it get going
	return func() error {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // killed: its exit status says so
		if err := os.Remove(file); err != nil {
			return fmt.Errorf("removing the busy writer's file: %w", err)
		}
		return nil
	}, nil
}
