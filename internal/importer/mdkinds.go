package importer

import (
	"regexp"
	"strings"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// This file classifies Markdown sections by their titles.

// secKind says what a Markdown section holds, judged from its title.
type secKind int

const (
	secNone      secKind = iota
	secMeta              // "Session Info", handoff "Status": metadata lines
	secGit               // "Git State": branch and commits only
	secObjective         // "Objective", "Goal", "Task"
	secChecklist         // "Protocol Compliance", "Session End", …
	secWork              // "Work Log", "Actions Taken", …
	secDecisions         // "Decisions", "Decisions Made", …
	secOutcome           // "Outcomes", "Results", "Summary", …
	secNext              // "Next Steps", "Notes for Next Session", …
)

// sectionRules classify a section by its normalised title (see normTitle).
// The first matching rule wins.
var sectionRules = []struct {
	kind secKind
	re   func() *regexp.Regexp
}{
	{secNext, lazyregexp.New(`^(recommended )?(next steps?|recommendations|next actions?|next session( .*)?|notes for (the )?next session|context for (the )?next session|follow ?ups?( actions| items| tasks| work)?|remaining (work|items|tasks)|todo|to do|open items|handoff( notes)?|future work|pending (items|work|actions))$`)},
	{secDecisions, lazyregexp.New(`^([a-z]+ )?decisions?( made| log| records?| taken| summary)?$|^decision \d+\b`)},
	{secObjective, lazyregexp.New(`^(session )?(objectives?|goals?|task|task summary|purpose|mission)$`)},
	{secMeta, lazyregexp.New(`^session (info|information|metadata|details|context|overview)$|^(info|information|metadata|details)$|^(current )?status$|^session$`)},
	{secGit, lazyregexp.New(`^(git (state|status)|branch verification|starting state)$`)},
	{secChecklist, lazyregexp.New(`protocol|checklist|compliance|session (start|end)|verification on resume|acceptance criteria|exit criteria|completion criteria|before closing`)},
	{secOutcome, lazyregexp.New(`^(session |final |key |executive |investigation |verification |findings )?(outcomes?|results?|summary|deliverables|delivery summary|conclusions?|verdict|status|state|accomplishments|impact|findings)$`)},
	{secWork, lazyregexp.New(`^(session )?(work log|work completed|work performed|work done|work summary|actions taken|actions|changes made|changes|progress|workflow progress|activities|timeline|implementation( summary| details| notes)?|tasks( completed)?|session log|work|execution( log)?|steps taken|what was done|completed work|work items|(session |this session )?work tracking|this session work|progress tracking|commits( this session| made)?|files (modified|changed|created)( in final pr diff)?|artifacts( created| modified| produced)?)$`)},
}

var (
	// reDecisionHeading() matches a heading naming one decision:
	// "Decision: Standardize on Pattern 2", "Decision 3 - Use Go".
	reDecisionHeading = lazyregexp.New(`(?i)^decision\s*\d*\s*[:\-–—]\s*\S`)
	reTitleNoise      = lazyregexp.New(`[^\p{L}\p{N} /&?-]+`)
	reTitlePrefix     = lazyregexp.New(`^((phase|step|part|stage|task) ?[\d.]+[a-z]?|\d+(\.\d+)*)\s*[:.)-]?\s*`)
	reTitleSuffix     = lazyregexp.New(`\s*(\(.*\)|[-:]?\s*\b(complete|completed|done|pending|in progress|skipped|required|blocking|mandatory)\b)\s*$`)
)

// normTitle lower-cases a heading and strips numbering, emoji, status
// suffixes and parenthesised notes: "Phase 2: Work Log ✅ COMPLETE" → "work log".
func normTitle(title string) string {
	t := strings.ToLower(clean(truncate(title, 200)))
	t = reTitleNoise().ReplaceAllString(t, " ")
	t = strings.Join(strings.Fields(t), " ")
	t = reTitlePrefix().ReplaceAllString(t, "")
	for i := 0; i < 3; i++ { // "… (done) ✅ COMPLETE": strip up to three suffixes
		u := strings.TrimSpace(reTitleSuffix().ReplaceAllString(t, ""))
		if u == t || u == "" {
			break
		}
		t = u
	}
	return strings.TrimSpace(t)
}

// rePhaseHeading matches a numbered step heading ("Phase 2: Analysis").
var rePhaseHeading = lazyregexp.New(`(?i)^(phase|step|task)\s*\d`)

// kindOf classifies a section by its title. Unclassified sections inherit
// the kind of their parent, except that a top-level "Phase N: …" heading
// is a work-log step.
func kindOf(s *mdSection) secKind {
	if s == nil || s.level == 0 {
		return secNone
	}
	if !s.kindSet {
		s.kind, s.kindSet = classify(s), true
	}
	return s.kind
}

func classify(s *mdSection) secKind {
	if reDecisionHeading().MatchString(s.title) {
		return secDecisions
	}
	t := normTitle(s.title)
	for _, r := range sectionRules {
		if r.re().MatchString(t) {
			return r.kind
		}
	}
	parent := kindOf(s.parent)
	if parent == secNone && rePhaseHeading().MatchString(s.title) {
		return secWork
	}
	return parent
}

// checklistPhase names the checklist a section belongs to: PhaseStart or
// PhaseEnd when the section or an ancestor is a session start/end section,
// else the section's own title.
func checklistPhase(sec *mdSection) string {
	for _, p := range sec.ancestors() {
		t := normTitle(p.title)
		switch {
		case strings.Contains(t, "session start") || strings.Contains(t, "start checklist") || strings.HasPrefix(t, "session initiali"):
			return PhaseStart
		case strings.Contains(t, "session end") || strings.Contains(t, "end checklist") || strings.Contains(t, "before closing") || strings.Contains(t, "session close"):
			return PhaseEnd
		}
	}
	return sec.title
}
