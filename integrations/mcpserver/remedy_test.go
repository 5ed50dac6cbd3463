package mcpserver

import (
	"slices"
	"testing"
)

// A CLI command line becomes the tool call that does the same operation;
// a person's command has no tool call.
func TestToolCall(t *testing.T) {
	for _, c := range []struct {
		args, want string
		ok         bool
	}{
		{"end", "`session_end`", true},
		{"--vault '/tmp/my vault' --project api resolve b-2", "`resolve_blocker {\"blocker_id\": \"b-2\"}`", true},
		{"evidence record c-3 --run --dir '/home/ana/code'", "`record_evidence {\"item\": \"c-3\", \"run\": true}`", true},
		{"evidence record c-1 --file 'my notes.md'", "`record_evidence {\"item\": \"c-1\", \"file\": \"my notes.md\"}`", true},
		{"start --force --objective ...", "`session_start {\"force\": true, \"objective\": \"...\"}`", true},
		{"end --next a --next b", "`session_end {\"next\": [\"a\",\"b\"]}`", true},
		{"update 'Wrote it' --tag x", "`session_update {\"message\": \"Wrote it\", \"tags\": [\"x\"]}`", true},
		{"mode set coding", "`set_mode {\"mode\": \"coding\"}`", true},
		{"agent start AGENT", "`start_agent {\"agent\": \"AGENT\"}`", true},
		{"agent end --summary ...", "`end_agent {\"summary\": \"...\"}`", true},
		{"agent handoff --to qa --reason ... --artifact a.go --pending", "`handoff_agent {\"to\": \"qa\", \"reason\": \"...\", \"artifacts\": [\"a.go\"], \"pending\": true}`", true},
		{"workflow phase planning --force", "`set_workflow_phase {\"phase\": \"planning\", \"force\": true}`", true},
		{"mode set disabled", "", false},
		{"accept", "", false},
		{"init --project web", "", false},
		{"update 'not closed", "", false},
		{"--vault /v --project api", "", false},
		// Words a command does not take (an agent's text in backquotes)
		// are not a command, and never crash the server.
		{"end now", "", false},
		{"heartbeat twice please", "", false},
		{"update Wrote it", "`session_update {\"message\": \"Wrote it\"}`", true},
	} {
		got, ok := toolCall(c.args, func(string) bool { return true })
		if got != c.want || ok != c.ok {
			t.Errorf("toolCall(%q) = %q, %v; want %q, %v", c.args, got, ok, c.want, c.ok)
		}
	}
}

// A command whose tool the server does not serve (its toolset is off) has no
// tool call: the remedy stays a CLI command, runnable as written.
func TestToolCallOnlyNamesServedTools(t *testing.T) {
	session := func(tool string) bool { return slices.Contains(sessionTools, tool) }
	for _, c := range []struct {
		args, want string
		ok         bool
	}{
		{"resolve b-2", "`resolve_blocker {\"blocker_id\": \"b-2\"}`", true},
		{"agent end --summary ...", "", false},
		{"mode set coding", "", false},
		{"phase advance", "", false},
	} {
		got, ok := toolCall(c.args, session)
		if got != c.want || ok != c.ok {
			t.Errorf("toolCall(%q) with the session toolset = %q, %v; want %q, %v", c.args, got, ok, c.want, c.ok)
		}
	}
}
