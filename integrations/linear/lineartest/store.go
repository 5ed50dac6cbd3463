package lineartest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The in-memory workspace. Every access happens with Server.mu held.

type user struct {
	id, name, displayName, email string
	createdAt                    time.Time
}

type team struct {
	id, key, name string
	states        []*state
	createdAt     time.Time
	lastNumber    int
}

type state struct {
	id, name, typ, color string
	position             float64
	team                 *team
	createdAt            time.Time
}

type issue struct {
	id, identifier, title string
	number                int
	description           *string
	estimate              *float64
	priority              int
	state                 *state
	team                  *team
	labelIDs              []string
	createdAt, updatedAt  time.Time
}

type comment struct {
	id, body             string
	issue                *issue
	user                 *user
	createdAt, updatedAt time.Time
	editedAt             *time.Time
}

type label struct {
	id, name, color      string
	description          *string
	team                 *team // nil: workspace label
	createdAt, updatedAt time.Time
}

type attachment struct {
	id, url, title       string
	subtitle             *string
	metadata             map[string]any
	issue                *issue
	createdAt, updatedAt time.Time
}

type store struct {
	now          func() time.Time
	orgID        string
	orgCreatedAt time.Time
	viewer       *user
	other        *user
	teams        []*team
	issues       []*issue
	comments     []*comment
	labels       []*label
	attachments  []*attachment
	syncID       float64
}

// Workflow states every team gets, in position order.
var defaultStates = []struct{ name, typ, color string }{
	{"Backlog", "backlog", "#bec2c8"},
	{"Todo", "unstarted", "#e2e2e2"},
	{"In Progress", "started", "#f2c94c"},
	{"Done", "completed", "#5e6ad2"},
}

func newStore(now func() time.Time) *store {
	t := now()
	return &store{
		now:          now,
		orgID:        newID(),
		orgCreatedAt: t,
		viewer:       &user{id: newID(), name: "Sync Bot", displayName: "syncbot", email: "syncbot@example.invalid", createdAt: t},
		other:        &user{id: newID(), name: "Other Person", displayName: "other", email: "other@example.invalid", createdAt: t},
	}
}

func newID() string { return uuid.NewString() }

func (st *store) nextSync() float64 {
	st.syncID++
	return st.syncID
}

func (st *store) ensureTeam(key string) *team {
	key = strings.ToUpper(key)
	for _, t := range st.teams {
		if t.key == key {
			return t
		}
	}
	now := st.now()
	t := &team{id: newID(), key: key, name: key, createdAt: now}
	for i, d := range defaultStates {
		t.states = append(t.states, &state{id: newID(), name: d.name, typ: d.typ, color: d.color, position: float64(i), team: t, createdAt: now})
	}
	st.teams = append(st.teams, t)
	return t
}

// findTeam finds a team by id (the API: whether Linear also accepts a key
// in team(id:) or teamId is unverified, so the fake does not).
func (st *store) findTeam(id string) *team {
	for _, t := range st.teams {
		if t.id == id {
			return t
		}
	}
	return nil
}

// findTeamKey accepts a team's id or key (the store API).
func (st *store) findTeamKey(idOrKey string) *team {
	for _, t := range st.teams {
		if t.id == idOrKey || strings.EqualFold(t.key, idOrKey) {
			return t
		}
	}
	return nil
}

// findIssue accepts a UUID or an identifier ("ENG-1", case-insensitive).
func (st *store) findIssue(idOrIdentifier string) *issue {
	for _, i := range st.issues {
		if i.id == idOrIdentifier || strings.EqualFold(i.identifier, idOrIdentifier) {
			return i
		}
	}
	return nil
}

func (st *store) findComment(id string) *comment {
	for _, c := range st.comments {
		if c.id == id {
			return c
		}
	}
	return nil
}

func (st *store) findLabel(id string) *label {
	for _, l := range st.labels {
		if l.id == id {
			return l
		}
	}
	return nil
}

func (st *store) findState(id string) *state {
	for _, t := range st.teams {
		for _, s := range t.states {
			if s.id == id {
				return s
			}
		}
	}
	return nil
}

func (st *store) findAttachment(id string) *attachment {
	for _, a := range st.attachments {
		if a.id == id {
			return a
		}
	}
	return nil
}

func (i *issue) url() string { return "https://linear.app/test/issue/" + i.identifier }

func (c *comment) url() string { return c.issue.url() + "#comment-" + c.id[:8] }

// --- exported store API ----------------------------------------------------

// Comment is a comment as stored by the fake.
type Comment struct {
	ID        string
	Body      string
	Issue     string // identifier of the issue, e.g. "ENG-1"
	ByViewer  bool   // written by the API key's user
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Attachment is an issue attachment (link) as stored by the fake.
type Attachment struct {
	ID       string
	URL      string
	Title    string
	Subtitle *string
	Metadata map[string]any
}

// Issue is a snapshot of an issue.
type Issue struct {
	ID          string
	Identifier  string
	Title       string
	Description *string
	Estimate    *float64
	Priority    int
	TeamID      string
	TeamKey     string
	State       string // workflow state name, e.g. "Todo"
	StateID     string
	StateType   string   // backlog, unstarted, started, completed
	Labels      []string // label names, in the order they were added
	LabelIDs    []string
	Attachments []Attachment
	UpdatedAt   time.Time
}

// Label is an issue label as stored by the fake.
type Label struct {
	ID      string
	Name    string
	Color   string
	TeamKey string // "" for a workspace label
}

// State is a workflow state.
type State struct {
	ID       string
	Name     string
	Type     string
	Position float64
}

// Team is a snapshot of a team and its workflow states.
type Team struct {
	ID     string
	Key    string
	Name   string
	States []State
}

var identifierRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]*)-([0-9]+)$`)

// AddIssue creates an issue such as "ENG-1" in state Todo. Its team (key
// "ENG") is created on first use with the workflow states Backlog, Todo,
// In Progress and Done. It returns the issue's UUID and panics on a
// malformed or duplicate identifier.
func (s *Server) AddIssue(identifier, title string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := identifierRe.FindStringSubmatch(identifier)
	if m == nil {
		panic(fmt.Sprintf("lineartest: AddIssue: %q is not an identifier like ENG-1", identifier))
	}
	identifier = strings.ToUpper(identifier)
	if s.st.findIssue(identifier) != nil {
		panic(fmt.Sprintf("lineartest: AddIssue: %s already exists", identifier))
	}
	t := s.st.ensureTeam(m[1])
	n, _ := strconv.Atoi(m[2])
	t.lastNumber = max(t.lastNumber, n)
	now := s.st.now()
	i := &issue{id: newID(), identifier: identifier, title: title, number: n, state: t.states[1], team: t,
		labelIDs: []string{}, createdAt: now, updatedAt: now}
	s.st.issues = append(s.st.issues, i)
	return i.id
}

// AddTeam creates a team (with the default workflow states) if it does not
// exist yet and returns its id.
func (s *Server) AddTeam(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.ensureTeam(key).id
}

// AddLabel creates an issue label and returns its id: a team label when
// teamKey is set (the team is created if needed), else a workspace label.
func (s *Server) AddLabel(name, teamKey string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.st.now()
	l := &label{id: newID(), name: name, color: "#bec2c8", createdAt: now, updatedAt: now}
	if teamKey != "" {
		l.team = s.st.ensureTeam(teamKey)
	}
	s.st.labels = append(s.st.labels, l)
	return l.id
}

// AddComment adds a comment by the API key's user to an issue (identifier
// or id) and returns its id; it panics if the issue does not exist.
func (s *Server) AddComment(issue, body string) string { return s.addComment(issue, body, true) }

// AddForeignComment adds a comment by another user (so isMe is false).
func (s *Server) AddForeignComment(issue, body string) string {
	return s.addComment(issue, body, false)
}

func (s *Server) addComment(issueRef, body string, mine bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.st.findIssue(issueRef)
	if i == nil {
		panic("lineartest: AddComment: no issue " + issueRef)
	}
	u := s.st.other
	if mine {
		u = s.st.viewer
	}
	now := s.st.now()
	c := &comment{id: newID(), body: body, issue: i, user: u, createdAt: now, updatedAt: now}
	s.st.comments = append(s.st.comments, c)
	return c.id
}

// DeleteComment removes a comment (as if someone deleted it in Linear) and
// reports whether it existed. Its id may be used again.
func (s *Server) DeleteComment(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.deleteComment(id)
}

func (st *store) deleteComment(id string) bool {
	for k, c := range st.comments {
		if c.id == id {
			st.comments = append(st.comments[:k], st.comments[k+1:]...)
			return true
		}
	}
	return false
}

// SetIssueState moves an issue (identifier or id) to the workflow state of
// its team with this name, as a human would; it panics if either is unknown.
func (s *Server) SetIssueState(issueRef, stateName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.st.findIssue(issueRef)
	if i == nil {
		panic("lineartest: SetIssueState: no issue " + issueRef)
	}
	for _, st := range i.team.states {
		if st.name == stateName {
			i.state, i.updatedAt = st, s.st.now()
			return
		}
	}
	panic("lineartest: SetIssueState: team " + i.team.key + " has no state " + stateName)
}

func commentSnap(c *comment, viewer *user) Comment {
	return Comment{ID: c.id, Body: c.body, Issue: c.issue.identifier, ByViewer: c.user == viewer, CreatedAt: c.createdAt, UpdatedAt: c.updatedAt}
}

// Comments returns the comments on an issue (identifier or id) in creation
// order; nil if the issue does not exist.
func (s *Server) Comments(issue string) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.st.findIssue(issue)
	if i == nil {
		return nil
	}
	out := []Comment{}
	for _, c := range s.st.comments {
		if c.issue == i {
			out = append(out, commentSnap(c, s.st.viewer))
		}
	}
	return out
}

// Comment returns one comment by id.
func (s *Server) Comment(id string) (Comment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.findComment(id)
	if c == nil {
		return Comment{}, false
	}
	return commentSnap(c, s.st.viewer), true
}

// Issue returns a snapshot of an issue (identifier or id), nil if unknown.
func (s *Server) Issue(issue string) *Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.st.findIssue(issue)
	if i == nil {
		return nil
	}
	out := &Issue{ID: i.id, Identifier: i.identifier, Title: i.title, Priority: i.priority,
		TeamID: i.team.id, TeamKey: i.team.key, State: i.state.name, StateID: i.state.id, StateType: i.state.typ,
		Labels: []string{}, LabelIDs: append([]string{}, i.labelIDs...), Attachments: []Attachment{}, UpdatedAt: i.updatedAt}
	if i.description != nil {
		d := *i.description
		out.Description = &d
	}
	if i.estimate != nil {
		e := *i.estimate
		out.Estimate = &e
	}
	for _, id := range i.labelIDs {
		if l := s.st.findLabel(id); l != nil {
			out.Labels = append(out.Labels, l.name)
		}
	}
	for _, a := range s.st.attachments {
		if a.issue == i {
			att := Attachment{ID: a.id, URL: a.url, Title: a.title, Metadata: cloneMap(a.metadata)}
			if a.subtitle != nil {
				sub := *a.subtitle
				att.Subtitle = &sub
			}
			out.Attachments = append(out.Attachments, att)
		}
	}
	return out
}

// Labels returns all issue labels in creation order.
func (s *Server) Labels() []Label {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Label{}
	for _, l := range s.st.labels {
		x := Label{ID: l.id, Name: l.name, Color: l.color}
		if l.team != nil {
			x.TeamKey = l.team.key
		}
		out = append(out, x)
	}
	return out
}

// Team returns a team (key or id) with its workflow states, nil if unknown.
func (s *Server) Team(key string) *Team {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.st.findTeamKey(key)
	if t == nil {
		return nil
	}
	out := &Team{ID: t.id, Key: t.key, Name: t.name}
	for _, st := range t.states {
		out.States = append(out.States, State{ID: st.id, Name: st.name, Type: st.typ, Position: st.position})
	}
	return out
}

// ViewerID is the id of the user the API key belongs to.
func (s *Server) ViewerID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.viewer.id
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
