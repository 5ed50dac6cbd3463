package session

import (
	"crypto/hmac"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/integrity"
	"github.com/sessionvault/sessionvault/internal/protocol"
)

// Observed evidence: what the engine sees for itself, so that the usual
// path needs no `evidence record` — the current state handed to the agent
// (Claude Code's SessionStart, a Read of the note, `status`), the objective
// `start` was given, the entries the engine's own operations write, the
// starting commit, a commit made during the session, a check the engine can
// run. An observation is never taken from a note's text: it is kept in the
// vault's state folder, one signed line each, or written as the evidence of
// a checklist line by the engine's own operation (and so sealed).

// observation is one line of the observed file (integrity.ObservedFile):
// "<session>\t<what>\t<time>\t<detail>\t<mac>"; session "-" is one made
// while no session was active, which the next start takes.
type observation struct {
	Session string
	What    string // obsStateRead
	At      time.Time
	Detail  string // how it was seen, e.g. "SessionStart"
}

// observedMACPrefix starts what an observation's MAC covers, before its
// project and its line: a line copied into another project's file, or into
// another state file, does not check.
const observedMACPrefix = "sessionvault observed v1\t"

// What an observation saw: the project's current state, or its history
// (the latest entry), handed to the agent.
const (
	obsStateRead   = "state-read"
	obsHistoryRead = "history-read"
	// obsRunPassed + an item id: the item's run check passed in the code
	// repository at a gate (Report).
	obsRunPassed = "run-passed:"
)

// idleSession is the session of an observation made while none was active.
const idleSession = "-"

// stateReadMaxAge is how old an observation made before a session started
// may be for that session's start to take it.
const stateReadMaxAge = 12 * time.Hour

// ObserveStateRead records that the project's current state was handed to
// the agent (via says how: "SessionStart", "Read", "status"): it satisfies
// the start checklist's `file: session-current-state.md` item of the active
// session, or of the next one to start. Once per session; nothing when the
// state does not verify (the agent was handed nothing the engine trusts).
// It also ends a clash notice (see Service.AcknowledgeCurrent).
func (s *Service) ObserveStateRead(project, via string) error {
	return s.observeRead(project, obsStateRead, via)
}

// ObserveHistoryRead is ObserveStateRead for the project's history (its
// latest entry: SessionStart's resume prompt carries it, or a Read of the
// note): the `file: session-history.md` item.
func (s *Service) ObserveHistoryRead(project, via string) error {
	return s.observeRead(project, obsHistoryRead, via)
}

func (s *Service) observeRead(project, what, via string) error {
	// A vault in a format newer than this binary writes is read, never
	// written: `status` and the hooks show it and record nothing but the
	// acknowledgement of the state read, kept in per-machine state files
	// that no format concerns (else the clash notice never ends).
	newer := s.V.NewerFormat()
	if newer && what != obsStateRead {
		return nil
	}
	st, err := s.VerifiedCached(project)
	if err != nil {
		return nil
	}
	if what == obsStateRead {
		s.AcknowledgeCurrent(project, st) // the agent knows which session is current: no clash notice after this
	}
	if newer {
		return nil
	}
	sess := idleSession
	if st.Active() {
		sess = st.Session
		if proto, err := s.Protocol(project); err == nil && readDone(st, proto, what) {
			return nil // nothing left to satisfy (and the hooks' cache stays valid)
		}
	}
	for _, o := range s.observations(project) { // (no write on every Read)
		if o.Session == sess && o.What == what && (sess != idleSession || s.NowUTC().Sub(o.At) < time.Hour) {
			return nil
		}
	}
	if err := s.addObservation(project, observation{Session: sess, What: what, At: s.NowUTC(), Detail: via}); err != nil {
		return err
	}
	if sess != idleSession {
		// The hooks' facts were read before this observation: read them
		// again now, so that the next decision needs no reading (the lean
		// hook decides alone).
		_, _ = s.Guard(project) // a cache: without it, the next decision reads the state
	}
	return nil
}

// readDone reports whether every start item of st that a read of what
// (obsStateRead, obsHistoryRead) satisfies is done.
func readDone(st State, proto *protocol.Protocol, what string) bool {
	for _, it := range st.StartChecklist {
		if req, ok := requirementIn(proto.Start, it.ID); ok && handedOver(req.Check) == what && !it.Done {
			return false
		}
	}
	return true
}

func (o observation) line() string {
	return o.Session + "\t" + o.What + "\t" + o.At.UTC().Format(time.RFC3339) + "\t" + strings.ReplaceAll(o.Detail, "\t", " ")
}

func (s *Service) addObservation(project string, o observation) error {
	l := o.line()
	mac, err := s.lineMAC(observedMACPrefix + project + "\t" + l)
	if err != nil {
		return err
	}
	return s.AppendState(integrity.ObservedFile(project), l+"\t"+mac+"\n")
}

// observations returns the project's observations whose signature checks.
func (s *Service) observations(project string) []observation {
	data, err := s.V.ReadState(integrity.ObservedFile(project))
	if err != nil {
		return nil
	}
	var out []observation
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 5 {
			continue
		}
		if mac, err := s.lineMAC(observedMACPrefix + project + "\t" + strings.Join(f[:4], "\t")); err != nil || !hmac.Equal([]byte(mac), []byte(f[4])) {
			continue
		}
		at, err := time.Parse(time.RFC3339, f[2])
		if err != nil {
			continue
		}
		out = append(out, observation{Session: f[0], What: f[1], At: at, Detail: f[3]})
	}
	return out
}

// readSeen returns the observation that session's agent was handed what
// (obsStateRead, obsHistoryRead; for the idle session: one recent enough at
// now), or ok=false.
func (s *Service) readSeen(project, session, what string, now time.Time) (observation, bool) {
	for _, o := range s.observations(project) {
		if o.What != what || o.Session != session {
			continue
		}
		if session == idleSession && (now.Sub(o.At) > stateReadMaxAge || o.At.After(now.Add(time.Minute))) {
			continue
		}
		return o, true
	}
	return observation{}, false
}

// observedPrefix starts the evidence text of what the engine observed (as
// opposed to what `evidence record` verified on request).
const observedPrefix = "observed: "

// observed is the evidence text of an observation: what saw it and when
// (hours and minutes in the vault's time zone).
func (s *Service) observed(what string, at time.Time) string {
	loc, _ := s.V.Config.Location()
	if loc == nil {
		loc = time.Local
	}
	return observedPrefix + what + " " + at.In(loc).Format("15:04")
}

// isStateNote reports whether a `file:` rule names the current-state note.
func isStateNote(c protocol.Check) bool { return handedOver(c) == obsStateRead }

// handedOver returns what observation satisfies a `file:` rule naming a
// note the agent is handed (the current state, the history), or "".
func handedOver(c protocol.Check) string {
	if c.Kind != protocol.KindFile {
		return ""
	}
	switch filepath.Base(filepath.FromSlash(c.Arg)) {
	case CurrentStateNote:
		return obsStateRead
	case HistoryNote:
		return obsHistoryRead
	}
	return ""
}

// CodeRepo returns the code repository (its top folder) the project's
// session works in: the git work tree of s.CodeDir (the process's working
// folder when "") unless it is the vault's own, else the one the session's
// start recorded; "" when there is neither. Commit and run evidence is
// checked there, whatever folder a command was typed in.
func (s *Service) CodeRepo(project string) string {
	dir := s.CodeDir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if top := gitToplevel(dir); top != "" && !s.inVault(top) {
		return top
	}
	if data, err := s.V.ReadState(integrity.CodeRepoFile(project)); err == nil {
		if p := strings.TrimSpace(string(data)); p != "" {
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				return p
			}
		}
	}
	return ""
}

// inVault reports whether path (absolute) is the vault's folder or inside it.
func (s *Service) inVault(path string) bool {
	root, err := filepath.EvalSymlinks(s.V.Root)
	if err != nil {
		root = s.V.Root
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// startEvidence is what the engine observes for the start checklist of a
// session it starts with o in the code repository repo ("" = none): item id
// → evidence text. The objective it was given, the state handed to the
// agent before (SessionStart), the starting commit, and the protocol's run
// checks (run there, briefly).
func (s *Service) startEvidence(project string, proto *protocol.Protocol, o StartOptions, repo string, now time.Time) map[string]string {
	ev := map[string]string{}
	for i, r := range proto.Start {
		id := "c-" + itoa(i+1)
		switch c := r.Check; {
		case c.Kind == protocol.KindSection && strings.EqualFold(c.Arg, SecObjective) && strings.TrimSpace(o.Objective) != "":
			ev[id] = s.observed("start --objective", now)
		case handedOver(c) != "":
			if obs, ok := s.readSeen(project, idleSession, handedOver(c), now); ok {
				ev[id] = s.observed(obs.Detail, obs.At)
			}
		case c.Kind == protocol.KindCommit && o.Commit != "" && repo != "":
			if full, err := resolveCommit(repo, o.Commit); err == nil {
				ev[id] = s.observed("starting commit "+shortSHA(full), now)
			}
		case c.Kind == protocol.KindRun && repo != "":
			if _, _, err := runCheckFor(repo, c.Arg, observeRunTimeout); err == nil {
				ev[id] = s.observed("start, `"+c.Arg+"` exit 0", now)
			}
		}
	}
	return ev
}

// observeOp ticks, in d, the open items an engine operation op (its name
// and the entry it wrote, e.g. "update u-3") shows to be met: a `section:`
// item whose section the operation filled (the engine's own entries are the
// evidence), and an item met by what was observed since (the state or the
// history handed to the agent), so that the note's checklist line says
// what satisfied it. Sealed with the line. The protocol is read only when
// an item is open.
func (s *Service) observeOp(d *Doc, st State, op string, now time.Time) {
	if !anyOpen(st.StartChecklist) && !anyOpen(st.EndChecklist) {
		return
	}
	proto, err := s.Protocol(st.Project)
	if err != nil {
		return
	}
	var seen []observation // read once, when an item may take one
	for _, title := range []string{SecStart, SecEnd} {
		reqs := proto.Start
		if title == SecEnd {
			reqs = proto.End
		}
		for _, l := range d.SectionLines(title) {
			c, ok := parseCheck(string(l.Content()))
			if !ok || c.Done {
				continue
			}
			req, ok := requirementIn(reqs, c.ID)
			if !ok {
				continue
			}
			c.Evidence = "" // (an open line may still say why it went stale)
			switch {
			case req.Check.Kind == protocol.KindSection && d.Grown(sectionTitle(d, req.Check.Arg)):
				c.Evidence = s.observed(op, now)
			case handedOver(req.Check) != "" || req.Check.Kind == protocol.KindRun:
				what := handedOver(req.Check)
				if req.Check.Kind == protocol.KindRun {
					what = obsRunPassed + c.ID
				}
				if seen == nil {
					seen = append(s.observations(st.Project), observation{})
				}
				for _, o := range seen {
					if o.Session == st.Session && o.What == what {
						c.Evidence = s.observed(o.Detail, o.At)
						break
					}
				}
			}
			if c.Evidence == "" {
				continue
			}
			c.Done = true
			d.ReplaceLine(l.Offset, FormatCheck(c))
		}
	}
}

// sectionTitle returns the title of d's H2 section named name (case
// insensitive), or name.
func sectionTitle(d *Doc, name string) string {
	for _, sec := range d.MD.Sections {
		if sec.Level == 2 && strings.EqualFold(sec.Title, name) {
			return sec.Title
		}
	}
	return name
}

func anyOpen(items []CheckItem) bool {
	for _, it := range items {
		if !it.Done {
			return true
		}
	}
	return false
}

// requirementIn returns the requirement behind checklist id among reqs
// (the start or end list).
func requirementIn(reqs []protocol.Requirement, id string) (protocol.Requirement, bool) {
	n := IdNumber(id)
	if n < 1 || n > len(reqs) {
		return protocol.Requirement{}, false
	}
	return reqs[n-1], true
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
