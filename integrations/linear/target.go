package linear

import (
	"context"

	"github.com/sessionvault/sessionvault/internal/syncer"
)

// Target adapts a Client to syncer.Target. The Client's errors already wrap
// the sync's values (syncer.ErrRateLimited, syncer.ErrAuth,
// syncer.ErrNotFound), so they are returned as they are: a run stops cleanly
// on a rate limit and with a clear error on a bad key. Its conformance to
// the Target contract is checked by internal/syncer/targettest against
// lineartest.
type Target struct{ c *Client }

// NewTarget returns the Linear sync target for c.
func NewTarget(c *Client) *Target { return &Target{c: c} }

// Issue looks an issue up by its identifier (ENG-123); an unknown one gives
// syncer.ErrNotFound.
func (t *Target) Issue(ctx context.Context, key string) (syncer.Issue, error) {
	is, err := t.c.Issue(ctx, key)
	if err != nil {
		return syncer.Issue{}, err
	}
	return syncer.Issue{ID: is.ID, Identifier: is.Identifier, TeamID: is.TeamID}, nil
}

// CreateComment creates the session's comment with our chosen id.
func (t *Target) CreateComment(ctx context.Context, issueID, commentID, body string) error {
	_, err := t.c.CreateComment(ctx, issueID, commentID, body)
	return err
}

// CommentExists reports whether the comment with our id exists: Linear's
// "Entity not found" is false with no error; a failed lookup is an error,
// never false.
func (t *Target) CommentExists(ctx context.Context, commentID string) (bool, error) {
	found, _, err := t.c.Comment(ctx, commentID)
	return found, err
}

// UpdateComment replaces the comment's body.
func (t *Target) UpdateComment(ctx context.Context, commentID, body string) error {
	return t.c.UpdateComment(ctx, commentID, body)
}

// SetState moves the issue to the team's workflow state named stateName; a
// name the team does not have gives syncer.ErrNotFound.
func (t *Target) SetState(ctx context.Context, issue syncer.Issue, stateName string) error {
	id, err := t.c.StateID(ctx, issue.TeamID, stateName)
	if err != nil {
		return err
	}
	return t.c.SetState(ctx, issue.ID, id)
}

// AddLabel adds the label (created if missing) to the issue.
func (t *Target) AddLabel(ctx context.Context, issue syncer.Issue, label string) error {
	id, err := t.c.LabelID(ctx, label, issue.TeamID)
	if err != nil {
		return err
	}
	return t.c.AddLabel(ctx, issue.ID, id)
}

// UpsertAttachment links the session note to the issue (one per URL).
func (t *Target) UpsertAttachment(ctx context.Context, issueID, url, title string) error {
	return t.c.UpsertAttachment(ctx, issueID, url, title, "sessionvault session note")
}

var _ syncer.Target = (*Target)(nil)
