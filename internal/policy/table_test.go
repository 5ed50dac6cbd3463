package policy

import "testing"

// With no settings in the vault's config, Claude Code's reading tools are
// always allowed, analysis mode blocks the editing tools and Bash, planning
// mode blocks the editing tools but not Bash, and coding and disabled block
// nothing.
func TestDefaultTable(t *testing.T) {
	tab := DefaultTable()
	for _, tool := range []string{"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "NotebookRead", "BashOutput"} {
		if !tab.IsReadOnly(tool) {
			t.Errorf("%s is not read-only", tool)
		}
	}
	for _, tool := range []string{"Edit", "Write", "Bash", "MultiEdit", "mcp__serena__find_symbol", ""} {
		if tab.IsReadOnly(tool) {
			t.Errorf("%q is read-only", tool)
		}
	}
	blocked := map[string]map[string]bool{
		ModeAnalysis: {"Edit": true, "MultiEdit": true, "Write": true, "NotebookEdit": true, "Bash": true},
		ModePlanning: {"Edit": true, "MultiEdit": true, "Write": true, "NotebookEdit": true},
		ModeCoding:   {},
		ModeDisabled: {},
		"unknown":    {},
	}
	for mode, tools := range blocked {
		for _, tool := range []string{"Edit", "MultiEdit", "Write", "NotebookEdit", "Bash", "Read", "mcp__github__create_issue"} {
			if got := tab.BlockedBy(mode, tool); got != tools[tool] {
				t.Errorf("mode %q blocks %s: %v, want %v", mode, tool, got, tools[tool])
			}
		}
	}
}

// A vault's read_only_tools replaces the default list (an empty one keeps
// it), and mode_blocks replaces the list of each mode it names, whatever the
// case and surrounding spaces of the mode's name; a key that names no mode
// changes nothing. The defaults of later tables are not changed by it.
func TestTableFromConfig(t *testing.T) {
	tab := TableFrom([]string{"mcp__github__get_issue"}, map[string][]string{
		"  Coding ": {"mcp__github__create_issue"},
		"ANALYSIS":  {"Edit"},
		"review":    {"Read"},
	})
	if !tab.IsReadOnly("mcp__github__get_issue") || tab.IsReadOnly("Read") {
		t.Errorf("read_only_tools not replaced: %v", tab.ReadOnly)
	}
	if !tab.BlockedBy(ModeCoding, "mcp__github__create_issue") {
		t.Error("coding does not block the tool its config names")
	}
	if !tab.BlockedBy(ModeAnalysis, "Edit") || tab.BlockedBy(ModeAnalysis, "Bash") {
		t.Errorf("analysis list not replaced: %v", tab.Blocks[ModeAnalysis])
	}
	if !tab.BlockedBy(ModePlanning, "Write") {
		t.Error("planning lost its default list")
	}
	if tab.BlockedBy("review", "Read") {
		t.Error("a key that names no mode blocks tools")
	}

	keep := TableFrom(nil, nil)
	if !keep.IsReadOnly("Read") || !keep.BlockedBy(ModeAnalysis, "Bash") || keep.BlockedBy(ModeCoding, "mcp__github__create_issue") {
		t.Errorf("an empty config changed the defaults (or an earlier table leaked into them): %+v", keep)
	}
}

// Tool names in the table are whole-name regular expressions: a pattern
// matches the whole tool name only, a plain name only that name, and a
// pattern that is not a valid expression is still compared as a name.
func TestTablePatterns(t *testing.T) {
	tab := Table{
		ReadOnly: []string{"mcp__serena__(find|get)_.*", "Edit", "mcp__x__(", "Write|NotebookEdit"},
		Blocks:   map[string][]string{ModeCoding: {"mcp__github__.*"}},
	}
	for tool, want := range map[string]bool{
		"mcp__serena__find_symbol":          true,
		"mcp__serena__get_symbols_overview": true,
		"mcp__serena__replace_symbol_body":  false,
		"xmcp__serena__find_symbol":         false, // anchored at the start
		"Edit":                              true,
		"MultiEdit":                         false, // a plain name is not a substring
		"EditX":                             false,
		"mcp__x__(":                         true, // invalid expression: compared as a name
		"mcp__x__":                          false,
		"Write":                             true,
		"NotebookEdit":                      true,
		"WriteNotebookEdit":                 false, // the alternation is grouped
	} {
		if got := tab.IsReadOnly(tool); got != want {
			t.Errorf("IsReadOnly(%q) = %v, want %v", tool, got, want)
		}
	}
	if !tab.BlockedBy(ModeCoding, "mcp__github__create_pull_request") || tab.BlockedBy(ModeCoding, "mcp__gitlab__x") || tab.BlockedBy(ModePlanning, "mcp__github__x") {
		t.Error("mode blocks by pattern wrong")
	}
}
