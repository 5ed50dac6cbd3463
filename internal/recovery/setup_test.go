package recovery

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/session/servicetest"
)

// start is the time the tests' clocks begin at.
var start = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// fixture is a recovery service over a fresh vault with project demo, made
// as `sessionvault init --project demo` makes it, under a clock the test
// moves (now).
type fixture struct {
	*Service
	now *time.Time
}

// newFixture makes the vault and its service; the clock starts at start.
func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	now := start
	return &fixture{Service: New(servicetest.New(tb, &now)), now: &now}
}

// advance moves the clock on by d.
func (f *fixture) advance(d time.Duration) { *f.now = f.now.Add(d) }

// startSession starts a session of project demo with objective.
func (f *fixture) startSession(tb testing.TB, objective string) string {
	tb.Helper()
	out, err := f.Start(session.StartOptions{Project: "demo", Objective: objective})
	if err != nil {
		tb.Fatal(err)
	}
	return out.ID
}

// write writes a file of the vault (a person's edit, or an import) at rel.
func (f *fixture) write(tb testing.TB, rel, content string) {
	tb.Helper()
	p := filepath.Join(f.V.Root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// check runs CheckRecovery and fails the test on error.
func (f *fixture) check(tb testing.TB, o RecoveryOptions) RecoveryReport {
	tb.Helper()
	rep, err := f.CheckRecovery(o)
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// head is the vault's current commit.
func (f *fixture) head(tb testing.TB) string {
	tb.Helper()
	h, err := f.V.Head()
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// mustContain fails unless text holds every one of want, in that order.
func mustContain(tb testing.TB, what, text string, want ...string) {
	tb.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			tb.Fatalf("%s lacks %q (after the earlier parts, in order):\n%s", what, w, text)
		}
		rest = rest[i+len(w):]
	}
}

// mustNotContain fails if text holds any of unwanted.
func mustNotContain(tb testing.TB, what, text string, unwanted ...string) {
	tb.Helper()
	for _, w := range unwanted {
		if strings.Contains(text, w) {
			tb.Fatalf("%s holds %q:\n%s", what, w, text)
		}
	}
}
