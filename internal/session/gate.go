package session

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// EvidenceOptions are the inputs of RecordEvidence.
type EvidenceOptions struct {
	Project string
	Item    string // checklist item id: c-N (start) or e-N (end)
	File    string // --file: for `file` evidence
	SHA     string // --sha: for `commit` evidence
	Run     bool   // --run: run the protocol's command for `run` evidence
	// Dir is where a relative --file is looked for first and, when given,
	// the code repository commands and commits are checked in; "" = the
	// current folder for files, CodeRepo for commands and commits.
	Dir string
}

// requirementFor returns the protocol requirement behind a checklist id.
func requirementFor(p *protocol.Protocol, id string) (protocol.Requirement, bool) {
	n := IdNumber(id)
	list := p.Start
	if strings.HasPrefix(id, "e-") {
		list = p.End
	}
	if n < 1 || n > len(list) {
		return protocol.Requirement{}, false
	}
	return list[n-1], true
}

// RecordEvidence verifies the evidence for one checklist item and, when it
// holds, ticks the item with what was verified — one commit. Evidence is
// checked by the engine, never taken on the agent's word: a file's SHA-256,
// a commit that exists, the protocol's own command exiting 0, a non-empty
// section. Items whose evidence is a person's tick are refused.
func (s *Service) RecordEvidence(o EvidenceOptions) (Outcome, error) {
	if err := CheckFields("project", o.Project, "item", o.Item, "file", o.File, "sha", o.SHA, "dir", o.Dir); err != nil {
		return Outcome{}, err
	}
	if !checkIDRe().MatchString(o.Item) {
		return Outcome{}, errs.New(errs.UpdateValidationFailed, "%q is not a checklist item id; ids look like c-1 (start) or e-1 (end), see `sessionvault status`", o.Item).With("item", o.Item)
	}
	project, err := s.Project(o.Project)
	if err != nil {
		return Outcome{}, err
	}
	proto, err := s.Protocol(project)
	if err != nil {
		return Outcome{}, err
	}
	req, ok := requirementFor(proto, o.Item)
	if !ok {
		return Outcome{}, errs.New(errs.UpdateValidationFailed, "the protocol (%s) has no checklist item %s", proto.Path, o.Item).With("item", o.Item)
	}
	return s.OnActive(project, func(tx *vault.Tx, d *Doc, st State, now time.Time) (vault.Change, string, error) {
		section := SecStart
		if strings.HasPrefix(o.Item, "e-") {
			section = SecEnd
		}
		for _, l := range d.SectionLines(section) {
			c, ok := parseCheck(string(l.Content()))
			if !ok || c.ID != o.Item {
				continue
			}
			ev, err := s.verify(d, project, req, o)
			if err != nil {
				return vault.Change{}, "", err
			}
			c.Done, c.Evidence = true, ev
			d.ReplaceLine(l.Offset, FormatCheck(c))
			return vault.Change{Operation: "evidence", Summary: o.Item + " " + ev}, o.Item, nil
		}
		return vault.Change{}, "", errs.New(errs.UpdateValidationFailed, "session %s has no checklist item %s in its %s", st.Session, o.Item, strings.ToLower(section)).With("item", o.Item)
	})
}

var checkIDRe = lazyregexp.New(`^[ce]-\d+$`)

// verify checks one requirement's evidence and returns the text recorded.
func (s *Service) verify(d *Doc, project string, req protocol.Requirement, o EvidenceOptions) (string, error) {
	fail := func(format string, args ...any) error {
		msg := fmt.Sprintf("%s (%s): "+format, append([]any{o.Item, req.Step}, args...)...)
		if req.Fix != "" {
			msg += ". To fix: " + req.Fix
		}
		return errs.New(errs.EvidenceNotVerified, "%s", msg).With("item", o.Item)
	}
	need := func(flag string, given bool) error {
		if !given { // a flag the item needs: a usage error
			return errs.New(errs.InvalidCommand, "%s (%s): its evidence is `%s`; record it with %s", o.Item, req.Step, checkRule(req.Check), flag).With("item", o.Item)
		}
		return nil
	}
	switch req.Check.Kind {
	case protocol.KindFile:
		if err := need("--file PATH", o.File != ""); err != nil {
			return "", err
		}
		// The rule (evidence record --help): absolute; else relative to the
		// current folder (o.Dir); else relative to the project folder.
		path := o.File
		if !filepath.IsAbs(path) {
			// The current folder, the code repository (the gates print a
			// file's name relative to it), the project folder.
			tries := []string{filepath.Join(dirOr(o.Dir), path)}
			if repo := s.CodeRepo(project); repo != "" {
				tries = append(tries, filepath.Join(repo, path))
			}
			path = filepath.Join(s.V.Root, project, path)
			for _, t := range tries {
				if _, err := os.Stat(t); err == nil {
					path = t
					break
				}
			}
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return "", fail("cannot read %s: %v", o.File, err)
		}
		// The file must be the protocol's: the same name, or ending in the
		// protocol's path (./ and separators normalised).
		if want := filepath.ToSlash(filepath.Clean(filepath.FromSlash(req.Check.Arg))); req.Check.Arg != "" {
			got := filepath.ToSlash(filepath.Clean(path))
			if filepath.Base(got) != want && got != want && !strings.HasSuffix(got, "/"+want) {
				return "", fail("the protocol asks for %s, and %s (%s) is another file", req.Check.Arg, o.File, got)
			}
		}
		sum := sha256.Sum256(data)
		return fmt.Sprintf("file %s sha256:%s", s.evidenceName(project, path), hex.EncodeToString(sum[:8])), nil
	case protocol.KindCommit:
		if err := need("--sha SHA", o.SHA != ""); err != nil {
			return "", err
		}
		repo := FirstNonEmpty(o.Dir, s.CodeRepo(project), ".")
		full, err := resolveCommit(repo, o.SHA)
		if err != nil {
			return "", fail("commit %s does not exist in the code repository at %s", o.SHA, repo)
		}
		if strings.HasPrefix(o.Item, "e-") {
			// The end checklist's commit is the session's work: made since
			// the session started (when its start is known there).
			if start, err := resolveCommit(repo, d.Prop("commit")); err == nil && d.Prop("commit") != "" {
				if full == start {
					return "", fail("commit %s is the commit the session started from; commit the session's work first (`git commit` in %s)", shortSHA(full), repo)
				}
				if _, err := git(repo, "merge-base", "--is-ancestor", start, full); err != nil {
					return "", fail("commit %s was not made since the session started (it does not descend from %s)", shortSHA(full), shortSHA(start))
				}
			}
		}
		return "commit " + full, nil
	case protocol.KindRun:
		if err := need("--run", o.Run); err != nil {
			return "", err
		}
		repo := FirstNonEmpty(o.Dir, s.CodeRepo(project), ".")
		took, out, err := runCheck(repo, req.Check.Arg)
		if err != nil {
			why := err.Error()
			if out != "" {
				why += ": " + out
			}
			return "", fail("`%s` does not pass in %s (%s)", req.Check.Arg, repo, why)
		}
		return fmt.Sprintf("run exit 0 in %s", took.Round(time.Millisecond)), nil
	case protocol.KindSection:
		sec, ok := d.Section(req.Check.Arg)
		if !ok {
			return "", fail("the current state has no section %q", req.Check.Arg)
		}
		if _, _, has := d.contentBounds(sec); !has {
			return "", fail("section %q of the current state is empty", req.Check.Arg)
		}
		return "section " + req.Check.Arg + " not empty", nil
	case protocol.KindBlockers:
		var tmp State
		if open := openOf(readEntries(d, &tmp, SecBlockers, parseBlocker)); len(open) > 0 {
			return "", fail("%d blocker(s) are open; resolve them first (`sessionvault resolve %s --resolution \"...\"`)", len(open), open[0].ID)
		}
		return "no open blocker", nil
	case protocol.KindTool:
		tool, at, ok := s.toolSeen(project, d.Prop("session"), o.Item)
		if !ok {
			return "", fail("its evidence is a call of a tool matching %s, recorded by the PostToolUse hook; none was seen in this session", req.Check.Arg)
		}
		return "tool " + tool + " seen " + note.FormatTime(at), nil
	default:
		return "", fail("its evidence (%q) is a person's tick in Obsidian; the agent cannot record it", req.Evidence)
	}
}

func checkRule(c protocol.Check) string {
	if c.Arg != "" {
		return string(c.Kind) + ": " + c.Arg
	}
	return string(c.Kind)
}

// evidenceName is how file evidence names path (absolute): relative to the
// code repository or to the vault when inside one, so that the gates can
// find it again; else the path itself.
func (s *Service) evidenceName(project, path string) string {
	for _, base := range []string{s.CodeRepo(project), s.V.Root} {
		if base == "" {
			continue
		}
		if rel, err := filepath.Rel(base, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return path
}

func dirOr(d string) string {
	if d == "" {
		return "."
	}
	return d
}

// Missing is an unmet blocking requirement of a gate, with what to do.
type Missing = guard.Missing

// Gate returns the MUST items of a checklist ("start" or "end") that are
// unmet now (Report: evidence re-checked, observations counted), each with
// what to do, quoting `sessionvault VERB ...` commands (the form the
// violations log keeps; Runnable makes them work from any folder).
func (s *Service) Gate(st State, proto *protocol.Protocol, phase protocol.Phase) []Missing {
	return s.Report(&st, proto, nil, phase).Must
}

// SetMode records a mode change in the current state's mode property and
// its Mode history section (an "^m-N" line: when, from, to;
// State.ModeHistory) — one commit. Disabled is recorded as the person's
// escape hatch.
func (s *Service) SetMode(project string, mode protocol.Mode) (Outcome, error) {
	project, err := s.Project(project)
	if err != nil {
		return Outcome{}, err
	}
	var out Outcome
	out.Result, err = s.Transact(&out, func(tx *vault.Tx) (vault.Change, error) {
		cur, _, _ := Paths(project)
		d, err := s.ReadDoc(tx, cur)
		if err != nil {
			return vault.Change{}, err
		}
		st := d.ReadState(project)
		from := FirstNonEmpty(d.Prop("mode"), string(protocol.Coding))
		if from == string(mode) {
			return vault.Change{Operation: "mode"}, nil
		}
		now := s.NowUTC()
		m := ModeChange{ID: d.NextEntryID(SecModes, 'm') + s.IdSuffix(), Mode: string(mode), From: from, At: now}
		if mode == protocol.Disabled {
			m.Note = "gates off: the person's escape hatch"
		}
		d.AppendLine(SecModes, formatModeChange(m))
		d.Set("mode", string(mode))
		BumpVersion(d, st, now)
		b, err := d.Bytes()
		if err != nil {
			return vault.Change{}, err
		}
		out.ID = string(mode)
		return vault.Change{Operation: "mode", Session: st.Session, Summary: from + " → " + string(mode)}, tx.Write(cur, b)
	})
	if err != nil {
		return Outcome{}, err
	}
	out.State, err = s.Current(project)
	return out, err
}

// ModeOrDefault returns the session's mode (coding when unset).
func (st *State) ModeOrDefault() protocol.Mode {
	if m, err := protocol.ParseMode(st.Mode); err == nil {
		return m
	}
	return protocol.Coding
}

// OpenMust reports whether a checklist has a MUST item not done (a
// `tool:` item the PostToolUse hook saw counts as done only in Gate).
func OpenMust(items []CheckItem) bool {
	for _, it := range items {
		if !it.Done && protocol.Blocking(it.Level) {
			return true
		}
	}
	return false
}
