package lineartest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

type resp struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// post sends a GraphQL request the way genqlient does.
func post(t *testing.T, url, key, query, opName string, vars map[string]any) resp {
	t.Helper()
	payload := map[string]any{"query": query}
	if opName != "" {
		payload["operationName"] = opName
	}
	if vars != nil {
		payload["variables"] = vars
	}
	b, _ := json.Marshal(payload)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	hr, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer hr.Body.Close()
	raw, _ := io.ReadAll(hr.Body)
	r := resp{status: hr.StatusCode, header: hr.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

func gql(t *testing.T, s *Server, query string, vars map[string]any) resp {
	t.Helper()
	return post(t, s.URL(), s.key, query, "", vars)
}

// get walks decoded JSON: string keys for objects, ints for list indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func errCode(r resp) string {
	s, _ := get(r.body, "errors", 0, "extensions", "code").(string)
	return s
}

func errMsg(r resp) string {
	s, _ := get(r.body, "errors", 0, "message").(string)
	return s
}

func wantOK(t *testing.T, r resp) {
	t.Helper()
	if r.status != 200 || r.body["errors"] != nil {
		t.Fatalf("want 200 without errors, got %d: %s", r.status, r.raw)
	}
}

func wantReject(t *testing.T, r resp, status int, code, msgPart string) {
	t.Helper()
	if r.status != status || errCode(r) != code || !strings.Contains(errMsg(r), msgPart) {
		t.Fatalf("want %d %s containing %q, got %d: %s", status, code, msgPart, r.status, r.raw)
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestHandWrittenQueryReturnsOnlySelection(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "First")
	r := gql(t, s, `query Mine {
		__typename
		viewer { id isMe org: organization { urlKey } }
		me: viewer { __typename email }
		issue(id: "eng-1") { ...IssueBits ... on Issue { state { name } } team @include(if: false) { key } }
	}
	fragment IssueBits on Issue { identifier title }`, nil)
	wantOK(t, r)
	data := r.body["data"].(map[string]any)
	if got := keys(data); !reflect.DeepEqual(got, []string{"__typename", "issue", "me", "viewer"}) {
		t.Fatalf("root keys %v", got)
	}
	if got := keys(data["viewer"].(map[string]any)); !reflect.DeepEqual(got, []string{"id", "isMe", "org"}) {
		t.Fatalf("viewer keys %v", got)
	}
	if get(data, "viewer", "isMe") != true || get(data, "viewer", "org", "urlKey") != "test" {
		t.Fatalf("viewer %v", data["viewer"])
	}
	if get(data, "me", "__typename") != "User" || get(data, "__typename") != "Query" {
		t.Fatalf("typename: %s", r.raw)
	}
	if got := keys(data["issue"].(map[string]any)); !reflect.DeepEqual(got, []string{"identifier", "state", "title"}) {
		t.Fatalf("issue keys %v (fragment, inline fragment, @include)", got)
	}
	if get(data, "issue", "state", "name") != "Todo" || get(data, "issue", "identifier") != "ENG-1" {
		t.Fatalf("issue %v", data["issue"])
	}
	// Response keys keep the selection order.
	if !strings.HasPrefix(r.raw, `{"data":{"__typename":"Query","viewer":{"id":`) {
		t.Fatalf("order: %s", r.raw)
	}
}

// checkShape asserts that every object in the response has exactly the
// response keys its selection set asks for.
func checkShape(t *testing.T, set ast.SelectionSet, v any, path string) {
	t.Helper()
	if v == nil {
		return
	}
	if l, ok := v.([]any); ok {
		for i, x := range l {
			checkShape(t, set, x, fmt.Sprintf("%s[%d]", path, i))
		}
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s: want an object, got %T", path, v)
		return
	}
	var want []string
	for _, sel := range set {
		f := sel.(*ast.Field)
		want = append(want, f.Alias)
		if len(f.SelectionSet) > 0 {
			checkShape(t, f.SelectionSet, m[f.Alias], path+"."+f.Alias)
		} else if f.Definition.Type.Name() != "JSONObject" {
			if _, isObj := m[f.Alias].(map[string]any); isObj {
				t.Errorf("%s.%s: a leaf answered with an object", path, f.Alias)
			}
		}
	}
	sort.Strings(want)
	if got := keys(m); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: keys %v, want %v", path, got, want)
	}
}

// opFixture seeds a fresh server and gives the variables for one operation.
type opFixture struct {
	s                          *Server
	issueID, teamID, commentID string
	labelID, inProgress        string
}

func newFixture(t *testing.T) *opFixture {
	s := New(t)
	f := &opFixture{s: s}
	f.issueID = s.AddIssue("ENG-1", "Sync sessions")
	team := s.Team("ENG")
	f.teamID = team.ID
	f.inProgress = team.States[2].ID
	f.labelID = s.AddLabel("ai-session", "ENG")
	s.AddLabel("AI-Session", "") // a workspace label with the same name, other case
	f.commentID = s.AddComment("ENG-1", "progress session:abc")
	s.AddForeignComment("ENG-1", "someone else mentions session:abc")
	return f
}

func (f *opFixture) vars(op string) (map[string]any, bool) {
	switch op {
	case "Viewer", "RateLimitStatus":
		return map[string]any{}, true
	case "IssueByIdentifier":
		return map[string]any{"id": "ENG-1"}, true
	case "CommentByID":
		return map[string]any{"id": f.commentID}, true
	case "CommentCreate":
		return map[string]any{"issueId": "ENG-1", "body": "**Session** summary", "id": uuid.NewString()}, true
	case "CommentUpdate":
		return map[string]any{"id": f.commentID, "body": "updated"}, true
	case "IssueUpdate":
		return map[string]any{"id": "ENG-1", "stateId": f.inProgress, "addedLabelIds": []string{f.labelID}}, true
	case "IssueLabelsByName":
		return map[string]any{"name": "ai-session", "first": 20}, true
	case "IssueLabelCreate":
		return map[string]any{"name": "decision", "teamId": f.teamID, "id": uuid.NewString()}, true
	case "TeamWorkflowStates":
		return map[string]any{"teamId": f.teamID, "first": 50}, true
	case "AttachmentUpsert":
		return map[string]any{"issueId": "ENG-1", "url": "https://example.invalid/s/abc", "title": "Session abc",
			"subtitle": "3 decisions", "metadata": map[string]any{"sessionId": "abc", "turns": 42}}, true
	}
	return nil, false
}

// runOperations executes every operation of an operations file against a
// fresh fake and checks the response shape and the effect.
func runOperations(t *testing.T, path string) {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckQuery(string(src)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	schema, _ := Schema()
	doc, errs := gqlparser.LoadQuery(schema, string(src))
	if errs != nil {
		t.Fatal(errs)
	}
	for _, op := range doc.Operations {
		t.Run(op.Name, func(t *testing.T) {
			f := newFixture(t)
			vars, known := f.vars(op.Name)
			if !known {
				t.Fatalf("no fixture for operation %s: add its variables to opFixture.vars", op.Name)
			}
			r := post(t, f.s.URL(), DefaultKey, string(src), op.Name, vars)
			wantOK(t, r)
			t.Logf("X-Complexity: %s", r.header.Get("X-Complexity"))
			checkShape(t, op.SelectionSet, r.body["data"], "data")
			if n := f.s.Calls(op.Name); n != 1 {
				t.Errorf("Calls(%s) = %d", op.Name, n)
			}
			data := r.body["data"]
			switch op.Name {
			case "Viewer":
				if get(data, "viewer", "email") != "syncbot@example.invalid" {
					t.Errorf("viewer: %v", data)
				}
			case "RateLimitStatus":
				if get(data, "rateLimitStatus", "limits", 0, "type") != "requestLimit" {
					t.Errorf("limits: %v", data)
				}
			case "IssueByIdentifier":
				if get(data, "issue", "id") != f.issueID || get(data, "issue", "state", "type") != "unstarted" ||
					get(data, "issue", "team", "id") != f.teamID {
					t.Errorf("issue: %v", data)
				}
			case "CommentByID":
				if get(data, "comment", "issue", "identifier") != "ENG-1" {
					t.Errorf("comment: %v", data)
				}
			case "CommentCreate":
				id := vars["id"].(string)
				if get(data, "commentCreate", "comment", "id") != id {
					t.Errorf("client id not honoured: %v", data)
				}
				if c, ok := f.s.Comment(id); !ok || c.Body != "**Session** summary" || !c.ByViewer {
					t.Errorf("stored: %+v", c)
				}
			case "CommentUpdate":
				if c, _ := f.s.Comment(f.commentID); c.Body != "updated" {
					t.Errorf("body: %q", c.Body)
				}
			case "IssueUpdate":
				is := f.s.Issue("ENG-1")
				if is.State != "In Progress" || !reflect.DeepEqual(is.Labels, []string{"ai-session"}) {
					t.Errorf("issue: %+v", is)
				}
				if get(data, "issueUpdate", "issue", "state", "name") != "In Progress" {
					t.Errorf("payload: %v", data)
				}
			case "IssueLabelsByName":
				nodes, _ := get(data, "issueLabels", "nodes").([]any)
				if len(nodes) != 2 || get(nodes, 0, "team", "key") != "ENG" || get(nodes, 1, "team") != nil {
					t.Errorf("labels: %v", nodes)
				}
			case "IssueLabelCreate":
				wantID := get(data, "issueLabelCreate", "issueLabel", "id")
				if op.VariableDefinitions.ForName("id") != nil {
					wantID = vars["id"]
				}
				if get(data, "issueLabelCreate", "issueLabel", "id") != wantID ||
					get(data, "issueLabelCreate", "issueLabel", "team", "id") != f.teamID {
					t.Errorf("label: %v", data)
				}
			case "TeamWorkflowStates":
				nodes, _ := get(data, "team", "states", "nodes").([]any)
				var names []string
				for _, n := range nodes {
					names = append(names, get(n, "name").(string))
				}
				if !reflect.DeepEqual(names, []string{"Backlog", "Todo", "In Progress", "Done"}) {
					t.Errorf("states: %v", names)
				}
			case "AttachmentUpsert":
				if att := f.s.Issue("ENG-1").Attachments; len(att) != 1 || att[0].URL != vars["url"] {
					t.Errorf("attachments: %+v", att)
				}
			}
		})
	}
}

// The client's own operations, when present.
func TestClientOperations(t *testing.T) {
	const path = "../operations.graphql"
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the client operations %s are missing: %v", path, err)
	}
	runOperations(t, path)
}

func TestFakeRejectsInvalidQuery(t *testing.T) {
	s := New(t, WithRejectsAllowed())
	s.AddIssue("ENG-1", "x")
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		code, msg   string
	}{
		{"unknown field", `query { viewer { id nope } }`, nil, "GRAPHQL_VALIDATION_FAILED", `Cannot query field "nope" on type "User"`},
		{"wrong argument type", `query { issue(id: 123) { id } }`, nil, "GRAPHQL_VALIDATION_FAILED", "String"},
		{"unknown argument", `query { issue(id: "ENG-1", foo: 1) { id } }`, nil, "GRAPHQL_VALIDATION_FAILED", `Unknown argument "foo"`},
		{"missing selection", `query { viewer }`, nil, "GRAPHQL_VALIDATION_FAILED", "must have a selection"},
		{"syntax", `query { viewer { id }`, nil, "GRAPHQL_VALIDATION_FAILED", "Expected"},
		{"variable in wrong position", `mutation Q($e: Float) { issueUpdate(id: "ENG-1", input: {estimate: $e}) { success } }`, nil,
			"GRAPHQL_VALIDATION_FAILED", "Variable \"$e\" of type \"Float\" used in position expecting type \"Int\""},
		{"variable value of wrong type", `query Q($id: String!) { issue(id: $id) { id } }`, map[string]any{"id": 5}, "BAD_USER_INPUT", "$id"},
		{"number for a String inside an input", `mutation Q($in: CommentUpdateInput!) { commentUpdate(id: "x", input: $in) { success } }`,
			map[string]any{"in": map[string]any{"body": 7}}, "BAD_USER_INPUT", "$in.body: cannot use number 7 as String"},
		{"fraction for an Int", `query Q($n: Int!) { issueLabels(first: $n) { nodes { id } } }`, map[string]any{"n": 1.5}, "BAD_USER_INPUT", "as Int"},
		{"string for a JSONObject", `mutation Q($m: JSONObject) { attachmentCreate(input: {issueId: "ENG-1", url: "https://x.invalid", title: "t", metadata: $m}) { success } }`,
			map[string]any{"m": "str"}, "BAD_USER_INPUT", "$m: cannot use string \"str\" as JSONObject"},
		{"unknown input field", `mutation Q($in: CommentUpdateInput!) { commentUpdate(id: "x", input: $in) { success } }`,
			map[string]any{"in": map[string]any{"bodyy": "x"}}, "BAD_USER_INPUT", "bodyy"},
		{"missing variable", `query Q($id: String!) { issue(id: $id) { id } }`, map[string]any{}, "BAD_USER_INPUT", "id"},
		{"unknown root field", `query { projects(first: 1) { nodes { id } } }`, nil, "FAKE_UNIMPLEMENTED", "Query.projects is not implemented"},
		{"unimplemented filter", `query { issueLabels(first: 5, filter: {createdAt: {gt: "2026-01-01T00:00:00Z"}}) { nodes { id } } }`, nil,
			"FAKE_UNIMPLEMENTED", "IssueLabelFilter.createdAt"},
		{"unimplemented input field", `mutation { issueUpdate(id: "ENG-1", input: {dueDate: "2026-01-01"}) { success } }`, nil,
			"FAKE_UNIMPLEMENTED", "IssueUpdateInput.dueDate"},
		{"fixture gap", `query { viewer { lastSeen } }`, nil, "FAKE_UNIMPLEMENTED", "no data for User.lastSeen"},
		{"too complex", `query { teams(first: 250) { nodes { issues(first: 250) { nodes { id title } } } } }`, nil, "QUERY_TOO_COMPLEX", "too complex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantReject(t, gql(t, s, tc.query, tc.vars), 400, tc.code, tc.msg)
		})
	}
	if n := s.Calls("issueUpdate") + s.Calls("issue") + s.Calls("commentUpdate"); n != 0 {
		t.Errorf("rejected operations were executed: %d", n)
	}
}

func TestFakeRejectsDeprecated(t *testing.T) {
	s := New(t, WithRejectsAllowed())
	s.AddIssue("ENG-1", "x")
	wantReject(t, gql(t, s, `query { issue(id: "ENG-1") { id boardOrder } }`, nil), 400, "FAKE_DEPRECATED", "field Issue.boardOrder")
	wantReject(t, gql(t, s, `query { issue(id: "ENG-1") { team { id private } } }`, nil), 400, "FAKE_DEPRECATED", "field Team.private")
	wantReject(t, gql(t, s, `query Q { ...F } fragment F on Query { attachmentIssue(id: "x") { id } }`, nil),
		400, "FAKE_DEPRECATED", "field Query.attachmentIssue")
	if err := CheckQuery(`query { issue(id: "x") { boardOrder } }`); err == nil || !strings.Contains(err.Error(), "Issue.boardOrder") {
		t.Fatalf("CheckQuery: %v", err)
	}
}

// Linear's schema has no deprecated argument, input field or enum value
// today; check those paths on a small schema.
func TestDeprecatedArgumentsInputsEnums(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `
		enum Color { RED BLUE @deprecated(reason: "no blue") }
		input In { a: String, old: String @deprecated(reason: "use a") , c: Color }
		type Query { f(x: Int @deprecated(reason: "gone"), in: In): String }`})
	for _, tc := range []struct{ q, want string }{
		{`{ f(x: 1) }`, "argument Query.f(x:) (gone)"},
		{`{ f(in: {old: "1"}) }`, "input field In.old (use a)"},
		{`{ f(in: {c: BLUE}) }`, "enum value Color.BLUE (no blue)"},
	} {
		doc, errs := gqlparser.LoadQuery(schema, tc.q)
		if errs != nil {
			t.Fatal(errs)
		}
		got := deprecatedUses(schema, doc, doc.Operations[0])
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: %v, want %s", tc.q, got, tc.want)
		}
	}
	// ... and inside variable values.
	doc, _ := gqlparser.LoadQuery(schema, `query Q($in: In) { f(in: $in) }`)
	var deps []string
	if _, err := coerceVariables(schema, doc.Operations[0], map[string]any{"in": map[string]any{"old": "1", "c": "BLUE"}}, &deps); err != nil {
		t.Fatal(err)
	}
	sort.Strings(deps)
	if !reflect.DeepEqual(deps, []string{"enum value Color.BLUE (no blue)", "input field In.old (use a)"}) {
		t.Errorf("variables: %v", deps)
	}
}

func TestRateLimitAfter(t *testing.T) {
	s := New(t)
	r := gql(t, s, `{ viewer { id } }`, nil)
	wantOK(t, r)
	if r.header.Get("X-RateLimit-Requests-Limit") != "2500" || r.header.Get("X-RateLimit-Requests-Remaining") != "2499" {
		t.Fatalf("headers: %v", r.header)
	}
	s.RateLimitAfter(2)
	wantOK(t, gql(t, s, `{ viewer { id } }`, nil))
	r = gql(t, s, `{ viewer { id } }`, nil)
	wantOK(t, r)
	if r.header.Get("X-RateLimit-Requests-Remaining") != "0" {
		t.Fatalf("remaining after budget spent: %v", r.header)
	}
	for range 2 {
		r = gql(t, s, `mutation { commentCreate(input: {issueId: "ENG-1", body: "x"}) { success } }`, nil)
		wantReject(t, r, 400, "RATELIMITED", "Rate limit")
	}
	if get(r.body, "errors", 0, "extensions", "type") != "ratelimited" {
		t.Fatalf("extensions: %s", r.raw)
	}
	if r.header.Get("X-RateLimit-Requests-Remaining") != "0" {
		t.Fatalf("remaining: %v", r.header)
	}
	reset, err := strconv.ParseInt(r.header.Get("X-RateLimit-Requests-Reset"), 10, 64)
	if err != nil || reset <= time.Now().UnixMilli() || reset > time.Now().Add(2*time.Hour).UnixMilli() {
		t.Fatalf("reset must be epoch ms in the future: %q", r.header.Get("X-RateLimit-Requests-Reset"))
	}
	if s.Calls("commentCreate") != 0 || s.Mutations()["commentCreate"] != 0 {
		t.Fatal("a rate-limited mutation was executed")
	}
	s.ResetRateLimit()
	wantOK(t, gql(t, s, `{ viewer { id } }`, nil))
	if got := s.Requests(); got != 6 {
		t.Fatalf("Requests = %d", got)
	}
	s.RateLimitAfter(0)
	wantReject(t, gql(t, s, `{ viewer { id } }`, nil), 400, "RATELIMITED", "")
}

func TestFail5xx(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "x")
	s.Fail5xx(2)
	for range 2 {
		r := gql(t, s, `mutation { commentCreate(input: {issueId: "ENG-1", body: "x"}) { success } }`, nil)
		if r.status != 503 {
			t.Fatalf("want 503, got %d %s", r.status, r.raw)
		}
	}
	if len(s.Comments("ENG-1")) != 0 {
		t.Fatal("a failed request was executed")
	}
	wantOK(t, gql(t, s, `{ viewer { id } }`, nil))
	log := s.Log()
	if len(log) != 3 || log[0].Outcome != "5xx" || log[0].Status != 503 || log[2].Outcome != "ok" {
		t.Fatalf("log: %+v", log)
	}
}

func TestFailAfterCommit(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "x")
	s.FailAfterCommit(1)
	id := uuid.NewString()
	q := `mutation C($id: String) { commentCreate(input: {issueId: "ENG-1", body: "x", id: $id}) { success } }`
	if r := gql(t, s, q, map[string]any{"id": id}); r.status != 502 {
		t.Fatalf("want 502, got %d", r.status)
	}
	if c := s.Comments("ENG-1"); len(c) != 1 || c[0].ID != id {
		t.Fatalf("the create must have happened: %+v", c)
	}
	// The client's recovery: look the id up.
	r := gql(t, s, `query Q($id: String!) { comment(id: $id) { id } }`, map[string]any{"id": id})
	wantOK(t, r)
}

func TestFailAfterCommitOf(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "x")
	s.FailAfterCommitOf("commentCreate", 1)
	// Other operations are not affected.
	wantOK(t, gql(t, s, `{ issue(id: "ENG-1") { id } }`, nil))
	id := uuid.NewString()
	q := `mutation C($id: String) { commentCreate(input: {issueId: "ENG-1", body: "x", id: $id}) { success } }`
	if r := gql(t, s, q, map[string]any{"id": id}); r.status != 502 {
		t.Fatalf("want 502, got %d", r.status)
	}
	if c := s.Comments("ENG-1"); len(c) != 1 || c[0].ID != id {
		t.Fatalf("the create must have happened: %+v", c)
	}
	// Only the next one.
	wantOK(t, gql(t, s, q, map[string]any{"id": uuid.NewString()}))
	if n := len(s.Comments("ENG-1")); n != 2 {
		t.Fatalf("%d comments, want 2", n)
	}
}

func TestAuth(t *testing.T) {
	s := New(t, WithKey("lin_api_custom"))
	wantOK(t, post(t, s.URL(), "lin_api_custom", `{ viewer { id } }`, "", nil))
	for _, key := range []string{"", "wrong", DefaultKey, "Bearer lin_api_custom"} {
		r := post(t, s.URL(), key, `{ viewer { id } }`, "", nil)
		wantReject(t, r, 401, "AUTHENTICATION_ERROR", "Authentication required")
		if get(r.body, "errors", 0, "extensions", "type") != "authentication error" ||
			get(r.body, "errors", 0, "extensions", "userError") != true {
			t.Fatalf("shape: %s", r.raw)
		}
	}
	s.BadKey()
	wantReject(t, post(t, s.URL(), "lin_api_custom", `{ viewer { id } }`, "", nil), 401, "AUTHENTICATION_ERROR", "")
	s.RestoreKey()
	wantOK(t, post(t, s.URL(), "lin_api_custom", `{ viewer { id } }`, "", nil))
	if s.Calls("viewer") != 2 {
		t.Fatalf("Calls(viewer) = %d", s.Calls("viewer"))
	}

	o := New(t, WithOAuthToken("lin_oauth_x"))
	wantOK(t, post(t, o.URL(), "Bearer lin_oauth_x", `{ viewer { id } }`, "", nil))
	wantOK(t, post(t, o.URL(), DefaultKey, `{ viewer { id } }`, "", nil))
}

func TestHTTPChecks(t *testing.T) {
	s := New(t)
	hr, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	hr.Body.Close()
	if hr.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", hr.StatusCode)
	}
	if r := post(t, strings.TrimSuffix(s.URL(), "/graphql")+"/v1", DefaultKey, `{ viewer { id } }`, "", nil); r.status != 404 {
		t.Fatalf("wrong path: %d", r.status)
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL(), strings.NewReader(`{"query":"{ viewer { id } }"}`))
	req.Header.Set("Authorization", DefaultKey)
	req.Header.Set("Content-Type", "text/plain")
	hr, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	hr.Body.Close()
	if hr.StatusCode != 400 {
		t.Fatalf("content type: %d", hr.StatusCode)
	}
}

func TestCommentCreateSameIDTwice(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "x")
	id := "0b9d2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e"
	q := `mutation CommentCreate($issueId: String!, $body: String!, $id: String) {
		commentCreate(input: {issueId: $issueId, body: $body, id: $id}) { success comment { id body } } }`
	v := map[string]any{"issueId": "ENG-1", "body": "first", "id": id}
	r := gql(t, s, q, v)
	wantOK(t, r)
	if get(r.body, "data", "commentCreate", "comment", "id") != id {
		t.Fatalf("id: %s", r.raw)
	}
	v["body"] = "second"
	r = gql(t, s, q, v)
	if r.status != 200 || errCode(r) != "INPUT_ERROR" || r.body["data"] != nil || !strings.Contains(errMsg(r), "already exists") {
		t.Fatalf("duplicate id: %d %s", r.status, r.raw)
	}
	if c := s.Comments("ENG-1"); len(c) != 1 || c[0].Body != "first" {
		t.Fatalf("comments: %+v", c)
	}

	s.DuplicateCreateSucceeds(true)
	r = gql(t, s, q, v)
	wantOK(t, r)
	if get(r.body, "data", "commentCreate", "comment", "body") != "first" {
		t.Fatalf("want the existing comment: %s", r.raw)
	}
	if c := s.Comments("ENG-1"); len(c) != 1 {
		t.Fatalf("comments: %+v", c)
	}
	if m := s.Mutations(); m["commentCreate"] != 3 || s.Calls("CommentCreate") != 3 {
		t.Fatalf("mutations: %v", m)
	}

	// A client id must be a UUID v4.
	v["id"] = "not-a-uuid"
	if r := gql(t, s, q, v); errCode(r) != "INPUT_ERROR" || !strings.Contains(errMsg(r), "UUID") {
		t.Fatalf("bad id: %s", r.raw)
	}
	// Without an id the server makes one.
	delete(v, "id")
	r = gql(t, s, q, v)
	wantOK(t, r)
	if len(s.Comments("ENG-1")) != 2 {
		t.Fatal("create without id")
	}
}

func TestIssueUpdateTouchesOnlyWhatIsSent(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "Title")
	s.AddIssue("OPS-1", "Other team")
	done := s.Team("ENG").States[3].ID
	opsTodo := s.Team("OPS").States[1].ID
	l1, l2 := s.AddLabel("a", "ENG"), s.AddLabel("b", "")
	opsLabel := s.AddLabel("c", "OPS")
	q := `mutation IssueUpdate($id: String!, $description: String, $estimate: Int, $stateId: String, $labelIds: [String!], $addedLabelIds: [String!]) {
		issueUpdate(id: $id, input: {description: $description, estimate: $estimate, stateId: $stateId, labelIds: $labelIds, addedLabelIds: $addedLabelIds}) {
			success issue { estimate description state { name } labels(first: 10) { nodes { name } } } } }`
	wantOK(t, gql(t, s, q, map[string]any{"id": "ENG-1", "description": "d", "estimate": 3}))
	wantOK(t, gql(t, s, q, map[string]any{"id": "ENG-1", "addedLabelIds": []string{l1}}))
	r := gql(t, s, q, map[string]any{"id": "ENG-1", "addedLabelIds": []string{l2, l1}, "stateId": done})
	wantOK(t, r)
	is := s.Issue("ENG-1")
	if *is.Description != "d" || *is.Estimate != 3 || is.State != "Done" || !reflect.DeepEqual(is.Labels, []string{"a", "b"}) || is.Title != "Title" {
		t.Fatalf("issue: %+v", is)
	}
	if get(r.body, "data", "issueUpdate", "issue", "labels", "nodes", 1, "name") != "b" {
		t.Fatalf("payload: %s", r.raw)
	}
	// Explicit null clears; an omitted variable leaves the field alone.
	wantOK(t, gql(t, s, q, map[string]any{"id": "ENG-1", "estimate": nil}))
	if is := s.Issue("ENG-1"); is.Estimate != nil || is.Description == nil {
		t.Fatalf("null/omitted: %+v", is)
	}
	// A state or label of another team is refused and nothing changes.
	for _, v := range []map[string]any{
		{"id": "ENG-1", "description": "zzz", "stateId": opsTodo},
		{"id": "ENG-1", "description": "zzz", "addedLabelIds": []string{opsLabel}},
		{"id": "ENG-1", "description": "zzz", "addedLabelIds": []string{"no-such-label"}},
	} {
		if r := gql(t, s, q, v); errCode(r) != "INPUT_ERROR" {
			t.Fatalf("%v: %s", v, r.raw)
		}
	}
	if is := s.Issue("ENG-1"); *is.Description != "d" {
		t.Fatalf("failed update changed the issue: %+v", is)
	}
	// labelIds replaces the set.
	wantOK(t, gql(t, s, q, map[string]any{"id": "ENG-1", "labelIds": []string{l2}}))
	if is := s.Issue("ENG-1"); !reflect.DeepEqual(is.Labels, []string{"b"}) {
		t.Fatalf("labelIds: %+v", is)
	}
	// The log keeps the variables as sent.
	log := s.Log()
	if _, sent := log[1].Variables["labelIds"]; sent || log[1].Operation != "IssueUpdate" {
		t.Fatalf("log: %+v", log[1])
	}
}

func TestNotFound(t *testing.T) {
	s := New(t)
	for _, q := range []string{
		`{ issue(id: "ENG-9") { id } }`,
		`{ comment(id: "0b9d2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e") { id } }`,
		`{ team(id: "NOPE") { id } }`,
		`mutation { commentCreate(input: {issueId: "ENG-9", body: "x"}) { success } }`,
		`mutation { commentUpdate(id: "x", input: {body: "x"}) { success } }`,
	} {
		r := gql(t, s, q, nil)
		if r.status != 200 || errCode(r) != "INPUT_ERROR" || r.body["data"] != nil || !strings.HasPrefix(errMsg(r), "Entity not found") {
			t.Fatalf("%s: %d %s", q, r.status, r.raw)
		}
		if p := get(r.body, "errors", 0, "path", 0); p == nil {
			t.Fatalf("path: %s", r.raw)
		}
	}
}

func TestLabelsAndStatesQueries(t *testing.T) {
	s := New(t)
	s.AddTeam("ENG")
	q := `mutation L($name: String!, $teamId: String, $id: String) {
		issueLabelCreate(input: {name: $name, teamId: $teamId, id: $id}) { success issueLabel { id name team { key } } } }`
	id := uuid.NewString()
	wantOK(t, gql(t, s, q, map[string]any{"name": "decision", "teamId": s.Team("ENG").ID, "id": id}))
	if r := gql(t, s, q, map[string]any{"name": "decision", "id": id}); errCode(r) != "INPUT_ERROR" {
		t.Fatalf("duplicate label id: %s", r.raw)
	}
	if r := gql(t, s, q, map[string]any{"name": "Decision", "teamId": s.Team("ENG").ID}); errCode(r) != "INPUT_ERROR" {
		t.Fatalf("duplicate label name: %s", r.raw)
	}
	wantOK(t, gql(t, s, q, map[string]any{"name": "workspace-wide"}))
	if l := s.Labels(); len(l) != 2 || l[0].TeamKey != "ENG" || l[1].TeamKey != "" || l[0].ID != id {
		t.Fatalf("labels: %+v", l)
	}
	r := gql(t, s, `{
		ws: issueLabels(first: 5, filter: {team: {null: true}}) { nodes { name } }
		eng: issueLabels(first: 5, filter: {or: [{team: {key: {eq: "ENG"}}}, {name: {startsWith: "zzz"}}]}) { nodes { name } }
		workflowStates(first: 10, filter: {team: {key: {eq: "ENG"}}, type: {in: ["started", "completed"]}}) { nodes { name } }
	}`, nil)
	wantOK(t, r)
	if get(r.body, "data", "ws", "nodes", 0, "name") != "workspace-wide" || get(r.body, "data", "eng", "nodes", 0, "name") != "decision" ||
		len(get(r.body, "data", "ws", "nodes").([]any)) != 1 {
		t.Fatalf("label filters: %s", r.raw)
	}
	if n := get(r.body, "data", "workflowStates", "nodes").([]any); len(n) != 2 || get(n, 0, "name") != "In Progress" {
		t.Fatalf("states: %s", r.raw)
	}
}

func TestPagination(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "x")
	for i := range 5 {
		s.AddComment("ENG-1", fmt.Sprint("c", i))
	}
	q := `query P($after: String) { issue(id: "ENG-1") { comments(first: 2, after: $after) {
		nodes { body } edges { cursor node { body } } pageInfo { hasNextPage endCursor } } } }`
	var bodies []string
	var after any
	for page := 0; ; page++ {
		r := gql(t, s, q, map[string]any{"after": after})
		wantOK(t, r)
		c := get(r.body, "data", "issue", "comments")
		for _, n := range get(c, "nodes").([]any) {
			bodies = append(bodies, get(n, "body").(string))
		}
		if get(c, "edges", 0, "node", "body") != get(c, "nodes", 0, "body") {
			t.Fatalf("edges: %v", c)
		}
		if get(c, "pageInfo", "hasNextPage") != true {
			break
		}
		after = get(c, "pageInfo", "endCursor")
		if page > 5 {
			t.Fatal("no end")
		}
	}
	if strings.Join(bodies, ",") != "c0,c1,c2,c3,c4" {
		t.Fatalf("bodies %v", bodies)
	}
}

func TestAttachmentUpsert(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "x")
	q := `mutation A($issueId: String!, $url: String!, $title: String!, $subtitle: String, $metadata: JSONObject) {
		attachmentCreate(input: {issueId: $issueId, url: $url, title: $title, subtitle: $subtitle, metadata: $metadata}) {
			success attachment { id title subtitle metadata updatedAt } } }`
	r1 := gql(t, s, q, map[string]any{"issueId": "ENG-1", "url": "https://example.invalid/s/1", "title": "one", "metadata": map[string]any{"turns": 3}})
	wantOK(t, r1)
	r2 := gql(t, s, q, map[string]any{"issueId": s.Issue("ENG-1").ID, "url": "https://example.invalid/s/1", "title": "two", "subtitle": "sub"})
	wantOK(t, r2)
	id := get(r1.body, "data", "attachmentCreate", "attachment", "id")
	if id == nil || get(r2.body, "data", "attachmentCreate", "attachment", "id") != id {
		t.Fatalf("upsert must keep the attachment: %s / %s", r1.raw, r2.raw)
	}
	if get(r1.body, "data", "attachmentCreate", "attachment", "metadata", "turns") != 3.0 {
		t.Fatalf("metadata: %s", r1.raw)
	}
	att := s.Issue("ENG-1").Attachments
	if len(att) != 1 || att[0].Title != "two" || *att[0].Subtitle != "sub" || att[0].Metadata["turns"] != 3.0 {
		t.Fatalf("attachments: %+v", att)
	}
	if r := gql(t, s, q, map[string]any{"issueId": "ENG-1", "url": "not a url", "title": "x"}); errCode(r) != "INPUT_ERROR" {
		t.Fatalf("bad url: %s", r.raw)
	}
}

func TestForeignCommentsAreReadOnly(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "x")
	id := s.AddForeignComment("ENG-1", "theirs")
	r := gql(t, s, `mutation U($id: String!) { commentUpdate(id: $id, input: {body: "mine now"}) { success } }`, map[string]any{"id": id})
	if errCode(r) != "FORBIDDEN" {
		t.Fatalf("%s", r.raw)
	}
	if c, _ := s.Comment(id); c.Body != "theirs" || c.ByViewer {
		t.Fatalf("%+v", c)
	}
	if !s.DeleteComment(id) || len(s.Comments("ENG-1")) != 0 {
		t.Fatal("DeleteComment")
	}
}

func TestLatency(t *testing.T) {
	s := New(t)
	s.SetLatency(300 * time.Millisecond)
	c := &http.Client{Timeout: 50 * time.Millisecond}
	req, _ := http.NewRequest(http.MethodPost, s.URL(), strings.NewReader(`{"query":"{ viewer { id } }"}`))
	req.Header.Set("Authorization", DefaultKey)
	req.Header.Set("Content-Type", "application/json")
	if _, err := c.Do(req); err == nil {
		t.Fatal("want a client timeout")
	}
	s.SetLatency(20 * time.Millisecond)
	start := time.Now()
	wantOK(t, gql(t, s, `{ viewer { id } }`, nil))
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Fatalf("latency not applied: %v", d)
	}
	s.SetLatency(time.Hour) // Close must not wait for sleeping handlers.
	go func() {
		r, err := http.Post(s.URL(), "application/json", strings.NewReader(`{}`))
		if err == nil {
			r.Body.Close()
		}
	}()
	time.Sleep(20 * time.Millisecond)
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs on a delayed request")
	}
}

func TestConcurrentUse(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "x")
	q := `mutation C($id: String) { commentCreate(input: {issueId: "ENG-1", body: "x", id: $id}) { success } }`
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if i%2 == 0 {
					if r := gql(t, s, q, map[string]any{"id": uuid.NewString()}); r.status != 200 {
						t.Errorf("g%d: %s", g, r.raw)
					}
				} else {
					gql(t, s, `{ issue(id: "ENG-1") { comments(first: 100) { nodes { id } } } }`, nil)
				}
				_ = s.Comments("ENG-1")
				_ = s.Calls("commentCreate")
			}
		}()
	}
	wg.Wait()
	if n := len(s.Comments("ENG-1")); n != 40 {
		t.Fatalf("comments: %d", n)
	}
	if s.Requests() != 80 || s.Mutations()["commentCreate"] != 40 {
		t.Fatalf("counters: %d %v", s.Requests(), s.Mutations())
	}
}

func TestCountersAndReset(t *testing.T) {
	s := New(t)
	s.AddIssue("ENG-1", "x")
	post(t, s.URL(), DefaultKey, `query Viewer { viewer { id } } query Other { viewer { email } }`, "Viewer", nil)
	gql(t, s, `{ viewer { id } issue(id: "ENG-1") { id } }`, nil)
	if s.Calls("Viewer") != 1 || s.Calls("viewer") != 2 || s.Calls("issue") != 1 || s.Requests() != 2 {
		t.Fatalf("calls: %+v", s.Log())
	}
	s.ResetCounters()
	if s.Requests() != 0 || s.Calls("viewer") != 0 || len(s.Mutations()) != 0 {
		t.Fatal("reset")
	}
}
