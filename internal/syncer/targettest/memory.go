package targettest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/sessionvault/sessionvault/internal/syncer"
)

// Memory is an in-memory syncer.Target that is also its own Backend: the
// reference implementation of the contract Run checks, usable wherever a
// test needs a target. Like Linear, it keeps the caller's comment ids,
// refuses a second create with an id already used (an error that fails the
// item), and upserts attachments on (issue, URL). Every issue's team has
// the workflow states Backlog, Todo, In Progress and Done; a seeded issue
// is in Todo. A Memory is safe for concurrent use; its zero value is not
// usable, make one with NewMemory.
type Memory struct {
	mu       sync.Mutex
	issues   map[string]*memIssue // by key
	comments []*memComment        // in creation order
	fault    Fault                // RateLimited, AuthFailed, Unavailable or 0
	loseNext bool                 // LostReply pending
}

type memIssue struct {
	id, key, state string
	labels         []string
	attachments    []Attachment
}

type memComment struct {
	id, issueKey, body string
}

var memStates = []string{"Backlog", "Todo", "In Progress", "Done"}

// NewMemory returns an empty Memory: no issues, no faults.
func NewMemory() *Memory { return &Memory{issues: map[string]*memIssue{}} }

var (
	_ syncer.Target = (*Memory)(nil)
	_ Backend       = (*Memory)(nil)
)

// --- Backend ---------------------------------------------------------------

// SeedIssue makes the issue with this key exist, in state Todo.
func (m *Memory) SeedIssue(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key = strings.ToUpper(key)
	if m.issues[key] == nil {
		m.issues[key] = &memIssue{id: "memory-issue-" + fmt.Sprint(len(m.issues)+1), key: key, state: "Todo"}
	}
}

// Fail makes the target fail as f describes: LostReply for the next
// CreateComment only, any other fault for every call until Heal.
func (m *Memory) Fail(f Fault) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f == LostReply {
		m.loseNext = true
		return
	}
	m.fault = f
}

// Heal lifts every fault.
func (m *Memory) Heal() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fault, m.loseNext = 0, false
}

// Comments returns the comments on the issue, in creation order.
func (m *Memory) Comments(issueKey string) []Comment {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []Comment{}
	for _, c := range m.comments {
		if c.issueKey == strings.ToUpper(issueKey) {
			out = append(out, Comment{ID: c.id, Body: c.body})
		}
	}
	return out
}

// State returns the name of the issue's workflow state ("" if unknown).
func (m *Memory) State(issueKey string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if is := m.issues[strings.ToUpper(issueKey)]; is != nil {
		return is.state
	}
	return ""
}

// Labels returns the issue's labels in the order they were added.
func (m *Memory) Labels(issueKey string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if is := m.issues[strings.ToUpper(issueKey)]; is != nil {
		return append([]string{}, is.labels...)
	}
	return nil
}

// Attachments returns the issue's attachments in the order they were made.
func (m *Memory) Attachments(issueKey string) []Attachment {
	m.mu.Lock()
	defer m.mu.Unlock()
	if is := m.issues[strings.ToUpper(issueKey)]; is != nil {
		return append([]Attachment{}, is.attachments...)
	}
	return nil
}

// --- syncer.Target ---------------------------------------------------------

// gate answers the injected fault; called with m.mu held.
func (m *Memory) gate() error {
	switch m.fault {
	case RateLimited:
		return fmt.Errorf("memory target: %w", syncer.ErrRateLimited)
	case AuthFailed:
		return fmt.Errorf("memory target: %w", syncer.ErrAuth)
	case Unavailable:
		return errors.New("memory target: service unavailable")
	}
	return nil
}

func (m *Memory) issueByID(id string) (*memIssue, error) {
	for _, is := range m.issues {
		if is.id == id {
			return is, nil
		}
	}
	return nil, fmt.Errorf("memory target: issue %s: %w", id, syncer.ErrNotFound)
}

func (m *Memory) comment(id string) *memComment {
	for _, c := range m.comments {
		if c.id == id {
			return c
		}
	}
	return nil
}

// Issue looks an issue up by key; an unknown one gives syncer.ErrNotFound.
func (m *Memory) Issue(_ context.Context, key string) (syncer.Issue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.gate(); err != nil {
		return syncer.Issue{}, err
	}
	is := m.issues[strings.ToUpper(key)]
	if is == nil {
		return syncer.Issue{}, fmt.Errorf("memory target: issue %s: %w", key, syncer.ErrNotFound)
	}
	return syncer.Issue{ID: is.id, Identifier: is.key, TeamID: "memory-team"}, nil
}

// CreateComment creates a comment with the caller's id; an id already used
// is an error and creates nothing.
func (m *Memory) CreateComment(_ context.Context, issueID, commentID, body string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.gate(); err != nil {
		return err
	}
	if m.comment(commentID) != nil {
		return fmt.Errorf("memory target: a comment with id %s already exists", commentID)
	}
	is, err := m.issueByID(issueID)
	if err != nil {
		return err
	}
	m.comments = append(m.comments, &memComment{id: commentID, issueKey: is.key, body: body})
	if m.loseNext {
		m.loseNext = false
		return errors.New("memory target: the reply to the create was lost")
	}
	return nil
}

// CommentExists reports whether a comment with this id exists.
func (m *Memory) CommentExists(_ context.Context, commentID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.gate(); err != nil {
		return false, err
	}
	return m.comment(commentID) != nil, nil
}

// UpdateComment replaces a comment's body; an unknown id gives
// syncer.ErrNotFound.
func (m *Memory) UpdateComment(_ context.Context, commentID, body string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.gate(); err != nil {
		return err
	}
	c := m.comment(commentID)
	if c == nil {
		return fmt.Errorf("memory target: comment %s: %w", commentID, syncer.ErrNotFound)
	}
	c.body = body
	return nil
}

// SetState moves the issue to the workflow state named stateName (compared
// case-insensitively); an unknown name gives syncer.ErrNotFound.
func (m *Memory) SetState(_ context.Context, issue syncer.Issue, stateName string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.gate(); err != nil {
		return err
	}
	is, err := m.issueByID(issue.ID)
	if err != nil {
		return err
	}
	for _, s := range memStates {
		if strings.EqualFold(s, strings.TrimSpace(stateName)) {
			is.state = s
			return nil
		}
	}
	return fmt.Errorf("memory target: no workflow state %q: %w", stateName, syncer.ErrNotFound)
}

// AddLabel adds the label to the issue unless it has it already.
func (m *Memory) AddLabel(_ context.Context, issue syncer.Issue, label string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.gate(); err != nil {
		return err
	}
	is, err := m.issueByID(issue.ID)
	if err != nil {
		return err
	}
	for _, l := range is.labels {
		if strings.EqualFold(l, label) {
			return nil
		}
	}
	is.labels = append(is.labels, label)
	return nil
}

// UpsertAttachment links url to the issue, or retitles the link if the
// issue has it already.
func (m *Memory) UpsertAttachment(_ context.Context, issueID, url, title string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.gate(); err != nil {
		return err
	}
	is, err := m.issueByID(issueID)
	if err != nil {
		return err
	}
	for i := range is.attachments {
		if is.attachments[i].URL == url {
			is.attachments[i].Title = title
			return nil
		}
	}
	is.attachments = append(is.attachments, Attachment{URL: url, Title: title})
	return nil
}
