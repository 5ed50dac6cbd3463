package lineartest

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/Khan/genqlient/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// keyDoer sets Linear's Authorization header (raw key, no "Bearer") and
// keeps the last response headers, as the real client does.
type keyDoer struct {
	key  string
	last http.Header
}

func (d *keyDoer) Do(r *http.Request) (*http.Response, error) {
	r.Header.Set("Authorization", d.key)
	resp, err := http.DefaultClient.Do(r)
	if resp != nil {
		d.last = resp.Header
	}
	return resp, err
}

// How each failure surfaces through genqlient, which the client classifies.
func TestErrorsThroughGenqlient(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "x")
	d := &keyDoer{key: DefaultKey}
	c := graphql.NewClient(s.URL(), d)
	ctx := context.Background()
	run := func(q string, vars map[string]any) error {
		var data map[string]any
		return c.MakeRequest(ctx, &graphql.Request{Query: q, OpName: "Q", Variables: vars}, &graphql.Response{Data: &data})
	}
	code := func(l gqlerror.List) any {
		if len(l) == 0 {
			return nil
		}
		return l[0].Extensions["code"]
	}

	if err := run(`query Q { viewer { id } }`, nil); err != nil {
		t.Fatal(err)
	}
	if d.last.Get("X-RateLimit-Requests-Remaining") == "" {
		t.Fatal("rate-limit headers")
	}

	// Entity not found: HTTP 200, data null, a gqlerror.List with INPUT_ERROR.
	err := run(`query Q($id: String!) { issue(id: $id) { id } }`, map[string]any{"id": "ENG-404"})
	var gl gqlerror.List
	if !errors.As(err, &gl) || code(gl) != "INPUT_ERROR" {
		t.Fatalf("not found: %#v", err)
	}

	// Rate limited: *graphql.HTTPError 400 with code RATELIMITED.
	s.RateLimitAfter(0)
	err = run(`query Q { viewer { id } }`, nil)
	var he *graphql.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 400 || code(he.Response.Errors) != "RATELIMITED" || d.last.Get("X-RateLimit-Requests-Remaining") != "0" {
		t.Fatalf("rate limited: %#v", err)
	}
	s.ResetRateLimit()

	// Bad key: *graphql.HTTPError 401 with AUTHENTICATION_ERROR.
	s.BadKey()
	err = run(`query Q { viewer { id } }`, nil)
	if !errors.As(err, &he) || he.StatusCode != 401 || code(he.Response.Errors) != "AUTHENTICATION_ERROR" {
		t.Fatalf("auth: %#v", err)
	}
	s.RestoreKey()

	// 5xx: *graphql.HTTPError 503 whose only error message is the raw body.
	s.Fail5xx(1)
	err = run(`query Q { viewer { id } }`, nil)
	if !errors.As(err, &he) || he.StatusCode != 503 || code(he.Response.Errors) != nil {
		t.Fatalf("5xx: %#v", err)
	}
}
