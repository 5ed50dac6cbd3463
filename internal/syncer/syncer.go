// Package syncer pushes sessions to a sync target (Linear first)
// idempotently: a ledger in .sessionvault/state remembers, per session, the
// content hash last pushed and the target's ids, so a run sends only what
// changed. A comment's id is chosen by us and written to the ledger before
// the create call, so a crash between the call and the ledger write never
// duplicates anything: the retry reuses the id.
package syncer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/session"
)

// Issue is a target issue as the sync needs it.
type Issue struct {
	ID         string
	Identifier string // e.g. ENG-123
	TeamID     string
}

// Target is a system sessions are pushed to. Implementations return errors
// wrapping ErrRateLimited or ErrAuth to stop a run, and ErrNotFound for an
// issue that does not exist; an error that says the target could not be
// reached at all (Unreachable: the network error kept in the chain) stops
// the run too; any other error (the service answering 5xx, a create whose
// reply was lost) fails only that item, and the next run tries it again.
// Package targettest is the conformance suite of this contract.
type Target interface {
	// Issue looks an issue up by its key (ENG-123); an unknown key gives
	// ErrNotFound.
	Issue(ctx context.Context, key string) (Issue, error)
	// CreateComment creates a comment on the issue (Issue.ID) with the id
	// the caller chose. It may fail after the comment was created (a lost
	// reply); the caller then asks CommentExists.
	CreateComment(ctx context.Context, issueID, commentID, body string) error
	// CommentExists reports whether a comment with this id exists (after a
	// create whose outcome is unknown): false only when the target looked
	// and found none, an error when it could not look.
	CommentExists(ctx context.Context, commentID string) (bool, error)
	// UpdateComment replaces the body of the comment with this id.
	UpdateComment(ctx context.Context, commentID, body string) error
	// SetState moves the issue to its team's workflow state called
	// stateName (idempotent); an unknown name is an error.
	SetState(ctx context.Context, issue Issue, stateName string) error
	// AddLabel adds the label to the issue (idempotent).
	AddLabel(ctx context.Context, issue Issue, label string) error
	// UpsertAttachment links url to the issue (Issue.ID) with the title;
	// again with the same url it updates that link instead of adding one.
	UpsertAttachment(ctx context.Context, issueID, url, title string) error
}

// Errors a Target returns, wrapped (errors.Is), to steer a run. A target
// wraps these values themselves, not look-alikes of its own.
var (
	// ErrRateLimited stops the run cleanly; the next run resumes.
	ErrRateLimited = errors.New("rate limited")
	// ErrAuth stops the run with the error (a missing or refused key).
	ErrAuth = errors.New("authentication failed")
	// ErrNotFound: the issue (or another entity asked for) does not exist;
	// it fails only the item.
	ErrNotFound = errors.New("not found")
	// ErrUnreachable stops the run: the target could not be reached over
	// the network (Unreachable). Run wraps it around the item's error.
	ErrUnreachable = errors.New("the target cannot be reached")
)

// Unreachable reports whether err says that a service could not be reached
// over the network at all: a host name that does not resolve
// (*net.DNSError), a connection refused, reset or failed (*net.OpError), or
// a request that timed out (a *url.Error or net.Error timeout). A service
// that answered, even with an error, was reached.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var dns *net.DNSError
	var op *net.OpError
	if errors.As(err, &dns) || errors.As(err, &op) || errors.Is(err, ErrUnreachable) {
		return true
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Options are the pushes the config maps.
type Options struct {
	StateOnStart  string // workflow state name set when a session starts ("" = none)
	StateOnEnd    string // ... when it ends
	DecisionLabel string // label added to the issue when the session has decisions ("" = none)
	NoteURL       func(project, session string) string
	DryRun        bool
	Session       string // only this session ("" = all)
}

// Entry is what the ledger remembers of one session.
type Entry struct {
	Issue      string `json:"issue"`    // identifier, e.g. ENG-123
	IssueID    string `json:"issue_id"` // target id
	CommentID  string `json:"comment_id"`
	Created    bool   `json:"created"` // the create call succeeded (false: id chosen, create pending)
	BodyHash   string `json:"body_hash"`
	State      string `json:"state,omitempty"` // the workflow state last set
	Labeled    bool   `json:"labeled,omitempty"`
	Attachment string `json:"attachment,omitempty"` // url last attached
}

// Ledger maps "project/session" to its Entry.
type Ledger map[string]*Entry

// Store loads and saves the ledger (the vault's .sessionvault/state).
type Store interface {
	Load() (Ledger, error)
	Save(Ledger) error
}

// Summary is the result of a run.
type Summary struct {
	Created   int      `json:"created"`
	Updated   int      `json:"updated"`
	Unchanged int      `json:"unchanged"`
	Failed    int      `json:"failed"`
	Skipped   int      `json:"skipped"` // sessions linked to no issue
	Stopped   string   `json:"stopped,omitempty"`
	Planned   []string `json:"planned,omitempty"` // --dry-run: the operations that would be sent
	Errors    []string `json:"errors,omitempty"`
}

func (s Summary) String() string {
	out := fmt.Sprintf("created %d, updated %d, unchanged %d, failed %d, not linked %d", s.Created, s.Updated, s.Unchanged, s.Failed, s.Skipped)
	if s.Stopped != "" {
		out += "; stopped: " + s.Stopped
	}
	return out
}

// issueKeyRe finds an issue key in a branch name, compiled at its first use.
var issueKeyRe = lazyregexp.New(`(?i)\b([a-z][a-z0-9]{1,9})-(\d+)\b`)

// IssueKey returns the issue a session is linked to: its linear property,
// else an issue key in its branch name (eng-123-login → ENG-123), else "".
func IssueKey(st session.State) string {
	if st.Linear != "" {
		return strings.ToUpper(st.Linear)
	}
	if m := issueKeyRe().FindStringSubmatch(st.Branch); m != nil {
		return strings.ToUpper(m[1]) + "-" + m[2]
	}
	return ""
}

// Body renders the comment for a session: objective, status, progress,
// latest updates, decisions, open blockers, next steps, and a link back.
func Body(st session.State, url string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**sessionvault · %s** — %s, %d%%\n\n", st.Session, st.Status, st.Progress)
	fmt.Fprintf(&b, "**Objective:** %s\n", st.Objective)
	if st.Summary != "" {
		fmt.Fprintf(&b, "\n**Summary:** %s\n", st.Summary)
	}
	if n := len(st.Updates); n > 0 {
		b.WriteString("\n**Latest updates**\n")
		for _, u := range st.Updates[max(0, n-5):] {
			fmt.Fprintf(&b, "- %s %s\n", note.FormatTime(u.Time), u.Message)
		}
	}
	if len(st.Decisions) > 0 {
		b.WriteString("\n**Decisions**\n")
		for _, d := range st.Decisions {
			fmt.Fprintf(&b, "- %s: %s — %s\n", d.Title, d.Choice, d.Rationale)
		}
	}
	if open := st.OpenBlockers(); len(open) > 0 {
		b.WriteString("\n**Open blockers**\n")
		for _, bl := range open {
			fmt.Fprintf(&b, "- [%s] %s\n", bl.Severity, bl.Text)
		}
	}
	if len(st.NextSteps) > 0 {
		b.WriteString("\n**Next steps**\n")
		for _, n := range st.NextSteps {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	if url != "" {
		fmt.Fprintf(&b, "\n[Session note](%s)\n", url)
	}
	return b.String()
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// CommentID is the id we choose for a session's comment: a UUID v4 derived
// from the session's key, so even a lost ledger cannot make a second comment
// (Linear's commentCreate accepts an id the client chooses).
func CommentID(key string) string {
	h := sha256.Sum256([]byte("sessionvault:" + key))
	b := h[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// Run pushes every session of sessions that changed since the ledger's last
// push. It saves the ledger after every item, so a stop at any point loses
// nothing. A rate limit or an authentication error stops the run cleanly
// (Summary.Stopped); the next run resumes. A target that cannot be reached
// (Unreachable) stops the run too, with an error wrapping ErrUnreachable
// and the item's: every item would fail the same way.
func Run(ctx context.Context, t Target, store Store, project string, sessions []session.State, o Options) (Summary, error) {
	var sum Summary
	ledger, err := store.Load()
	if err != nil {
		return sum, err
	}
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].Session < sessions[j].Session })
	for _, st := range sessions {
		if o.Session != "" && st.Session != o.Session {
			continue
		}
		key := IssueKey(st)
		if key == "" || st.Session == "" {
			sum.Skipped++
			continue
		}
		if err := ctx.Err(); err != nil {
			sum.Stopped = "interrupted"
			return sum, nil
		}
		id := project + "/" + st.Session
		err := pushOne(ctx, t, store, ledger, id, key, st, o, &sum)
		switch {
		case err == nil:
		case errors.Is(err, ErrRateLimited):
			sum.Stopped = "rate limited by the target; the next run continues"
			return sum, nil
		case errors.Is(err, ErrAuth):
			sum.Stopped = err.Error()
			return sum, err
		case Unreachable(err):
			sum.Stopped = "the target cannot be reached; the next run continues"
			return sum, fmt.Errorf("%w: %w", ErrUnreachable, err)
		default:
			sum.Failed++
			sum.Errors = append(sum.Errors, st.Session+": "+err.Error())
		}
	}
	return sum, nil
}

func pushOne(ctx context.Context, t Target, store Store, ledger Ledger, id, key string, st session.State, o Options, sum *Summary) error {
	url := ""
	if o.NoteURL != nil {
		url = o.NoteURL(strings.SplitN(id, "/", 2)[0], st.Session)
	}
	body := Body(st, url)
	e := ledger[id]
	if e != nil && e.Issue != key {
		e = nil // relinked to another issue: start over there
	}
	wantState := ""
	switch st.Status {
	case session.StatusActive, session.StatusRecovered, session.StatusCrashed:
		wantState = o.StateOnStart
	case session.StatusComplete:
		wantState = o.StateOnEnd
	}
	if e != nil && e.Created && e.BodyHash == hash(body) && (wantState == "" || e.State == wantState) &&
		(o.DecisionLabel == "" || len(st.Decisions) == 0 || e.Labeled) && (url == "" || e.Attachment == url) {
		sum.Unchanged++
		return nil
	}
	if o.DryRun {
		switch {
		case e == nil || !e.Created:
			sum.Planned = append(sum.Planned, "commentCreate on "+key+" for "+st.Session)
		case e.BodyHash != hash(body):
			sum.Planned = append(sum.Planned, "commentUpdate on "+key+" for "+st.Session)
		}
		if wantState != "" && (e == nil || e.State != wantState) {
			sum.Planned = append(sum.Planned, "issueUpdate "+key+" state → "+wantState)
		}
		return nil
	}
	issue, err := t.Issue(ctx, key)
	if err != nil {
		return fmt.Errorf("issue %s: %w", key, err)
	}
	if e == nil {
		e = &Entry{Issue: key, IssueID: issue.ID, CommentID: CommentID(id + "/" + key)}
		ledger[id] = e
		if err := store.Save(ledger); err != nil { // the id is durable before the create call
			return err
		}
	}
	switch {
	case !e.Created:
		// An earlier run may have created it and stopped before the ledger
		// said so: look before creating.
		exists, err := t.CommentExists(ctx, e.CommentID)
		if err != nil {
			return fmt.Errorf("looking up the comment on %s: %w", key, err)
		}
		if exists {
			if err := t.UpdateComment(ctx, e.CommentID, body); err != nil {
				return fmt.Errorf("updating the comment on %s: %w", key, err)
			}
			sum.Updated++
		} else {
			if err := t.CreateComment(ctx, issue.ID, e.CommentID, body); err != nil {
				return fmt.Errorf("creating the comment on %s: %w", key, err)
			}
			sum.Created++
		}
		e.Created, e.BodyHash = true, hash(body)
	case e.BodyHash != hash(body):
		if err := t.UpdateComment(ctx, e.CommentID, body); err != nil {
			return fmt.Errorf("updating the comment on %s: %w", key, err)
		}
		e.BodyHash = hash(body)
		sum.Updated++
	default:
		sum.Unchanged++
	}
	if err := store.Save(ledger); err != nil {
		return err
	}
	if wantState != "" && e.State != wantState {
		if err := t.SetState(ctx, issue, wantState); err != nil {
			return fmt.Errorf("setting %s to %q: %w", key, wantState, err)
		}
		e.State = wantState
	}
	if o.DecisionLabel != "" && len(st.Decisions) > 0 && !e.Labeled {
		if err := t.AddLabel(ctx, issue, o.DecisionLabel); err != nil {
			return fmt.Errorf("labelling %s: %w", key, err)
		}
		e.Labeled = true
	}
	if url != "" && e.Attachment != url {
		if err := t.UpsertAttachment(ctx, issue.ID, url, "Session "+st.Session); err != nil {
			return fmt.Errorf("attaching the note to %s: %w", key, err)
		}
		e.Attachment = url
	}
	return store.Save(ledger)
}

// JSONStore keeps the ledger as JSON through read and write functions (the
// vault's state folder).
type JSONStore struct {
	Read  func() ([]byte, error)
	Write func([]byte) error
}

// Load reads the ledger; a missing one is empty.
func (s JSONStore) Load() (Ledger, error) {
	l := Ledger{}
	data, err := s.Read()
	if err != nil || len(data) == 0 {
		return l, nil
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("the sync ledger is not valid JSON: %w", err)
	}
	return l, nil
}

// Save writes the ledger.
func (s JSONStore) Save(l Ledger) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return s.Write(data)
}
