package session

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/shellquote"
)

// GateReport is a session's checklists as a gate sees them now: what is
// unmet, with what to do.
type GateReport struct {
	// Must are the unmet MUST items (never satisfied, or satisfied once and
	// stale now): the gate does not pass while there is one.
	Must []Missing `json:"must,omitempty"`
	// Should are the unmet SHOULD items: reported, never blocking.
	Should []Missing `json:"should,omitempty"`
	// deps are the files outside the state whose change may change the
	// report (a file recorded as evidence, the code repository's HEAD and
	// branch), with their stat identity taken before they were read.
	deps map[string]string
	// uncacheable: the report depends on something it could not name
	// (git could not say where HEAD is kept).
	uncacheable bool
}

// Report evaluates the checklists of st for phases (both when none is
// given) as the engine sees them now, and returns what is unmet. st's items
// are updated: an item counts as done by the evidence its seal records (a
// tick without any is Unverified), re-checked — a recorded file must still
// have its SHA-256, a recorded commit must still be on the branch, a section
// must still hold something (with d, the current-state note, at hand) —
// else it is open again with Stale saying why; an open item is done by
// what the engine observes itself (the state handed to the agent, a
// matching tool call, a commit made since the session started, a run check
// that passes now in the code repository).
func (s *Service) Report(st *State, proto *protocol.Protocol, d *Doc, phases ...protocol.Phase) GateReport {
	return s.report(st, proto, d, false, phases...)
}

// report is Report; mustOnly skips the items that block nothing (what a
// PreToolUse decision needs: no git run for a SHOULD).
func (s *Service) report(st *State, proto *protocol.Protocol, d *Doc, mustOnly bool, phases ...protocol.Phase) GateReport {
	if len(phases) == 0 {
		phases = []protocol.Phase{protocol.Start, protocol.End}
	}
	if sl, err := s.loadSeal(st.Project); err == nil && sl.Session == st.Session {
		applySeal(st, sl, proto)
	}
	e := evaluation{s: s, st: st, d: d, rep: GateReport{deps: map[string]string{}}}
	for _, ph := range phases {
		items, reqs := st.StartChecklist, proto.Start
		if ph == protocol.End {
			items, reqs = st.EndChecklist, proto.End
		}
		for i := range items {
			it := &items[i]
			req, ok := requirementIn(reqs, it.ID)
			if !ok || mustOnly && !protocol.Blocking(it.Level) {
				continue
			}
			if it.Done && it.Evidence != "" && req.Check.Verifiable() {
				if why := e.recheck(req, *it); why != "" {
					it.Done, it.Stale = false, why
				}
			}
			if !it.Done && it.Stale == "" {
				if ev := e.observe(ph, req, *it); ev != "" {
					it.Done, it.Evidence, it.Unverified = true, ev, false
				}
			}
			if it.Done {
				continue
			}
			m := Missing{ID: it.ID, Step: it.Step, Do: e.do(ph, req, *it)}
			switch it.Level {
			case "MUST", "MUST NOT":
				e.rep.Must = append(e.rep.Must, m)
			case "SHOULD", "SHOULD NOT":
				e.rep.Should = append(e.rep.Should, m)
			}
		}
	}
	return e.rep
}

// evaluation is one Report in progress: the code repository is looked up
// once, when an item needs it.
type evaluation struct {
	s       *Service
	st      *State
	d       *Doc
	rep     GateReport
	repo    string
	looked  bool
	headDep bool
}

func (e *evaluation) codeRepo() string {
	if !e.looked {
		e.repo, e.looked = e.s.CodeRepo(e.st.Project), true
	}
	return e.repo
}

// dep records the stat identity of path (before it is read).
func (e *evaluation) dep(path string) {
	id, err := guard.StatIdentity(path)
	if err != nil {
		id = "none"
	}
	e.rep.deps[path] = id
}

// dependOnHead records the code repository's HEAD files as dependencies.
func (e *evaluation) dependOnHead(repo string) {
	if e.headDep {
		return
	}
	e.headDep = true
	files := headFiles(repo)
	if len(files) == 0 {
		e.rep.uncacheable = true // what it depends on is unknown: read it again next time
	}
	for _, f := range files {
		e.dep(f)
	}
}

// recheck re-verifies the evidence of a done item and returns why it no
// longer holds, or "".
func (e *evaluation) recheck(req protocol.Requirement, it CheckItem) string {
	ev := it.Evidence
	switch req.Check.Kind {
	case protocol.KindSection:
		if e.d != nil && !sectionFilled(e.d, req.Check.Arg) {
			return "the " + req.Check.Arg + " section is empty now"
		}
	case protocol.KindBlockers:
		if open, known := e.openBlockers(); known && len(open) > 0 {
			return "blocker " + open[0].ID + " is open"
		}
	case protocol.KindFile:
		name, sum, ok := parseFileEvidence(ev)
		if !ok {
			return "" // observed (the note handed over), not a file's hash
		}
		path := e.s.evidencePath(e.st.Project, name, e.codeRepo())
		if e.s.inVault(path) {
			// A note of the vault changes with every operation: having read
			// it is the evidence.
			if _, err := os.Stat(path); err != nil {
				return name + " no longer exists"
			}
			return ""
		}
		e.dep(path)
		data, err := os.ReadFile(path)
		if err != nil {
			return name + " no longer exists"
		}
		h := sha256.Sum256(data)
		if !strings.HasPrefix(hex.EncodeToString(h[:]), sum) {
			return name + " changed since it was recorded"
		}
	case protocol.KindCommit:
		f := strings.Fields(ev)
		if len(f) < 2 || f[0] != "commit" {
			return "" // observed (the starting commit, a commit since the start)
		}
		repo := e.codeRepo()
		if repo == "" {
			return ""
		}
		e.dependOnHead(repo)
		if on, err := onBranch(repo, f[1]); err == nil && !on {
			return "commit " + shortSHA(f[1]) + " is no longer on the branch"
		}
	}
	return ""
}

// observe returns the evidence the engine sees itself for an open item, or "".
func (e *evaluation) observe(ph protocol.Phase, req protocol.Requirement, it CheckItem) string {
	switch c := req.Check; {
	case handedOver(c) != "":
		if obs, ok := e.s.readSeen(e.st.Project, e.st.Session, handedOver(c), e.s.NowUTC()); ok {
			return e.s.observed(obs.Detail, obs.At)
		}
	case c.Kind == protocol.KindBlockers:
		if open, known := e.openBlockers(); known && len(open) == 0 {
			return e.s.observed("no open blocker", e.s.NowUTC())
		}
	case c.Kind == protocol.KindTool:
		if tool, at, ok := e.s.toolSeen(e.st.Project, e.st.Session, it.ID); ok {
			return "tool " + tool + " seen " + e.s.observed("PostToolUse", at)[len(observedPrefix):]
		}
	case c.Kind == protocol.KindCommit && ph == protocol.End:
		repo := e.codeRepo()
		if repo == "" {
			return ""
		}
		e.dependOnHead(repo)
		if sha := e.commitSinceStart(repo); sha != "" {
			return e.s.observed("commit "+shortSHA(sha)+" since the start", e.s.NowUTC())
		}
	case c.Kind == protocol.KindRun:
		// A check that passed once in this session counts (it is written on
		// the item's line by the next operation); it is not run again.
		if obs, ok := e.s.readSeen(e.st.Project, e.st.Session, obsRunPassed+it.ID, e.s.NowUTC()); ok {
			return e.s.observed(obs.Detail, obs.At)
		}
		repo := e.codeRepo()
		if repo == "" {
			return ""
		}
		e.dependOnHead(repo)
		if _, _, err := runCheckFor(repo, c.Arg, observeRunTimeout); err == nil {
			now := e.s.NowUTC()
			detail := "`" + c.Arg + "` exit 0"
			_ = e.s.addObservation(e.st.Project, observation{Session: e.st.Session, What: obsRunPassed + it.ID, At: now, Detail: detail}) // without it, the check runs again at the next gate
			return e.s.observed(detail, now)
		}
	}
	return ""
}

// commitSinceStart returns HEAD of the code repository at repo when a
// commit was made there since the session started: one committed at or
// after the start, on HEAD's history since the starting commit (the whole
// history when the session names no commit the repository has: it started
// elsewhere). A commit that only arrived (a fast-forward, a pull, a branch
// checked out) is older than the session and does not count. "" otherwise.
func (e *evaluation) commitSinceStart(repo string) string {
	if e.st.Started == nil {
		return ""
	}
	head, err := git(repo, "rev-parse", "--verify", "--quiet", "HEAD")
	if err != nil || head == "" {
		return ""
	}
	rng := "HEAD"
	if e.st.Commit != "" {
		if start, err := resolveCommit(repo, e.st.Commit); err == nil {
			if start == head {
				return ""
			}
			rng = start + "..HEAD"
		}
	}
	since := "--since=@" + strconv.FormatInt(e.st.Started.Unix(), 10)
	if out, err := git(repo, "rev-list", "-1", since, rng); err == nil && out != "" {
		return head
	}
	return ""
}

// do says what to do about an unmet item, quoting `sessionvault ...`
// commands as the violations log keeps them (Runnable makes them runnable).
func (e *evaluation) do(ph protocol.Phase, req protocol.Requirement, it CheckItem) string {
	c := req.Check
	fix := strings.TrimSpace(req.Fix)
	then := func(cmd string) string {
		if fix != "" {
			return fix + "; then run `sessionvault evidence record " + it.ID + cmd + "`"
		}
		return "run `sessionvault evidence record " + it.ID + cmd + "`"
	}
	if it.Stale != "" {
		switch c.Kind {
		case protocol.KindFile:
			return "stale: " + it.Stale + "; read it again, then run `sessionvault evidence record " + it.ID + " --file " + shellquote.Quote(FirstNonEmpty(fileOf(it.Evidence), c.Arg, "PATH")) + "`"
		case protocol.KindCommit:
			return "stale: " + it.Stale + "; record the commit it is now: `sessionvault evidence record " + it.ID + " --sha HEAD`"
		case protocol.KindSection:
			return "stale: " + it.Stale + "; " + FirstNonEmpty(fix, "fill it again")
		}
		return "stale: " + it.Stale
	}
	switch c.Kind {
	case protocol.KindFile:
		if isStateNote(c) {
			return "read the current state: run `sessionvault status` (Claude Code's SessionStart hook hands it over by itself)"
		}
		return "read " + FirstNonEmpty(c.Arg, "the file") + ", then run `sessionvault evidence record " + it.ID + " --file " + shellquote.Quote(FirstNonEmpty(c.Arg, "PATH")) + "`"
	case protocol.KindCommit:
		if ph == protocol.End {
			return FirstNonEmpty(fix, "commit the session's work in the code repository") + " (the engine sees a commit made since the session started; or run `sessionvault evidence record " + it.ID + " --sha HEAD`)"
		}
		return then(" --sha HEAD")
	case protocol.KindRun:
		where := ": no code repository was found (run sessionvault in it, or start the session there)"
		if repo := e.codeRepo(); repo != "" {
			where = " in " + repo
		}
		return "`" + c.Arg + "` does not pass" + where + ". " + then(" --run")
	case protocol.KindSection:
		if fix != "" {
			return fix + " (the " + c.Arg + " section)"
		}
		return "fill the " + c.Arg + " section, then run `sessionvault evidence record " + it.ID + "`"
	case protocol.KindTool:
		return "call a tool matching " + c.Arg
	case protocol.KindBlockers:
		open, _ := e.openBlockers()
		if len(open) == 0 {
			return "resolve every open blocker"
		}
		var ids []string
		for _, b := range open {
			ids = append(ids, b.ID)
		}
		return "resolve " + strings.Join(ids, ", ") + ": `sessionvault resolve " + open[0].ID + " --resolution \"...\"`"
	}
	return "a person ticks it in " + CurrentStateNote
}

// openBlockers returns the session's open blockers: from the note the
// evaluation has, else from st when it was read in full, else from the note
// read now; known is false when none of them can say.
func (e *evaluation) openBlockers() (open []Blocker, known bool) {
	d := e.d
	if d == nil && e.st.Blockers != nil {
		return e.st.OpenBlockers(), true
	}
	if d == nil {
		var err error
		if d, err = e.s.currentDoc(e.st.Project); err != nil {
			return nil, false
		}
	}
	var tmp State
	return openOf(readEntries(d, &tmp, SecBlockers, parseBlocker)), true
}

func openOf(bs []Blocker) []Blocker {
	st := State{Blockers: bs}
	return st.OpenBlockers()
}

// sectionFilled reports whether d's H2 section name holds a non-blank line.
func sectionFilled(d *Doc, name string) bool {
	sec, ok := d.Section(sectionTitle(d, name))
	if !ok {
		return false
	}
	_, _, has := d.contentBounds(sec)
	return has
}

// parseFileEvidence reads "file NAME sha256:HEX" (NAME may hold spaces).
func parseFileEvidence(ev string) (name, sum string, ok bool) {
	rest := strings.TrimPrefix(ev, "file ")
	i := strings.LastIndex(rest, " sha256:")
	if i < 0 {
		return "", "", false
	}
	if f := strings.Fields(rest[i+len(" sha256:"):]); len(f) > 0 {
		sum = f[0]
	}
	return rest[:i], sum, sum != "" && rest[:i] != ""
}

// fileOf returns the file named by file evidence, or "".
func fileOf(ev string) string {
	name, _, _ := parseFileEvidence(ev)
	return name
}

// evidencePath resolves the file named in file evidence: absolute as it is;
// else in the code repository, the project folder, the vault (the first that
// exists; the code repository's when none does).
func (s *Service) evidencePath(project, name, repo string) string {
	p := filepath.FromSlash(name)
	if filepath.IsAbs(p) {
		return p
	}
	var tries []string
	if repo != "" {
		tries = append(tries, filepath.Join(repo, p))
	}
	tries = append(tries, filepath.Join(s.V.Root, project, p), filepath.Join(s.V.Root, p))
	for _, t := range tries {
		if _, err := os.Stat(t); err == nil {
			return t
		}
	}
	return tries[0]
}
