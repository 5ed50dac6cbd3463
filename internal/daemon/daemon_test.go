package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/features"

	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/syncer"
	"github.com/sessionvault/sessionvault/internal/vault"
)

func TestServe(t *testing.T) {
	dir := t.TempDir()
	history.Init(dir)
	os.MkdirAll(filepath.Join(dir, ".sessionvault"), 0o755)
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v.Transact(func(tx *vault.Tx) (vault.Change, error) {
		return vault.Change{Operation: "init", Summary: "ignore"}, tx.Write(".gitignore", []byte(".sessionvault/state/\n"))
	})
	svc := session.New(v)
	if _, err := svc.InitProject("demo"); err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	d := &Daemon{Svc: svc, Projects: []string{"demo"}, Schedule: "@every 1s", Listen: "127.0.0.1:0", Debounce: 200 * time.Millisecond,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), ready: make(chan string, 1),
		Sync: func(ctx context.Context) (syncer.Summary, error) {
			runs.Add(1)
			return syncer.Summary{Created: 1}, nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	addr := <-d.ready
	get := func(path string) string {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if h := get("/healthz"); strings.TrimSpace(h) != "ok" {
		t.Fatalf("/healthz = %q", h)
	}
	// A person's edit is committed as theirs, promptly.
	note := filepath.Join(dir, "demo", "session-current-state.md")
	f, _ := os.OpenFile(note, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n## Person\n\nhello\n")
	f.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		out, _ := exec.Command("git", "-C", dir, "log", "-1", "--format=%an").Output()
		if strings.TrimSpace(string(out)) == "vault editor" && runs.Load() > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out, _ := exec.Command("git", "-C", dir, "log", "-1", "--format=%an").Output(); strings.TrimSpace(string(out)) != "vault editor" {
		t.Errorf("the person's edit was not committed: last author %q", out)
	}
	if _, err := svc.Verified("demo"); err != nil {
		t.Errorf("state not re-signed after the person's edit: %v", err)
	}
	if m := get("/metrics"); !strings.Contains(m, `sessionvault_sync_runs_total{result="ok"}`) || !strings.Contains(m, "sessionvault_commits_total") {
		t.Errorf("/metrics lacks the counters:\n%.400s", m)
	}
	// The session_orchestration_* metrics are served too
	// (orchestration_test.go has their values).
	if m := get("/metrics"); !strings.Contains(m, "\nsession_orchestration_sessions_active 0\n") || !strings.Contains(m, `session_orchestration_context_saves_total{backend="vault"} 0`) {
		t.Errorf("/metrics lacks the session_orchestration metrics:\n%s", m)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not stop within 5 s")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("too slow to stop")
	}
	if s, _ := exec.Command("git", "-C", dir, "status", "--porcelain").Output(); len(s) != 0 {
		t.Errorf("git status not clean: %s", s)
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	d := &Daemon{Listen: "0.0.0.0:0", Svc: &session.Service{V: &vault.Vault{}}}
	if err := d.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("err = %v", err)
	}
}

// startedSession returns a vault with project demo and a session started at
// t0 (its service's clock).
func startedSession(t *testing.T) (string, *session.Service, time.Time) {
	t.Helper()
	dir := t.TempDir()
	history.Init(dir)
	os.MkdirAll(filepath.Join(dir, ".sessionvault"), 0o755)
	v, _ := vault.Open(dir)
	svc := session.New(v)
	svc.InitProject("demo")
	t0 := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	svc.Now = func() time.Time { return t0 }
	if _, err := svc.Start(session.StartOptions{Project: "demo", Objective: "x"}); err != nil {
		t.Fatal(err)
	}
	return dir, svc, t0
}

// A session whose last sign of life is older than the heartbeat timeout is
// marked crashed, once, as its own commit.
func TestMarkCrashed(t *testing.T) {
	dir, svc, t0 := startedSession(t)
	svc.Now = func() time.Time { return t0.Add(10 * time.Minute) }
	if m, err := svc.MarkCrashed("demo"); err != nil || m != "" {
		t.Fatalf("alive session marked: %q %v", m, err)
	}
	svc.Now = func() time.Time { return t0.Add(time.Hour) }
	m, err := svc.MarkCrashed("demo")
	if err != nil || m == "" {
		t.Fatalf("stale session not marked: %q %v", m, err)
	}
	if m, _ := svc.MarkCrashed("demo"); m != "" {
		t.Fatal("marked twice")
	}
	data, _ := os.ReadFile(filepath.Join(dir, "demo", "session-current-state.md"))
	if !strings.Contains(string(data), "\nstatus: crashed\n") {
		t.Fatal("the note does not say crashed")
	}
	if out, _ := exec.Command("git", "-C", dir, "log", "-1", "--format=%s").Output(); !strings.HasPrefix(string(out), "crash: ") {
		t.Fatalf("last commit %q", out)
	}
	if _, err := svc.Recover("demo", "", false); err != nil {
		t.Fatalf("recover after the mark: %v", err)
	}
}

// An entry on a session marked crashed is a sign of life: the status reads
// active again at once, not only after `recover`.
func TestEntryEndsTheCrashedStatus(t *testing.T) {
	_, svc, t0 := startedSession(t)
	svc.Now = func() time.Time { return t0.Add(time.Hour) }
	if m, err := svc.MarkCrashed("demo"); err != nil || m == "" {
		t.Fatalf("not marked: %q %v", m, err)
	}
	if st, _ := svc.Status("demo"); st.Status != session.StatusCrashed {
		t.Fatalf("status %q after the mark", st.Status)
	}
	if _, err := svc.Update(session.UpdateOptions{Project: "demo", Message: "back at work"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := svc.Status("demo"); st.Status != session.StatusActive {
		t.Errorf("status %q after a new entry, want active", st.Status)
	}
}

// With a remote sync configured, serve runs it a debounce after the branch
// moves (an operation's commit), once per move, not for its own commits.
func TestServeRemoteSyncAfterCommits(t *testing.T) {
	dir, svc, _ := startedSession(t)
	svc.Now = nil
	var runs atomic.Int32
	var heads []string
	d := &Daemon{Svc: svc, Projects: []string{"demo"}, Listen: "127.0.0.1:0", Debounce: 100 * time.Millisecond,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), ready: make(chan string, 1),
		RemoteDebounce: 300 * time.Millisecond,
		RemoteSync: func(ctx context.Context) (string, error) {
			runs.Add(1)
			h, _ := svc.V.Head()
			heads = append(heads, h)
			return "ok", nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	<-d.ready
	waitRuns := func(n int32) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for runs.Load() < n && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if got := runs.Load(); got < n {
			t.Fatalf("remote sync ran %d times, want %d", got, n)
		}
	}
	// Three operations in a burst: one sync, after the last.
	for i := 0; i < 3; i++ {
		if _, err := svc.Update(session.UpdateOptions{Project: "demo", Message: fmt.Sprintf("step %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	waitRuns(1)
	head, _ := svc.V.Head()
	if heads[0] != head {
		t.Errorf("the sync ran at %s, before the last operation's commit %s", heads[0], head)
	}
	if _, err := svc.Update(session.UpdateOptions{Project: "demo", Message: "later"}); err != nil {
		t.Fatal(err)
	}
	waitRuns(2)
	time.Sleep(800 * time.Millisecond) // no further run without a commit
	if got := runs.Load(); got != 2 {
		t.Errorf("remote sync ran %d times for two bursts of commits", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_ = dir
}

// serve's watcher commits a session's command log as the agent's edit, not as
// a person's.
func TestServeCommitsCommandLogsAsTheAgent(t *testing.T) {
	dir := t.TempDir()
	history.Init(dir)
	os.MkdirAll(filepath.Join(dir, ".sessionvault"), 0o755)
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v.Transact(func(tx *vault.Tx) (vault.Change, error) {
		return vault.Change{Operation: "init", Summary: "ignore"}, tx.Write(".gitignore", []byte(".sessionvault/state/\n"))
	})
	svc := session.New(v)
	if _, err := svc.InitProject("demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Start(session.StartOptions{Project: "demo", Objective: "logs"}); err != nil {
		t.Fatal(err)
	}
	if _, err := features.New(svc).RecordCommand(features.RecordOptions{Project: "demo", Command: "first", Commit: true}); err != nil {
		t.Fatal(err)
	}
	d := &Daemon{Svc: svc, Projects: []string{"demo"}, Schedule: "@every 1h", Listen: "127.0.0.1:0", Debounce: 100 * time.Millisecond,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), ready: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	<-d.ready
	head, _ := v.Head()
	if _, err := features.New(svc).RecordCommand(features.RecordOptions{Project: "demo", Command: "second"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		if now, _ := v.Head(); now != head {
			out, _ := exec.Command("git", "-C", dir, "log", "-1", "--format=%an|%s").Output()
			last = strings.TrimSpace(string(out))
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.HasPrefix(last, "sessionvault agent|agent-edit: demo/sessions/") || !strings.Contains(last, "command-history") {
		t.Errorf("the command log was not committed as the agent's: last commit %q", last)
	}
	if s, _ := exec.Command("git", "-C", dir, "status", "--porcelain").Output(); len(s) != 0 {
		t.Errorf("git status not clean: %s", s)
	}
	cancel()
	<-done
}
