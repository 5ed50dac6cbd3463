package importer

import (
	"strings"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// decisionPart is the Decision field a labelled line fills.
type decisionPart int

const (
	partNone decisionPart = iota
	partChoice
	partRationale
	partAlternatives
	partTitle
)

// decisionLabel classifies a label ("**Rationale**:", "Alternatives
// considered:") found inside a decision. The checks run in order.
func decisionLabel(key string) decisionPart {
	switch {
	case containsAny(key, "rationale", "why", "reason", "justification", "because"):
		return partRationale
	case containsAny(key, "alternative", "option", "rejected", "considered"):
		return partAlternatives
	case containsAny(key, "decision", "choice", "chosen", "selected", "resolution",
		"recommendation", "approach", "design", "verdict", "outcome", "answer"):
		return partChoice
	case containsAny(key, "title", "topic", "question", "issue"):
		return partTitle
	}
	return partNone
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

var reDecisionPrefix = lazyregexp.New(`(?i)^(decision\s*\d*[a-z]?|d-?\d+)\s*[:.)\-–—]\s*`)

// parseDecisionSection reads the decisions of a "Decisions" section: one
// per sub-heading, plus the list items, table rows or paragraph of the
// section's own body.
func parseDecisionSection(sec *mdSection) []Decision {
	out := decisionsFromBlocks(sec.title, sec.blocks, len(sec.children) > 0)
	for _, c := range sec.children {
		var blocks []mdBlock
		for _, s := range c.subtree() {
			blocks = append(blocks, s.blocks...)
		}
		if d, ok := decisionFromBlock(c.title, blocks); ok {
			out = append(out, d)
		}
	}
	return out
}

// decisionsFromBlocks reads a section body:
//   - rows of a table with a Decision column;
//   - with "**Decision**:"/"**Rationale**:"-style labels, or a lead-in
//     paragraph followed by plain items ("Selected Option A because:"),
//     the whole body as one decision titled by the section;
//   - otherwise one decision per top-level list item and per labelled
//     paragraph ("**Error Handling**: fail open"), or the paragraphs as one
//     decision.
//
// With sub-headings (hasChildren), a body that would form one decision is
// an introduction and is ignored.
func decisionsFromBlocks(title string, blocks []mdBlock, hasChildren bool) []Decision {
	var out []Decision
	for _, b := range blocks {
		if b.kind == blockTable {
			out = append(out, decisionsFromTable(b.rows)...)
		}
	}
	groups := groupBlocks(blocks)
	items, boldItems, paras, labels := 0, 0, 0, 0
	for _, g := range groups {
		switch g.head.kind {
		case blockItem:
			items++
			if reBoldLead().MatchString(strings.TrimSpace(g.head.text)) {
				boldItems++
			}
		case blockPara:
			if _, val, ok := boldLabel(g.head.text); ok && strings.TrimSpace(val) != "" {
				labels++
			} else if !ok {
				paras++
			}
		}
	}
	single := hasLabels(groups) || (paras > 0 && (items == 0 || boldItems < items) && labels == 0)
	if single {
		if len(out) == 0 && !hasChildren {
			if d, ok := decisionFromBlock(title, blocks); ok {
				out = append(out, d)
			}
		}
		return out
	}
	for _, g := range groups {
		var d Decision
		ok := false
		switch g.head.kind {
		case blockItem:
			d, ok = decisionFromItem(g)
		case blockPara:
			if _, val, isLabel := boldLabel(g.head.text); isLabel && strings.TrimSpace(val) != "" {
				d = Decision{Title: labelText(g.head.text, val)}
				d.set(partChoice, val)
				ok = d.finish()
			}
		}
		if ok {
			out = append(out, d)
		}
	}
	return out
}

func hasLabels(groups []blockGroup) bool {
	for _, g := range groups {
		if key, _, ok := boldLabel(g.head.text); ok && g.head.kind == blockPara && decisionLabel(key) != partNone {
			return true
		}
	}
	return false
}

// decisionsFromTable reads "| Decision | Rationale | Alternatives |" rows.
func decisionsFromTable(rows [][]string) []Decision {
	if len(rows) < 2 {
		return nil
	}
	roles := make([]decisionPart, len(rows[0]))
	choiceCol := -1
	for i, h := range rows[0] {
		roles[i] = decisionLabel(strings.ToLower(clean(h)))
		if roles[i] == partChoice && choiceCol < 0 {
			choiceCol = i
		}
	}
	if choiceCol < 0 {
		return nil
	}
	var out []Decision
	for _, row := range rows[1:] {
		var d Decision
		for i, c := range row {
			if i >= len(roles) {
				break
			}
			d.set(roles[i], c)
		}
		if d.finish() {
			out = append(out, d)
		}
	}
	return out
}

// set fills one field from raw text.
func (d *Decision) set(p decisionPart, raw string) {
	v := line(raw)
	if v == "" || isPlaceholder(v) {
		return
	}
	switch p {
	case partChoice:
		if d.Choice == "" {
			d.Choice = v
		} else {
			d.set(partRationale, v)
		}
	case partRationale:
		if len(d.Rationale) <= MaxLineLen { // longer text is cut by finish anyway
			d.Rationale = joinNonEmpty(d.Rationale, v)
		}
	case partAlternatives:
		d.Alternatives = append(d.Alternatives, splitAlternatives(v)...)
	case partTitle:
		if d.Title == "" {
			d.Title = v
		}
	}
}

// finish fills Title from Choice (or the reverse) and reports whether the
// decision says anything.
func (d *Decision) finish() bool {
	d.Title = strings.TrimSpace(reDecisionPrefix().ReplaceAllString(d.Title, ""))
	if d.Choice == "" && d.Title == "" {
		return false
	}
	if d.Title == "" {
		d.Title = shortTitle(d.Choice)
	}
	if d.Choice == "" {
		d.Choice = d.Title
	}
	d.Rationale = truncate(d.Rationale, MaxLineLen)
	return true
}

// joinNonEmpty joins two texts with "; " (or a space after a full stop).
func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	case strings.HasSuffix(a, ".") || strings.HasSuffix(a, "!") || strings.HasSuffix(a, "?"):
		return a + " " + b
	}
	return a + "; " + b
}

// splitAlternatives splits "A; B" or "(1) A, (2) B" into separate options.
func splitAlternatives(v string) []string {
	var out []string
	for _, p := range strings.Split(v, "; ") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

var reBoldLead = lazyregexp.New(`^\*\*(.+?)\*\*\s*[:\-–—]?\s*(.*)$`)

// decisionFromItem reads a list item: "**Title**: explanation" gives a
// decision whose title and choice are the bold text and whose rationale is
// the explanation; "Key: value" gives title Key and choice value; plain
// text is the choice. Nested items labelled "Rationale:"/"Alternatives:"
// fill those fields; other nested items extend the rationale.
func decisionFromItem(g blockGroup) (Decision, bool) {
	var d Decision
	text := strings.TrimSpace(g.head.text)
	if m := reBoldLead().FindStringSubmatch(text); m != nil {
		d.Title = clean(strings.TrimSuffix(strings.TrimSpace(m[1]), ":"))
		d.Choice = d.Title
		d.set(partRationale, m[2])
	} else if key, val, ok := plainLabel(text); ok && len(strings.Fields(key)) <= 5 {
		d.Title = clean(text[:len(text)-len(val)])
		d.Title = strings.TrimSuffix(d.Title, ":")
		d.set(partChoice, val)
	} else {
		d.set(partChoice, text)
	}
	for _, c := range g.children {
		key, val, ok := boldLabel(c.text)
		if !ok {
			key, val, ok = plainLabel(c.text)
		}
		if p := decisionLabel(key); ok && p != partNone && p != partTitle {
			d.set(p, val)
			continue
		}
		d.set(partRationale, c.text)
	}
	return d, d.finish()
}

// decisionFromBlock reads a decision written as a sub-section or a whole
// section: labelled paragraphs ("**Decision**:", "**Rationale**:",
// "**Options**:") fill the fields, and items after an empty label belong
// to it. Without a Decision label, the first paragraph (or first item) is
// the choice and later unlabelled content the rationale.
func decisionFromBlock(title string, blocks []mdBlock) (Decision, bool) {
	d := Decision{Title: clean(title)}
	if isPlaceholder(d.Title) || isDecisionsHeading(d.Title) {
		d.Title = "" // a generic heading: title the decision by its choice
	}
	cur := partNone
	var loose []string
	for _, b := range blocks {
		switch b.kind {
		case blockPara:
			key, val, ok := boldLabel(b.text)
			if !ok {
				cur = partNone
				loose = append(loose, b.text)
				continue
			}
			cur = decisionLabel(key)
			if cur == partNone {
				if strings.TrimSpace(val) != "" {
					loose = append(loose, labelText(b.text, val)+": "+val)
				}
				continue
			}
			d.set(cur, val)
		case blockItem:
			if cur != partNone && cur != partTitle {
				if cur == partAlternatives {
					d.set(partAlternatives, reLeadingNum().ReplaceAllString(b.text, ""))
				} else if b.indent == 0 || cur == partRationale {
					d.set(cur, b.text)
				}
				continue
			}
			loose = append(loose, b.text)
		case blockTable:
			if ds := decisionsFromTable(b.rows); len(ds) > 0 && d.Choice == "" {
				d.Choice, d.Rationale = ds[0].Choice, joinNonEmpty(d.Rationale, ds[0].Rationale)
			}
		}
	}
	for i, t := range loose {
		if i == 0 && d.Choice == "" {
			d.set(partChoice, t)
			continue
		}
		d.set(partRationale, t)
	}
	if d.Choice == "" && d.Rationale == "" && len(d.Alternatives) == 0 {
		return d, false
	}
	return d, d.finish()
}

// isDecisionsHeading reports whether a heading is a generic
// "Decisions"/"Key Decisions"/"Design Decision" section name.
func isDecisionsHeading(title string) bool {
	return reGenericDecisions().MatchString(normTitle(title))
}

var reGenericDecisions = lazyregexp.New(`^(key |design |technical |important |major |main |session )?decisions?( made| log| records?| taken| summary)?$`)

// labelText returns the cleaned label of "**Key**: value" (without the
// colon), given the value part.
func labelText(text, val string) string {
	return strings.TrimSuffix(strings.TrimSpace(clean(text[:len(text)-len(val)])), ":")
}
