package mcpserver

import (
	"encoding/json"
	"strings"

	"mvdan.cc/sh/v3/shell"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// toolFor is how a CLI command is reached over MCP: the tool that runs the
// same operation, and what its positional arguments are called. Commands
// without a tool (init, accept, mode set disabled, hooks install, ...) are a
// person's: their remedies stay CLI commands, runnable as written.
var toolFor = map[string]struct {
	tool       string
	positional []string
}{
	"start":             {"session_start", nil},
	"update":            {"session_update", []string{"message"}},
	"decide":            {"record_decision", nil},
	"block":             {"record_blocker", []string{"description"}},
	"resolve":           {"resolve_blocker", []string{"blocker_id"}},
	"end":               {"session_end", nil},
	"status":            {"session_status", nil},
	"recover":           {"session_recover", nil},
	"heartbeat":         {"heartbeat", nil},
	"evidence record":   {"record_evidence", []string{"item"}},
	"gate validate":     {"validate_gate", []string{"phase"}},
	"phase advance":     {"advance_phase", nil},
	"blocked-reason":    {"get_blocked_reason", nil},
	"mode set":          {"set_mode", []string{"mode"}},
	"recovery check":    {"check_recovery", nil},
	"task show":         {"get_unified_context", []string{"task_id"}},
	"task graph":        {"get_task_graph", nil},
	"conflicts detect":  {"detect_conflicts", nil},
	"conflicts resolve": {"resolve_conflict", []string{"conflict_id"}},
	"checkpoint create": {"create_checkpoint", []string{"label"}},
	"checkpoint sync":   {"sync_hot_context", nil},
	"agent start":       {"start_agent", []string{"agent"}},
	"agent end":         {"end_agent", nil},
	"agent handoff":     {"handoff_agent", nil},
	"verdict":           {"record_verdict", []string{"agent", "decision"}},
	"workflow phase":    {"set_workflow_phase", []string{"phase"}},

	// feature plans and the command history (features.go)
	"feature new":        {"create_feature", []string{"name"}},
	"feature list":       {"list_features", nil},
	"feature show":       {"get_feature", []string{"feature_id"}},
	"feature set-status": {"set_feature_status", []string{"feature_id", "status"}},
	"feature switch":     {"switch_feature", []string{"feature_id"}},
	"feature plan":       {"update_feature_plan", []string{"feature_id"}},
	"history show":       {"get_command_history", nil},
	"history record":     {"record_command", []string{"command"}},
}

// flagArgument maps a CLI flag to its MCP argument name where they differ.
var flagArgument = map[string]string{"next": "next", "alternative": "alternatives", "tag": "tags", "op-id": "op_id", "blocker": "blocker_id",
	"artifact": "artifacts", "recommendation": "recommendations", "condition": "conditions"}

// boolFlags are the CLI flags that take no value.
var boolFlags = map[string]bool{"force": true, "run": true, "dry-run": true, "pending": true}

// listArguments are the MCP arguments that are lists (a repeated CLI flag).
var listArguments = map[string]bool{"next": true, "alternatives": true, "tags": true,
	"artifacts": true, "recommendations": true, "conditions": true, "approved_by": true, "rejected_by": true}

// operationFlags are the flags of the session operations a message may name
// ("--progress 120 is out of range"); other text that looks like a flag (a
// protocol check's own command line, git rev-parse --abbrev-ref) is not ours.
var operationFlags = map[string]bool{"objective": true, "epic": true, "linear": true, "branch": true, "commit": true,
	"continue": true, "force": true, "progress": true, "type": true, "tag": true, "title": true, "choice": true,
	"rationale": true, "alternative": true, "impact": true, "category": true, "severity": true, "resolution": true,
	"summary": true, "next": true, "file": true, "sha": true, "run": true, "session": true, "tool": true,
	"command": true, "op-id": true, "at": true,
	// the orchestrator workflow's (workflow.go)
	"prompt": true, "artifact": true, "phase": true, "status": true, "recommendation": true, "to": true,
	"reason": true, "context": true, "pending": true, "confidence": true, "reasoning": true, "condition": true,
	"decided-by": true, "approved-by": true, "rejected-by": true}

// Compiled on first use (lazyregexp): every sessionvault process links
// this package, few rewrite a remedy.
var (
	quotedCommandRe = lazyregexp.New("(run )?`sessionvault ([^`]*)`")
	flagRe          = lazyregexp.New(`(^|[\s(])--([a-z][a-z-]*)\b`)
)

// toolCall returns the tool call that does what the CLI command line args
// (the words after "sessionvault") does, as `tool {"argument": value}`, or
// false when no tool does it or serves says its tool is not served.
func toolCall(args string, serves func(tool string) bool) (string, bool) {
	words, err := shell.Fields(args, func(string) string { return "" })
	if err != nil {
		return "", false
	}
	// The global flags: the MCP server already has its vault and project.
	for len(words) >= 2 && (words[0] == "--vault" || words[0] == "--project") {
		words = words[2:]
	}
	if len(words) == 0 {
		return "", false
	}
	verb, rest := words[0], words[1:]
	t, ok := toolFor[verb]
	if !ok && len(rest) > 0 {
		verb, rest = words[0]+" "+words[1], words[2:]
		t, ok = toolFor[verb]
	}
	if !ok || !serves(t.tool) || verb == "mode set" && len(rest) > 0 && rest[0] == "disabled" {
		return "", false
	}
	in := map[string]any{}
	var keys []string
	set := func(k string, v any) {
		if _, seen := in[k]; !seen {
			keys = append(keys, k)
		}
		if listArguments[k] {
			l, _ := in[k].([]string)
			in[k] = append(l, v.(string))
			return
		}
		in[k] = v
	}
	pos := 0
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		name, isFlag := strings.CutPrefix(w, "--")
		switch {
		case !isFlag && pos < len(t.positional):
			set(t.positional[pos], w)
			pos++
		case !isFlag && len(t.positional) == 0:
			return "", false // a word the command does not take: not a command of ours
		case !isFlag:
			// An unquoted argument of several words ("update Wrote it").
			last := t.positional[len(t.positional)-1]
			if prev, ok := in[last].(string); ok {
				in[last] = prev + " " + w
			} else {
				set(last, w)
			}
		case name == "dir":
			i++ // the code folder of an evidence check: the server's own folder over MCP
		case boolFlags[name]:
			set(argument(name), true)
		case i+1 < len(rest):
			set(argument(name), rest[i+1])
			i++
		}
	}
	if len(in) == 0 {
		return "`" + t.tool + "`", true
	}
	var b strings.Builder
	b.WriteString("`" + t.tool + " {")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(in[k])
		b.Write(kb)
		b.WriteString(": ")
		b.Write(vb)
	}
	b.WriteString("}`")
	return b.String(), true
}

func argument(flag string) string {
	if a, ok := flagArgument[flag]; ok {
		return a
	}
	return strings.ReplaceAll(flag, "-", "_")
}

// say rewrites text written for the CLI (errors, gate remedies, the hooks'
// reasons, the resume prompt) in the terms of this server: a quoted
// `sessionvault VERB …` becomes the tool call that does the same, and a
// --flag named in the text becomes the tool's argument. A command that no
// tool runs (a person's: init, accept, …) is kept, runnable as written from
// any folder, and so is a command whose tool is in a toolset this server
// does not serve.
func (s *Server) say(project, text string) string {
	text = quotedCommandRe().ReplaceAllStringFunc(text, func(q string) string {
		m := quotedCommandRe().FindStringSubmatch(q)
		if call, ok := toolCall(m[2], s.serves); ok {
			if m[1] != "" {
				return "call " + call
			}
			return call
		}
		if strings.HasPrefix(m[2], "--vault ") {
			return q
		}
		return s.svc.Runnable(project, q, "")
	})
	// Flags outside the quoted commands: "--progress 120 is out of range".
	var out strings.Builder
	for i, part := range strings.Split(text, "`") {
		if i > 0 {
			out.WriteString("`")
		}
		if i%2 == 1 {
			out.WriteString(part) // inside a quoted command or tool call
			continue
		}
		out.WriteString(flagRe().ReplaceAllStringFunc(part, func(m string) string {
			sm := flagRe().FindStringSubmatch(m)
			if !operationFlags[sm[2]] {
				return m
			}
			return sm[1] + "argument " + argument(sm[2])
		}))
	}
	return out.String()
}
