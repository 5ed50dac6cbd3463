package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Toolsets group the tools: an agent's client reads every served tool's
// name, description and schemas before its first message, so the server
// serves the session toolset (what a working session needs) and only the
// other toolsets it is asked for.
const (
	// SessionToolset is the default toolset, always served: the session's
	// lifecycle, its status, evidence and gates, the blocked reason, the
	// resume context and crash recovery.
	SessionToolset = "session"
	// TasksToolset: task notes, checkpoints, rollbacks and conflicts.
	TasksToolset = "tasks"
	// FeaturesToolset: feature plans and the command history.
	FeaturesToolset = "features"
	// WorkflowToolset: the orchestrator workflow (agents, handoffs,
	// verdicts, the workflow phase).
	WorkflowToolset = "workflow"
	// AdminToolset: what changes the rules a session works under (the mode,
	// the session phase).
	AdminToolset = "admin"
	// AllToolsets, as a toolset name, switches every toolset on.
	AllToolsets = "all"
)

// toolsetAbout says what each toolset is for, in the order they are listed.
var toolsetAbout = []struct{ name, about string }{
	{SessionToolset, "the session's lifecycle, status, evidence, gates, recovery"},
	{TasksToolset, "task notes, task switching, checkpoints, rollbacks, conflicts"},
	{FeaturesToolset, "feature plans and the command history"},
	{WorkflowToolset, "the orchestrator workflow (agents, handoffs, verdicts, phase)"},
	{AdminToolset, "the mode and the session phase"},
}

// Toolset is one toolset and the tools it serves.
type Toolset struct {
	// Name is the toolset's name, as --toolsets and mcp.toolsets take it.
	Name string
	// About says what the toolset is for.
	About string
	// Default is true for the toolset that is always served.
	Default bool
	// Tools are the toolset's tools, sorted.
	Tools []string
}

// Toolsets returns every toolset with its tools, the default one first,
// from the tool list the server serves from.
func Toolsets() []Toolset {
	defs := (&Server{}).tools()
	var out []Toolset
	for _, ts := range toolsetAbout {
		set := Toolset{Name: ts.name, About: ts.about, Default: ts.name == SessionToolset}
		for _, d := range defs {
			if d.set == ts.name {
				set.Tools = append(set.Tools, d.name)
			}
		}
		slices.Sort(set.Tools)
		out = append(out, set)
	}
	return out
}

// ToolsetNames are the names CheckToolsets accepts: every toolset's, then
// "all".
func ToolsetNames() []string {
	var names []string
	for _, ts := range toolsetAbout {
		names = append(names, ts.name)
	}
	return append(names, AllToolsets)
}

// CheckToolsets checks toolset names (the --toolsets value split at commas,
// or the mcp.toolsets setting) and returns them without blanks and repeats.
// An unknown name is an error naming the known ones.
func CheckToolsets(names []string) ([]string, error) {
	known := ToolsetNames()
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case n == "" || slices.Contains(out, n):
		case slices.Contains(known, n):
			out = append(out, n)
		default:
			return nil, fmt.Errorf("%q is not a toolset; the toolsets are %s (%s is always served, %s switches every one on)",
				n, strings.Join(known, ", "), SessionToolset, AllToolsets)
		}
	}
	return out, nil
}

// SplitToolsets splits a --toolsets value ("tasks,features") into names.
func SplitToolsets(value string) []string {
	if strings.TrimSpace(value) == "" {
		return nil
	}
	return strings.Split(value, ",")
}

// serving returns the set of toolsets that names switch on: the session
// toolset, and every one with "all".
func serving(names []string) map[string]bool {
	on := map[string]bool{SessionToolset: true}
	for _, n := range names {
		if n == AllToolsets {
			for _, ts := range toolsetAbout {
				on[ts.name] = true
			}
		}
		on[n] = true
	}
	return on
}

// toolDef is one tool the server can serve: its name, its toolset and how
// it is added to a server.
type toolDef struct {
	name, set string
	add       func(*mcp.Server)
}

// tool is the toolDef of t in toolset set, handled by h. Its output schema
// is outline's: the result's fields, not what nested objects hold.
func tool[In, Out any](set string, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) toolDef {
	return toolDef{name: t.Name, set: set, add: func(srv *mcp.Server) {
		tt := *t
		if s, err := jsonschema.For[Out](nil); err == nil {
			tt.OutputSchema = outline(s)
		}
		mcp.AddTool(srv, &tt, h)
	}}
}

// largeTool is tool for a tool whose result can be large (the task graph of
// a thousand tasks is 130 KB of JSON): listed the same (the input schema of
// In, the outline of Out), its arguments validated the same (errors
// "validating \"arguments\": ..."), and its result the same to a client —
// the result as structured content and, as its text, the same JSON. The
// difference is the cost: mcp.AddTool marshals a result, decodes it again
// to validate it against the outline and marshals it once more, which for a
// 130 KB result costs more than the tool's work. h returns the result's JSON
// itself — Out's, as json.Marshal encodes it (Out is a struct, whose JSON
// always has the outline's shape, and a test checks its results against the
// outline) — which it may keep and return again while the result does not
// change (it must not modify it then): the tool encodes nothing of its own.
// A handler's error becomes a tool error, as with tool. It panics (as mcp.AddTool does) when In's schema cannot be
// made.
func largeTool[In, Out any](set string, t *mcp.Tool, h func(context.Context, *mcp.CallToolRequest, In) ([]byte, error)) toolDef {
	return toolDef{name: t.Name, set: set, add: func(srv *mcp.Server) {
		tt := *t
		in, err := jsonschema.For[In](nil)
		if err != nil {
			panic(fmt.Errorf("tool %s: input schema: %w", t.Name, err))
		}
		resolved, err := in.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		if err != nil {
			panic(fmt.Errorf("tool %s: input schema: %w", t.Name, err))
		}
		tt.InputSchema = in
		if s, err := jsonschema.For[Out](nil); err == nil {
			tt.OutputSchema = outline(s)
		}
		srv.AddTool(&tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args In
			if err := decodeArguments(req.Params.Arguments, resolved, &args); err != nil {
				return toolError(err), nil
			}
			data, err := h(ctx, req, args)
			if err != nil {
				if wire, ok := err.(*jsonrpc.Error); ok {
					return nil, wire
				}
				return toolError(err), nil
			}
			return &mcp.CallToolResult{StructuredContent: json.RawMessage(data), Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}, nil
		})
	}}
}

// decodeArguments decodes a tool call's arguments (a JSON object, or none)
// into args as mcp.AddTool does: the schema's defaults applied, then the
// object validated against it (an error "validating \"arguments\": ...",
// which codeSchemaErrors gives its stable code), then decoded.
func decodeArguments(raw json.RawMessage, schema *jsonschema.Resolved, args any) error {
	m := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err)
		}
	}
	if err := schema.ApplyDefaults(&m); err != nil {
		return fmt.Errorf("validating \"arguments\": applying schema defaults:\n%w", err)
	}
	if err := schema.Validate(&m); err != nil {
		return fmt.Errorf("validating \"arguments\": %w", err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("validating \"arguments\": %w", err)
	}
	if err := json.Unmarshal(data, args); err != nil {
		return fmt.Errorf("decoding the arguments: %w", err)
	}
	return nil
}

// toolError is the tool error result of err.
func toolError(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}

// outline is schema s cut to its top level: each property's type, and
// which are required. The full schema of a nested result (a workflow, a task
// graph, a feature's plan) and the descriptions of a result's fields are
// thousands of bytes a client reads before every conversation, for what the
// result shows itself. Results are validated against the outline, which
// accepts everything the full schema does.
func outline(s *jsonschema.Schema) *jsonschema.Schema {
	out := &jsonschema.Schema{Type: s.Type, Types: s.Types, Required: s.Required}
	if len(s.Properties) > 0 {
		out.Properties = map[string]*jsonschema.Schema{}
		for name, p := range s.Properties {
			out.Properties[name] = &jsonschema.Schema{Type: p.Type, Types: p.Types}
		}
	}
	return out
}
