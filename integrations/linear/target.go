package linear

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessionvault/sessionvault/internal/syncer"
)

// Target adapts a Client to syncer.Target: Linear's rate-limit, auth and
// not-found errors become the syncer's, so a run stops cleanly on a rate
// limit and with a clear error on a bad key.
type Target struct{ c *Client }

// NewTarget returns the Linear sync target for c.
func NewTarget(c *Client) *Target { return &Target{c: c} }

func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrRateLimited):
		return fmt.Errorf("%w: %v", syncer.ErrRateLimited, err)
	case errors.Is(err, ErrAuth):
		return fmt.Errorf("%w: %v", syncer.ErrAuth, err)
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("%w: %v", syncer.ErrNotFound, err)
	}
	return err
}

// Issue looks an issue up by its identifier (ENG-123).
func (t *Target) Issue(ctx context.Context, key string) (syncer.Issue, error) {
	is, err := t.c.Issue(ctx, key)
	if err != nil {
		return syncer.Issue{}, mapErr(err)
	}
	return syncer.Issue{ID: is.ID, Identifier: is.Identifier, TeamID: is.TeamID}, nil
}

// CreateComment creates the session's comment with our chosen id.
func (t *Target) CreateComment(ctx context.Context, issueID, commentID, body string) error {
	_, err := t.c.CreateComment(ctx, issueID, commentID, body)
	return mapErr(err)
}

// CommentExists reports whether the comment with our id exists.
func (t *Target) CommentExists(ctx context.Context, commentID string) (bool, error) {
	found, _, err := t.c.Comment(ctx, commentID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return found, mapErr(err)
}

// UpdateComment replaces the comment's body.
func (t *Target) UpdateComment(ctx context.Context, commentID, body string) error {
	return mapErr(t.c.UpdateComment(ctx, commentID, body))
}

// SetState moves the issue to the team's workflow state named stateName.
func (t *Target) SetState(ctx context.Context, issue syncer.Issue, stateName string) error {
	id, err := t.c.StateID(ctx, issue.TeamID, stateName)
	if err != nil {
		return mapErr(err)
	}
	return mapErr(t.c.SetState(ctx, issue.ID, id))
}

// AddLabel adds the label (created if missing) to the issue.
func (t *Target) AddLabel(ctx context.Context, issue syncer.Issue, label string) error {
	id, err := t.c.LabelID(ctx, label, issue.TeamID)
	if err != nil {
		return mapErr(err)
	}
	return mapErr(t.c.AddLabel(ctx, issue.ID, id))
}

// UpsertAttachment links the session note to the issue (one per URL).
func (t *Target) UpsertAttachment(ctx context.Context, issueID, url, title string) error {
	return mapErr(t.c.UpsertAttachment(ctx, issueID, url, title, "sessionvault session note"))
}
