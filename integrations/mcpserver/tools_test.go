package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everyTool is every tool the server offers, sorted.
var everyTool = []string{"advance_phase", "check_recovery", "claim_task", "create_checkpoint", "create_feature", "create_task", "detect_conflicts", "end_agent",
	"get_blocked_reason", "get_command_history", "get_feature", "get_task_graph", "get_unified_context", "handoff_agent", "heartbeat", "list_features",
	"record_blocker", "record_command", "record_decision", "record_evidence", "record_verdict", "resolve_blocker", "resolve_conflict", "rollback_to",
	"save_context_snapshot", "session_end", "session_recover", "session_start", "session_status", "session_update", "set_feature_status", "set_mode",
	"set_workflow_phase", "start_agent", "switch_feature", "switch_task", "sync_hot_context", "update_feature_plan", "validate_gate"}

// undescribed are the arguments known to have no description
// (orchestration.go: RollbackIn.SessionID, ResolveConflictIn.Notes and
// .ResolvedBy carry no jsonschema tag). Take one out when it gets one.
var undescribed = map[string]bool{"rollback_to.session_id": true, "resolve_conflict.notes": true, "resolve_conflict.resolved_by": true}

// readOnlyTools are the tools that change nothing, and say so.
var readOnlyTools = []string{"get_blocked_reason", "get_command_history", "get_feature", "get_task_graph", "get_unified_context", "list_features",
	"session_status", "validate_gate"}

// tools/list names every tool once, each with a description, an object
// input schema whose arguments are described (but for the known gaps in
// undescribed), and an output schema; the
// reading tools carry readOnlyHint and no other tool does; every tool a
// remedy can name (remedy.go) is one the server lists.
func TestToolsListNamesEveryTool(t *testing.T) {
	e := newEnv(t)
	res, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if strings.TrimSpace(tl.Description) == "" {
			t.Errorf("%s has no description", tl.Name)
		}
		in, _ := tl.InputSchema.(map[string]any)
		if in == nil || in["type"] != "object" {
			t.Errorf("%s: input schema %v is not an object schema", tl.Name, tl.InputSchema)
		}
		props, _ := in["properties"].(map[string]any)
		for name, p := range props {
			if d, _ := p.(map[string]any)["description"].(string); d == "" && !undescribed[tl.Name+"."+name] {
				t.Errorf("%s: argument %s has no description", tl.Name, name)
			}
		}
		if out, _ := tl.OutputSchema.(map[string]any); out == nil || out["type"] != "object" {
			t.Errorf("%s: output schema %v is not an object schema", tl.Name, tl.OutputSchema)
		}
		ro := tl.Annotations != nil && tl.Annotations.ReadOnlyHint
		if ro != slices.Contains(readOnlyTools, tl.Name) {
			t.Errorf("%s: readOnlyHint = %v", tl.Name, ro)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, everyTool) {
		t.Fatalf("tools/list = %v\nwant %v", names, everyTool)
	}
	for cmd, tc := range toolFor {
		if !slices.Contains(names, tc.tool) {
			t.Errorf("the remedy for `sessionvault %s` names %s, which tools/list does not list", cmd, tc.tool)
		}
	}
	// Required arguments are what an agent must pass: the ones without
	// omitempty, e.g. session_start's objective.
	for _, tl := range res.Tools {
		if tl.Name != "session_start" {
			continue
		}
		req, _ := tl.InputSchema.(map[string]any)["required"].([]any)
		if len(req) != 1 || req[0] != "objective" {
			t.Errorf("session_start requires %v, want [objective]", req)
		}
	}
}

// resources/list names the four canonical-note resources, each with a
// description and its MIME type.
func TestResourcesList(t *testing.T) {
	e := newEnv(t)
	res, err := e.cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Resource{}
	for _, r := range res.Resources {
		got[r.URI] = r
	}
	for uri, mime := range map[string]string{"session://state": "text/markdown", "session://checklist": "application/json",
		"session://history": "text/markdown", "session://violations": "text/markdown"} {
		r := got[uri]
		if r == nil {
			t.Errorf("resources/list lacks %s", uri)
			continue
		}
		if r.MIMEType != mime || r.Description == "" || r.Name == "" {
			t.Errorf("%s = %+v", uri, r)
		}
	}
	if len(got) != 4 {
		t.Errorf("resources/list = %d resources, want 4", len(got))
	}
}

// sessionTools are the tools of the default (session) toolset: what
// `sessionvault mcp` serves without --toolsets.
var sessionTools = []string{"check_recovery", "get_blocked_reason", "get_unified_context", "heartbeat", "record_blocker", "record_decision",
	"record_evidence", "resolve_blocker", "session_end", "session_recover", "session_start", "session_status", "session_update", "validate_gate"}

// served lists e's tools as a client sees them: their names, sorted, and
// the bytes of the tools/list result's tools as compact JSON (what a client
// hands its model before the first message).
func (e *testEnv) served() ([]string, int) {
	e.t.Helper()
	res, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	b, err := json.Marshal(res.Tools)
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names, len(b)
}

// The default server serves the session toolset in at most 12,000 bytes of
// tools/list; a toolset named adds its tools; all serves every tool in at
// most 40,000 bytes. A tool of a toolset not served is unknown to the
// client, and the resources are the same whatever the toolsets.
func TestToolsetsChooseTheToolsServed(t *testing.T) {
	def := newEnvWith(t, vaultSpec{defaultToolsets: true})
	names, size := def.served()
	if !slices.Equal(names, sessionTools) {
		t.Errorf("the default tools = %v\nwant %v", names, sessionTools)
	}
	t.Logf("tools/list: %d tools, %d bytes by default", len(names), size)
	if size > 12000 {
		t.Errorf("tools/list by default is %d bytes, more than 12,000", size)
	}
	if _, err := def.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_task", Arguments: map[string]any{"name": "x"}}); err == nil || !strings.Contains(err.Error(), `unknown tool "create_task"`) {
		t.Errorf("create_task on the default server: %v", err)
	}
	res, err := def.cs.ListResources(context.Background(), nil)
	if err != nil || len(res.Resources) != 4 {
		t.Errorf("resources/list by default: %v, %v", res, err)
	}

	tasks := newEnvWith(t, vaultSpec{toolsets: []string{"tasks", "admin"}})
	names, _ = tasks.served()
	want := append(slices.Clone(sessionTools), "advance_phase", "claim_task", "create_checkpoint", "create_task", "detect_conflicts", "get_task_graph",
		"resolve_conflict", "rollback_to", "save_context_snapshot", "set_mode", "switch_task", "sync_hot_context")
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("--toolsets tasks,admin serves %v\nwant %v", names, want)
	}
	tasks.ok("create_task", map[string]any{"name": "Parser"})

	all := newEnvWith(t, vaultSpec{toolsets: []string{"all"}})
	names, size = all.served()
	if !slices.Equal(names, everyTool) {
		t.Errorf("--toolsets all serves %v", names)
	}
	t.Logf("tools/list: %d tools, %d bytes with every toolset", len(names), size)
	if size > 40000 {
		t.Errorf("tools/list with every toolset is %d bytes, more than 40,000", size)
	}
}

// Toolsets (what `sessionvault mcp --help` lists) puts every tool in one
// toolset, the default one first, and lists what the server serves.
func TestToolsetsListEveryToolOnce(t *testing.T) {
	sets := Toolsets()
	if len(sets) == 0 || sets[0].Name != SessionToolset || !sets[0].Default {
		t.Fatalf("Toolsets()[0] = %+v, want the default session toolset", sets)
	}
	if !slices.Equal(sets[0].Tools, sessionTools) {
		t.Errorf("the session toolset = %v\nwant %v", sets[0].Tools, sessionTools)
	}
	var union []string
	for _, ts := range sets {
		if ts.About == "" || len(ts.Tools) == 0 {
			t.Errorf("toolset %+v has no description or no tools", ts)
		}
		if ts.Default != (ts.Name == SessionToolset) {
			t.Errorf("toolset %s: Default = %v", ts.Name, ts.Default)
		}
		union = append(union, ts.Tools...)
	}
	slices.Sort(union)
	if !slices.Equal(union, everyTool) {
		t.Errorf("the toolsets' tools = %v\nwant each of %v once", union, everyTool)
	}
}

// An unknown toolset is an error naming it and the known ones; blanks and
// repeats are dropped.
func TestCheckToolsets(t *testing.T) {
	got, err := CheckToolsets([]string{" tasks", "", "features", "tasks"})
	if err != nil || !slices.Equal(got, []string{"tasks", "features"}) {
		t.Errorf("CheckToolsets = %v, %v", got, err)
	}
	if _, err := CheckToolsets(SplitToolsets("tasks,task")); err == nil || !strings.Contains(err.Error(), `"task" is not a toolset`) ||
		!strings.Contains(err.Error(), "session, tasks, features, workflow, admin, all") {
		t.Errorf("an unknown toolset: %v", err)
	}
	if _, err := New(nil, Options{Toolsets: []string{"everything"}}); err == nil || !strings.Contains(err.Error(), `"everything"`) {
		t.Errorf("New with an unknown toolset: %v", err)
	}
}
