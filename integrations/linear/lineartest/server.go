// Package lineartest is an in-memory fake of Linear's GraphQL API
// (https://api.linear.app/graphql) for tests.
//
// Every request goes through what the real API does first: POST only, the
// Authorization header (a personal API key, sent raw without "Bearer"), the
// rate limiter (X-RateLimit-* headers; RATELIMITED is HTTP 400), then the
// query is parsed and validated with gqlparser against Linear's real SDL
// (the repository's one copy, package integrations/linear/schema), its
// variables are coerced strictly, and any use of a @deprecated field,
// argument, input field or enum value is rejected.
// The root fields the sync uses are executed over an in-memory store and
// the result is projected through the request's selection set (aliases,
// fragments and __typename honoured, non-null enforced), so a response can
// only have a shape the real API could give.
//
// Whatever the fake cannot emulate (an unimplemented root field, filter key
// or input field, a field the fixture has no data for) is answered with
// HTTP 400 and extensions.code FAKE_UNIMPLEMENTED, and, for a Server made
// by New, also fails the test.
//
// Implemented root fields:
//
//	query:    viewer organization rateLimitStatus issue comment team teams
//	          workflowState workflowStates issueLabel issueLabels attachment
//	mutation: commentCreate commentUpdate commentDelete issueUpdate
//	          issueLabelCreate attachmentCreate attachmentLinkURL
//
// Behaviour follows Linear's documented semantics: issue(id:) and the
// issueId inputs take a UUID or an identifier ("ENG-1"); an unknown entity
// is HTTP 200 with data null and an "Entity not found: X" INPUT_ERROR; a
// client-chosen id must be a UUID v4 and reusing one creates nothing (see
// DuplicateCreateSucceeds); attachmentCreate and attachmentLinkURL upsert on
// (url, issue); issueUpdate touches only the input fields sent (an explicit
// null clears), addedLabelIds is additive, labelIds replaces.
package lineartest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/sessionvault/sessionvault/integrations/linear/schema"
)

// DefaultKey is the API key a Server accepts unless WithKey says otherwise.
const DefaultKey = "lin_api_test"

// Rate-limit figures the fake reports (Linear's documented API-key budget).
const (
	RequestLimit    = 2500
	ComplexityLimit = 3000000
	// MaxComplexity is the per-query cap; a costlier query is rejected.
	MaxComplexity = 10000
)

var (
	schemaOnce sync.Once
	schemaAST  *ast.Schema
	schemaErr  error
)

// Schema returns Linear's schema as parsed from schema.SDL (shared by all
// servers; do not modify it).
func Schema() (*ast.Schema, error) {
	schemaOnce.Do(func() {
		schemaAST, schemaErr = gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: schema.SDL()})
	})
	return schemaAST, schemaErr
}

// Option configures a Server.
type Option func(*Server)

// WithKey sets the personal API key the server accepts ("Authorization: <key>").
func WithKey(key string) Option { return func(s *Server) { s.key = key } }

// WithOAuthToken additionally accepts "Authorization: Bearer <token>".
func WithOAuthToken(token string) Option { return func(s *Server) { s.oauth = token } }

// WithClock sets the clock used for timestamps and rate-limit resets.
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// WithRejectsAllowed stops New from failing the test when a query is
// rejected as invalid, deprecated or unimplemented (for tests of exactly
// those rejections). The HTTP answers are unchanged.
func WithRejectsAllowed() Option { return func(s *Server) { s.allowRejects = true } }

// Server is a running fake. All methods are safe for concurrent use.
type Server struct {
	ts        *httptest.Server
	closeOnce sync.Once
	closing   chan struct{}
	tb        testing.TB

	key, oauth   string
	now          func() time.Time
	allowRejects bool

	mu sync.Mutex
	st *store

	// counters
	requests  int
	log       []Call
	mutations map[string]int

	// rate limiting
	windowStart time.Time
	windowCount int
	rlActive    bool
	rlBudget    int

	// faults
	fail5xx           int
	failAfterCommit   int
	failAfterCommitOf map[string]int // root field -> operations left to fail
	latency           time.Duration
	badKey            bool
	dupCreateSucceed  bool
}

// Call is one request as the server saw it.
type Call struct {
	Operation  string         // operationName as sent (or the document's only operation's name)
	RootFields []string       // root fields of the executed operation (nil if it was not parsed)
	Variables  map[string]any // variables as sent (plain encoding/json decoding)
	Status     int            // HTTP status answered
	Outcome    string         // "ok", "error" (GraphQL errors with HTTP 200), "ratelimited", "auth", "5xx", "lost", "rejected", "bad-request"
	Executed   bool           // the operation ran against the store (false when rejected)
}

// New starts a fake on a local port and closes it when the test ends.
// Queries the fake rejects as invalid, deprecated or unimplemented also fail
// t (see WithRejectsAllowed).
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := NewServer(opts...)
	if err != nil {
		t.Fatalf("lineartest: %v", err)
	}
	s.tb = t
	t.Cleanup(s.Close)
	return s
}

// NewServer starts a fake without a testing.TB (for example a local dev
// server); Close it when done.
func NewServer(opts ...Option) (*Server, error) {
	if _, err := Schema(); err != nil {
		return nil, fmt.Errorf("loading schema: %w", err)
	}
	s := &Server{
		key:       DefaultKey,
		now:       time.Now,
		closing:   make(chan struct{}),
		mutations: map[string]int{},
	}
	for _, o := range opts {
		o(s)
	}
	s.st = newStore(s.now)
	s.ts = httptest.NewServer(s)
	return s, nil
}

// URL is the GraphQL endpoint, the counterpart of https://api.linear.app/graphql.
func (s *Server) URL() string { return s.ts.URL + "/graphql" }

// Close shuts the server down; it may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.ts.Close()
	})
}

// --- fault injection -------------------------------------------------------

// RateLimitAfter lets the next n authenticated requests through and answers
// every later one with RATELIMITED (HTTP 400, extensions.code RATELIMITED,
// X-RateLimit-Requests-Remaining: 0) until ResetRateLimit. n = 0 limits
// at once.
func (s *Server) RateLimitAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rlActive, s.rlBudget = true, n
}

// ResetRateLimit lifts RateLimitAfter and starts a fresh rate-limit window.
func (s *Server) ResetRateLimit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rlActive, s.rlBudget = false, 0
	s.windowStart, s.windowCount = time.Time{}, 0
}

// Fail5xx answers the next n requests with HTTP 503 (plain-text body, as a
// proxy would) before anything else is checked; nothing is executed.
func (s *Server) Fail5xx(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail5xx = n
}

// FailAfterCommit executes the next n operations that reach the store (their
// effects persist) but answers each with HTTP 502, as when a response is lost
// after the server committed: the client cannot tell whether it happened.
func (s *Server) FailAfterCommit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAfterCommit = n
}

// FailAfterCommitOf is FailAfterCommit for the next n operations with the
// root field field only (e.g. "commentCreate"); other operations are
// answered normally. It models a create whose reply is lost while the
// lookups around it work; n = 0 cancels it.
func (s *Server) FailAfterCommitOf(field string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failAfterCommitOf == nil {
		s.failAfterCommitOf = map[string]int{}
	}
	s.failAfterCommitOf[field] = n
}

// SetLatency delays every later request by d before it is handled (0 turns
// it off). The delay ends early if the client gives up or the server closes.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// BadKey makes every request fail authentication (as if the key had been
// revoked) until RestoreKey.
func (s *Server) BadKey() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.badKey = true
}

// RestoreKey undoes BadKey.
func (s *Server) RestoreKey() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.badKey = false
}

// DuplicateCreateSucceeds switches what a create with an already used
// client id (commentCreate, issueLabelCreate, attachmentCreate) answers.
// Default (false): an INPUT_ERROR and nothing is created, the expected
// Linear behaviour (unverified). true: success returning the existing
// entity unchanged. Either way no second entity is created.
func (s *Server) DuplicateCreateSucceeds(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dupCreateSucceed = on
}

// --- counters --------------------------------------------------------------

// Requests is the number of HTTP requests received, whatever their outcome.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Calls counts the executed operations whose operation name is name or
// which have a root field called name ("CommentCreate" or "commentCreate").
// Requests rejected before execution (auth, rate limit, 5xx, invalid) do
// not count.
func (s *Server) Calls(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.log {
		if !c.Executed {
			continue
		}
		hit := c.Operation == name
		for _, f := range c.RootFields {
			hit = hit || f == name
		}
		if hit {
			n++
		}
	}
	return n
}

// Mutations counts executed mutation root fields by name
// (e.g. {"commentCreate": 2}), whether they succeeded or answered a GraphQL
// error (duplicate id, not found, ...); rejected requests do not count.
func (s *Server) Mutations() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.mutations))
	for k, v := range s.mutations {
		out[k] = v
	}
	return out
}

// Log returns every request received, in order.
func (s *Server) Log() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.log...)
}

// ResetCounters clears Requests, Calls, Mutations and Log (not the store).
func (s *Server) ResetCounters() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests, s.log, s.mutations = 0, nil, map[string]int{}
}

// --- HTTP ------------------------------------------------------------------

type gqlRequest struct {
	Query         string          `json:"query"`
	OperationName string          `json:"operationName"`
	Variables     json.RawMessage `json:"variables"`
}

// ServeHTTP answers one request to /graphql (the Server already listens on
// URL(); this is exported only so it can be mounted elsewhere).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, readErr := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	var req gqlRequest
	decodeErr := readErr
	if decodeErr == nil {
		decodeErr = json.Unmarshal(body, &req)
	}
	call := Call{Operation: req.OperationName}
	if len(req.Variables) > 0 {
		_ = json.Unmarshal(req.Variables, &call.Variables)
	}

	s.mu.Lock()
	s.requests++
	latency := s.latency
	s.mu.Unlock()
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		case <-s.closing:
			t.Stop()
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	rw := &recorder{ResponseWriter: w}
	defer func() {
		call.Status = rw.status
		s.log = append(s.log, call)
	}()

	if s.fail5xx > 0 {
		s.fail5xx--
		call.Outcome = "5xx"
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		rw.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(rw, "503 Service Unavailable (lineartest: injected)\n")
		return
	}
	if r.Method != http.MethodPost {
		call.Outcome = "bad-request"
		rw.Header().Set("Allow", http.MethodPost)
		writeErrors(rw, http.StatusMethodNotAllowed, &apiError{msg: "lineartest: only POST is supported", code: "BAD_REQUEST", typ: "invalid input"})
		return
	}
	if r.URL.Path != "/graphql" {
		call.Outcome = "bad-request"
		writeErrors(rw, http.StatusNotFound, &apiError{msg: "lineartest: no endpoint at " + r.URL.Path + "; use Server.URL() (…/graphql)", code: "BAD_REQUEST", typ: "invalid input"})
		return
	}
	if !s.authorized(r.Header.Get("Authorization")) {
		call.Outcome = "auth"
		writeErrors(rw, http.StatusUnauthorized, &apiError{
			msg: "Authentication required, not authenticated", code: "AUTHENTICATION_ERROR", typ: "authentication error",
			status: 401, user: "You need to authenticate to access this operation."})
		return
	}
	if limited := s.rateLimit(rw.Header()); limited {
		call.Outcome = "ratelimited"
		writeErrors(rw, http.StatusBadRequest, &apiError{
			msg: "Rate limit exceeded", code: "RATELIMITED", typ: "ratelimited", status: 429,
			user:  "You have exceeded the rate limit for this API. Please try again later.",
			extra: map[string]any{"meta": map[string]any{"rateLimitResult": map[string]any{"type": "requestLimit"}}}})
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		call.Outcome = "bad-request"
		writeErrors(rw, http.StatusBadRequest, &apiError{msg: "lineartest: Content-Type must be application/json, got " + strconv.Quote(ct), code: "BAD_REQUEST", typ: "invalid input"})
		return
	}
	if decodeErr != nil {
		call.Outcome = "bad-request"
		writeErrors(rw, http.StatusBadRequest, &apiError{msg: "lineartest: invalid JSON body: " + decodeErr.Error(), code: "BAD_REQUEST", typ: "invalid input"})
		return
	}
	var rawVars map[string]any
	if len(req.Variables) > 0 && !bytes.Equal(bytes.TrimSpace(req.Variables), []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(req.Variables))
		dec.UseNumber()
		if err := dec.Decode(&rawVars); err != nil {
			call.Outcome = "bad-request"
			writeErrors(rw, http.StatusBadRequest, &apiError{msg: "lineartest: variables must be a JSON object: " + err.Error(), code: "BAD_REQUEST", typ: "invalid input"})
			return
		}
	}
	s.execute(rw, &req, rawVars, &call)
}

func (s *Server) authorized(h string) bool {
	if s.badKey || h == "" {
		return false
	}
	if h == s.key {
		return true
	}
	return s.oauth != "" && h == "Bearer "+s.oauth
}

// rateLimit counts the request, sets the X-RateLimit-* headers and reports
// whether it must be answered RATELIMITED. Called with s.mu held.
func (s *Server) rateLimit(h http.Header) bool {
	now := s.now()
	if s.windowStart.IsZero() || now.Sub(s.windowStart) >= time.Hour {
		s.windowStart, s.windowCount = now, 0
	}
	reset := strconv.FormatInt(s.windowStart.Add(time.Hour).UnixMilli(), 10)
	limited := s.rlActive && s.rlBudget <= 0
	if !limited {
		s.windowCount++
		if s.rlActive {
			s.rlBudget--
		}
	}
	remaining := s.remaining()
	h.Set("X-RateLimit-Requests-Limit", strconv.Itoa(RequestLimit))
	h.Set("X-RateLimit-Requests-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Requests-Reset", reset)
	h.Set("X-RateLimit-Complexity-Limit", strconv.Itoa(ComplexityLimit))
	h.Set("X-RateLimit-Complexity-Reset", reset)
	h.Set("X-RateLimit-Complexity-Remaining", strconv.Itoa(ComplexityLimit)) // execute lowers it by the query's cost
	return limited
}

func (s *Server) remaining() int {
	if s.rlActive {
		return max(s.rlBudget, 0)
	}
	return max(RequestLimit-s.windowCount, 0)
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// apiError is an error carrying the extensions Linear puts on its errors.
type apiError struct {
	msg, code, typ string
	status         int    // extensions.statusCode (0: left out)
	user           string // extensions.userPresentableMessage
	extra          map[string]any
}

func (e *apiError) Error() string { return e.msg }

func (e *apiError) extensions() map[string]any {
	ext := map[string]any{"code": e.code}
	if e.typ != "" {
		ext["type"] = e.typ
	}
	if e.status != 0 {
		ext["statusCode"] = e.status
	}
	if e.user != "" {
		ext["userPresentableMessage"] = e.user
		ext["userError"] = true
	}
	for k, v := range e.extra {
		ext[k] = v
	}
	return ext
}

func (e *apiError) gql(path ...any) map[string]any {
	m := map[string]any{"message": e.msg, "extensions": e.extensions()}
	if len(path) > 0 {
		m["path"] = path
	}
	return m
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeErrors(w http.ResponseWriter, status int, errs ...*apiError) {
	list := make([]any, len(errs))
	for i, e := range errs {
		list[i] = e.gql()
	}
	writeJSON(w, status, map[string]any{"errors": list})
}
