package session

// Integrity: the HMAC key, the verified reading of the current state (the
// seal checked against the note, seal.go) and its cache for the hooks, and a
// person's accept that signs the state as it is.

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/integrity"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// key returns the vault's HMAC key: $SESSIONVAULT_SECRET, else a random
// key kept in the state folder, made on first use (integrity.Key).
func (s *Service) key() ([]byte, error) { return integrity.Key(s.V.Root) }

func (s *Service) mac(d *Doc) (string, error) {
	k, err := s.key()
	if err != nil {
		return "", err
	}
	c, err := d.canonicalForm()
	if err != nil {
		return "", err
	}
	return integrity.Sign(k, c), nil
}

// signJSON signs v's JSON encoding with the vault's key (integrity.SignJSON).
func (s *Service) signJSON(v any) (string, error) {
	k, err := s.key()
	if err != nil {
		return "", err
	}
	return integrity.SignJSON(k, "", v)
}

// ErrTampered says the current state differs from what the engine last
// signed: it was changed outside sessionvault and not yet accepted.
var ErrTampered = errors.New("the current state was changed outside sessionvault since the engine last signed it")

// Verified reads the project's current state and checks it against its
// seal (see seal): the session, status, phase and mode in the note must be
// those the engine last wrote, and the protocol the one it signed with. The
// checklists count only the evidence the seal records (a tick without it is
// Unverified). It fails with errs.StateParseError when the note is missing or
// broken, and with ErrTampered (errs.StateChangedOutside, E1641) when sealed fields were
// changed outside the engine or there is no valid seal; a person accepts
// such a change with `sessionvault accept`.
func (s *Service) Verified(project string) (State, error) {
	d, err := s.currentDoc(project)
	if err != nil {
		return State{}, err
	}
	st := d.ReadLite(project)
	sl, err := s.loadSeal(project)
	if errors.Is(err, errNoSeal) {
		return st, &errs.Error{Code: errs.StateChangedOutside, Message: "the current state of project " + project + " has no signature this machine can check (" + err.Error() + "; a new clone of the vault, or a new key) and is taken as changed outside sessionvault", Err: ErrTampered}
	}
	if err != nil {
		return st, err
	}
	proto, err := s.protocolSum(project)
	if err != nil {
		return st, err
	}
	if diffs := checkSeal(sl, d, proto); len(diffs) > 0 {
		return st, tamperedError(project, diffs)
	}
	p, err := s.Protocol(project)
	if err != nil {
		return st, err
	}
	applySeal(&st, sl, p)
	recheckSections(&st, p, d)
	return st, nil
}

// recheckSections opens again the done `section:` items whose section of
// d (the current-state note) is empty now (a person deleted what the
// evidence was): Stale says so.
func recheckSections(st *State, proto *protocol.Protocol, d *Doc) {
	for _, items := range [][]CheckItem{st.StartChecklist, st.EndChecklist} {
		for i := range items {
			it := &items[i]
			req, ok := requirementFor(proto, it.ID)
			if ok && it.Done && req.Check.Kind == protocol.KindSection && !sectionFilled(d, req.Check.Arg) {
				it.Done, it.Stale = false, "the "+req.Check.Arg+" section is empty now"
			}
		}
	}
}

// currentDoc reads and parses the project's current-state note, as a
// stable read that waits for a note caught half-saved to settle (see
// readDoc); a missing, empty or broken note is errs.StateParseError.
func (s *Service) currentDoc(project string) (*Doc, error) {
	cur, _, _ := Paths(project)
	var d *Doc
	_, err := s.V.ReadNote(cur, func(data []byte) error {
		var err error
		d, err = s.parseNote(cur, data)
		return err
	})
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, errs.Wrap(errs.StateParseError, err, "reading "+cur)
	}
	return d, nil
}

// Accept is a person's acceptance of the current state as it is: edits made
// outside sessionvault are committed as the person's, and the session,
// status, phase, mode and protocol are signed as they are now. Evidence is
// never taken from the note: what `evidence record` verified in this session
// still counts, a tick made outside it does not. It returns the commit of
// the person's edits (if any) and what the signature changes, for the person
// to see.
func (s *Service) Accept(project string) (vault.Result, []string, error) {
	project, err := s.Project(project)
	if err != nil {
		return vault.Result{}, nil, err
	}
	cur, _, _ := Paths(project)
	// The note must parse before its edits are committed and signed.
	if _, err := s.currentDoc(project); err != nil {
		return vault.Result{}, nil, err
	}
	// What is signed is committed: the note, and the vault's protocol
	// document when it has one (else the built-in one is signed).
	signed := []string{cur}
	if rel, _, err := s.protocolSource(nil, project); err == nil {
		if _, err := s.V.ReadFile(rel); err == nil {
			signed = append(signed, rel)
		}
	}
	hash, err := s.V.CommitOutsideEdits(signed)
	if err != nil {
		return vault.Result{}, nil, err
	}
	d, err := s.currentDoc(project) // as committed
	if err != nil {
		return vault.Result{}, nil, err
	}
	old, err := s.loadSeal(project)
	if err != nil && !errors.Is(err, errNoSeal) {
		return vault.Result{}, nil, err
	}
	proto, err := s.protocolSum(project)
	if err != nil {
		return vault.Result{}, nil, err
	}
	next := sealOf(d, proto)
	if old != nil && old.Session == next.Session {
		next.Evidence = old.Evidence
	}
	diff := sealDiff(old, next)
	return vault.Result{PersonCommit: hash}, diff, s.writeSeal(project, next)
}

// verifiedCache is the last verified reading of a current-state note, kept
// in .sessionvault/state/verified-<project>.json so that a hook decision does
// not re-read a long session while the note is unchanged. It is itself
// HMAC-signed, over the note's stat identity, the signature and the state.
type verifiedCache struct {
	Stat      string `json:"stat"` // guard.Identity of the note, its seal, the protocol and the tool evidence
	Signature string `json:"signature"`
	State     State  `json:"state"`
	MAC       string `json:"mac"`
}

func (s *Service) cacheMAC(c verifiedCache) (string, error) {
	c.MAC = ""
	return s.signJSON(c)
}

// VerifiedCached is Verified with a cache: while the note's stat identity and
// the signature are those of the last successful verification, the state
// read then is returned without reading the note again. Anything else —
// a changed note, a changed signature, a cache that does not check — falls
// back to Verified.
func (s *Service) VerifiedCached(project string) (State, error) {
	id, idErr := guard.Identity(s.V.Root, project)
	sig, sigErr := s.V.ReadState(integrity.SignatureFile(project))
	if idErr == nil && sigErr == nil {
		if data, err := s.V.ReadState(integrity.VerifiedCacheFile(project)); err == nil {
			var c verifiedCache
			if json.Unmarshal(data, &c) == nil && c.Stat == id && c.Signature == string(sig) {
				if want, err := s.cacheMAC(c); err == nil && hmac.Equal([]byte(want), []byte(c.MAC)) {
					return c.State, nil
				}
			}
		}
	}
	st, err := s.Verified(project)
	if err != nil || idErr != nil || sigErr != nil {
		return st, err
	}
	// Record the reading only if the note did not change while it was read.
	if id2, err := guard.Identity(s.V.Root, project); err == nil && id2 == id {
		c := verifiedCache{Stat: id, Signature: string(sig), State: st}
		if c.MAC, err = s.cacheMAC(c); err == nil {
			if data, err := json.Marshal(c); err == nil {
				_ = s.V.WriteState(integrity.VerifiedCacheFile(project), data) // a cache: without it, the next call verifies again
			}
		}
	}
	return st, nil
}

// Guard returns the facts of project's verified current state that a
// PreToolUse decision reads (guard.Decide): from the signed facts cache
// (guard.Load) while the note, its seal, the protocol and the tool evidence
// are unchanged; else read and verified (VerifiedCached, and the start gate
// when it matters) and cached, unless a file changed during the reading.
// The errors are VerifiedCached's (ErrTampered, errs.StateParseError, ...);
// for those two the facts say so too (Facts.Unreadable), cached alike, and a
// later call from the cache returns them with no error;
// a protocol that cannot be read is not an error here: Facts.GateError says
// it, and the decision fails closed at the gate.
func (s *Service) Guard(project string) (guard.Facts, error) {
	if c, ok := guard.Load(s.V.Root, project); ok {
		return c.Facts, nil
	}
	id, idErr := guard.Identity(s.V.Root, project)
	st, err := s.VerifiedCached(project)
	if err != nil {
		// A note that does not parse, or a state changed outside the engine:
		// the decision is a deny until the files change, and is cached like
		// any other, so that the next call costs no more than on a good note.
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != errs.StateParseError && e.Code != errs.StateChangedOutside {
			return guard.Facts{}, err
		}
		f := guard.Facts{Unreadable: err.Error(), Tampered: errors.Is(err, ErrTampered)}
		if idErr == nil {
			s.saveGuard(project, id, nil, f, nil)
		}
		return f, err
	}
	f, deps, ok := s.guardFacts(project, st, nil)
	if ok && idErr == nil {
		s.saveGuard(project, id, &st, f, deps)
	}
	return f, nil
}

// guardFacts are the facts of st, project's current state (seal applied
// or not: Report applies it), with d the note it was read from when at hand
// (nil: st is a verified reading, its sections re-checked). For an active
// session not in mode disabled, the start gate is evaluated (Report over
// its MUST items: evidence re-checked, observations counted); deps are the
// files outside the state that evaluation read. ok is false when the facts
// are not to be cached: the protocol cannot be read (Facts.GateError says
// so), or the evaluation depends on something it could not name.
func (s *Service) guardFacts(project string, st State, d *Doc) (f guard.Facts, deps map[string]string, ok bool) {
	f = guard.Facts{Session: st.Session, Active: st.Active(), Mode: string(st.ModeOrDefault())}
	deps = map[string]string{}
	cur := ""
	if f.Active {
		cur = st.Session
	}
	f.Clash = s.clashNotice(project, cur, deps)
	s.recordClash(project, f.Clash)
	if !f.Active || f.Mode == string(protocol.Disabled) {
		return f, deps, true
	}
	p, err := s.Protocol(project)
	if err != nil {
		f.GateError = "the protocol cannot be read: " + err.Error()
		return f, deps, false
	}
	rep := s.report(&st, p, d, true, protocol.Start)
	f.StartMissing = rep.Must
	for k, v := range rep.deps {
		deps[k] = v
	}
	return f, deps, !rep.uncacheable
}

// saveGuard caches f as the facts of the files whose guard.Identity was id
// before they were read, if it still is; deps are the other files the facts
// were read from, with their stat identity before that. st is the state
// the facts are of (nil: one that does not read): for an active session,
// the cache also holds the patterns of the protocol's tool evidence and
// what its command history's entries take from the state, so that the lean
// hook records PostToolUse calls alone.
func (s *Service) saveGuard(project, id string, st *State, f guard.Facts, deps map[string]string) {
	if id2, err := guard.Identity(s.V.Root, project); err != nil || id2 != id {
		return
	}
	k, err := s.key()
	if err != nil {
		return
	}
	c := guard.Cached{Facts: f, Watch: toolCallNotes(project), Deps: deps}
	if f.Active && st != nil {
		if p, err := s.Protocol(project); err == nil {
			c.ToolEvidence, c.ToolEvidenceKnown = toolEvidence(p), true
		}
		c.Log, c.Deps = s.logFacts(project, *st, deps)
	}
	_ = guard.Save(s.V.Root, project, k, id, c, s.V.Freer()) // a cache: without it the next decision reads the state
	RefreshHookSettings(s.V.Root)
}

// logFacts are what the command history's entries take from st, an active
// session's state, and deps with the machine record's stat identity (taken
// before it is read; "none" when missing) added; not Known without a
// machine record that reads.
func (s *Service) logFacts(project string, st State, deps map[string]string) (guard.LogFacts, map[string]string) {
	if deps == nil {
		deps = map[string]string{}
	}
	p := integrity.Path(s.V.Root, vault.MachineFile)
	mid, err := guard.StatIdentity(p)
	if err != nil {
		deps[p] = "none" // Load: "none" is a missing file's identity
		return guard.LogFacts{}, deps
	}
	deps[p] = mid
	m, found, err := s.V.MachineRecord() // as on disk now: a running server's Machine may be older
	if err != nil || !found {
		return guard.LogFacts{}, deps
	}
	l := guard.LogFacts{Known: true, IDSuffix: m.IDSuffix()}
	if st.ActiveTask != "" {
		l.Task = TaskLink(project, st.ActiveTask)
	}
	if st.ActiveFeature != "" {
		l.Feature = FeatureLink(project, st.ActiveFeature)
	}
	return l, deps
}

// RefreshHookSettings renews the lean hook's copy of the settings of the
// vault at root (guard.SaveSettings: the lean hook reads no YAML) when it
// is missing or older than config.yaml, from the file as it is now; a
// file that does not read leaves it as it is (the hooks hand their calls
// to the full one, which says why).
func RefreshHookSettings(root string) {
	id, err := guard.SettingsIdentity(root)
	if err != nil {
		return
	}
	if _, ok := guard.LoadSettings(root); ok {
		return
	}
	c, err := config.Load(root)
	if err != nil {
		return
	}
	_ = guard.SaveSettings(root, id, guard.Settings{Version: c.Version, DefaultProject: c.DefaultProject, ReadOnlyTools: c.ReadOnlyTools,
		ModeBlocks: c.ModeBlocks, UnknownMCPTools: c.UnknownMCPTools, LockTimeout: c.LockTimeout.Duration})
}

// toolEvidence are the patterns of p's `tool:` evidence, start and end
// checklists together (RecordToolCall matches a tool against them).
func toolEvidence(p *protocol.Protocol) []string {
	var out []string
	for _, reqs := range [][]protocol.Requirement{p.Start, p.End} {
		for _, r := range reqs {
			if r.Check.Kind == protocol.KindTool {
				out = append(out, r.Check.Arg)
			}
		}
	}
	return out
}

// refreshGuard records the guard facts of a state the engine just committed
// and sealed (the note written as data, read as d, sealed with sl over the
// protocol proto), so that the next hook decision reads nothing: only when
// the note on disk is still exactly data (no save landed since) and agrees
// with its seal. Anything else leaves the cache as it is: the next decision
// reads and verifies the state.
func (s *Service) refreshGuard(project string, data []byte, d *Doc, sl seal, proto string) {
	id, err := guard.Identity(s.V.Root, project)
	if err != nil {
		return
	}
	cur, _, _ := Paths(project)
	disk, err := os.ReadFile(filepath.Join(s.V.Root, filepath.FromSlash(cur)))
	if err != nil || !bytes.Equal(disk, data) || len(checkSeal(&sl, d, proto)) > 0 {
		return
	}
	st := d.ReadLite(project)
	if f, deps, ok := s.guardFacts(project, st, d); ok {
		s.saveGuard(project, id, &st, f, deps)
	}
}
