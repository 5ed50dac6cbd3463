package session

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/integrity"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Starting a session: its id, its checklists from the protocol, the state
// note reset for it.

// StartOptions are the inputs of Start.
type StartOptions struct {
	Project   string
	Objective string // required, 1-500 characters
	Epic      string
	Linear    string // a Linear issue key, e.g. ENG-123
	Branch    string // the code repository's branch
	Commit    string // the code repository's starting commit
	Continue  string // the id of an archived session this one continues
	Force     bool   // abandon an active session instead of failing
}

// Start begins a session: idle -> active. It fails with
// errs.SessionAlreadyActive when a session is active (unless Force, which
// archives that one as abandoned in the same commit).
func (s *Service) Start(o StartOptions) (Outcome, error) {
	if err := checkStart(o); err != nil {
		return Outcome{}, err
	}
	project, err := s.Project(o.Project)
	if err != nil {
		return Outcome{}, err
	}
	proto, err := s.Protocol(project)
	if err != nil {
		return Outcome{}, err
	}
	// What the engine observes for the start checklist, found before the
	// vault is locked (a run check may take a moment).
	repo := s.CodeRepo(project)
	if repo != "" && o.Branch == "" && o.Commit == "" {
		// Where the session starts in the code repository (what the CLI
		// fills in from the same place).
		if c, err := git(repo, "rev-parse", "--verify", "--quiet", "HEAD"); err == nil {
			o.Commit = c // (none in a repository with no commit yet)
		}
		if b, err := git(repo, "rev-parse", "--abbrev-ref", "HEAD"); err == nil && b != "HEAD" {
			o.Branch = b
		}
	}
	observed := s.startEvidence(project, proto, o, repo, s.NowUTC())
	var out Outcome
	cur, _, _ := Paths(project)
	out.Result, err = s.Transact(&out, func(tx *vault.Tx) (vault.Change, error) {
		now := s.NowUTC()
		d, err := s.ReadDoc(tx, cur)
		if err != nil {
			return vault.Change{}, err
		}
		st := d.ReadState(project)
		if d, st, err = s.makeRoom(tx, d, st, project, o.Force, now); err != nil {
			return vault.Change{}, err
		}
		if o.Continue != "" && !tx.Exists(project+"/"+SessionsDir+"/"+o.Continue+".md") {
			return vault.Change{}, errs.New(errs.SessionNotFound, "--continue %s: no archived session %s/%s/%s.md", o.Continue, project, SessionsDir, o.Continue).With("session", o.Continue)
		}
		id, err := s.nextID(tx, project, now, st.Session)
		if err != nil {
			return vault.Change{}, err
		}
		progress := 0
		if o.Continue != "" {
			if prev, err := s.ReadDoc(tx, project+"/"+SessionsDir+"/"+o.Continue+".md"); err == nil {
				progress = prev.IntProp("progress")
			}
		}
		s.setStarted(d, o, st, proto, id, progress, project, now, observed)
		b, err := d.Bytes()
		if err != nil {
			return vault.Change{}, err
		}
		if err := tx.Write(cur, b); err != nil {
			return vault.Change{}, err
		}
		out.ID = id
		return vault.Change{Operation: "start", Session: id, Summary: OneLine(o.Objective)}, nil
	})
	if err != nil {
		return Outcome{}, err
	}
	if !out.Repeat {
		_ = s.writeHeartbeat(project, out.ID) // the commit's updated time is the sign of life; the heartbeat repeats it
		// A new session: what was observed for an earlier one is spent, and
		// the code repository is the one this start found.
		_ = s.V.WriteState(integrity.ObservedFile(project), nil)
		_ = s.V.WriteState(integrity.CodeRepoFile(project), []byte(repo))
		s.setWorking(project, out.ID) // this machine works in it (see clashNotice)
	}
	out.State, err = s.Current(project)
	if err == nil {
		s.commitSessionLog(project, out.State.LastSession, &out.Result) // an abandoned session's command history
		s.packLooseObjects(&out.Result)
	}
	return out, err
}

// checklistLines are the lines of a new checklist of reqs, ids prefix-N;
// the items in observed (id → evidence) are ticked with it.
func checklistLines(reqs []protocol.Requirement, prefix string, observed map[string]string) []string {
	var lines []string
	for i, r := range reqs {
		id := prefix + "-" + strconv.Itoa(i+1)
		ev, done := observed[id]
		lines = append(lines, FormatCheck(CheckItem{ID: id, Level: r.Level, Step: r.Step, Done: done, Evidence: ev}))
	}
	return lines
}

// nextID returns the next session id of the day: YYYY-MM-DD-session-NN, NN
// counting that day's sessions in the project (of every machine), and on a
// secondary machine its name after it: YYYY-MM-DD-session-NN-laptop.
func (s *Service) nextID(tx *vault.Tx, project string, now time.Time, current string) (string, error) {
	prefix := now.Format("2006-01-02") + "-session-"
	max := 0
	consider := func(name string) {
		if rest, ok := strings.CutPrefix(strings.TrimSuffix(name, ".md"), prefix); ok {
			rest, _, _ = strings.Cut(rest, "-") // 01-laptop: another machine's
			if n, err := strconv.Atoi(rest); err == nil && n > max {
				max = n
			}
		}
	}
	names, err := tx.List(project + "/" + SessionsDir)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		consider(n)
	}
	consider(current)
	return fmt.Sprintf("%s%02d%s", prefix, max+1, s.IdSuffix()), nil
}

// checkStart checks start's inputs before anything is read: the objective,
// the fields, the Linear key and the session to continue.
func checkStart(o StartOptions) error {
	if err := CheckText("objective", o.Objective, MaxMessage); err != nil {
		return err
	}
	if err := CheckFields("project", o.Project, "epic", o.Epic, "linear", o.Linear, "branch", o.Branch, "commit", o.Commit, "continue", o.Continue); err != nil {
		return err
	}
	if o.Linear != "" && !linearKeyRe().MatchString(o.Linear) {
		return errs.New(errs.UpdateValidationFailed, "--linear %q is not an issue key like ENG-123", o.Linear).With("flag", "linear")
	}
	if o.Continue != "" {
		if err := vault.CheckName("session id", o.Continue); err != nil {
			return err
		}
	}
	return nil
}

// makeRoom returns the state note ready for a new session: as it is when
// no session is active; with --force, after the active session is archived
// as abandoned; else the refusal (errs.SessionCrashed when the active
// session shows no sign of life, errs.SessionAlreadyActive otherwise).
func (s *Service) makeRoom(tx *vault.Tx, d *Doc, st State, project string, force bool, now time.Time) (*Doc, State, error) {
	if !st.Active() {
		return d, st, nil
	}
	if !force {
		if s.crashed(project, &st) {
			return nil, st, errs.New(errs.SessionCrashed, "session %s of project %s (objective: %s) has shown no sign of life since %s: resume it with `sessionvault recover`, or abandon it and start anew with `sessionvault start --force --objective ...`", st.Session, project, st.Objective, note.FormatTime(*st.LastSign)).With("session", st.Session)
		}
		where := ""
		if m := d.Prop("machine"); m != "" {
			if here, err := s.V.Machine(); err != nil || here.Name != m {
				where = " on machine " + m
			}
		}
		return nil, st, errs.New(errs.SessionAlreadyActive, "session %s is already active%s in project %s (objective: %s); end it with `sessionvault end`, or abandon it and start anew with `sessionvault start --force --objective ...`", st.Session, where, project, st.Objective).With("session", st.Session)
	}
	if err := s.archive(tx, d, st, StatusAbandoned, "", "Abandoned: a new session was started with --force.", nil, now); err != nil {
		return nil, st, err
	}
	// The new session starts from the idle note the archive wrote
	// (its edits are applied; queuing more on the old body would
	// overlap them).
	cur, _, _ := Paths(project)
	d, err := s.ReadDoc(tx, cur)
	if err != nil {
		return nil, st, err
	}
	st.Version = d.IntProp("version")
	return d, st, nil
}

// setStarted queues the edits that make d the state note of the new
// session id: its properties, the checklists of the protocol proto, and the
// sections of the last session emptied (a person's lines under Next kept).
func (s *Service) setStarted(d *Doc, o StartOptions, st State, proto *protocol.Protocol, id string, progress int, project string, now time.Time, observed map[string]string) {
	d.Set("status", StatusActive)
	d.Set("session", id)
	d.Set("objective", OneLine(o.Objective))
	d.Set("progress", progress)
	d.Set("progress_start", progress)
	d.Set("epic", o.Epic)
	d.Set("linear", strings.ToUpper(o.Linear))
	d.Set("branch", o.Branch)
	d.Set("commit", o.Commit)
	d.Set("started", now)
	d.Set("updated", now)
	if m, err := s.V.Machine(); err == nil {
		d.Set("machine", m.Name) // the machine the session runs on (a start elsewhere names it)
	}
	if o.Continue != "" {
		d.Set("continues", SessionLink(project, o.Continue))
	} else {
		d.Set("continues", "")
	}
	d.Set("version", st.Version+1)
	for _, p := range []string{PropCompacted, PropCompactedInvocations, propCompactions, propArchive, propUpdatesLog} {
		d.Unset(p)
	}
	if _, ok := d.Section(SecCompactions); ok {
		d.SetSection(SecCompactions, nil)
	}
	d.Set("phase", PhaseInit)
	// Every session starts in the vault's default mode; the last session's
	// mode, even a person's disabled, does not carry over.
	d.Set("mode", FirstNonEmpty(s.V.Config.DefaultMode, "coding"))
	d.SetSection(SecObjective, []string{OneLine(o.Objective)})
	d.SetSection(SecStart, checklistLines(proto.Start, "c", observed))
	d.SetSection(SecUpdates, nil)
	d.SetSection(SecDecisions, nil)
	d.SetSection(SecBlockers, nil)
	d.SetSection(SecEnd, checklistLines(proto.End, "e", nil))
	d.SetSection(SecNext, d.OtherLines(SecNext))
	d.resetWorkflow()
}
