// Package historytest builds realistic vault repositories for tests and
// benchmarks of the history package and of packages built on it.
//
// It drives the real git CLI (git must be on PATH) through os/exec and uses
// git fast-import, so a vault of 10,000 notes and 5,000 commits takes a few
// seconds to build.
package historytest

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// NotesPerTopic is how many notes Generate puts in each topic folder.
const NotesPerTopic = 100

// NotePath returns the slash-separated path of note i (0-based) as laid out
// by Generate: "topic-NN/note-NNNN.md", NotesPerTopic notes per folder.
func NotePath(i int) string {
	return fmt.Sprintf("topic-%02d/note-%04d.md", i/NotesPerTopic, i)
}

var words = strings.Fields(`lorem ipsum dolor sit amet consectetur adipiscing elit sed do
eiusmod tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud
exercitation ullamco laboris nisi aliquip ex ea commodo consequat duis aute irure in
reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat
cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum session
decision blocker update agent vault note project`)

// NoteContent returns about 550 bytes of markdown with YAML front matter for
// note i at revision rev. Different (i, rev) pairs give different content.
func NoteContent(i, rev int) []byte {
	rng := rand.New(rand.NewSource(int64(i)*7919 + int64(rev)*104729 + 1))
	var b bytes.Buffer
	fmt.Fprintf(&b, "---\ntitle: Note %04d\nrevision: %d\ntags:\n  - topic-%02d\n  - %s\ncreated: 2026-11-%02dT%02d:%02d:00Z\n---\n\n",
		i, rev, i/NotesPerTopic, words[rng.Intn(len(words))], 1+i%28, i%24, rev%60)
	fmt.Fprintf(&b, "# Note %04d\n\n", i)
	for b.Len() < 470 {
		w := words[rng.Intn(len(words))]
		if b.Len()%60 < 8 {
			b.WriteString("\n")
		} else {
			b.WriteString(" ")
		}
		b.WriteString(w)
	}
	fmt.Fprintf(&b, "\n\n- [ ] follow up [[topic-%02d/note-%04d]]\n- [x] revision %d\n", (i+1)%((i/NotesPerTopic)+1), (i+7)%10000, rev)
	return b.Bytes()
}

// Generate creates a git repository in dir (created if missing; it must not
// already hold a repository) with notes notes and commits commits on branch
// main: the first commit adds every note, each later commit rewrites one to
// three random notes. Notes are laid out as "topic-NN/note-NNNN.md" (see
// NotePath), each about 550 bytes of markdown with front matter.
//
// When it returns nil, the work tree is checked out, `git status` is clean
// and no index entry is racily clean (the index was rewritten in a later
// second than every file's mtime). It needs git on PATH; errors carry git's
// output.
func Generate(dir string, notes, commits int) error {
	if notes < 1 || commits < 1 {
		return fmt.Errorf("historytest: need at least one note and one commit (got %d, %d)", notes, commits)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return fmt.Errorf("historytest: %s already holds a repository", dir)
	}
	if err := run(dir, nil, "init", "-q", "-b", "main"); err != nil {
		return err
	}

	var stream bytes.Buffer
	w := bufio.NewWriter(&stream)
	rev := make([]int, notes)
	rng := rand.New(rand.NewSource(42))
	when := int64(1795000000) // 2026-11-18
	for c := 0; c < commits; c++ {
		when += 60
		fmt.Fprintf(w, "commit refs/heads/main\n")
		fmt.Fprintf(w, "author Vault Generator <gen@example.com> %d +0000\n", when)
		fmt.Fprintf(w, "committer Vault Generator <gen@example.com> %d +0000\n", when)
		var msg string
		var touched []int
		if c == 0 {
			msg = fmt.Sprintf("import: %d notes\n", notes)
			for i := 0; i < notes; i++ {
				touched = append(touched, i)
			}
		} else {
			n := 1 + rng.Intn(3)
			for k := 0; k < n; k++ {
				touched = append(touched, rng.Intn(notes))
			}
			msg = fmt.Sprintf("update: commit %d\n\nSession: 2026-11-18-session-%02d\nOperation: update\n", c, c%100)
		}
		fmt.Fprintf(w, "data %d\n%s\n", len(msg), msg)
		for _, i := range touched {
			if c > 0 {
				rev[i]++
			}
			content := NoteContent(i, rev[i])
			fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n", NotePath(i), len(content))
			w.Write(content)
			w.WriteString("\n")
		}
		w.WriteString("\n")
	}
	w.WriteString("done\n")
	if err := w.Flush(); err != nil {
		return err
	}
	if err := run(dir, &stream, "fast-import", "--quiet", "--done", "--date-format=raw"); err != nil {
		return err
	}
	if err := run(dir, nil, "reset", "--hard", "-q"); err != nil {
		return err
	}
	// Every file was just written in the same second(s) as the index, so every
	// entry is racily clean. Wait for the next second and rewrite the index so
	// that its mtime is later than every entry's.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	if err := run(dir, nil, "update-index", "-q", "--really-refresh", "--force-write-index"); err != nil {
		return err
	}
	out, err := output(dir, "status", "--porcelain")
	if err != nil {
		return err
	}
	if len(out) != 0 {
		return fmt.Errorf("historytest: work tree not clean after generation:\n%s", out)
	}
	return nil
}

func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Vault Generator", "GIT_AUTHOR_EMAIL=gen@example.com",
		"GIT_COMMITTER_NAME=Vault Generator", "GIT_COMMITTER_EMAIL=gen@example.com",
	)
	return cmd
}

func run(dir string, stdin *bytes.Buffer, args ...string) error {
	cmd := gitCmd(dir, args...)
	if stdin != nil {
		cmd.Stdin = stdin
		// fast-import's many small allocations make glibc trim and regrow
		// the heap thousands of times (5 s instead of 1 s for 5,000 commits).
		cmd.Env = append(cmd.Env, "MALLOC_TOP_PAD_=67108864", "MALLOC_TRIM_THRESHOLD_=134217728")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("historytest: git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func output(dir string, args ...string) ([]byte, error) {
	cmd := gitCmd(dir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("historytest: git %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
