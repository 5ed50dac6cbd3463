package linear

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/sessionvault/sessionvault/internal/syncer"
)

// Errors are tested with errors.Is. Every error returned by a Client
// request is a *RateLimitError or an *Error, and the conditions the sync
// steers by wrap the sync's own values directly, so a Client is a
// syncer.Target backend without any translation:
//
//   - syncer.ErrRateLimited: Linear refused the request because a budget is
//     spent (HTTP 400 with extensions.code "RATELIMITED", or HTTP 429). The
//     error is a *RateLimitError; its RetryAfter says how long to wait. Not
//     retried by the client; a cron job should rather skip to its next run.
//   - syncer.ErrAuth: the key is missing, invalid, revoked or lacks access
//     (HTTP 401/403, or extensions.code AUTHENTICATION_ERROR / FORBIDDEN).
//     The message names LINEAR_API_KEY.
//   - syncer.ErrNotFound: the requested entity does not exist or is not
//     visible to the key ("Entity not found" errors), or a wrapper found no
//     match (StateID).
//   - ErrUnavailable, this package's own (the sync has no such value: to it
//     an unavailable Linear is an error like any other, which fails only
//     the item, and the next run tries again).

// ErrUnavailable: Linear could not be reached or answered 5xx, after the
// transport's retries (see RetryPolicy); also a timeout of the request. The
// outcome of a mutation that failed this way is unknown: it may have been
// carried out.
var ErrUnavailable = errors.New("linear: service unavailable")

// maxMessage bounds the server text quoted in an error.
const maxMessage = 300

// Error is a failed request other than a rate limit. Kind-specific tests go
// through errors.Is (syncer.ErrAuth, syncer.ErrNotFound, ErrUnavailable);
// errors.As also reaches the underlying *graphql.HTTPError, gqlerror.List or
// transport error.
type Error struct {
	Op         string // GraphQL operation name, e.g. "IssueByIdentifier"
	Subject    string // what it was about, e.g. "ENG-123" (may be empty)
	StatusCode int    // HTTP status; 0 if no response was received
	Code       string // extensions.code of the first GraphQL error, if any
	Message    string // server / transport message, credentials redacted
	Attempts   int    // transport tries made (> 1 after retries)

	kind  error // syncer.ErrAuth, syncer.ErrNotFound, ErrUnavailable, or nil for other failures
	cause error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(prefix(e.Op, e.Subject))
	switch e.kind {
	case syncer.ErrAuth:
		b.WriteString("not authorized")
	case ErrUnavailable:
		b.WriteString("service unavailable")
	case syncer.ErrNotFound:
		b.WriteString("not found")
	default:
		b.WriteString("request failed")
	}
	writeDetails(&b, e.StatusCode, e.Code, e.Attempts)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.kind == syncer.ErrAuth {
		b.WriteString("; set " + EnvAPIKey + " to a valid Linear API key (with access to the team)")
	}
	return b.String()
}

// Unwrap exposes the sentinel kind and the underlying error.
func (e *Error) Unwrap() []error { return nonNil(e.kind, e.cause) }

// RateLimitError is the concrete syncer.ErrRateLimited error.
type RateLimitError struct {
	Op         string
	Subject    string
	StatusCode int    // 400 (Linear's RATELIMITED) or 429
	Code       string // "RATELIMITED" when the body said so
	Message    string // server message, credentials redacted
	// RetryAfter is how long to wait before trying again: the Retry-After
	// header, else the time until the reset of the spent budget
	// (X-RateLimit-*-Reset of a budget whose remaining count is 0). Zero
	// means Linear gave no hint.
	RetryAfter time.Duration
	// Reset is the corresponding point in time (zero if unknown).
	Reset time.Time

	cause error
}

func (e *RateLimitError) Error() string {
	var b strings.Builder
	b.WriteString(prefix(e.Op, e.Subject))
	b.WriteString("rate limited")
	writeDetails(&b, e.StatusCode, e.Code, 0)
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", retry after %s", e.RetryAfter.Round(time.Second))
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Unwrap exposes syncer.ErrRateLimited and the underlying error.
func (e *RateLimitError) Unwrap() []error { return nonNil(syncer.ErrRateLimited, e.cause) }

func prefix(op, subject string) string {
	s := "linear"
	if op != "" {
		s += " " + op
	}
	if subject != "" {
		s += " " + subject
	}
	return s + ": "
}

func writeDetails(b *strings.Builder, status int, code string, attempts int) {
	var parts []string
	if status != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", status))
	}
	if code != "" {
		parts = append(parts, code)
	}
	if attempts > 1 {
		parts = append(parts, fmt.Sprintf("after %d attempts", attempts))
	}
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, ", ") + ")")
	}
}

func nonNil(errs ...error) []error {
	out := errs[:0:0]
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// annotate records what a failed call was about (e.g. the issue
// identifier) on a classified error.
func annotate(err error, subject string) error {
	var e *Error
	var rl *RateLimitError
	switch {
	case errors.As(err, &rl):
		if rl.Subject == "" {
			rl.Subject = subject
		}
	case errors.As(err, &e):
		if e.Subject == "" {
			e.Subject = subject
		}
	}
	return err
}

// classify turns what genqlient returned into an *Error or *RateLimitError.
//
// Shapes (genqlient v0.8.1): a non-200 answer is a *graphql.HTTPError whose
// Response.Errors holds the parsed body (or the raw body as one message);
// a 200 answer with "errors" is a gqlerror.List; a transport failure is
// returned as is by our transport.
func (c *Client) classify(op string, ex *exchange, err error) error {
	var status int
	var gerrs gqlerror.List
	var he *graphql.HTTPError
	isHTTP := errors.As(err, &he)
	switch {
	case isHTTP:
		status = he.StatusCode
		gerrs = he.Response.Errors
	case errors.As(err, &gerrs):
		status = ex.status
	}

	code := firstCode(gerrs)
	msg := c.message(gerrs, err, isHTTP || gerrs != nil)

	switch {
	case status == 429 || hasCode(gerrs, "RATELIMITED") || hasType(gerrs, "ratelimited"):
		d, reset := retryAfter(ex.header, c.now())
		return &RateLimitError{Op: op, StatusCode: status, Code: code, Message: msg,
			RetryAfter: d, Reset: reset, cause: err}
	}

	e := &Error{Op: op, StatusCode: status, Code: code, Message: msg, Attempts: ex.attempts, cause: err}
	switch {
	case status == 401 || status == 403 ||
		hasCode(gerrs, "AUTHENTICATION_ERROR", "FORBIDDEN", "UNAUTHENTICATED") ||
		hasType(gerrs, "authentication error", "forbidden"):
		e.kind = syncer.ErrAuth
	case status >= 500:
		e.kind = ErrUnavailable
	case !isHTTP && gerrs == nil && (ex.netErr != nil || errors.Is(err, context.DeadlineExceeded)):
		// No response: connection error or timeout (after retries), or the
		// caller's deadline. A cancelled context is not "unavailable".
		if !errors.Is(err, context.Canceled) {
			e.kind = ErrUnavailable
		}
	case isNotFound(gerrs):
		e.kind = syncer.ErrNotFound
	case !isHTTP && gerrs == nil && ex.netErr == nil && ex.status == 200:
		e.Message = "response is not GraphQL JSON: " + e.Message
	}
	return e
}

// message summarises the server's error messages (or the transport error),
// redacted and bounded.
func (c *Client) message(gerrs gqlerror.List, err error, fromServer bool) string {
	var parts []string
	if fromServer {
		for i, ge := range gerrs {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("(+%d more)", len(gerrs)-i))
				break
			}
			m := ge.Message
			if upm, ok := ge.Extensions["userPresentableMessage"].(string); ok && upm != "" && upm != m {
				m += " (" + upm + ")"
			}
			parts = append(parts, m)
		}
	} else {
		parts = append(parts, err.Error())
	}
	s := c.redact(strings.Join(parts, "; "))
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxMessage {
		s = strings.ToValidUTF8(s[:maxMessage], "") + "…"
	}
	return s
}

func extString(ge *gqlerror.Error, key string) string {
	if ge == nil || ge.Extensions == nil {
		return ""
	}
	s, _ := ge.Extensions[key].(string)
	return s
}

func firstCode(gerrs gqlerror.List) string {
	for _, ge := range gerrs {
		if c := extString(ge, "code"); c != "" {
			return c
		}
	}
	return ""
}

func hasCode(gerrs gqlerror.List, codes ...string) bool {
	for _, ge := range gerrs {
		c := extString(ge, "code")
		for _, want := range codes {
			if c != "" && strings.EqualFold(c, want) {
				return true
			}
		}
	}
	return false
}

func hasType(gerrs gqlerror.List, types ...string) bool {
	for _, ge := range gerrs {
		t := extString(ge, "type")
		for _, want := range types {
			if t != "" && strings.EqualFold(t, want) {
				return true
			}
		}
	}
	return false
}

// isNotFound recognises Linear's "Entity not found: Issue" answers
// (extensions.code INPUT_ERROR, data null).
func isNotFound(gerrs gqlerror.List) bool {
	if hasCode(gerrs, "NOT_FOUND", "ENTITY_NOT_FOUND") {
		return true
	}
	for _, ge := range gerrs {
		if ge != nil && strings.Contains(strings.ToLower(ge.Message), "entity not found") {
			return true
		}
	}
	return false
}
