package linear

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/sessionvault/sessionvault/internal/syncer"
)

// Typed wrappers the sync calls. Each is one request except LabelID (lookup,
// then create if missing). Errors are those of MakeRequest (errors.Is with
// syncer.ErrRateLimited / syncer.ErrAuth / syncer.ErrNotFound /
// ErrUnavailable), annotated with
// the identifier they were about; a mutation answering success: false is an
// *Error of no particular kind.
//
// Wherever Linear takes an issue id, the UUID and the human identifier
// ("ENG-123") are both accepted.

// Page sizes of the connections we read.
const (
	labelsPage = 50
	statesPage = 100
)

// Issue is the part of a Linear issue the sync needs.
type Issue struct {
	ID         string // UUID
	Identifier string // "ENG-123"
	Title      string
	URL        string
	TeamID     string // UUID of the issue's team
	TeamKey    string // "ENG"
	StateID    string // current workflow state
	StateName  string // e.g. "In Progress"
	StateType  string // triage, backlog, unstarted, started, completed, canceled
}

// Viewer checks the key: it returns the name and e-mail of the user the API
// key belongs to. An invalid key gives syncer.ErrAuth.
func (c *Client) Viewer(ctx context.Context) (name, email string, err error) {
	resp, err := Viewer(ctx, c)
	if err != nil {
		return "", "", err
	}
	return resp.Viewer.Name, resp.Viewer.Email, nil
}

// Issue looks an issue up by UUID or identifier ("ENG-123"). An unknown
// issue gives syncer.ErrNotFound.
func (c *Client) Issue(ctx context.Context, identifier string) (Issue, error) {
	if strings.TrimSpace(identifier) == "" {
		return Issue{}, argError("IssueByIdentifier", "empty issue identifier")
	}
	resp, err := IssueByIdentifier(ctx, c, identifier)
	if err != nil {
		return Issue{}, annotate(err, identifier)
	}
	i := resp.Issue
	return Issue{
		ID:         i.Id,
		Identifier: i.Identifier,
		Title:      i.Title,
		URL:        i.Url,
		TeamID:     i.Team.Id,
		TeamKey:    i.Team.Key,
		StateID:    i.State.Id,
		StateName:  i.State.Name,
		StateType:  i.State.Type,
	}, nil
}

// CreateComment adds a Markdown comment to an issue and returns its id.
//
// commentID is the client-chosen id of the new comment (UUID, v4 format; see
// StableID); an empty commentID means a fresh random one. Because the id is
// chosen here, the transport's retries and the caller's retries cannot
// create a second comment. After a failure whose outcome is unknown
// (ErrUnavailable; or an "already exists" error when the transport retried
// a try that was carried out but whose reply was lost), call
// Comment(commentID) to learn whether the comment exists before creating
// again.
func (c *Client) CreateComment(ctx context.Context, issueID, commentID, body string) (string, error) {
	if strings.TrimSpace(issueID) == "" {
		return "", argError("CommentCreate", "empty issue id")
	}
	if commentID == "" {
		commentID = uuid.NewString()
	}
	resp, err := CommentCreate(ctx, c, issueID, body, &commentID)
	if err != nil {
		return "", annotate(err, issueID)
	}
	if !resp.CommentCreate.Success {
		return "", unsuccessful("CommentCreate", issueID)
	}
	if id := resp.CommentCreate.Comment.Id; id != "" {
		return id, nil
	}
	return commentID, nil
}

// UpdateComment replaces the body of a comment (idempotent). An unknown
// comment gives syncer.ErrNotFound.
func (c *Client) UpdateComment(ctx context.Context, commentID, body string) error {
	if strings.TrimSpace(commentID) == "" {
		return argError("CommentUpdate", "empty comment id")
	}
	resp, err := CommentUpdate(ctx, c, commentID, body)
	if err != nil {
		return annotate(err, commentID)
	}
	if !resp.CommentUpdate.Success {
		return unsuccessful("CommentUpdate", commentID)
	}
	return nil
}

// Comment looks a comment up by id. found is false (and err nil) when Linear
// answers "Entity not found".
func (c *Client) Comment(ctx context.Context, id string) (found bool, body string, err error) {
	if strings.TrimSpace(id) == "" {
		return false, "", argError("CommentByID", "empty comment id")
	}
	resp, err := CommentByID(ctx, c, id)
	if errors.Is(err, syncer.ErrNotFound) {
		return false, "", nil
	}
	if err != nil {
		return false, "", annotate(err, id)
	}
	return true, resp.Comment.Body, nil
}

// StateID returns the id of the team's workflow state called name (compared
// case-insensitively, e.g. "In Progress"). No such state gives
// syncer.ErrNotFound; its message lists the team's states.
func (c *Client) StateID(ctx context.Context, teamID, name string) (string, error) {
	if strings.TrimSpace(teamID) == "" {
		return "", argError("TeamWorkflowStates", "empty team id")
	}
	resp, err := TeamWorkflowStates(ctx, c, teamID, statesPage)
	if err != nil {
		return "", annotate(err, teamID)
	}
	want := strings.TrimSpace(name)
	var names []string
	for _, s := range resp.Team.States.Nodes {
		if strings.EqualFold(strings.TrimSpace(s.Name), want) {
			return s.Id, nil
		}
		names = append(names, fmt.Sprintf("%q", s.Name))
	}
	return "", &Error{
		Op: "TeamWorkflowStates", Subject: resp.Team.Key, kind: syncer.ErrNotFound,
		Message: fmt.Sprintf("team has no workflow state %q (it has %s)", want, strings.Join(names, ", ")),
	}
}

// SetState moves an issue to a workflow state (idempotent).
func (c *Client) SetState(ctx context.Context, issueID, stateID string) error {
	if strings.TrimSpace(issueID) == "" || strings.TrimSpace(stateID) == "" {
		return argError("IssueUpdate", "empty issue or state id")
	}
	resp, err := IssueUpdate(ctx, c, issueID, &stateID, nil)
	if err != nil {
		return annotate(err, issueID)
	}
	if !resp.IssueUpdate.Success {
		return unsuccessful("IssueUpdate", issueID)
	}
	return nil
}

// AddLabel adds a label to an issue, keeping its other labels (idempotent).
func (c *Client) AddLabel(ctx context.Context, issueID, labelID string) error {
	if strings.TrimSpace(issueID) == "" || strings.TrimSpace(labelID) == "" {
		return argError("IssueUpdate", "empty issue or label id")
	}
	resp, err := IssueUpdate(ctx, c, issueID, nil, []string{labelID})
	if err != nil {
		return annotate(err, issueID)
	}
	if !resp.IssueUpdate.Success {
		return unsuccessful("IssueUpdate", issueID)
	}
	return nil
}

// LabelID returns the id of the label called name (case-insensitive) that
// can be applied to issues of team teamID: the team's own label, else a
// workspace label (label groups are skipped). If there is none it creates a
// team label (a workspace label when teamID is empty) with the id
// StableID("issueLabel", teamID, lower(name)), so that two concurrent
// find-or-creates end with one label.
func (c *Client) LabelID(ctx context.Context, name, teamID string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", argError("IssueLabelsByName", "empty label name")
	}
	if id, ok, err := c.findLabel(ctx, name, teamID); err != nil || ok {
		return id, err
	}
	var team *string
	if teamID != "" {
		team = &teamID
	}
	id := StableID("issueLabel", teamID, strings.ToLower(name))
	resp, err := IssueLabelCreate(ctx, c, name, team, &id)
	if err != nil {
		if errors.Is(err, syncer.ErrRateLimited) || errors.Is(err, syncer.ErrAuth) {
			return "", annotate(err, name)
		}
		// Lost a race, or an earlier try went through: look again.
		if found, ok, ferr := c.findLabel(ctx, name, teamID); ferr == nil && ok {
			return found, nil
		}
		// The stable id may belong to a deleted label: let Linear choose.
		resp, err = IssueLabelCreate(ctx, c, name, team, nil)
		if err != nil {
			return "", annotate(err, name)
		}
	}
	if !resp.IssueLabelCreate.Success || resp.IssueLabelCreate.IssueLabel.Id == "" {
		return "", unsuccessful("IssueLabelCreate", name)
	}
	return resp.IssueLabelCreate.IssueLabel.Id, nil
}

func (c *Client) findLabel(ctx context.Context, name, teamID string) (id string, ok bool, err error) {
	resp, err := IssueLabelsByName(ctx, c, name, labelsPage)
	if err != nil {
		return "", false, annotate(err, name)
	}
	workspace := ""
	for _, l := range resp.IssueLabels.Nodes {
		if l.IsGroup || !strings.EqualFold(strings.TrimSpace(l.Name), name) {
			continue
		}
		switch {
		case l.Team == nil:
			if workspace == "" {
				workspace = l.Id
			}
		case teamID != "" && l.Team.Id == teamID:
			return l.Id, true, nil
		}
	}
	return workspace, workspace != "", nil
}

// UpsertAttachment links url to the issue with a title and optional
// subtitle. Linear's attachmentCreate is an upsert on (url, issue): calling
// it again with the same url updates that attachment instead of adding one.
func (c *Client) UpsertAttachment(ctx context.Context, issueID, url, title, subtitle string) error {
	if strings.TrimSpace(issueID) == "" || strings.TrimSpace(url) == "" {
		return argError("AttachmentUpsert", "empty issue id or url")
	}
	var sub *string
	if subtitle != "" {
		sub = &subtitle
	}
	resp, err := AttachmentUpsert(ctx, c, issueID, url, title, sub)
	if err != nil {
		return annotate(err, issueID)
	}
	if !resp.AttachmentCreate.Success {
		return unsuccessful("AttachmentUpsert", issueID)
	}
	return nil
}

// StableID derives a deterministic id in UUID v4 format from parts (SHA-256
// of the parts, with the version and variant bits set), for client-chosen
// ids: the same parts always give the same id, so a retried create is
// recognised by Linear instead of duplicated.
func StableID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	var u uuid.UUID
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}

func argError(op, msg string) error {
	return &Error{Op: op, Message: "invalid argument: " + msg}
}

func unsuccessful(op, subject string) error {
	return &Error{Op: op, Subject: subject, Message: "Linear answered success: false"}
}
