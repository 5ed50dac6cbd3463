package session

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/integrity"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/vault"
	"github.com/sessionvault/sessionvault/templates"
)

// seal is the signed part of a project's current state: what the gates and
// the tool policy decide on, and nothing a person may edit freely. It is
// kept, with its HMAC-SHA256, in .sessionvault/state/signature-<project> as
// JSON.
//
// The engine writes a seal only from its own operations, inside their
// transaction: the fields an operation changes are taken from the bytes it
// wrote, every other field is carried over from the previous seal. A change
// made outside the engine (an editor, sed, Serena) is therefore never
// signed by the next update or by serve: the state stays "changed outside
// sessionvault" until a person runs `sessionvault accept`.
type seal struct {
	Session  string `json:"session"`
	Status   string `json:"status"`
	Phase    string `json:"phase"`
	Mode     string `json:"mode"`
	Protocol string `json:"protocol"` // "sha256:<hex>" of the protocol the gates use
	// Evidence maps a checklist id (c-1, e-2) to the evidence the engine
	// verified for it (`evidence record`); a tick without an entry here
	// counts for nothing, unless the item's evidence is a person's tick.
	Evidence map[string]string `json:"evidence,omitempty"`
	MAC      string            `json:"mac"`
}

// sealedFields are the front matter properties a seal covers, in the order
// a mismatch is reported.
var sealedFields = []string{"session", "status", "phase", "mode"}

func (sl *seal) field(name string) string {
	switch name {
	case "session":
		return sl.Session
	case "status":
		return sl.Status
	case "phase":
		return sl.Phase
	default:
		return sl.Mode
	}
}

func (sl *seal) setField(name, v string) {
	switch name {
	case "session":
		sl.Session = v
	case "status":
		sl.Status = v
	case "phase":
		sl.Phase = v
	default:
		sl.Mode = v
	}
}

// protocolSource returns the protocol the project's gates use — the
// project's SESSION-PROTOCOL.md, else the vault's, else the built-in one —
// as it will be once tx (nil: none) is committed: its path (or the built-in
// one's name) and its bytes.
func (s *Service) protocolSource(tx *vault.Tx, project string) (string, []byte, error) {
	for _, rel := range []string{project + "/SESSION-PROTOCOL.md", "SESSION-PROTOCOL.md"} {
		if tx != nil {
			if b, ok := tx.Written(rel); ok {
				return rel, b, nil
			}
		}
		data, err := s.V.ReadFile(rel)
		if err == nil {
			return rel, data, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", nil, err
		}
	}
	data, err := fs.ReadFile(templates.FS, "SESSION-PROTOCOL.md")
	return "SESSION-PROTOCOL.md (built in)", data, err
}

// protocolSum returns "sha256:<hex>" of the project's protocol.
func (s *Service) protocolSum(project string) (string, error) {
	return s.protocolSumIn(nil, project)
}

// protocolSumIn is protocolSum as the protocol will be once tx (nil: none)
// is committed.
func (s *Service) protocolSumIn(tx *vault.Tx, project string) (string, error) {
	_, data, err := s.protocolSource(tx, project)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(h[:]), nil
}

func (s *Service) sealMAC(sl seal) (string, error) {
	sl.MAC = ""
	return s.signJSON(sl) // map keys sorted
}

// writeSeal signs sl and keeps it as the project's seal.
func (s *Service) writeSeal(project string, sl seal) error {
	mac, err := s.sealMAC(sl)
	if err != nil {
		return err
	}
	sl.MAC = mac
	data, err := json.Marshal(sl)
	if err != nil {
		return err
	}
	return s.V.WriteState(integrity.SignatureFile(project), append(data, '\n'))
}

// errNoSeal says a project has no valid seal (never signed on this
// machine, a key that changed, or a signature file edited by hand).
var errNoSeal = errors.New("no valid signature")

// loadSeal reads the project's seal and checks its MAC. A signature of the
// earlier format (an HMAC over the whole current state) is taken over when
// it still matches the note: the seal is then built from the note, with the
// evidence its ticked items carry. It fails with errNoSeal otherwise.
func (s *Service) loadSeal(project string) (*seal, error) {
	data, err := s.V.ReadState(integrity.SignatureFile(project))
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", errNoSeal, err)
	}
	var sl seal
	if json.Unmarshal(data, &sl) != nil {
		return s.migrateSeal(project, strings.TrimSpace(string(data)))
	}
	want, err := s.sealMAC(sl)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal([]byte(want), []byte(sl.MAC)) {
		return nil, fmt.Errorf("%w (its MAC does not match the key in .sessionvault/state/key)", errNoSeal)
	}
	return &sl, nil
}

// migrateSeal takes over a signature of the earlier format (see loadSeal).
func (s *Service) migrateSeal(project, oldMAC string) (*seal, error) {
	d, err := s.currentDoc(project)
	if err != nil {
		return nil, err
	}
	got, err := s.mac(d)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal([]byte(oldMAC), []byte(got)) {
		return nil, fmt.Errorf("%w (an earlier signature that does not match the note)", errNoSeal)
	}
	proto, err := s.protocolSum(project)
	if err != nil {
		return nil, err
	}
	sl := sealOf(d, proto)
	st := d.ReadLite(project)
	for _, it := range append(st.StartChecklist, st.EndChecklist...) {
		if it.Done && it.Evidence != "" {
			sl.Evidence[it.ID] = it.Evidence
		}
	}
	return &sl, nil
}

// sealOf returns the sealed fields of d, with no evidence.
func sealOf(d *Doc, proto string) seal {
	sl := seal{Protocol: proto, Evidence: map[string]string{}}
	for _, f := range sealedFields {
		sl.setField(f, d.Prop(f))
	}
	return sl
}

// nextSeal returns the seal after an operation that read before and wrote
// after (the current-state note; before nil when it creates the note): the
// fields the operation changed come from after, the others from old, so an
// outside change stays unsigned. Evidence: an item whose line the operation
// rewrote takes what the line now records; a new session starts with none.
// With no old seal only a new note is sealed (nil otherwise).
func nextSeal(old *seal, before, after *Doc, proto string) *seal {
	if before == nil {
		sl := sealOf(after, proto)
		return &sl
	}
	if old == nil {
		return nil
	}
	next := *old
	next.Evidence = map[string]string{}
	for k, v := range old.Evidence {
		next.Evidence[k] = v
	}
	for _, f := range sealedFields {
		if a := after.Prop(f); a != before.Prop(f) {
			next.setField(f, a)
		}
	}
	if next.Session != old.Session {
		next.Evidence = map[string]string{}
	}
	was := map[string]string{}
	for _, title := range []string{SecStart, SecEnd} {
		for _, l := range before.SectionLines(title) {
			if c, ok := parseCheck(string(l.Content())); ok {
				was[c.ID] = string(l.Content())
			}
		}
	}
	for _, title := range []string{SecStart, SecEnd} {
		for _, l := range after.SectionLines(title) {
			c, ok := parseCheck(string(l.Content()))
			if !ok || was[c.ID] == string(l.Content()) {
				continue
			}
			if c.Done && c.Evidence != "" {
				next.Evidence[c.ID] = c.Evidence
			} else {
				delete(next.Evidence, c.ID)
			}
		}
	}
	return &next
}

// sealChange makes ch write the next seal of every project whose current
// state tx writes, once the commit is made (vault.Change.Committed).
func (s *Service) sealChange(tx *vault.Tx, ch *vault.Change) error {
	type pending struct {
		project string
		sl      seal
		after   []byte // the note as written
		ad      *Doc
		proto   string
	}
	var seals []pending
	for _, rel := range tx.WrittenPaths() {
		project, name, ok := strings.Cut(rel, "/")
		if !ok || name != CurrentStateNote {
			continue
		}
		after, _ := tx.Written(rel)
		ad, err := s.ParseDoc(rel, after)
		if err != nil {
			continue // the write path refuses it
		}
		before, missing, err := tx.Original(rel)
		if err != nil {
			return err
		}
		var bd *Doc
		if !missing {
			if bd, err = s.ParseDoc(rel, before); err != nil {
				continue // a broken note is not sealed until a person accepts it
			}
		}
		old, err := s.loadSeal(project)
		if err != nil && !errors.Is(err, errNoSeal) {
			return err
		}
		proto, err := s.protocolSumIn(tx, project)
		if err != nil {
			return err
		}
		if next := nextSeal(old, bd, ad, proto); next != nil {
			seals = append(seals, pending{project, *next, after, ad, proto})
		}
	}
	if len(seals) == 0 {
		return nil
	}
	prev := ch.Committed
	ch.Committed = func(r vault.Result) error {
		var failed []error
		if prev != nil {
			failed = append(failed, prev(r))
		}
		for _, p := range seals {
			if err := s.writeSeal(p.project, p.sl); err != nil {
				// The state is committed unsigned: it reads as changed
				// outside the engine until a person signs it.
				failed = append(failed, fmt.Errorf("the signature of project %s's state was not written (%w); a person runs `%s` to sign it", p.project, err, s.Command(p.project, "accept")))
			}
		}
		return errors.Join(failed...)
	}
	prevFinished := ch.Finished
	ch.Finished = func(r vault.Result) {
		if prevFinished != nil {
			prevFinished(r)
		}
		for _, p := range seals {
			s.refreshGuard(p.project, p.after, p.ad, p.sl, p.proto)
		}
	}
	return nil
}

// checkSeal compares the note d with its seal and returns what differs:
// sealed properties changed outside sessionvault, or a protocol that
// changed. Empty when they agree.
func checkSeal(sl *seal, d *Doc, proto string) []string {
	var diffs []string
	for _, f := range sealedFields {
		if got, want := d.Prop(f), sl.field(f); got != want {
			diffs = append(diffs, fmt.Sprintf("%s is %q in the note but %q as the engine last wrote it", f, got, want))
		}
	}
	if sl.Protocol != proto {
		diffs = append(diffs, "the session protocol changed since the engine last signed it")
	}
	return diffs
}

// applySeal sets the checklists of st from the seal: an item whose
// evidence the engine verifies is done only when the seal records its
// evidence; a tick without one is marked Unverified. Items whose evidence
// is a person's tick keep the note's tick.
func applySeal(st *State, sl *seal, proto *protocol.Protocol) {
	fix := func(items []CheckItem) {
		for i := range items {
			it := &items[i]
			req, ok := requirementFor(proto, it.ID)
			if !ok || !req.Check.Verifiable() {
				continue
			}
			if it.Stale != "" {
				continue // re-checked, and found not to hold any more
			}
			ev, signed := sl.Evidence[it.ID]
			if it.Done && !signed {
				it.Unverified = true
			}
			it.Done, it.Evidence = signed, ev
		}
	}
	fix(st.StartChecklist)
	fix(st.EndChecklist)
}

// sealDiff describes, for `accept`, what a person's acceptance signs: the
// sealed fields that differ from the last seal (none when there is none).
func sealDiff(old *seal, next seal) []string {
	if old == nil {
		return []string{"no earlier signature: the state is signed as it is"}
	}
	var out []string
	for _, f := range sealedFields {
		if a, b := old.field(f), next.field(f); a != b {
			out = append(out, fmt.Sprintf("%s: %q → %q", f, a, b))
		}
	}
	if old.Protocol != next.Protocol {
		out = append(out, "protocol: "+old.Protocol+" → "+next.Protocol)
	}
	var dropped []string
	for id := range old.Evidence {
		if _, ok := next.Evidence[id]; !ok {
			dropped = append(dropped, id)
		}
	}
	sort.Strings(dropped)
	if len(dropped) > 0 {
		out = append(out, "evidence no longer counted (a new session): "+strings.Join(dropped, ", "))
	}
	return out
}

// tamperedError is the error of Verified for a state whose sealed fields
// differ from the seal.
func tamperedError(project string, diffs []string) error {
	return &errs.Error{Code: errs.StateChangedOutside, Message: project + "/" + CurrentStateNote + " was changed outside sessionvault since the engine last wrote it: " + strings.Join(diffs, "; "), Err: ErrTampered}
}
