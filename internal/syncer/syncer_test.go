package syncer

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sessionvault/sessionvault/internal/session"
)

// fakeTarget is an in-memory Target counting calls, with fault injection.
type fakeTarget struct {
	comments  map[string]string // id -> body
	onIssue   map[string]string // comment id -> issue
	calls     map[string]int
	limitAt   int // after this many mutating calls answer ErrRateLimited (0 = never)
	mutations int
	down      bool
	badKey    bool
}

func newFake() *fakeTarget {
	return &fakeTarget{comments: map[string]string{}, onIssue: map[string]string{}, calls: map[string]int{}}
}

func (f *fakeTarget) gate(name string, mutating bool) error {
	if f.badKey {
		return fmt.Errorf("%w: set LINEAR_API_KEY", ErrAuth)
	}
	if f.down {
		return errors.New("503 service unavailable")
	}
	if mutating {
		if f.limitAt > 0 && f.mutations >= f.limitAt {
			return ErrRateLimited
		}
		f.mutations++
	}
	f.calls[name]++
	return nil
}

func (f *fakeTarget) Issue(_ context.Context, key string) (Issue, error) {
	return Issue{ID: "id-" + key, Identifier: key, TeamID: "team"}, f.gate("issue", false)
}
func (f *fakeTarget) CreateComment(_ context.Context, issueID, id, body string) error {
	if err := f.gate("commentCreate", true); err != nil {
		return err
	}
	if _, dup := f.comments[id]; dup {
		return errors.New("duplicate id")
	}
	f.comments[id], f.onIssue[id] = body, issueID
	return nil
}
func (f *fakeTarget) CommentExists(_ context.Context, id string) (bool, error) {
	_, ok := f.comments[id]
	return ok, f.gate("comment", false)
}
func (f *fakeTarget) UpdateComment(_ context.Context, id, body string) error {
	if err := f.gate("commentUpdate", true); err != nil {
		return err
	}
	f.comments[id] = body
	return nil
}
func (f *fakeTarget) SetState(context.Context, Issue, string) error {
	return f.gate("issueUpdate", true)
}
func (f *fakeTarget) AddLabel(context.Context, Issue, string) error { return f.gate("addLabel", true) }
func (f *fakeTarget) UpsertAttachment(context.Context, string, string, string) error {
	return f.gate("attachmentCreate", true)
}

type memStore struct {
	data   []byte
	failAt int // fail the n-th Save (0 = never)
	saves  int
}

func (m *memStore) store() JSONStore {
	return JSONStore{
		Read: func() ([]byte, error) { return m.data, nil },
		Write: func(b []byte) error {
			m.saves++
			if m.failAt > 0 && m.saves == m.failAt {
				return errors.New("killed before the ledger write")
			}
			m.data = append([]byte(nil), b...)
			return nil
		},
	}
}

func sessions(n int) []session.State {
	var out []session.State
	for i := 0; i < n; i++ {
		out = append(out, session.State{Session: fmt.Sprintf("2026-11-22-session-%03d", i), Status: session.StatusComplete,
			Objective: fmt.Sprintf("objective %d", i), Linear: fmt.Sprintf("ENG-%d", i+1), Progress: 50})
	}
	return out
}

func TestHundredSessionsTwiceThenTenEdits(t *testing.T) {
	f, m := newFake(), &memStore{}
	ss := sessions(100)
	sum, err := Run(context.Background(), f, m.store(), "demo", ss, Options{})
	if err != nil || sum.Created != 100 {
		t.Fatalf("first run: %+v %v", sum, err)
	}
	before := f.mutations
	sum, err = Run(context.Background(), f, m.store(), "demo", ss, Options{})
	if err != nil || sum.Unchanged != 100 || f.mutations != before {
		t.Fatalf("second run sent %d mutations: %+v %v", f.mutations-before, sum, err)
	}
	for i := 0; i < 10; i++ {
		ss[i*7].Progress = 90
	}
	sum, _ = Run(context.Background(), f, m.store(), "demo", ss, Options{})
	if sum.Updated != 10 || f.calls["commentUpdate"] != 10 || f.calls["commentCreate"] != 100 {
		t.Fatalf("after 10 edits: %+v, calls %v", sum, f.calls)
	}
}

func TestCrashBetweenCreateAndLedgerWriteDoesNotDuplicate(t *testing.T) {
	f, m := newFake(), &memStore{failAt: 2} // save 1: the chosen id; save 2 (after create): fails
	ss := sessions(1)
	sum, _ := Run(context.Background(), f, m.store(), "demo", ss, Options{})
	if sum.Failed != 1 || len(f.comments) != 1 {
		t.Fatalf("first run %+v, comments %d", sum, len(f.comments))
	}
	sum, err := Run(context.Background(), f, m.store(), "demo", ss, Options{})
	if err != nil || len(f.comments) != 1 || f.calls["commentCreate"] != 1 {
		t.Fatalf("retry made a second comment: %+v, calls %v", sum, f.calls)
	}
	sum, _ = Run(context.Background(), f, m.store(), "demo", ss, Options{})
	if sum.Unchanged != 1 {
		t.Fatalf("third run %+v", sum)
	}
}

func TestRateLimitStopsAndNextRunCompletes(t *testing.T) {
	f, m := newFake(), &memStore{}
	f.limitAt = 5
	ss := sessions(20)
	sum, err := Run(context.Background(), f, m.store(), "demo", ss, Options{})
	if err != nil || sum.Stopped == "" || sum.Created != 5 {
		t.Fatalf("first run %+v %v", sum, err)
	}
	f.limitAt = 0
	sum, err = Run(context.Background(), f, m.store(), "demo", ss, Options{})
	if err != nil || sum.Created != 15 || sum.Unchanged != 5 || len(f.comments) != 20 {
		t.Fatalf("second run %+v, %d comments", sum, len(f.comments))
	}
}

func TestDownLosesNothingAndBadKeyStops(t *testing.T) {
	f, m := newFake(), &memStore{}
	f.down = true
	ss := sessions(3)
	sum, err := Run(context.Background(), f, m.store(), "demo", ss, Options{})
	if err != nil || sum.Failed != 3 {
		t.Fatalf("down: %+v %v", sum, err)
	}
	f.down = false
	if sum, _ = Run(context.Background(), f, m.store(), "demo", ss, Options{}); sum.Created != 3 {
		t.Fatalf("after recovery: %+v", sum)
	}
	f.badKey = true
	ss[0].Progress = 1
	if _, err := Run(context.Background(), f, m.store(), "demo", ss, Options{}); !errors.Is(err, ErrAuth) {
		t.Fatalf("bad key: %v", err)
	}
}

func TestIssueKeyFromBranchAndDryRun(t *testing.T) {
	if k := IssueKey(session.State{Branch: "eng-123-login-page"}); k != "ENG-123" {
		t.Errorf("branch key = %q", k)
	}
	if k := IssueKey(session.State{Branch: "main"}); k != "" {
		t.Errorf("main gave %q", k)
	}
	f, m := newFake(), &memStore{}
	sum, _ := Run(context.Background(), f, m.store(), "demo", sessions(2), Options{DryRun: true, StateOnEnd: "Done"})
	if len(sum.Planned) != 4 || f.mutations != 0 {
		t.Errorf("dry run planned %v and sent %d mutations", sum.Planned, f.mutations)
	}
}

// The same sessions synced from two machines (each with its own ledger, as
// .sessionvault/state is per machine) make one comment each: the second
// machine finds the comment by its derived id and updates it.
func TestTwoMachinesOneComment(t *testing.T) {
	f := newFake()
	laptop, desktop := &memStore{}, &memStore{}
	ss := sessions(3)
	if sum, err := Run(context.Background(), f, laptop.store(), "demo", ss, Options{}); err != nil || sum.Created != 3 {
		t.Fatalf("laptop: %+v %v", sum, err)
	}
	ss[1].Progress = 40 // the desktop recorded more in one session
	sum, err := Run(context.Background(), f, desktop.store(), "demo", ss, Options{})
	if err != nil || sum.Created != 0 || len(f.comments) != 3 || f.calls["commentCreate"] != 3 {
		t.Fatalf("desktop made comments of its own: %+v %v, calls %v", sum, err, f.calls)
	}
	if sum, _ := Run(context.Background(), f, laptop.store(), "demo", ss, Options{}); sum.Created != 0 || len(f.comments) != 3 {
		t.Fatalf("laptop again: %+v", sum)
	}
}
