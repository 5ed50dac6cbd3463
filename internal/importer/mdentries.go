package importer

import (
	"strings"
)

// This file turns Markdown blocks into one-line entries (work log,
// outcomes, next steps) and objectives.

// blockGroup is a block with the more-indented list items that follow it.
type blockGroup struct {
	head     mdBlock
	children []mdBlock
}

// groupBlocks folds nested list items into their top-level item.
func groupBlocks(blocks []mdBlock) []blockGroup {
	var out []blockGroup
	for _, b := range blocks {
		n := len(out)
		if b.kind == blockItem && n > 0 && out[n-1].head.kind == blockItem && b.indent > out[n-1].head.indent {
			out[n-1].children = append(out[n-1].children, b)
			continue
		}
		out = append(out, blockGroup{head: b})
	}
	return out
}

// entry renders a group as one line: "text; child; child". A label
// paragraph "**Key**: value" becomes "Key: value"; an unchecked item in a
// work log keeps its "[ ] " marker.
func (g blockGroup) entry(keepOpenMark bool) string {
	text := g.head.text
	if _, val, ok := boldLabel(text); ok {
		if strings.TrimSpace(val) == "" && len(g.children) == 0 {
			return ""
		}
		text = strings.TrimSuffix(clean(text[:len(text)-len(val)]), ":") + ": " + val
	}
	if strings.HasSuffix(strings.TrimSpace(text), ":") && g.head.kind == blockPara {
		return ""
	}
	parts := []string{text}
	for _, c := range g.children {
		parts = append(parts, c.text)
	}
	out := strings.Join(parts, "; ")
	if keepOpenMark && g.head.check == ' ' {
		out = "[ ] " + out
	}
	return out
}

// tableEntries renders the body rows of a non-checklist table, one line
// each: "a: b" for two columns, else the non-empty cells joined with " — ".
func tableEntries(rows [][]string) []string {
	if len(rows) < 2 {
		return nil
	}
	var out []string
	for _, row := range rows[1:] {
		var cells []string
		for _, c := range row {
			if c = clean(c); c != "" {
				cells = append(cells, c)
			}
		}
		switch {
		case len(cells) == 0:
		case len(row) == 2 && len(cells) == 2:
			out = append(out, cells[0]+": "+cells[1])
		default:
			out = append(out, strings.Join(cells, " — "))
		}
	}
	return out
}

// prefixWithTitle prefixes the first entry of a subsection of a work,
// outcome or next-steps section with the subsection's title, so that
// "### Phase 1: Context Gathering" + "- Fetched PR metadata" becomes
// "Phase 1: Context Gathering: Fetched PR metadata". A subsection without
// entries contributes its title alone.
func prefixWithTitle(sec *mdSection, kind secKind, entries []string) []string {
	if sec.parent == nil || kindOf(sec.parent) != kind || sec.title == "" {
		return entries
	}
	if len(entries) == 0 {
		return []string{sec.title}
	}
	out := append([]string{sec.title + ": " + entries[0]}, entries[1:]...)
	return out
}

// objectiveText renders an objective section: its first paragraph, plus the
// top-level items when the paragraph introduces a list ("…:"), or the items
// alone, joined with "; ".
func objectiveText(groups []blockGroup) string {
	var parts []string
	for i, g := range groups {
		if g.head.kind == blockPara {
			if key, val, ok := boldLabel(g.head.text); ok && metaKeys[key].field != fieldObjective {
				continue
			} else if ok {
				parts = append(parts, val)
			} else {
				parts = append(parts, g.head.text)
			}
			if !strings.HasSuffix(strings.TrimSpace(g.head.text), ":") {
				break
			}
			continue
		}
		if g.head.kind == blockItem {
			parts = append(parts, clean(g.head.text))
			if i+1 < len(groups) && groups[i+1].head.kind != blockItem {
				break
			}
		}
	}
	return line(strings.Join(parts, "; "))
}
