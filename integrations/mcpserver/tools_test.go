package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everyTool is every tool the server offers, sorted.
var everyTool = []string{"advance_phase", "check_recovery", "create_checkpoint", "create_feature", "create_task", "detect_conflicts", "end_agent",
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
