// Package policy is the tool policy of the Claude Code hooks as one table:
// for every tool call (Claude Code's own tools by their current names,
// sessionvault's MCP tools, Serena's tools, other MCP servers' tools, Bash
// command lines parsed with a shell parser) what it may do — read, use
// sessionvault's own way out, edit files, run code or write, or reach a
// person's command — and, from that, what each mode and state allows.
package policy

import (
	"encoding/json"
	"strings"
)

// Class is what a tool call may do, in increasing order of what it needs.
type Class int

// The classes.
const (
	Read   Class = iota // only reads: allowed in every mode, before the start gate, and with a broken state
	Way                 // sessionvault's own tools and commands: the way out of a deny; allowed unless the state is broken
	Edit                // writes files through an editing tool (Edit, Write, Serena's editing tools)
	Write               // runs code or writes through a shell (a writing Bash command, Serena's shell)
	Person              // reaches a command only a person may run: never allowed to the agent
)

func (c Class) String() string {
	return [...]string{"read", "sessionvault", "edit", "write", "person"}[c]
}

// Mode names as in protocol.Mode (kept as strings here: policy depends on
// nothing of ours).
const (
	ModeAnalysis = "analysis"
	ModePlanning = "planning"
	ModeCoding   = "coding"
	ModeDisabled = "disabled"
)

// Allows reports whether a mode allows a class once the start gate passed:
// analysis and planning are for reading and planning (Read, Way); coding
// allows editing and running; disabled (the person's escape hatch) allows
// all but Person. An unknown mode allows what coding does.
func Allows(mode string, c Class) bool {
	switch {
	case c == Person:
		return false
	case c <= Way:
		return true
	case mode == ModeAnalysis || mode == ModePlanning:
		return false
	}
	return true
}

// Call is a classified tool call.
type Call struct {
	Tool  string
	Class Class
	// Why says in a few words what makes it Edit, Write or Person.
	Why string
	// Paths are the files it edits or may write, as given in its input
	// (relative ones are relative to the hook input's cwd); "?" when a
	// shell names one only at run time.
	Paths []string
	// Memories is true for Serena's memory-writing tools, which write in
	// <project>/.serena/memories (linked to the vault by `init --serena`).
	Memories bool
}

// claudeRead are Claude Code's tools that neither edit files nor run code.
var claudeRead = map[string]bool{
	"Read": true, "Glob": true, "Grep": true, "LS": true, "WebFetch": true, "WebSearch": true, "TodoWrite": true,
	"TodoRead": true, "NotebookRead": true, "BashOutput": true, "KillShell": true, "KillBash": true,
	"AskUserQuestion": true, "ExitPlanMode": true, "EnterPlanMode": true, "Task": true, "Agent": true, "Skill": true,
	"ReadMcpResourceTool": true, "ListMcpResourcesTool": true, "SlashCommand": true,
}

// claudeEdit are Claude Code's file-editing tools and the input field naming
// the file.
var claudeEdit = map[string]string{"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path", "NotebookEdit": "notebook_path"}

// serenaRead are Serena's tools that only read (or only change Serena's own
// session, like activating a project).
var serenaRead = map[string]bool{
	"read_file": true, "list_dir": true, "find_file": true, "search_for_pattern": true, "get_symbols_overview": true,
	"find_symbol": true, "find_referencing_symbols": true, "find_referencing_code_snippets": true,
	"read_memory": true, "list_memories": true, "activate_project": true, "get_current_config": true,
	"check_onboarding_performed": true, "onboarding": true, "initial_instructions": true,
	"prepare_for_new_conversation": true, "summarize_changes": true, "switch_modes": true,
	"think_about_collected_information": true, "think_about_task_adherence": true, "think_about_whether_you_are_done": true,
}

// serenaMemoryWrite are Serena's tools that write its memories.
var serenaMemoryWrite = map[string]bool{"write_memory": true, "edit_memory": true, "delete_memory": true}

// Config is what a vault's configuration may change in the table.
type Config struct {
	// UnknownMCP is the class of a tool of an MCP server the table does not
	// know ("read", "edit" or "write"; default "write": fail closed).
	UnknownMCP string
	// ExtraRead are tool names (exact) the vault declares read-only.
	ExtraRead []string
}

// Classify places one tool call (Claude Code hooks: tool_name and
// tool_input) in the table.
func Classify(tool string, input json.RawMessage, cfg Config) Call {
	call := Call{Tool: tool, Class: Write, Why: "`" + tool + "` is not a tool the policy knows"}
	field := func(name string) string {
		var m map[string]any
		_ = json.Unmarshal(input, &m) // input that is not an object has no field: ""
		s, _ := m[name].(string)
		return s
	}
	for _, t := range cfg.ExtraRead {
		if t == tool {
			call.Class, call.Why = Read, ""
			return call
		}
	}
	switch {
	case claudeRead[tool]:
		call.Class, call.Why = Read, ""
	case claudeEdit[tool] != "":
		call.Class, call.Why = Edit, "`"+tool+"` edits files"
		if p := field(claudeEdit[tool]); p != "" {
			call.Paths = []string{p}
		}
	case tool == "Bash" && strings.TrimSpace(field("command")) == "":
		// No command line (a question about Bash in general): writing;
		// reading command lines pass on their own.
		call.Why = "a Bash command that writes or runs code"
	case tool == "Bash":
		b := ClassifyBash(field("command"))
		call.Class, call.Why, call.Paths = b.Class, b.Why, b.Paths
	case strings.HasPrefix(tool, "mcp__sessionvault__"):
		call.Class, call.Why = Way, ""
	case strings.HasPrefix(tool, "mcp__serena__"):
		name := strings.TrimPrefix(tool, "mcp__serena__")
		switch {
		case serenaRead[name]:
			call.Class, call.Why = Read, ""
		case name == "execute_shell_command":
			b := ClassifyBash(field("command"))
			call.Class, call.Why, call.Paths = b.Class, b.Why, b.Paths
			if call.Class == Way {
				call.Class = Write // (its cwd is Serena's, not the hook's)
			}
		case serenaMemoryWrite[name]:
			call.Class, call.Why, call.Memories = Edit, "Serena's `"+name+"` writes a memory", true
		default: // replace_symbol_body, insert_*_symbol, rename_symbol, create_text_file, replace_regex, ...
			call.Class, call.Why = Edit, "Serena's `"+name+"` edits files"
			if p := field("relative_path"); p != "" {
				call.Paths = []string{p}
			}
		}
	case strings.HasPrefix(tool, "mcp__"):
		switch cfg.UnknownMCP {
		case "read":
			call.Class, call.Why = Read, ""
		case "edit":
			call.Class, call.Why = Edit, "`"+tool+"` is an MCP tool the vault treats as editing (unknown_mcp_tools: edit)"
		default:
			call.Why = "`" + tool + "` is a tool of an MCP server the policy does not know (unknown_mcp_tools in the vault's config can declare them read)"
		}
	}
	return call
}
