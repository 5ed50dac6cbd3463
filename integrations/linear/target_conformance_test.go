package linear_test

import (
	"math"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/integrations/linear"
	"github.com/sessionvault/sessionvault/integrations/linear/lineartest"
	"github.com/sessionvault/sessionvault/internal/syncer/targettest"
)

// fakeBackend drives lineartest as the conformance suite's Backend.
type fakeBackend struct{ s *lineartest.Server }

func (b fakeBackend) SeedIssue(key string) { b.s.AddIssue(key, "conformance") }

func (b fakeBackend) Fail(f targettest.Fault) {
	switch f {
	case targettest.LostReply:
		b.s.FailAfterCommitOf("commentCreate", 1)
	case targettest.RateLimited:
		b.s.RateLimitAfter(0)
	case targettest.AuthFailed:
		b.s.BadKey()
	case targettest.Unavailable:
		b.s.Fail5xx(math.MaxInt32)
	}
}

func (b fakeBackend) Heal() {
	b.s.FailAfterCommitOf("commentCreate", 0)
	b.s.ResetRateLimit()
	b.s.RestoreKey()
	b.s.Fail5xx(0)
}

func (b fakeBackend) Comments(issueKey string) []targettest.Comment {
	var out []targettest.Comment
	for _, c := range b.s.Comments(issueKey) {
		out = append(out, targettest.Comment{ID: c.ID, Body: c.Body})
	}
	return out
}

func (b fakeBackend) State(issueKey string) string {
	if is := b.s.Issue(issueKey); is != nil {
		return is.State
	}
	return ""
}

func (b fakeBackend) Labels(issueKey string) []string {
	if is := b.s.Issue(issueKey); is != nil {
		return is.Labels
	}
	return nil
}

func (b fakeBackend) Attachments(issueKey string) []targettest.Attachment {
	var out []targettest.Attachment
	if is := b.s.Issue(issueKey); is != nil {
		for _, a := range is.Attachments {
			out = append(out, targettest.Attachment{URL: a.URL, Title: a.Title})
		}
	}
	return out
}

// TestTargetConformance runs the syncer.Target conformance suite on Target
// over a Client talking to the fake Linear (the client's own retries on, with
// short waits).
func TestTargetConformance(t *testing.T) {
	targettest.Run(t, func(t *testing.T) targettest.Harness {
		s := lineartest.New(t)
		c := linear.New(s.URL(), lineartest.DefaultKey, nil)
		c.Retry = linear.RetryPolicy{Attempts: 3, Initial: time.Millisecond, Max: 4 * time.Millisecond}
		return targettest.Harness{Target: linear.NewTarget(c), Backend: fakeBackend{s}}
	})
}
