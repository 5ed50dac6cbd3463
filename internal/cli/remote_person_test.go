package cli

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/testenv"
)

// personRounds is how many rounds TestRemotePersonSectionsByteExact runs
// (the acceptance of the person's-text issue: 200).
var personRounds = flag.Int("remote.rounds", testenv.Size(10, 40), "rounds of person appends and syncs in TestRemotePersonSectionsByteExact (10; make test runs 40)")

// appendTo appends text to the vault file rel of c, as a person typing at
// its end in Obsidian.
func appendTo(t *testing.T, c *clone, rel, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(c.dir, filepath.FromSlash(rel)), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

const statePath = "demo/session-current-state.md"

// The three ways person text was lost in a merge between two machines,
// each run through `update` and `remote sync` as a person and an agent do:
// afterwards both clones hold every byte each person appended.
func TestRemoteMergeKeepsPersonText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		a, b    string
		aFirst  bool // a's text synced and pulled by b, and an update on a, before b writes
		wantAll []string
	}{
		{name: "a line both sides share", a: "\n## One\n\nsame\n\nalpha\n", b: "\n## Two\n\nsame\n\nbeta\n"},
		{name: "a block id beside blank lines", a: "\n## One\n\nalpha ^x\n", b: "\n## Two\n\nbeta\n\ngamma\n"},
		{name: "a person's block id twice", a: "\n## One\n\n- one ^gh\n", b: "\n## Two\n\n- two ^gh\n", aFirst: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			clones := newRemoteVault(t, 2)
			a, b := clones[0], clones[1]
			b.sv("remote", "sync")
			appendTo(t, a, statePath, c.a)
			if c.aFirst {
				a.sv("update", "a0")
				a.sv("remote", "sync")
				b.sv("remote", "sync")
				a.sv("update", "a")
			} else {
				a.sv("update", "a")
			}
			appendTo(t, b, statePath, c.b)
			b.sv("update", "b")
			b.sv("remote", "sync")
			a.sv("remote", "sync")
			b.sv("remote", "sync")
			for _, cl := range clones {
				state := readFile(t, filepath.Join(cl.dir, statePath))
				for _, want := range []string{c.a, c.b} {
					if n := strings.Count(state, want); n != 1 {
						t.Errorf("%s: %q is there %d times:\n%s", cl.name, want, n, state)
					}
				}
				if strings.Contains(state, "<<<<<<<") {
					t.Errorf("%s: conflict markers:\n%s", cl.name, state)
				}
			}
			if a.git("rev-parse", "HEAD") != b.git("rev-parse", "HEAD") {
				t.Errorf("the clones did not converge")
			}
		})
	}
}

// A `git pull` (as Obsidian Git runs it) merges a note through the driver
// to the same bytes as `remote sync`: the same clone, copied, merged both
// ways.
func TestGitPullMatchesRemoteSync(t *testing.T) {
	t.Parallel()
	clones := newRemoteVault(t, 2)
	a, b := clones[0], clones[1]
	b.sv("remote", "sync")
	appendTo(t, a, statePath, "\n## From a\n\nsame\n\n```go\nx := 1\n```\n")
	a.sv("update", "on a")
	a.sv("decide", "--title", "pick a", "--choice", "a", "--rationale", "r")
	a.sv("remote", "sync")
	appendTo(t, b, statePath, "\n## From b\n\nsame\n\n%% a comment %%\nline ^b1\n")
	b.sv("update", "on b")
	b.sv("block", "waiting on b")
	copyDir := filepath.Join(filepath.Dir(b.dir), "b-copy")
	if out, err := exec.Command("cp", "-a", b.dir, copyDir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	pulled := &clone{t: t, bin: b.bin, dir: copyDir, name: "b-copy", env: b.env}
	b.sv("remote", "sync")
	pulled.git("pull", "--no-rebase", "--no-edit", "--quiet", "origin", "main")
	synced, viaPull := readFile(t, filepath.Join(b.dir, statePath)), readFile(t, filepath.Join(copyDir, statePath))
	if synced != viaPull {
		t.Fatalf("remote sync and git pull merged differently:\n--- remote sync\n%s\n--- git pull\n%s", synced, viaPull)
	}
	for _, want := range []string{"\n## From a\n\nsame\n\n```go\nx := 1\n```\n", "\n## From b\n\nsame\n\n%% a comment %%\nline ^b1\n", "on a ^", "on b ^", "waiting on b"} {
		if !strings.Contains(synced, want) {
			t.Errorf("the merge lacks %q:\n%s", want, synced)
		}
	}
}

// personSection is a section a person appends: a heading of its own, then
// paragraphs with what people's notes hold — blank lines (runs of them),
// template lines both machines write, comments, a fence, block ids.
func personSection(rng *rand.Rand, who string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## %s's note %d\n\n", who, n)
	for i := 0; i < 1+rng.IntN(4); i++ {
		switch rng.IntN(6) {
		case 0:
			b.WriteString("%% template: daily %%\n")
		case 1:
			b.WriteString("```sh\nmake test\n```\n")
		case 2:
			fmt.Fprintf(&b, "- [ ] follow up %d ^todo\n", rng.IntN(3))
		case 3:
			b.WriteString("same\n")
		default:
			fmt.Fprintf(&b, "%s wrote paragraph %d of note %d.\n", who, i, n)
		}
		b.WriteString(strings.Repeat("\n", 1+rng.IntN(2)))
	}
	fmt.Fprintf(&b, "%s's last line of note %d\n", who, n)
	return b.String()
}

// Two clones, rounds of a person appending sections on each machine — to
// the current state and to a note of their own — and the agent recording
// updates, syncing in random order with one-sided stretches: every person
// section is there byte for byte and once, in both clones; the clones are
// identical; `check` and `git fsck` are clean.
func TestRemotePersonSectionsByteExact(t *testing.T) {
	t.Parallel()
	clones := newRemoteVault(t, 2)
	a, b := clones[0], clones[1]
	const journal = "demo/journal.md"
	if err := os.WriteFile(filepath.Join(a.dir, filepath.FromSlash(journal)), []byte("# Journal\n\nWhat we noted.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.sv("remote", "sync")
	b.sv("remote", "sync")
	rng := rand.New(rand.NewPCG(25, uint64(*personRounds)))
	var sections []string
	behind := map[string]int{} // rounds each clone still skips syncing
	for round := 0; round < *personRounds; round++ {
		for _, c := range clones {
			if rng.IntN(3) > 0 {
				rel := statePath
				if rng.IntN(2) == 0 {
					rel = journal
				}
				s := personSection(rng, c.name, round)
				appendTo(t, c, rel, s)
				sections = append(sections, s)
			}
			if rng.IntN(2) == 0 {
				c.sv("update", fmt.Sprintf("round %d on %s", round, c.name))
			}
			switch {
			case behind[c.name] > 0:
				behind[c.name]--
			case rng.IntN(8) == 0:
				behind[c.name] = 1 + rng.IntN(4) // a stretch without syncing
			case rng.IntN(2) == 0:
				c.sv("remote", "sync")
			}
		}
	}
	for pass := 0; pass < 2; pass++ {
		for _, c := range clones {
			c.sv("remote", "sync")
		}
	}
	var notes [2]string
	for i, c := range clones {
		notes[i] = readFile(t, filepath.Join(c.dir, statePath)) + readFile(t, filepath.Join(c.dir, filepath.FromSlash(journal)))
		if st := c.git("status", "--porcelain"); st != "" {
			t.Errorf("%s: git status not clean:\n%s", c.name, st)
		}
		c.git("fsck", "--strict")
		if out, err := c.try("check"); err != nil {
			t.Errorf("%s: check: %v\n%s", c.name, err, out)
		}
		if strings.Contains(notes[i], "<<<<<<<") {
			t.Errorf("%s: conflict markers", c.name)
		}
	}
	if notes[0] != notes[1] || a.git("rev-parse", "HEAD") != b.git("rev-parse", "HEAD") {
		t.Errorf("the clones differ")
	}
	exact := 0
	for _, s := range sections {
		if n := strings.Count(notes[0], s); n != 1 {
			t.Errorf("person section %q is there byte for byte %d times", s, n)
			continue
		}
		exact++
	}
	t.Logf("%d rounds: %d of %d person sections byte-exact and once in both clones", *personRounds, exact, len(sections))
	if t.Failed() {
		t.Logf("current state:\n%s", notes[0])
	}
}

// A person's section written on a machine whose session another machine
// ended (and replaced by a new one) before they synced: the current state
// holds the new session and the person's section whole, where they wrote it.
func TestRemoteSessionTurnoverKeepsPersonSection(t *testing.T) {
	t.Parallel()
	clones := newRemoteVault(t, 2)
	a, b := clones[0], clones[1]
	b.sv("remote", "sync")
	a.sv("end", "--summary", "done")
	a.sv("start", "--objective", "next")
	mine := "\n## Two\n\n- two ^gh\n- three\n\nbeta para\n"
	appendTo(t, b, statePath, mine)
	b.sv("update", "b")
	a.sv("remote", "sync")
	b.sv("remote", "sync")
	a.sv("remote", "sync")
	for _, c := range clones {
		state := readFile(t, filepath.Join(c.dir, statePath))
		if n := strings.Count(state, mine); n != 1 || !strings.Contains(state, "objective: next") {
			t.Errorf("%s: the person's section is there %d times, or the new session is not the current one:\n%s", c.name, n, state)
		}
	}
}
