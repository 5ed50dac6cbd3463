package graph

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/tasks"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Folders of a project read besides the session service's: decision notes
// (ADRs) and feature plans.
const (
	decisionsDir = session.DecisionsDir
	featuresDir  = session.FeaturesDir
)

// Build reads the given projects of svc's vault into a graph. Each project
// is resolved with svc.Project (errs.ProjectNotFound when it has no
// current-state note). For each project it reads:
//
//   - its sessions: the current state while a session is in it, and every
//     archived record in sessions/, with their updates (compacted ones too),
//     decisions and blockers (svc.Status, svc.Archived). A session's status
//     is the one its note holds: the export is the same on every machine
//     and at any time, where `status` reports a session without a recent
//     heartbeat as crashed;
//   - its tasks and their relations (svc.Tasks);
//   - the front matter of its decision notes (decisions/*.md): the agents
//     in decided_by, approved_by and rejected_by, and the decisions that no
//     session entry names (title, date, impact, category, session, and the
//     Choice and Rationale sections);
//   - its feature notes (features/*.md with a feature_id or a name:
//     feature_id, name, status, started_at, last_active; tasks from a tasks
//     property and from the body's links to task notes);
//   - the agents a session's note names in active_agent and agents, and
//     those its agent invocations (the orchestrator workflow) name.
//
// Notes or properties that are absent give no nodes. A note that does not
// parse is errs.StateParseError naming it and its line.
func Build(svc *session.Service, projects []string) (*Graph, error) {
	loc, err := svc.V.Config.Location()
	if err != nil {
		return nil, errs.Wrap(errs.ConfigInvalid, err, "the vault's time_zone")
	}
	b := &builder{svc: svc, g: New(), md: svc.MD, loc: loc}
	for _, p := range projects {
		if err := b.project(p); err != nil {
			return nil, err
		}
	}
	return b.g, nil
}

type builder struct {
	svc *session.Service
	g   *Graph
	md  *markdown.Parser
	loc *time.Location
}

func (b *builder) project(name string) error {
	project, err := b.svc.Project(name)
	if err != nil {
		return err
	}
	if err := b.tasks(project); err != nil {
		return err
	}
	if err := b.sessions(project); err != nil {
		return err
	}
	if err := b.decisionNotes(project); err != nil {
		return err
	}
	return b.features(project)
}

func (b *builder) tasks(project string) error {
	tasks, err := tasks.New(b.svc).Tasks(project)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		n := b.g.node(LabelTask, project, t.ID)
		n.set("name", t.Name)
		n.set("status", t.Status)
		n.set("priority", t.Priority)
		n.set("phase", t.Phase)
		n.set("iteration", t.Iteration)
		n.set("score", t.Score)
		n.set("updatedAt", t.Updated)
		n.set("note", t.Note)
		for _, rel := range []struct {
			typ string
			to  []string
		}{{Blocks, t.Blocks}, {DependsOn, t.DependsOn}, {RelatedTo, t.RelatedTo}, {ChildOf, nonEmpty(t.Parent)}} {
			for _, to := range rel.to {
				b.g.link(rel.typ, n.ID(), nodeID(LabelTask, []string{project, to}))
			}
		}
	}
	return nil
}

// sessions reads the session in the current state, if any, and every
// archived record. A record archived under the id of the current session
// (an end cut short) stands for it.
func (b *builder) sessions(project string) error {
	names, err := b.notesIn(project + "/" + session.SessionsDir)
	if err != nil {
		return err
	}
	archived := map[string]bool{}
	for _, name := range names {
		id := strings.TrimSuffix(name, ".md")
		if vault.CheckName("session", id) != nil {
			continue // not a session record: a session id is a plain name
		}
		st, err := b.svc.Archived(project, id)
		if err != nil {
			return err
		}
		if st.Session == "" {
			continue
		}
		rel := project + "/" + session.SessionsDir + "/" + name
		fm, err := b.frontMatter(rel)
		if err != nil {
			return err
		}
		archived[st.Session] = true
		b.session(st, rel, fm)
	}
	cur, err := b.svc.Status(project)
	if err != nil {
		return err
	}
	if cur.Session == "" || cur.Status == session.StatusIdle || archived[cur.Session] {
		return nil
	}
	rel := project + "/" + session.CurrentStateNote
	fm, err := b.frontMatter(rel)
	if err != nil {
		return err
	}
	b.session(cur, rel, fm)
	return nil
}

// session adds one session, its entries and its relations; rel is its note
// and fm that note's front matter.
func (b *builder) session(st session.State, rel string, fm *note.Note) {
	project := st.Project
	n := b.g.node(LabelSession, project, st.Session)
	status := st.Status
	if v := prop(fm, "status"); v != "" {
		status = v // as written, not as judged from this machine's heartbeats
	}
	n.set("status", status)
	n.set("objective", st.Objective)
	n.set("progress", st.Progress)
	n.set("epic", st.Epic)
	n.set("linear", st.Linear)
	n.set("branch", st.Branch)
	n.set("commit", st.Commit)
	n.set("mode", st.Mode)
	n.set("activeAgent", agentName(prop(fm, "active_agent")))
	n.set("summary", st.Summary)
	n.set("nextSteps", st.NextSteps)
	n.set("startedAt", st.Started)
	n.set("updatedAt", st.Updated)
	n.set("endedAt", st.Ended)
	n.set("note", rel)
	id := n.ID()

	if st.Continues != "" {
		b.g.link(Continues, id, nodeID(LabelSession, []string{project, st.Continues}))
	}
	if st.ActiveTask != "" {
		b.g.link(WorksOn, id, nodeID(LabelTask, []string{project, st.ActiveTask}))
	}
	agents := append(nonEmpty(prop(fm, "active_agent")), list(fm, "agents")...)
	for _, inv := range st.Workflow.AgentHistory { // the workflow's agent invocations, compacted ones too
		agents = append(agents, inv.Agent)
	}
	for _, a := range agents {
		if name := agentName(a); name != "" {
			b.g.link(Invoked, id, b.g.node(LabelAgent, name).ID())
		}
	}
	for _, u := range st.Updates {
		un := b.g.node(LabelUpdate, project, st.Session, u.ID)
		un.set("type", u.Type)
		un.set("message", u.Message)
		un.set("progress", u.Progress)
		un.set("tags", u.Tags)
		un.set("timestamp", u.Time)
		b.g.link(HasUpdate, id, un.ID())
	}
	for _, d := range st.Decisions {
		if d.Note == "" {
			continue
		}
		dn := b.g.node(LabelDecision, d.Note)
		dn.set("project", project)
		dn.set("sessionId", st.Session)
		dn.set("entryId", d.ID)
		dn.set("title", d.Title)
		dn.set("choice", d.Choice)
		dn.set("rationale", d.Rationale)
		dn.set("alternatives", d.Alternatives)
		dn.set("impact", d.Impact)
		dn.set("category", d.Category)
		dn.set("timestamp", d.Time)
		dn.set("note", d.Note+".md")
		b.g.link(MadeDecision, id, dn.ID())
	}
	for _, bl := range st.Blockers {
		bn := b.g.node(LabelBlocker, project, st.Session, bl.ID)
		bn.set("description", bl.Text)
		bn.set("severity", bl.Severity)
		bn.set("status", bl.Status)
		bn.set("resolution", bl.Resolution)
		bn.set("resolvedAt", bl.ResolvedAt)
		bn.set("timestamp", bl.Time)
		b.g.link(Encountered, id, bn.ID())
		// A resolution that links a decision's note: that decision
		// resolved the blocker.
		for _, target := range b.md.WikiLinks([]byte(bl.Resolution)) {
			if dec, ok := inFolder(project, decisionsDir, target); ok {
				b.g.link(Resolved, nodeID(LabelDecision, []string{project + "/" + decisionsDir + "/" + dec}), bn.ID())
			}
		}
	}
}

// decisionNotes reads the front matter of each decision note: the agents
// that decided, approved or rejected it, and, for a decision no session
// entry names, the decision itself.
func (b *builder) decisionNotes(project string) error {
	names, err := b.notesIn(project + "/" + decisionsDir)
	if err != nil {
		return err
	}
	for _, name := range names {
		rel := project + "/" + decisionsDir + "/" + name
		fm, err := b.frontMatter(rel)
		if err != nil {
			return err
		}
		dn := b.g.node(LabelDecision, strings.TrimSuffix(rel, ".md"))
		dn.setDefault("project", project)
		dn.setDefault("sessionId", prop(fm, "session"))
		dn.setDefault("entryId", prop(fm, "id"))
		dn.setDefault("title", prop(fm, "title"))
		dn.setDefault("alternatives", list(fm, "alternatives"))
		dn.setDefault("impact", prop(fm, "impact"))
		dn.setDefault("category", prop(fm, "category"))
		dn.setDefault("timestamp", b.time(prop(fm, "date")))
		dn.setDefault("note", rel)
		if _, ok := dn.Props["choice"]; !ok {
			body := fm.Body()
			doc := &markdown.Doc{Sections: markdown.ScanSections(body)} // the sections alone, as session reads notes
			for _, sec := range []struct{ key, title string }{{"choice", "Choice"}, {"rationale", "Rationale"}} {
				if s, ok := doc.Find(2, sec.title); ok {
					dn.set(sec.key, strings.TrimSpace(string(body[s.BodyStart:s.End])))
				}
			}
		}
		if s, ok := dn.Props["sessionId"].(string); ok {
			b.g.link(MadeDecision, nodeID(LabelSession, []string{project, s}), dn.ID())
		}
		for _, rel := range []struct{ typ, key string }{{Decided, "decided_by"}, {Approved, "approved_by"}, {Rejected, "rejected_by"}} {
			for _, a := range list(fm, rel.key) {
				if name := agentName(a); name != "" {
					b.g.link(rel.typ, b.g.node(LabelAgent, name).ID(), dn.ID())
				}
			}
		}
	}
	return nil
}

// features reads the feature notes: features/<feature-id>.md with a
// feature_id or a name property (its id is feature_id, else the note's name).
func (b *builder) features(project string) error {
	names, err := b.notesIn(project + "/" + featuresDir)
	if err != nil {
		return err
	}
	for _, name := range names {
		rel := project + "/" + featuresDir + "/" + name
		fm, err := b.frontMatter(rel)
		if err != nil {
			return err
		}
		id := prop(fm, "feature_id")
		if id == "" && prop(fm, "name") == "" {
			continue // no feature plan: a person's note kept beside them
		}
		if id == "" {
			id = strings.TrimSuffix(name, ".md")
		}
		n := b.g.node(LabelFeature, project, id)
		n.set("name", prop(fm, "name"))
		n.set("status", prop(fm, "status"))
		n.set("startedAt", b.time(prop(fm, "started_at")))
		n.set("lastActive", b.time(prop(fm, "last_active")))
		n.set("note", rel)
		for _, target := range append(linkTargets(list(fm, "tasks")), b.md.WikiLinks(fm.Body())...) {
			if task, ok := inFolder(project, session.TasksDir, target); ok {
				b.g.link(HasTask, n.ID(), nodeID(LabelTask, []string{project, task}))
			}
		}
	}
	return nil
}

// notesIn lists the notes (*.md files) directly in dir, a folder of the
// vault, sorted by name; none when the folder does not exist.
func (b *builder) notesIn(dir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(b.svc.V.Root, filepath.FromSlash(dir)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") && vault.CheckPath(dir+"/"+e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// frontMatter reads and parses the note rel (a stable read, see
// vault.ReadFile).
func (b *builder) frontMatter(rel string) (*note.Note, error) {
	data, err := b.svc.V.ReadFile(rel)
	if err != nil {
		return nil, err
	}
	n, err := note.Parse(rel, data)
	if err != nil {
		project, _, _ := strings.Cut(rel, "/")
		return nil, session.NoteParseError(rel, err, "fix the note; `"+b.svc.Command(project, "check")+"` lists every note it cannot read")
	}
	return n, nil
}

// time returns v, a time property, as ISO 8601 in UTC when it reads as a
// time (every form note.ParseTime reads), else as written.
func (b *builder) time(v string) any {
	if t, err := note.ParseTime(v, b.loc); err == nil {
		return t
	}
	return v
}

func prop(fm *note.Note, key string) string {
	if fm == nil {
		return ""
	}
	v, _ := fm.Get(key)
	return strings.TrimSpace(v)
}

func list(fm *note.Note, key string) []string {
	if fm == nil {
		return nil
	}
	var out []string
	for _, v := range fm.GetList(key) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func nonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

// unlink returns the target of a wikilink value (session.Unlink), trimmed.
func unlink(v string) string { return strings.TrimSpace(session.Unlink(v)) }

func linkTargets(values []string) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		out = append(out, unlink(v))
	}
	return out
}

// agentName is the agent a value names: a name ("analyst"), or a link to an
// agent's note, whose file name is the agent ("[[agents/analyst]]").
func agentName(v string) string {
	t := unlink(v)
	if strings.Contains(t, "/") {
		t = path.Base(strings.TrimSuffix(t, ".md"))
	}
	return t
}

// inFolder returns the name of the note a link target points to in the
// project's folder dir ("tasks"): the target written from the vault root
// ("demo/tasks/x"), from the project ("tasks/x") or as a bare note name
// ("x"), with or without .md. ok is false for a target elsewhere.
func inFolder(project, dir, target string) (name string, ok bool) {
	t := strings.TrimSuffix(strings.TrimSpace(target), ".md")
	for _, prefix := range []string{project + "/" + dir + "/", dir + "/", ""} {
		if rest, found := strings.CutPrefix(t, prefix); found && rest != "" && !strings.Contains(rest, "/") {
			return rest, true
		}
	}
	return "", false
}
