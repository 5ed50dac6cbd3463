// Package targettest is the conformance suite of syncer.Target: Run checks
// that a target keeps the contract syncer.Run relies on, against a backend
// the suite can seed, observe and make fail on purpose.
//
// The contract, as Run checks it:
//
//   - Issue finds a seeded issue by its key (ID and TeamID set, Identifier
//     the key) and answers an unknown key with an error wrapping
//     syncer.ErrNotFound.
//   - CreateComment creates the comment with the id the caller chose; then
//     CommentExists is true for that id. CommentExists is false, with no
//     error, for an id that was never created.
//   - After a create whose reply was lost (the comment exists on the
//     service, the call returned an error), CommentExists is true, so the
//     syncer updates the comment instead of creating it a second time; run
//     end to end, a syncer.Run after the lost reply updates and creates
//     nothing.
//   - UpdateComment replaces the body (an unknown id is an error);
//     SetState moves the issue to the named workflow state (an unknown name
//     is an error); AddLabel and UpsertAttachment are idempotent (one label,
//     one attachment per URL, its title updated).
//   - A rate limit is an error wrapping syncer.ErrRateLimited, an
//     authentication failure one wrapping syncer.ErrAuth, from every
//     method; a service that is unavailable gives an error wrapping neither
//     (the syncer fails that item and the next run retries it). In all
//     three cases CommentExists returns the error, never an answer: a false
//     it could not check would make the syncer create a second comment.
//     After Heal the target works again.
//
// Memory is an in-memory target that passes the suite; the Linear target
// runs it against the fake Linear server (integrations/linear/lineartest).
package targettest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/syncer"
)

// Fault is a way the backend behind a target fails (see Backend.Fail).
type Fault int

const (
	// LostReply: the backend carries out the next comment create, but its
	// reply never reaches the target (a timeout, a proxy's 502 after the
	// service committed): the comment exists and CreateComment returns an
	// error. It applies to that one create only; lookups before and after
	// it are answered normally.
	LostReply Fault = iota + 1
	// RateLimited: every request is refused because a rate-limit budget is
	// spent, until Heal. Nothing is carried out. The target must return
	// errors wrapping syncer.ErrRateLimited.
	RateLimited
	// AuthFailed: every request fails authentication (a revoked or wrong
	// key), until Heal. Nothing is carried out. The target must return
	// errors wrapping syncer.ErrAuth.
	AuthFailed
	// Unavailable: the service cannot be reached or answers 5xx, until
	// Heal. The target must return errors that wrap neither
	// syncer.ErrRateLimited nor syncer.ErrAuth.
	Unavailable
)

// String names the fault.
func (f Fault) String() string {
	switch f {
	case LostReply:
		return "lost reply"
	case RateLimited:
		return "rate limited"
	case AuthFailed:
		return "authentication failed"
	case Unavailable:
		return "unavailable"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Comment is a comment as the backend stores it.
type Comment struct {
	ID   string // the id the target's caller chose
	Body string // the body as last written
}

// Attachment is a link on an issue as the backend stores it.
type Attachment struct {
	URL   string // what the link points to; one attachment per URL and issue
	Title string // the title as last written
}

// Backend is the system behind a target (the service, or the fake of it),
// as the suite drives and observes it. Its methods act on the backend
// directly, never through the target, and ignore any injected Fault.
// Issues are named by key ("ENG-1").
type Backend interface {
	// SeedIssue makes the issue with this key exist. Its team has at least
	// the workflow states "In Progress" and "Done", and the issue is in
	// neither; it has no comments, labels or attachments.
	SeedIssue(key string)
	// Fail makes the backend fail in the way f describes from now on (a
	// LostReply: for the next comment create only).
	Fail(f Fault)
	// Heal lifts every fault injected with Fail.
	Heal()
	// Comments returns the comments on the issue, in creation order.
	Comments(issueKey string) []Comment
	// State returns the name of the issue's workflow state.
	State(issueKey string) string
	// Labels returns the names of the issue's labels.
	Labels(issueKey string) []string
	// Attachments returns the issue's attachments.
	Attachments(issueKey string) []Attachment
}

// Harness is one target under test with its backend, fresh for each check:
// Backend holds no issue until SeedIssue and no fault until Fail.
type Harness struct {
	// Target is the implementation under test.
	Target syncer.Target
	// Backend is what Target talks to, driven and observed directly.
	Backend Backend
}

// Run checks the Target contract (see the package documentation) on
// targets made by newTarget, one fresh Harness per subtest; newTarget
// registers any cleanup with the t it is given. Call it from the target's
// own test:
//
//	func TestConformance(t *testing.T) {
//		targettest.Run(t, func(t *testing.T) targettest.Harness { ... })
//	}
func Run(t *testing.T, newTarget func(t *testing.T) Harness) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			h := newTarget(t)
			if h.Target == nil || h.Backend == nil {
				t.Fatal("newTarget returned a Harness without Target or Backend")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c.run(ctx, t, h)
		})
	}
}

// key is the issue every check seeds; unknownKey is never seeded.
const (
	key        = "ENG-1"
	unknownKey = "ENG-999"
)

var checks = []struct {
	name string
	run  func(ctx context.Context, t *testing.T, h Harness)
}{
	{"IssueByKey", checkIssue},
	{"CreateCommentThenExists", checkCreate},
	{"CommentExistsUnknownID", checkExistsUnknown},
	{"LostReplyThenExists", checkLostReply},
	{"SyncAfterLostReplyUpdates", checkSyncAfterLostReply},
	{"UpdateComment", checkUpdate},
	{"SetState", checkSetState},
	{"AddLabelIdempotent", checkAddLabel},
	{"UpsertAttachmentIdempotent", checkAttachment},
	{"RateLimited", func(ctx context.Context, t *testing.T, h Harness) { checkFault(ctx, t, h, RateLimited) }},
	{"AuthFailed", func(ctx context.Context, t *testing.T, h Harness) { checkFault(ctx, t, h, AuthFailed) }},
	{"Unavailable", func(ctx context.Context, t *testing.T, h Harness) { checkFault(ctx, t, h, Unavailable) }},
}

// seed seeds the issue and looks it up through the target.
func seed(ctx context.Context, t *testing.T, h Harness) syncer.Issue {
	t.Helper()
	h.Backend.SeedIssue(key)
	is, err := h.Target.Issue(ctx, key)
	if err != nil {
		t.Fatalf("Issue(%q) of a seeded issue: %v", key, err)
	}
	return is
}

// commentID is an id as syncer.Run chooses it (UUID v4 format).
func commentID(name string) string { return syncer.CommentID("targettest/" + name) }

// stops reports the errors.Is kinds that would stop a run.
func stops(err error) string {
	var kinds []string
	if errors.Is(err, syncer.ErrRateLimited) {
		kinds = append(kinds, "syncer.ErrRateLimited")
	}
	if errors.Is(err, syncer.ErrAuth) {
		kinds = append(kinds, "syncer.ErrAuth")
	}
	return strings.Join(kinds, ", ")
}

// wantItemError requires err to be an error that fails only the item.
func wantItemError(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
	} else if k := stops(err); k != "" {
		t.Errorf("%s: %v wraps %s, which would stop the whole run", what, err, k)
	}
}

func wantComments(t *testing.T, h Harness, what string, want ...Comment) {
	t.Helper()
	got := h.Backend.Comments(key)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: the backend has the comments %+v, want %+v", what, got, want)
	}
}

func checkIssue(ctx context.Context, t *testing.T, h Harness) {
	is := seed(ctx, t, h)
	if is.ID == "" || is.TeamID == "" || is.Identifier != key {
		t.Errorf("Issue(%q) = %+v; want ID and TeamID set and Identifier %q", key, is, key)
	}
	_, err := h.Target.Issue(ctx, unknownKey)
	if !errors.Is(err, syncer.ErrNotFound) {
		t.Errorf("Issue(%q) of an issue that does not exist: %v; want an error wrapping syncer.ErrNotFound", unknownKey, err)
	}
	if k := stops(err); k != "" {
		t.Errorf("Issue(%q): %v also wraps %s", unknownKey, err, k)
	}
}

func checkCreate(ctx context.Context, t *testing.T, h Harness) {
	is := seed(ctx, t, h)
	id := commentID("create")
	if err := h.Target.CreateComment(ctx, is.ID, id, "first body"); err != nil {
		t.Fatalf("CreateComment: %v", err)
	}
	if ok, err := h.Target.CommentExists(ctx, id); !ok || err != nil {
		t.Errorf("CommentExists(%s) after CreateComment = %v, %v; want true, nil", id, ok, err)
	}
	wantComments(t, h, "after CreateComment", Comment{ID: id, Body: "first body"})
}

func checkExistsUnknown(ctx context.Context, t *testing.T, h Harness) {
	is := seed(ctx, t, h)
	if err := h.Target.CreateComment(ctx, is.ID, commentID("other"), "another comment"); err != nil {
		t.Fatalf("CreateComment: %v", err)
	}
	id := commentID("never created")
	if ok, err := h.Target.CommentExists(ctx, id); ok || err != nil {
		t.Errorf("CommentExists(%s) of an id never created = %v, %v; want false, nil", id, ok, err)
	}
}

func checkLostReply(ctx context.Context, t *testing.T, h Harness) {
	is := seed(ctx, t, h)
	id := commentID("lost reply")
	h.Backend.Fail(LostReply)
	err := h.Target.CreateComment(ctx, is.ID, id, "first body")
	if err == nil {
		t.Fatal("CreateComment whose reply was lost returned no error")
	}
	t.Logf("CreateComment whose reply was lost: %v", err)
	if k := stops(err); k != "" {
		t.Errorf("CreateComment whose reply was lost: %v wraps %s", err, k)
	}
	wantComments(t, h, "after the lost reply (the create was carried out)", Comment{ID: id, Body: "first body"})
	ok, err := h.Target.CommentExists(ctx, id)
	if !ok || err != nil {
		t.Fatalf("CommentExists(%s) after a create whose reply was lost = %v, %v; want true, nil: "+
			"the syncer would create the comment a second time", id, ok, err)
	}
	if err := h.Target.UpdateComment(ctx, id, "second body"); err != nil {
		t.Fatalf("UpdateComment after the lost reply: %v", err)
	}
	wantComments(t, h, "after the update", Comment{ID: id, Body: "second body"})
}

// memLedger is a syncer.Store in memory.
type memLedger struct{ data []byte }

func (m *memLedger) store() syncer.JSONStore {
	return syncer.JSONStore{
		Read:  func() ([]byte, error) { return m.data, nil },
		Write: func(b []byte) error { m.data = append([]byte(nil), b...); return nil },
	}
}

func checkSyncAfterLostReply(ctx context.Context, t *testing.T, h Harness) {
	h.Backend.SeedIssue(key)
	st := session.State{Session: "2026-01-02-conformance", Status: session.StatusActive,
		Objective: "check the target", Linear: key, Progress: 10}
	sessions := func() []session.State { return []session.State{st} }
	ledger := &memLedger{}

	h.Backend.Fail(LostReply)
	sum, err := syncer.Run(ctx, h.Target, ledger.store(), "demo", sessions(), syncer.Options{})
	if err != nil || sum.Failed != 1 || sum.Created != 0 {
		t.Fatalf("first run, the create's reply lost: %v (errors %q), %v; want the item failed", sum, sum.Errors, err)
	}
	body := syncer.Body(st, "")
	id := syncer.CommentID("demo/" + st.Session + "/" + key)
	wantComments(t, h, "after the first run (the create was carried out)", Comment{ID: id, Body: body})

	sum, err = syncer.Run(ctx, h.Target, ledger.store(), "demo", sessions(), syncer.Options{})
	if err != nil || sum.Created != 0 || sum.Updated != 1 || sum.Failed != 0 {
		t.Fatalf("second run: %v (errors %q), %v; want the comment found and updated (Updated 1), not created again",
			sum, sum.Errors, err)
	}
	wantComments(t, h, "after the second run", Comment{ID: id, Body: body})

	sum, err = syncer.Run(ctx, h.Target, ledger.store(), "demo", sessions(), syncer.Options{})
	if err != nil || sum.Unchanged != 1 {
		t.Errorf("third run: %v (errors %q), %v; want unchanged 1", sum, sum.Errors, err)
	}
}

func checkUpdate(ctx context.Context, t *testing.T, h Harness) {
	is := seed(ctx, t, h)
	id := commentID("update")
	if err := h.Target.CreateComment(ctx, is.ID, id, "first body"); err != nil {
		t.Fatalf("CreateComment: %v", err)
	}
	for _, body := range []string{"second body", "second body", "third body"} {
		if err := h.Target.UpdateComment(ctx, id, body); err != nil {
			t.Fatalf("UpdateComment(%q): %v", body, err)
		}
		wantComments(t, h, fmt.Sprintf("after UpdateComment(%q)", body), Comment{ID: id, Body: body})
	}
	wantItemError(t, "UpdateComment of an id never created", h.Target.UpdateComment(ctx, commentID("never created"), "x"))
	wantComments(t, h, "after UpdateComment of an unknown id", Comment{ID: id, Body: "third body"})
}

func checkSetState(ctx context.Context, t *testing.T, h Harness) {
	is := seed(ctx, t, h)
	for _, name := range []string{"In Progress", "In Progress", "Done"} {
		if err := h.Target.SetState(ctx, is, name); err != nil {
			t.Fatalf("SetState(%q): %v", name, err)
		}
		if got := h.Backend.State(key); got != name {
			t.Errorf("after SetState(%q) the issue is in %q", name, got)
		}
	}
	wantItemError(t, "SetState of a state the team does not have", h.Target.SetState(ctx, is, "No Such State"))
	if got := h.Backend.State(key); got != "Done" {
		t.Errorf("after a failed SetState the issue is in %q, want it left in Done", got)
	}
}

func checkAddLabel(ctx context.Context, t *testing.T, h Harness) {
	is := seed(ctx, t, h)
	for i := 0; i < 2; i++ {
		if err := h.Target.AddLabel(ctx, is, "sessionvault"); err != nil {
			t.Fatalf("AddLabel, call %d: %v", i+1, err)
		}
		if got := h.Backend.Labels(key); fmt.Sprint(got) != "[sessionvault]" {
			t.Errorf("after AddLabel call %d the issue has the labels %q, want exactly [sessionvault]", i+1, got)
		}
	}
	if err := h.Target.AddLabel(ctx, is, "decisions"); err != nil {
		t.Fatalf("AddLabel(decisions): %v", err)
	}
	if got := h.Backend.Labels(key); len(got) != 2 {
		t.Errorf("a second label: the issue has %q, want sessionvault and decisions", got)
	}
}

func checkAttachment(ctx context.Context, t *testing.T, h Harness) {
	is := seed(ctx, t, h)
	const url = "https://example.invalid/demo/sessions/2026-01-02-a.md"
	for _, title := range []string{"Session a", "Session a", "Session a, renamed"} {
		if err := h.Target.UpsertAttachment(ctx, is.ID, url, title); err != nil {
			t.Fatalf("UpsertAttachment(%q): %v", title, err)
		}
		want := []Attachment{{URL: url, Title: title}}
		if got := h.Backend.Attachments(key); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("after UpsertAttachment(%q) the issue has the attachments %+v, want %+v", title, got, want)
		}
	}
	const url2 = "https://example.invalid/demo/sessions/2026-01-02-b.md"
	if err := h.Target.UpsertAttachment(ctx, is.ID, url2, "Session b"); err != nil {
		t.Fatalf("UpsertAttachment(%s): %v", url2, err)
	}
	if got := h.Backend.Attachments(key); len(got) != 2 {
		t.Errorf("a second URL: the issue has the attachments %+v, want two", got)
	}
}

// errReported is returned by a call of checkFault that has already
// reported its failure.
var errReported = errors.New("reported")

// checkFault requires every method to fail as f says while the backend
// fails, and to work again after Heal.
func checkFault(ctx context.Context, t *testing.T, h Harness, f Fault) {
	is := seed(ctx, t, h)
	existing := commentID("existing")
	if err := h.Target.CreateComment(ctx, is.ID, existing, "before the fault"); err != nil {
		t.Fatalf("CreateComment: %v", err)
	}
	calls := []struct {
		name string
		call func() error
	}{
		{"Issue", func() error { _, err := h.Target.Issue(ctx, key); return err }},
		{"CreateComment", func() error { return h.Target.CreateComment(ctx, is.ID, commentID("during the fault"), "x") }},
		{"CommentExists", func() error {
			ok, err := h.Target.CommentExists(ctx, existing)
			if err == nil {
				t.Errorf("CommentExists while %s = %v with no error; want an error: a target that cannot look must not answer", f, ok)
				return errReported
			}
			return err
		}},
		{"UpdateComment", func() error { return h.Target.UpdateComment(ctx, existing, "during the fault") }},
		{"SetState", func() error { return h.Target.SetState(ctx, is, "Done") }},
		{"AddLabel", func() error { return h.Target.AddLabel(ctx, is, "sessionvault") }},
		{"UpsertAttachment", func() error {
			return h.Target.UpsertAttachment(ctx, is.ID, "https://example.invalid/n.md", "Session")
		}},
	}
	h.Backend.Fail(f)
	for _, c := range calls {
		err := c.call()
		if err == errReported {
			continue
		}
		t.Logf("%s while %s: %v", c.name, f, err)
		switch f {
		case RateLimited:
			if !errors.Is(err, syncer.ErrRateLimited) || errors.Is(err, syncer.ErrAuth) {
				t.Errorf("%s while rate limited: %v; want an error wrapping syncer.ErrRateLimited (and not syncer.ErrAuth)", c.name, err)
			}
		case AuthFailed:
			if !errors.Is(err, syncer.ErrAuth) || errors.Is(err, syncer.ErrRateLimited) {
				t.Errorf("%s with a failing key: %v; want an error wrapping syncer.ErrAuth (and not syncer.ErrRateLimited)", c.name, err)
			}
		default:
			wantItemError(t, c.name+" while the service is "+f.String(), err)
		}
	}
	h.Backend.Heal()
	if f != Unavailable { // refused requests carry nothing out
		wantComments(t, h, "after a create refused as "+f.String(), Comment{ID: existing, Body: "before the fault"})
	}
	if _, err := h.Target.Issue(ctx, key); err != nil {
		t.Errorf("Issue after Heal: %v", err)
	}
	if err := h.Target.UpdateComment(ctx, existing, "after the fault"); err != nil {
		t.Errorf("UpdateComment after Heal: %v", err)
	}
}
