package graph_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/workflow"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/graph"
	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// The vaults the tests read: the repository's example, and hand-written notes
// with hostile text, feature notes and the orchestrator workflow's agent
// properties in their documented shape (testdata/vault: projects lab and
// app).
const (
	exampleVault = "../../vault-example"
	fixtureVault = "testdata/vault"
)

// openVault copies src into a fresh folder, makes it a git repository, as
// `sessionvault init` would, and returns a session service on it.
func openVault(t *testing.T, src string) *session.Service {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if _, err := history.Init(dir); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return session.New(v)
}

// build reads every project of svc's vault.
func build(t *testing.T, svc *session.Service) *graph.Graph {
	t.Helper()
	projects, err := svc.Projects()
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Build(svc, projects)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func node(t *testing.T, g *graph.Graph, id string) *graph.Node {
	t.Helper()
	n, ok := g.Node(id)
	if !ok {
		t.Fatalf("no node %s", id)
	}
	return n
}

func hasEdge(g *graph.Graph, typ, from, to string) bool {
	return slices.Contains(g.Edges(), graph.Edge{Type: typ, From: from, To: to})
}

func countLabels(g *graph.Graph) map[string]int {
	out := map[string]int{}
	for _, n := range g.Nodes() {
		out[n.Label]++
	}
	return out
}

func countTypes(g *graph.Graph) map[string]int {
	out := map[string]int{}
	for _, e := range g.Edges() {
		out[e.Type]++
	}
	return out
}

// The example vault: its two sessions, their entries and its task graph;
// it has no feature notes and no agent properties, and gets neither Feature
// nor Agent nodes.
func TestBuildVaultExample(t *testing.T) {
	g := build(t, openVault(t, exampleVault))
	want := map[string]int{"Session": 2, "Update": 5, "Decision": 3, "Blocker": 2, "Task": 6, "Agent": 6, "Feature": 2}
	if got := countLabels(g); !maps.Equal(got, want) {
		t.Errorf("nodes per label = %v, want %v", got, want)
	}
	wantEdges := map[string]int{"HAS_UPDATE": 5, "MADE_DECISION": 3, "ENCOUNTERED": 2, "WORKS_ON": 2, "DEPENDS_ON": 4, "BLOCKS": 1, "RELATED_TO": 2,
		"INVOKED": 4, "DECIDED": 1, "APPROVED": 1, "REJECTED": 1, "HAS_TASK": 6}
	if got := countTypes(g); !maps.Equal(got, wantEdges) {
		t.Errorf("edges per type = %v, want %v", got, wantEdges)
	}
	cur := "Session:demo/2026-11-21-session-01"
	if !hasEdge(g, graph.WorksOn, cur, "Task:demo/account-linking-api") {
		t.Error("the active session does not work on its active task")
	}
	if !hasEdge(g, graph.HasTask, "Feature:demo/oauth-login-2026-11-20", "Task:demo/adr-token-storage") {
		t.Error("the feature plan's task is not the feature's")
	}
	// The orchestrator workflow: four agents invoked, a decision decided by one.
	for _, a := range []string{"analyst", "architect", "implementer", "critic"} {
		if !hasEdge(g, graph.Invoked, cur, "Agent:"+a) {
			t.Errorf("the active session did not invoke %s", a)
		}
	}
	// The example's active session has had no heartbeat for long: status
	// says crashed on this machine, the note (and so the export) active.
	if st := node(t, g, cur).Props["status"]; st != "active" {
		t.Errorf("status = %v, want the note's active", st)
	}
	d := node(t, g, "Decision:demo%2Fdecisions%2F2026-11-20-use-pkce-for-the-oauth-flow")
	if d.Props["choice"] != "Authorization code flow with PKCE" || d.Props["sessionId"] != "2026-11-20-session-01" ||
		!slices.Equal(d.Props["alternatives"].([]string), []string{"Implicit flow", "Backend-for-frontend proxy"}) {
		t.Errorf("decision = %v", d.Props)
	}
	b := node(t, g, "Blocker:demo/2026-11-20-session-01/b-1")
	if b.Props["status"] != "resolved" || b.Props["resolvedAt"] != "2026-11-20T12:05:17Z" || b.Props["severity"] != "high" {
		t.Errorf("blocker = %v", b.Props)
	}
}

// Feature notes, agents, and the relations the data names, from the
// hand-written fixture; two projects with the same session id stay two
// sessions.
func TestBuildFixture(t *testing.T) {
	g := build(t, openVault(t, fixtureVault))
	lab, app := "Session:lab/2026-11-22-session-01", "Session:app/2026-11-22-session-01"
	node(t, g, app)
	prev := "Session:lab/2026-11-21-session-01"
	hostile := "Decision:lab%2Fdecisions%2F2026-11-22-hostile"
	noteOnly := "Decision:lab%2Fdecisions%2F2026-11-20-note-only"
	feature := "Feature:lab/oauth-login-2026-11-20"
	api, ui := "Task:lab/login-api", "Task:lab/login-ui"
	for _, e := range []graph.Edge{
		{Type: graph.Continues, From: lab, To: prev},
		{Type: graph.WorksOn, From: lab, To: api},
		{Type: graph.MadeDecision, From: lab, To: hostile},
		{Type: graph.MadeDecision, From: prev, To: noteOnly},
		{Type: graph.Resolved, From: hostile, To: "Blocker:lab/2026-11-22-session-01/b-1"},
		{Type: graph.Encountered, From: lab, To: "Blocker:lab/2026-11-22-session-01/b-2"},
		{Type: graph.Blocks, From: api, To: ui},
		{Type: graph.DependsOn, From: ui, To: api},
		{Type: graph.ChildOf, From: ui, To: api},
		{Type: graph.HasTask, From: feature, To: api},
		{Type: graph.HasTask, From: feature, To: ui},
		{Type: graph.Decided, From: "Agent:analyst", To: hostile},
		{Type: graph.Approved, From: "Agent:architect", To: hostile},
		{Type: graph.Approved, From: "Agent:critic", To: hostile},
		{Type: graph.Rejected, From: "Agent:security", To: hostile},
		{Type: graph.Invoked, From: lab, To: "Agent:analyst"},
		{Type: graph.Invoked, From: lab, To: "Agent:implementer"},
		{Type: graph.Invoked, From: prev, To: "Agent:architect"},
		{Type: graph.HasUpdate, From: app, To: "Update:app/2026-11-22-session-01/u-1"},
	} {
		if !hasEdge(g, e.Type, e.From, e.To) {
			t.Errorf("missing edge %v", e)
		}
	}
	want := map[string]int{"Session": 3, "Update": 5, "Decision": 2, "Blocker": 2, "Task": 2, "Feature": 1, "Agent": 5}
	if got := countLabels(g); !maps.Equal(got, want) {
		t.Errorf("nodes per label = %v, want %v (README.md in features/ is no feature; links to missing tasks make none)", got, want)
	}
	// Links to notes that do not exist (a task without a note, the ghost
	// related task, a link in code) give no edge.
	if n := countTypes(g)[graph.HasTask]; n != 2 {
		t.Errorf("HAS_TASK edges = %d, want 2", n)
	}
	if n := countTypes(g)[graph.RelatedTo]; n != 0 {
		t.Errorf("RELATED_TO edges = %d, want 0 (ghost has no note)", n)
	}
	f := node(t, g, feature).Props
	if f["name"] != `OAuth login — "PKCE" edition` || f["status"] != "active" || f["startedAt"] != "2026-11-20T00:00:00Z" || f["lastActive"] != "2026-11-22T10:00:00Z" {
		t.Errorf("feature = %v", f)
	}
	d := node(t, g, noteOnly).Props
	if d["title"] != "Line one\nline two" || d["choice"] != "Export to Neo4j." || d["rationale"] != "Graphs answer \"what blocked what\".\nA second line." ||
		d["timestamp"] != "2026-11-21T11:00:00Z" || d["sessionId"] != "2026-11-21-session-01" || d["entryId"] != "d-7" {
		t.Errorf("decision read from its note alone = %q", d)
	}
	// The session entry is the decision's state; its note fills in nothing
	// the entry has.
	if h := node(t, g, hostile).Props; h["title"] != `Robert'); MATCH (n) DETACH DELETE n; // "x" \\ \n` || h["choice"] != `C:\temp\new ' quoted` {
		t.Errorf("hostile decision = %q", h)
	}
	s := node(t, g, lab).Props
	if s["activeAgent"] != "implementer" || s["objective"] != "Quotes ' \" and back\\slashes\\, a tab\there,\na newline, NUL \x00, bell \a, ünïcødé, 🚀, RTL \u202eevil\u202c, line sep \u2028 end" {
		t.Errorf("session = %q", s)
	}
	if tk := node(t, g, api).Props; tk["score"] != 0.75 || tk["priority"] != 3 || tk["name"] != `Login API: the "hard" part \ 100%` {
		t.Errorf("task = %v", tk)
	}
	// Updates in their natural order: u-1, u-2, u-10.
	var ups []string
	for _, n := range g.Nodes() {
		if n.Label == graph.LabelUpdate && n.Key[0] == "lab" && n.Key[1] == "2026-11-22-session-01" {
			ups = append(ups, n.Key[2])
		}
	}
	if !slices.Equal(ups, []string{"u-1", "u-2", "u-10"}) {
		t.Errorf("updates in order %v", ups)
	}
	checkSchema(t, g)
}

// --project: one project's nodes only.
func TestBuildOneProject(t *testing.T) {
	svc := openVault(t, fixtureVault)
	g, err := graph.Build(svc, []string{"app"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := countLabels(g), map[string]int{"Session": 1, "Update": 1}; !maps.Equal(got, want) {
		t.Errorf("nodes = %v, want %v", got, want)
	}
	if _, err := graph.Build(svc, []string{"nope"}); err == nil {
		t.Error("an unknown project was exported")
	}
}

// A feature note a person broke (its YAML does not parse) stops the export
// with the note and line named.
func TestBuildNamesABrokenNote(t *testing.T) {
	svc := openVault(t, fixtureVault)
	if err := os.WriteFile(filepath.Join(svc.V.Root, "lab", "features", "broken.md"), []byte("---\nname: [unclosed\n---\n# Broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := graph.Build(svc, []string{"lab"})
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != errs.StateParseError || !strings.HasPrefix(e.Message, "lab/features/broken.md:3: ") {
		t.Fatalf("err = %v, want STATE_PARSE_ERROR naming lab/features/broken.md:3", err)
	}
}

// The updates compaction moved out of a session's note (to its update log)
// are exported with the rest, in the current state and once archived.
func TestBuildReadsCompactedUpdates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.MkdirAll(filepath.Join(dir, ".sessionvault"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".sessionvault", "config.yaml"), []byte("version: 1\ncompact_updates: 4\ncompact_invocations: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := history.Init(dir); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	svc := session.New(v)
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	svc.Now = func() time.Time { now = now.Add(time.Minute); return now }
	if _, err := svc.InitProject("demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Start(session.StartOptions{Project: "demo", Objective: "Many updates", Branch: "b", Commit: "c"}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := svc.Update(session.UpdateOptions{Project: "demo", Message: "step " + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	// Five agents, one after the other: the older invocations
	// move to the archive note too, and every agent stays in the graph.
	if _, err := workflow.New(svc).AgentStart(workflow.AgentStartOptions{Project: "demo", Agent: "analyst"}); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"architect", "planner", "implementer", "critic"} {
		if _, err := workflow.New(svc).AgentHandoff(workflow.HandoffOptions{Project: "demo", To: to, Reason: "next"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.Update(session.UpdateOptions{Project: "demo", Message: "step k"}); err != nil {
		t.Fatal(err)
	}
	if st, err := svc.Current("demo"); err != nil || len(st.Workflow.AgentHistory) >= 5 {
		t.Fatalf("the note holds %d invocations (%v): the invocations were not compacted", len(st.Workflow.AgentHistory), err)
	}
	invoked := 0
	for _, e := range build(t, svc).Edges() {
		if e.Type == graph.Invoked && e.From == "Session:demo/2026-11-23-session-01" {
			invoked++
		}
	}
	if invoked != 5 {
		t.Errorf("the session INVOKED %d agents, want 5 (compacted invocations too)", invoked)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(session.ArchivePath("demo", "2026-11-23-session-01")))); err != nil {
		t.Fatalf("no archive note: compaction did not run: %v", err)
	}
	if n := countLabels(build(t, svc))["Update"]; n != 11 {
		t.Errorf("active session: %d updates exported, want 11", n)
	}
	if _, err := svc.End("demo", "done", nil); err != nil {
		t.Fatal(err)
	}
	g := build(t, svc)
	if n := countLabels(g)["Update"]; n != 11 {
		t.Errorf("archived session: %d updates exported, want 11", n)
	}
	if st := node(t, g, "Session:demo/2026-11-23-session-01").Props["status"]; st != "complete" {
		t.Errorf("archived status = %v", st)
	}
}

// The JSON export: every edge's ends are nodes, the ids are unique, and a
// second export of the same vault is the same bytes.
func TestJSONIsStableAndClosed(t *testing.T) {
	for _, src := range []string{exampleVault, fixtureVault} {
		svc := openVault(t, src)
		var a, b bytes.Buffer
		if err := graph.WriteJSON(&a, build(t, svc)); err != nil {
			t.Fatal(err)
		}
		if err := graph.WriteJSON(&b, build(t, svc)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("%s: two JSON exports differ", src)
		}
		var doc graph.Document
		if err := json.Unmarshal(a.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, n := range doc.Nodes {
			if ids[n.ID] {
				t.Errorf("%s: id %s twice", src, n.ID)
			}
			ids[n.ID] = true
		}
		for _, e := range doc.Edges {
			if !ids[e.From] || !ids[e.To] {
				t.Errorf("%s: edge %v has an end that is no node", src, e)
			}
		}
		if len(doc.Nodes) == 0 || len(doc.Edges) == 0 {
			t.Errorf("%s: empty export", src)
		}
	}
}

// checkSchema: every node carries its label's key and only the properties
// its label's schema names, with the value types the Cypher writer knows.
func checkSchema(t *testing.T, g *graph.Graph) {
	t.Helper()
	for _, n := range g.Nodes() {
		s, ok := graph.SchemaOf(n.Label)
		if !ok || len(n.Key) != len(s.Key) {
			t.Errorf("%s: label or key does not fit the schema", n.ID())
			continue
		}
		for k, v := range n.Props {
			if !slices.Contains(s.Props, k) {
				t.Errorf("%s: property %s is not in the schema", n.ID(), k)
			}
			switch v.(type) {
			case string, int, float64, bool, []string:
			default:
				t.Errorf("%s: property %s is a %T", n.ID(), k, v)
			}
		}
	}
	for _, e := range g.Edges() {
		if !slices.Contains(graph.RelationshipTypes(), e.Type) {
			t.Errorf("edge type %s is not listed", e.Type)
		}
	}
}
