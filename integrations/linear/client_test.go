package linear

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/syncer"
)

// A distinctive key: no error message may contain it.
const testKey = "lin_api_SECRETtestKEY0123456789abcdefXYZ"

// reply is what the tiny test server answers for one request.
type reply struct {
	status int
	header map[string]string
	body   string        // raw body; JSON unless the test says otherwise
	delay  time.Duration // sleep before answering (timeouts)
}

// call is one request the test server saw.
type call struct {
	op     string
	auth   string
	ctype  string
	method string
	vars   map[string]any
	query  string
}

// testServer is a minimal GraphQL-over-HTTP endpoint: answer decides the
// reply for each request; every request is recorded.
type testServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls []call
}

func newTestServer(t *testing.T, answer func(n int, c call) reply) *testServer {
	t.Helper()
	ts := &testServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query         string         `json:"query"`
			OperationName string         `json:"operationName"`
			Variables     map[string]any `json:"variables"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		c := call{op: req.OperationName, auth: r.Header.Get("Authorization"), ctype: r.Header.Get("Content-Type"),
			method: r.Method, vars: req.Variables, query: req.Query}
		ts.mu.Lock()
		ts.calls = append(ts.calls, c)
		n := len(ts.calls)
		ts.mu.Unlock()
		rep := answer(n, c)
		if rep.delay > 0 {
			select {
			case <-time.After(rep.delay):
			case <-r.Context().Done():
				return
			}
		}
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		if rep.status == 0 {
			rep.status = http.StatusOK
		}
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *testServer) Calls() []call {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]call(nil), ts.calls...)
}

// newTestClient returns a client for ts with instant, recorded backoff.
func newTestClient(ts *testServer, key string) (*Client, *[]time.Duration) {
	c := New(ts.URL, key, ts.Client())
	var waits []time.Duration
	var mu sync.Mutex
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return c, &waits
}

func gqlError(message string, ext map[string]any) string {
	b, _ := json.Marshal(map[string]any{
		"errors": []any{map[string]any{"message": message, "extensions": ext}},
	})
	return string(b)
}

const viewerBody = `{"data":{"viewer":{"id":"u1","name":"Ada Lovelace","displayName":"ada","email":"ada@example.com","active":true,"organization":{"id":"o1","name":"Org","urlKey":"org"}}}}`

func TestAuthHeaderAndRateLimitHeaders(t *testing.T) {
	reset := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ts := newTestServer(t, func(n int, c call) reply {
		return reply{body: viewerBody, header: map[string]string{
			"X-RateLimit-Requests-Limit":       "2500",
			"X-RateLimit-Requests-Remaining":   "2499",
			"X-RateLimit-Requests-Reset":       strconv.FormatInt(reset.UnixMilli(), 10),
			"X-Complexity":                     "3",
			"X-RateLimit-Complexity-Limit":     "3000000",
			"X-RateLimit-Complexity-Remaining": "2999997",
			"X-RateLimit-Complexity-Reset":     strconv.FormatInt(reset.UnixMilli(), 10),
		}}
	})
	c, _ := newTestClient(ts, testKey)
	if rl := c.RateLimit(); !rl.Observed.IsZero() || rl.RequestsRemaining != -1 {
		t.Fatalf("RateLimit before any request = %+v", rl)
	}
	name, email, err := c.Viewer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if name != "Ada Lovelace" || email != "ada@example.com" {
		t.Fatalf("Viewer = %q, %q", name, email)
	}
	calls := ts.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d requests, want 1", len(calls))
	}
	got := calls[0]
	if got.auth != testKey {
		t.Errorf("Authorization = %q, want the raw key without Bearer", got.auth)
	}
	if got.ctype != "application/json" || got.method != http.MethodPost || got.op != "Viewer" {
		t.Errorf("request = %s %q op %q", got.method, got.ctype, got.op)
	}
	rl := c.RateLimit()
	if rl.RequestsLimit != 2500 || rl.RequestsRemaining != 2499 || !rl.RequestsReset.Equal(reset) ||
		rl.Complexity != 3 || rl.ComplexityLimit != 3000000 || rl.ComplexityRemaining != 2999997 ||
		!rl.ComplexityReset.Equal(reset) || rl.Observed.IsZero() || rl.EndpointRequestsRemaining != -1 {
		t.Errorf("RateLimit = %+v", rl)
	}
}

func TestOAuthTokenSentAsBearer(t *testing.T) {
	ts := newTestServer(t, func(int, call) reply { return reply{body: viewerBody} })
	c, _ := newTestClient(ts, "lin_oauth_abc")
	if _, _, err := c.Viewer(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ts.Calls()[0].auth; got != "Bearer lin_oauth_abc" {
		t.Fatalf("Authorization = %q", got)
	}
}

func TestRateLimitedHTTP400(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	reset := now.Add(90 * time.Second)
	ts := newTestServer(t, func(int, call) reply {
		return reply{status: 400,
			header: map[string]string{
				"X-RateLimit-Requests-Limit":     "2500",
				"X-RateLimit-Requests-Remaining": "0",
				"X-RateLimit-Requests-Reset":     strconv.FormatInt(reset.UnixMilli(), 10),
			},
			body: gqlError("Rate limit exceeded", map[string]any{"code": "RATELIMITED", "type": "ratelimited", "statusCode": 429}),
		}
	})
	c, waits := newTestClient(ts, testKey)
	c.now = func() time.Time { return now }
	_, err := c.Issue(context.Background(), "ENG-1")
	if !errors.Is(err, syncer.ErrRateLimited) {
		t.Fatalf("err = %v, want syncer.ErrRateLimited", err)
	}
	var rle *RateLimitError
	if !errors.As(err, &rle) {
		t.Fatalf("err %T is not a *RateLimitError", err)
	}
	if rle.RetryAfter != 90*time.Second || !rle.Reset.Equal(reset) || rle.StatusCode != 400 || rle.Code != "RATELIMITED" {
		t.Errorf("RateLimitError = %+v", rle)
	}
	if errors.Is(err, syncer.ErrAuth) || errors.Is(err, ErrUnavailable) {
		t.Errorf("rate limit also classified as another kind: %v", err)
	}
	if n := len(ts.Calls()); n != 1 || len(*waits) != 0 {
		t.Errorf("rate limit retried: %d requests, waits %v", n, *waits)
	}
	if rl := c.RateLimit(); rl.RequestsRemaining != 0 {
		t.Errorf("RateLimit().RequestsRemaining = %d, want 0", rl.RequestsRemaining)
	}
	if !strings.Contains(err.Error(), "ENG-1") || !strings.Contains(err.Error(), "retry after 1m30s") {
		t.Errorf("message %q lacks subject or wait", err)
	}
}

func TestRateLimited429RetryAfter(t *testing.T) {
	ts := newTestServer(t, func(int, call) reply {
		return reply{status: 429, header: map[string]string{"Retry-After": "7"}, body: "Too Many Requests"}
	})
	c, _ := newTestClient(ts, testKey)
	err := c.SetState(context.Background(), "ENG-1", "state-1")
	var rle *RateLimitError
	if !errors.Is(err, syncer.ErrRateLimited) || !errors.As(err, &rle) {
		t.Fatalf("err = %v, want syncer.ErrRateLimited", err)
	}
	if rle.RetryAfter != 7*time.Second || rle.StatusCode != 429 {
		t.Errorf("RateLimitError = %+v", rle)
	}
	if n := len(ts.Calls()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestRateLimitedInHTTP200Errors(t *testing.T) {
	ts := newTestServer(t, func(int, call) reply {
		return reply{body: `{"data":null,"errors":[{"message":"ratelimited","extensions":{"code":"RATELIMITED"}}]}`}
	})
	c, _ := newTestClient(ts, testKey)
	if _, _, err := c.Viewer(context.Background()); !errors.Is(err, syncer.ErrRateLimited) {
		t.Fatalf("err = %v, want syncer.ErrRateLimited", err)
	}
}

func TestAuthErrors(t *testing.T) {
	cases := []struct {
		name string
		rep  reply
	}{
		{"401 AUTHENTICATION_ERROR", reply{status: 401, body: gqlError("Authentication required, not authenticated",
			map[string]any{"type": "authentication error", "code": "AUTHENTICATION_ERROR", "statusCode": 401, "userError": true,
				"userPresentableMessage": "You need to authenticate to access this operation."})}},
		{"401 plain", reply{status: 401, body: "unauthorized"}},
		{"403 FORBIDDEN", reply{status: 403, body: gqlError("Forbidden", map[string]any{"code": "FORBIDDEN", "type": "forbidden"})}},
		{"200 with FORBIDDEN", reply{body: `{"data":null,"errors":[{"message":"no access to team","extensions":{"code":"FORBIDDEN"}}]}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, func(int, call) reply { return tc.rep })
			c, _ := newTestClient(ts, testKey)
			_, _, err := c.Viewer(context.Background())
			if !errors.Is(err, syncer.ErrAuth) {
				t.Fatalf("err = %v, want syncer.ErrAuth", err)
			}
			if !strings.Contains(err.Error(), "set LINEAR_API_KEY to a valid") {
				t.Errorf("message lacks the LINEAR_API_KEY hint: %q", err)
			}
			if n := len(ts.Calls()); n != 1 {
				t.Errorf("auth failure retried: %d requests", n)
			}
		})
	}
}

func Test503RetriedThenSuccess(t *testing.T) {
	ts := newTestServer(t, func(n int, _ call) reply {
		if n < 3 {
			return reply{status: 503, body: "<html>upstream unavailable</html>"}
		}
		return reply{body: viewerBody}
	})
	c, waits := newTestClient(ts, testKey)
	name, _, err := c.Viewer(context.Background())
	if err != nil || name != "Ada Lovelace" {
		t.Fatalf("Viewer = %q, %v", name, err)
	}
	if n := len(ts.Calls()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	for _, c := range ts.Calls() {
		if c.auth != testKey || c.op != "Viewer" || !strings.Contains(c.query, "viewer") {
			t.Errorf("retried request lost its header or body: %+v", c)
		}
	}
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond}
	if fmt.Sprint(*waits) != fmt.Sprint(want) {
		t.Errorf("backoff waits = %v, want %v", *waits, want)
	}
}

func Test5xxExhausted(t *testing.T) {
	ts := newTestServer(t, func(int, call) reply {
		return reply{status: 502, body: "<html>bad gateway</html>"}
	})
	c, waits := newTestClient(ts, testKey)
	c.Retry = RetryPolicy{Attempts: 4, Initial: 200 * time.Millisecond, Max: 800 * time.Millisecond}
	_, err := c.Issue(context.Background(), "ENG-1")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 502 || e.Attempts != 4 {
		t.Errorf("Error = %+v", e)
	}
	if n := len(ts.Calls()); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}
	if fmt.Sprint(*waits) != fmt.Sprint(want) {
		t.Errorf("backoff waits = %v, want %v", *waits, want)
	}
	if d := (RetryPolicy{Initial: 200 * time.Millisecond, Max: 800 * time.Millisecond}).delay(10); d != 800*time.Millisecond {
		t.Errorf("delay(10) = %v, want the 800ms cap", d)
	}
}

func TestConnectionErrorUnavailable(t *testing.T) {
	ts := newTestServer(t, func(int, call) reply { return reply{body: viewerBody} })
	c, waits := newTestClient(ts, testKey)
	ts.Close() // nothing listens any more
	_, _, err := c.Viewer(context.Background())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if len(*waits) != 2 {
		t.Errorf("waits = %v, want 2 retries", *waits)
	}
}

func TestTimeoutRetriedThenUnavailable(t *testing.T) {
	ts := newTestServer(t, func(int, call) reply { return reply{body: viewerBody, delay: 2 * time.Second} })
	hc := ts.Client()
	hc.Timeout = 50 * time.Millisecond
	c := New(ts.URL, testKey, hc)
	c.Retry = RetryPolicy{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond}
	_, _, err := c.Viewer(context.Background())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if n := len(ts.Calls()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestCancelledContextIsNotUnavailable(t *testing.T) {
	ts := newTestServer(t, func(int, call) reply { return reply{body: viewerBody} })
	c, _ := newTestClient(ts, testKey)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := c.Viewer(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want context.Canceled only", err)
	}
}

const notFoundBody = `{"errors":[{"message":"Entity not found: Issue","extensions":{"type":"invalid input","code":"INPUT_ERROR","statusCode":400,"userError":true,"userPresentableMessage":"Could not find referenced Issue."}}],"data":null}`

func TestNotFound(t *testing.T) {
	ts := newTestServer(t, func(int, call) reply { return reply{body: notFoundBody} })
	c, _ := newTestClient(ts, testKey)
	_, err := c.Issue(context.Background(), "ENG-404")
	if !errors.Is(err, syncer.ErrNotFound) || !strings.Contains(err.Error(), "ENG-404") {
		t.Fatalf("Issue err = %v, want syncer.ErrNotFound naming ENG-404", err)
	}
	found, body, err := c.Comment(context.Background(), "5b0f0a4e-0000-4000-8000-000000000000")
	if err != nil || found || body != "" {
		t.Fatalf("Comment = %v, %q, %v; want not found, no error", found, body, err)
	}
}

func TestOtherGraphQLErrorHasNoKind(t *testing.T) {
	ts := newTestServer(t, func(int, call) reply {
		return reply{status: 400, body: gqlError("Cannot query field \"nope\"", map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"})}
	})
	c, _ := newTestClient(ts, testKey)
	_, _, err := c.Viewer(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.Code != "GRAPHQL_VALIDATION_FAILED" {
		t.Fatalf("err = %#v", err)
	}
	for _, k := range []error{syncer.ErrAuth, syncer.ErrRateLimited, ErrUnavailable, syncer.ErrNotFound} {
		if errors.Is(err, k) {
			t.Errorf("validation failure classified as %v", k)
		}
	}
}

// TestKeyNeverInErrors drives every error path with a server that echoes
// the Authorization header back in its answers, and requires the key to be
// absent from every error message and from the client's printed forms.
func TestKeyNeverInErrors(t *testing.T) {
	echo := func(status int, ext map[string]any) func(c call) reply {
		return func(c call) reply {
			return reply{status: status, body: gqlError("bad credentials "+c.auth+" for "+c.auth, ext)}
		}
	}
	paths := map[string]func(c call) reply{
		"401 json":        echo(401, map[string]any{"code": "AUTHENTICATION_ERROR"}),
		"403 json":        echo(403, map[string]any{"code": "FORBIDDEN"}),
		"400 ratelimited": echo(400, map[string]any{"code": "RATELIMITED"}),
		"400 validation":  echo(400, map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}),
		"200 not found": func(c call) reply {
			return reply{body: `{"data":null,"errors":[{"message":"Entity not found: ` + c.auth + `"}]}`}
		},
		"200 other error": echo(200, map[string]any{"code": "INPUT_ERROR"}),
		"429 text": func(c call) reply {
			return reply{status: 429, header: map[string]string{"Retry-After": "1"}, body: "slow down " + c.auth}
		},
		"500 html": func(c call) reply {
			return reply{status: 500, body: "<html>boom " + c.auth + "</html>"}
		},
		"404 text": func(c call) reply { return reply{status: 404, body: "no route for " + c.auth} },
		"200 not json": func(c call) reply {
			return reply{body: "<html>" + c.auth + "</html>", header: map[string]string{"Content-Type": "text/html"}}
		},
		"timeout": func(c call) reply { return reply{delay: 2 * time.Second, body: viewerBody} },
	}
	check := func(t *testing.T, what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		for _, s := range []string{err.Error(), fmt.Sprintf("%v|%+v|%s|%q", err, err, err, err)} {
			if strings.Contains(s, testKey) || strings.Contains(s, "SECRETtestKEY") {
				t.Errorf("%s: key leaked in error: %s", what, s)
			}
		}
	}
	for name, answer := range paths {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, func(_ int, c call) reply { return answer(c) })
			hc := ts.Client()
			hc.Timeout = 100 * time.Millisecond
			c := New(ts.URL, testKey, hc)
			c.Retry = RetryPolicy{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond}
			ctx := context.Background()
			_, _, err := c.Viewer(ctx)
			check(t, "Viewer", err)
			_, err = c.Issue(ctx, "ENG-1")
			check(t, "Issue", err)
			_, err = c.CreateComment(ctx, "ENG-1", "", "body")
			check(t, "CreateComment", err)
			check(t, "UpdateComment", c.UpdateComment(ctx, "c1", "body"))
			_, err = c.StateID(ctx, "team-1", "Done")
			check(t, "StateID", err)
			check(t, "SetState", c.SetState(ctx, "ENG-1", "s1"))
			_, err = c.LabelID(ctx, "sessionvault", "team-1")
			check(t, "LabelID", err)
			check(t, "AddLabel", c.AddLabel(ctx, "ENG-1", "l1"))
			check(t, "UpsertAttachment", c.UpsertAttachment(ctx, "ENG-1", "https://example.com/n", "t", "s"))
			if _, _, err := c.Comment(ctx, "c1"); err != nil {
				check(t, "Comment", err)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		ts := newTestServer(t, func(int, call) reply { return reply{body: viewerBody} })
		c, _ := newTestClient(ts, testKey)
		ts.Close()
		_, _, err := c.Viewer(context.Background())
		check(t, "Viewer", err)
	})
	t.Run("printing the client", func(t *testing.T) {
		c := New("", testKey, nil)
		holder := struct{ C *Client }{c}
		for _, s := range []string{
			fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprintf("%s", c), //nolint:staticcheck // S1025: every verb is the point, %s included
			fmt.Sprintf("%v", holder), fmt.Sprintf("%+v", holder), fmt.Sprintf("%#v", holder),
			fmt.Sprintf("%+v", c.cred), fmt.Sprintf("%#v", c.cred), c.String(),
		} {
			if strings.Contains(s, testKey) {
				t.Errorf("key leaked when printing the client: %s", s)
			}
		}
		if c.Endpoint() != DefaultEndpoint {
			t.Errorf("Endpoint() = %q, want %q", c.Endpoint(), DefaultEndpoint)
		}
	})
}

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvAPIKey, "")
	t.Setenv(EnvAPIURL, "")
	_, err := FromEnv()
	if err == nil || !strings.Contains(err.Error(), "set LINEAR_API_KEY") || !errors.Is(err, syncer.ErrAuth) {
		t.Fatalf("FromEnv without key: %v", err)
	}
	t.Setenv(EnvAPIKey, "  "+testKey+"\n")
	c, err := FromEnv()
	if err != nil || c.Endpoint() != DefaultEndpoint {
		t.Fatalf("FromEnv = %v, %v", c, err)
	}
	ts := newTestServer(t, func(int, call) reply { return reply{body: viewerBody} })
	t.Setenv(EnvAPIURL, ts.URL)
	c, err = FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Viewer(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ts.Calls()[0].auth; got != testKey {
		t.Errorf("Authorization = %q, want the trimmed key", got)
	}
}

// TestWrappers checks the variables each wrapper sends and how it reads
// the answers.
func TestWrappers(t *testing.T) {
	labels := `{"data":{"issueLabels":{"nodes":[]}}}`
	ts := newTestServer(t, func(_ int, c call) reply {
		switch c.op {
		case "IssueByIdentifier":
			return reply{body: `{"data":{"issue":{"id":"i-uuid","identifier":"ENG-1","title":"Fix it","url":"https://linear.app/x/issue/ENG-1",
				"state":{"id":"s-todo","name":"Todo","type":"unstarted"},"team":{"id":"t1","key":"ENG"}}}}`}
		case "CommentCreate":
			id, _ := c.vars["id"].(string)
			return reply{body: `{"data":{"commentCreate":{"success":true,"comment":{"id":"` + id + `","url":"u","createdAt":"2026-11-22T10:00:00.000Z"}}}}`}
		case "CommentUpdate":
			return reply{body: `{"data":{"commentUpdate":{"success":true,"comment":{"id":"c1","url":"u","updatedAt":"2026-11-22T10:00:00.000Z"}}}}`}
		case "CommentByID":
			return reply{body: `{"data":{"comment":{"id":"c1","body":"hello","url":"u","updatedAt":"2026-11-22T10:00:00.000Z","issue":{"id":"i-uuid","identifier":"ENG-1"}}}}`}
		case "TeamWorkflowStates":
			return reply{body: `{"data":{"team":{"id":"t1","key":"ENG","states":{"nodes":[
				{"id":"s-todo","name":"Todo","type":"unstarted","position":1},
				{"id":"s-prog","name":"In Progress","type":"started","position":2}]}}}}`}
		case "IssueUpdate":
			return reply{body: `{"data":{"issueUpdate":{"success":true,"issue":{"id":"i-uuid","identifier":"ENG-1","state":{"id":"s-prog","name":"In Progress"}}}}}`}
		case "IssueLabelsByName":
			return reply{body: labels}
		case "IssueLabelCreate":
			id, _ := c.vars["id"].(string)
			return reply{body: `{"data":{"issueLabelCreate":{"success":true,"issueLabel":{"id":"` + id + `","name":"sv","team":{"id":"t1"}}}}}`}
		case "AttachmentUpsert":
			return reply{body: `{"data":{"attachmentCreate":{"success":false,"attachment":{"id":"a1","url":"u","title":"t","subtitle":null,"updatedAt":"2026-11-22T10:00:00.000Z"}}}}`}
		}
		return reply{status: 400, body: gqlError("unexpected operation "+c.op, nil)}
	})
	c, _ := newTestClient(ts, testKey)
	ctx := context.Background()
	last := func(op string) call {
		t.Helper()
		calls := ts.Calls()
		got := calls[len(calls)-1]
		if got.op != op {
			t.Fatalf("last operation %q, want %q", got.op, op)
		}
		return got
	}
	keys := func(m map[string]any) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return fmt.Sprint(ks)
	}

	iss, err := c.Issue(ctx, "ENG-1")
	want := Issue{ID: "i-uuid", Identifier: "ENG-1", Title: "Fix it", URL: "https://linear.app/x/issue/ENG-1",
		TeamID: "t1", TeamKey: "ENG", StateID: "s-todo", StateName: "Todo", StateType: "unstarted"}
	if err != nil || iss != want {
		t.Fatalf("Issue = %+v, %v", iss, err)
	}

	stable := StableID("session", "abc")
	if stable != StableID("session", "abc") || stable == StableID("session", "abd") || stable[14] != '4' {
		t.Fatalf("StableID not deterministic v4: %s", stable)
	}
	id, err := c.CreateComment(ctx, "i-uuid", stable, "**hi**")
	if err != nil || id != stable {
		t.Fatalf("CreateComment = %q, %v", id, err)
	}
	if v := last("CommentCreate").vars; v["id"] != stable || v["issueId"] != "i-uuid" || v["body"] != "**hi**" {
		t.Errorf("CommentCreate vars = %v", v)
	}
	id, err = c.CreateComment(ctx, "i-uuid", "", "x")
	if err != nil || len(id) != 36 || id == stable {
		t.Fatalf("CreateComment without id = %q, %v", id, err)
	}

	if err := c.UpdateComment(ctx, "c1", "new"); err != nil {
		t.Fatal(err)
	}
	if v := last("CommentUpdate").vars; v["id"] != "c1" || v["body"] != "new" {
		t.Errorf("CommentUpdate vars = %v", v)
	}
	found, body, err := c.Comment(ctx, "c1")
	if err != nil || !found || body != "hello" {
		t.Fatalf("Comment = %v, %q, %v", found, body, err)
	}

	sid, err := c.StateID(ctx, "t1", "in progress")
	if err != nil || sid != "s-prog" {
		t.Fatalf("StateID = %q, %v", sid, err)
	}
	if v := last("TeamWorkflowStates").vars; v["teamId"] != "t1" || v["first"] != float64(statesPage) {
		t.Errorf("TeamWorkflowStates vars = %v", v)
	}
	_, err = c.StateID(ctx, "t1", "Shipped")
	if !errors.Is(err, syncer.ErrNotFound) || !strings.Contains(err.Error(), `"In Progress"`) {
		t.Errorf("StateID(Shipped) err = %v, want syncer.ErrNotFound listing the states", err)
	}

	if err := c.SetState(ctx, "i-uuid", "s-prog"); err != nil {
		t.Fatal(err)
	}
	if v := last("IssueUpdate").vars; keys(v) != "[id stateId]" || v["stateId"] != "s-prog" {
		t.Errorf("SetState sent %v, want only id and stateId", v)
	}
	if err := c.AddLabel(ctx, "i-uuid", "l1"); err != nil {
		t.Fatal(err)
	}
	if v := last("IssueUpdate").vars; keys(v) != "[addedLabelIds id]" || fmt.Sprint(v["addedLabelIds"]) != "[l1]" {
		t.Errorf("AddLabel sent %v, want only id and addedLabelIds", v)
	}

	// Label lookup: the team's label wins over a workspace label; groups and
	// other teams' labels are skipped.
	labels = `{"data":{"issueLabels":{"nodes":[
		{"id":"l-group","name":"SV","isGroup":true,"team":null},
		{"id":"l-other","name":"sv","isGroup":false,"team":{"id":"t2","key":"OPS"}},
		{"id":"l-ws","name":"sv","isGroup":false,"team":null},
		{"id":"l-team","name":"Sv","isGroup":false,"team":{"id":"t1","key":"ENG"}}]}}}`
	if lid, err := c.LabelID(ctx, "sv", "t1"); err != nil || lid != "l-team" {
		t.Errorf("LabelID(team) = %q, %v", lid, err)
	}
	if v := last("IssueLabelsByName").vars; v["name"] != "sv" || v["first"] != float64(labelsPage) {
		t.Errorf("IssueLabelsByName vars = %v", v)
	}
	if lid, err := c.LabelID(ctx, "sv", "t3"); err != nil || lid != "l-ws" {
		t.Errorf("LabelID(workspace fallback) = %q, %v", lid, err)
	}
	labels = `{"data":{"issueLabels":{"nodes":[{"id":"l-other","name":"sv","isGroup":false,"team":{"id":"t2","key":"OPS"}}]}}}`
	lid, err := c.LabelID(ctx, "sv", "t1")
	if wantID := StableID("issueLabel", "t1", "sv"); err != nil || lid != wantID {
		t.Errorf("LabelID(create) = %q, %v; want %s", lid, err, wantID)
	}
	if v := last("IssueLabelCreate").vars; v["name"] != "sv" || v["teamId"] != "t1" || v["id"] != lid {
		t.Errorf("IssueLabelCreate vars = %v", v)
	}
	if _, err := c.LabelID(ctx, "sv", ""); err != nil {
		t.Fatal(err)
	}
	if v := last("IssueLabelCreate").vars; keys(v) != "[id name]" {
		t.Errorf("workspace IssueLabelCreate sent %v, want no teamId", v)
	}

	err = c.UpsertAttachment(ctx, "i-uuid", "https://example.com/note", "Session note", "")
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "success: false") {
		t.Errorf("UpsertAttachment with success:false = %v", err)
	}
	if v := last("AttachmentUpsert").vars; keys(v) != "[issueId title url]" {
		t.Errorf("UpsertAttachment sent %v, want no subtitle", v)
	}

	if _, err := c.Issue(ctx, " "); err == nil {
		t.Error("Issue(blank) did not fail")
	}
}
