package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// writerMain is `svstress writer`: one outside writer, run as its own
// process until the stop file exists; it prints "wrote N" (lines, or
// commits for git) when it stops.
func writerMain(args []string) int {
	fs := flag.NewFlagSet("writer", flag.ContinueOnError)
	kind := fs.String("kind", "", "append, truncate, rename, stale or git")
	note := fs.String("note", "", "the note to write")
	vault := fs.String("vault", "", "the vault (for git)")
	stop := fs.String("stop", "", "stop once this file exists")
	seed := fs.Int64("seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rng := rand.New(rand.NewPCG(uint64(*seed), 1))
	pause := func() { time.Sleep(time.Duration(rng.IntN(4000)) * time.Microsecond) }
	stopped := func() bool { _, err := os.Stat(*stop); return err == nil }
	n, commits := 0, 0
	var buffer []byte // the stale editor's buffer, loaded once
	if *kind == "stale" {
		b, err := os.ReadFile(*note)
		if err != nil {
			fmt.Println("writer:", err)
			return 1
		}
		buffer = b
	}
	for !stopped() {
		var err error
		line := []byte(personLine(*kind, n+1) + "\n")
		switch *kind {
		case "append":
			err = appendLine(*note, line)
		case "truncate":
			err = truncateWrite(*note, line, rng)
		case "rename":
			err = renameWrite(*note, line)
		case "stale":
			buffer = withLine(buffer, line)
			err = saveInPlace(*note, buffer)
		case "git":
			// A person's line, then Obsidian Git's commit of everything.
			if err = appendLine(*note, line); err != nil {
				break
			}
			cmd := exec.Command("sh", "-c", "git add -A && git commit -q -m 'by hand "+strconv.Itoa(n+1)+"'")
			cmd.Dir = *vault
			if cmd.Run() == nil {
				commits++
			} // else index.lock held by the engine: the next round commits it
		default:
			fmt.Println("writer: unknown kind", *kind)
			return 2
		}
		if err != nil {
			fmt.Println("writer:", err)
			return 1
		}
		n++
		pause()
	}
	fmt.Printf("wrote %d (%d commits)\n", n, commits)
	return 0
}

// appendLine appends in place, as `echo line >> note`.
func appendLine(note string, line []byte) error {
	f, err := os.OpenFile(note, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// withLine returns text with line added at its end.
func withLine(text, line []byte) []byte {
	out := append([]byte(nil), text...)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	return append(out, line...)
}

// truncateWrite saves as Obsidian does: read, then open with O_TRUNC, write
// the first half, pause, write the rest, close.
func truncateWrite(note string, line []byte, rng *rand.Rand) error {
	cur, err := os.ReadFile(note)
	if err != nil {
		return err
	}
	text := withLine(cur, line)
	f, err := os.OpenFile(note, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	half := len(text) / 2
	_, err = f.Write(text[:half])
	time.Sleep(time.Duration(500+rng.IntN(3000)) * time.Microsecond)
	if err == nil {
		_, err = f.Write(text[half:])
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// saveInPlace writes text over the note in place (truncate, write).
func saveInPlace(note string, text []byte) error {
	return os.WriteFile(note, text, 0o644)
}

// renameWrite saves as editors that write a temporary file and rename it
// over the note do.
func renameWrite(note string, line []byte) error {
	cur, err := os.ReadFile(note)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(note), "."+filepath.Base(note)+".tmp"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(tmp, withLine(cur, line), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, note)
}
