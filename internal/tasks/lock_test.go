package tasks

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
)

// TestTaskLockLifecycle: a lock is claimed in the note's properties (one
// commit), refused to a second holder with TaskLocked naming the holder
// and the expiry — for a lock, a save and a release alike — renewed by its
// holder without moving locked_at, free to take once it expired, and gone
// from the note once released; a forced release takes anyone's.
func TestTaskLockLifecycle(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	id := newTask(t, s, NewTaskOptions{Name: "Parser"})
	rel := session.TaskPath("demo", id)

	out, err := s.LockTask("demo", id, "agent-a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := out.Task.Lock; l == nil || l.Holder != "agent-a" || !l.LockedAt.Equal(now) || !l.ExpiresAt.Equal(now.Add(5*time.Minute)) {
		t.Fatalf("lock = %+v", out.Task.Lock)
	}
	note := readNote(t, s, rel)
	for _, want := range []string{"locked_by: agent-a\n", "locked_at: 2026-03-02T09:00:00Z\n", "lock_expires: 2026-03-02T09:05:00Z\n"} {
		if !strings.Contains(note, want) {
			t.Errorf("the note lacks %q:\n%s", want, note)
		}
	}
	if msg := lastMessage(t, s); !strings.Contains(msg, "task-lock: parser by agent-a") || !strings.Contains(msg, "Task: parser") {
		t.Errorf("commit message:\n%s", msg)
	}

	// Another holder is refused, whatever it tries.
	now = now.Add(2 * time.Minute)
	before := snapshot(t, s)
	for what, try := range map[string]func() error{
		"lock": func() error { _, err := s.LockTask("demo", id, "agent-b", nil); return err },
		"save": func() error {
			_, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Holder: "agent-b", Updates: TaskUpdate{Phase: strp("x")}})
			return err
		},
		"unlock": func() error { _, err := s.UnlockTask("demo", id, "agent-b", nil, false); return err },
	} {
		err := try()
		wantCode(t, err, errs.TaskLocked)
		e := err.(*errs.Error)
		if e.Details["holder"] != "agent-a" || e.Details["expires_at"] != "2026-03-02T09:05:00Z" || !strings.Contains(e.Message, "locked by agent-a until 2026-03-02T09:05:00Z") {
			t.Errorf("%s by another holder: %v %v", what, e.Message, e.Details)
		}
	}
	unchanged(t, s, before)

	// Its holder saves, and renews the lock: locked_at stays.
	if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Holder: "agent-a", Updates: TaskUpdate{Phase: strp("mine")}}); err != nil {
		t.Fatalf("the holder's save: %v", err)
	}
	out, err = s.LockTask("demo", id, "agent-a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := out.Task.Lock; !l.LockedAt.Equal(fixedClock) || !l.ExpiresAt.Equal(now.Add(5*time.Minute)) {
		t.Fatalf("renewed lock = %+v", l)
	}

	// Past its expiry, another holder takes it, from that time.
	now = now.Add(5 * time.Minute)
	out, err = s.LockTask("demo", id, "agent-b", nil)
	if err != nil {
		t.Fatalf("taking an expired lock: %v", err)
	}
	if l := out.Task.Lock; l.Holder != "agent-b" || !l.LockedAt.Equal(now) {
		t.Fatalf("lock taken after expiry = %+v", l)
	}

	// Its holder releases it: the properties go.
	out, err = s.UnlockTask("demo", id, "agent-b", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	note = readNote(t, s, rel)
	if out.Task.Lock != nil || strings.Contains(note, "locked_by:") || strings.Contains(note, "locked_at:") || strings.Contains(note, "lock_expires:") {
		t.Fatalf("released lock still there:\n%s", note)
	}
	if msg := lastMessage(t, s); !strings.Contains(msg, "task-unlock: parser") {
		t.Errorf("commit message:\n%s", msg)
	}

	// A forced release takes another holder's unexpired lock.
	if _, err := s.LockTask("demo", id, "agent-c", nil); err != nil {
		t.Fatal(err)
	}
	if out, err = s.UnlockTask("demo", id, "agent-a", nil, true); err != nil || out.Task.Lock != nil {
		t.Fatalf("forced release = %+v, %v", out.Task.Lock, err)
	}
}

// TestTaskLockElements: a lock adds its elements to the task's locked
// elements (each once); a release naming elements removes only those and
// keeps the lock; a bad element is refused.
func TestTaskLockElements(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	id := newTask(t, s, NewTaskOptions{Name: "Parser"})
	if _, err := s.LockTask("demo", id, "agent-a", []string{"func Parse", "type AST"}); err != nil {
		t.Fatal(err)
	}
	out, err := s.LockTask("demo", id, "agent-a", []string{"type AST", "func Lex"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"func Parse", "type AST", "func Lex"}; !slices.Equal(out.Task.LockedElements, want) {
		t.Fatalf("locked elements = %v, want %v", out.Task.LockedElements, want)
	}
	out, err = s.UnlockTask("demo", id, "agent-a", []string{"type AST", "func Lex"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Task.LockedElements, []string{"func Parse"}) || out.Task.Lock == nil || out.Task.Lock.Holder != "agent-a" {
		t.Fatalf("after releasing two elements: %v, lock %+v", out.Task.LockedElements, out.Task.Lock)
	}
	before := snapshot(t, s)
	if _, err := s.LockTask("demo", id, "agent-a", []string{"bad`element"}); !hasCode(err, errs.UpdateValidationFailed) {
		t.Fatalf("a bad element: %v", err)
	}
	if _, err := s.LockTask("demo", "nowhere", "agent-a", nil); !hasCode(err, errs.TaskNotFound) {
		t.Fatalf("a missing task: %v", err)
	}
	unchanged(t, s, before)
}

// TestTaskLockDefaultHolder: a lock taken without a holder is the active
// session's, and outside a session this machine's ("machine:<name>").
func TestTaskLockDefaultHolder(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	id := newTask(t, s, NewTaskOptions{Name: "Parser"})
	m, err := s.V.Machine()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.LockTask("demo", id, "", nil)
	if err != nil || out.Task.Lock.Holder != "machine:"+m.Name {
		t.Fatalf("lock outside a session = %+v, %v; want machine:%s", out.Task.Lock, err, m.Name)
	}
	if _, err := s.UnlockTask("demo", id, "", nil, false); err != nil {
		t.Fatal(err)
	}
	st, err := s.Start(session.StartOptions{Project: "demo", Objective: "Locks"})
	if err != nil {
		t.Fatal(err)
	}
	out, err = s.LockTask("demo", id, "", nil)
	if err != nil || out.Task.Lock.Holder != st.State.Session {
		t.Fatalf("lock in a session = %+v, %v; want %s", out.Task.Lock, err, st.State.Session)
	}
	// The session saves its task without naming itself.
	if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Updates: TaskUpdate{Phase: strp("p")}}); err != nil {
		t.Fatalf("the holding session's save: %v", err)
	}
}
