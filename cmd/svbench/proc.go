package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// runProc runs name with argv in dir, with stdin as its standard input (none
// when empty), and returns the child's peak resident memory in KiB (0 where
// the platform does not report it). Its error carries the child's output.
func runProc(dir, stdin, name string, argv ...string) (int64, error) {
	cmd := exec.Command(name, argv...)
	cmd.Dir = dir
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%s %v: %w: %s", name, argv, err, out)
	}
	return maxRSSKiB(cmd.ProcessState), nil
}

// sh runs name with argv in dir; its error carries the child's output.
func sh(dir, name string, argv ...string) error {
	_, err := runProc(dir, "", name, argv...)
	return err
}

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
