package mcpserver

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// toolCallRe finds a tool call named in a text an agent reads:
// `tool {"argument": value}` or `tool`.
var toolCallRe = regexp.MustCompile("`([a-z_]+)( \\{[^`]*\\})?`")

// follow calls the first call of tool that text names, with its arguments
// as written (an agent pasting the advice), and returns the result.
func (e *testEnv) follow(text, tool string) toolResult {
	e.t.Helper()
	for _, m := range toolCallRe.FindAllStringSubmatch(text, -1) {
		if m[1] != tool {
			continue
		}
		args := map[string]any{}
		if m[2] != "" {
			if err := json.Unmarshal([]byte(strings.TrimSpace(m[2])), &args); err != nil {
				e.t.Fatalf("%q: the arguments are not JSON: %v", m[0], err)
			}
		}
		return e.call(tool, args)
	}
	e.t.Fatalf("no call of %s in:\n%s", tool, text)
	return toolResult{}
}

// cliAdvice finds advice an MCP client cannot act on: a CLI flag of a
// session operation, or a quoted `sessionvault VERB` a tool does.
var cliAdvice = regexp.MustCompile("(^|[\\s(])--(objective|force|progress|type|tag|impact|severity|file|sha|run|session|continue|op-id|message|title|choice|rationale|summary|next|prompt|artifact|phase|status|to|reason|pending|confidence)\\b|`sessionvault (start|update|decide|block|resolve|end|status|recover|heartbeat|evidence|gate|phase|blocked-reason|agent|verdict|workflow|feature|history|checkpoint|conflicts)\\b")

// noCLI fails the test when text, meant for an MCP client, gives CLI advice.
func noCLI(t *testing.T, what, text string) {
	t.Helper()
	if m := cliAdvice.FindString(text); m != "" {
		t.Errorf("%s gives CLI advice (%q):\n%s", what, m, text)
	}
}

// prop returns the front-matter property key of a note's text.
func prop(text, key string) string {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `: ?(.*)$`).FindStringSubmatch(text)
	if m == nil {
		return "<none>"
	}
	return strings.Trim(m[1], `'"`)
}

// section returns the body of a note's "## title" section.
func section(text, title string) string {
	_, after, ok := strings.Cut(text, "\n## "+title+"\n")
	if !ok {
		return "<none>"
	}
	body, _, _ := strings.Cut(after, "\n## ")
	return strings.TrimSpace(body)
}

// list returns a JSON array of a structured result.
func list(v any) []any { l, _ := v.([]any); return l }

// obj returns a JSON object of a structured result.
func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
