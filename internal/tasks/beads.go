package tasks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Importing a beads issues.jsonl (package importer reads it): one task note
// per issue, <project>/tasks/<id>.md, in one commit.
//
// The note is a task note as `task new` makes it (the vault's task.md
// template), with:
//
//   - name: the title; the H1 heading: the title on one line;
//   - status: the issue's, mapped by BeadsTaskStatus, and blocked while
//     the issue is deferred (below); beads_status: the issue's own;
//   - priority: BeadsTaskPriority of the issue's (beads_priority: the
//     issue's own); issue_type, labels, assignee, external_ref, closed_at,
//     close_reason, defer_until as properties; created and updated: the
//     issue's times;
//   - the dependencies as the task graph's wikilinks: "blocks" (the issue
//     waits for the other) in depends_on; the first "parent-child" in
//     parent (further parents in related_to); "related" and
//     "discovered-from" (and types the task graph has no relation for) in
//     related_to; discovered-from again in discovered_from, the other types
//     in other_dependencies ("waits-for bd-x"), and dependencies on other
//     projects ("external:…") in external_dependencies, as text;
//   - inherited_blockers, also in depends_on: what the issue's ancestors
//     (parent, grandparent, … by parent-child) wait for. `bd ready` holds
//     back every descendant of an issue with an open blocker; a task that
//     depends on its ancestors' blockers is held back by the task graph in
//     the same way, so the graph's ready tasks are `bd ready`'s issues;
//   - deferral: `bd ready` leaves out an issue whose defer_until is after
//     the time of the import (the service clock, UTC, to the second), and
//     the children (one parent-child link down) of one whose defer_until
//     is; such an issue, when its status maps to pending or in_progress,
//     is blocked instead, as a deferred one is, and parent_defer_until
//     holds the latest such time of its parents. The task graph's ready
//     tasks are then `bd ready`'s at the time of the import; an import
//     after that time makes them pending or in progress again;
//   - sections Description, Approach (beads' design field), Acceptance
//     criteria, Notes and Comments before the template's sections, each
//     with the issue's text byte for byte: as Markdown when it leaves the
//     note's H2 sections as they are, else in a fenced block (it has an H1
//     or H2 heading, an unclosed code block, a CR);
//   - source: beads, beads_id (the issue's id), beads_sha256 and
//     note_sha256: the SHA-256 of the note as the import wrote it, with
//     this value's 64 digits written as zeros. beads_sha256 is the SHA-256
//     of the issue's line when the note takes nothing from other lines or
//     from the clock; else the SHA-256 of that line's SHA-256 (hex)
//     followed by what it takes (beadsSum): the inherited blockers, the
//     depends_on links left out to break a cycle, the deferral in effect.
//     So a change to an ancestor's blockers, or a defer_until that passed,
//     changes it as a change of the issue's own line does. (The names of
//     the linked tasks do not count: one changes only when ids collide.)
//
// A second import reads note_sha256 back to tell a note nobody edited since
// the import wrote it (rewritten when the issue changed) from one a person
// or an agent edited. An edited note is kept; its issue is unchanged when
// beads_sha256 is what the import computes now, and skipped with the reason
// when it is not — when the issue's line changed, and likewise when only
// what the note takes from other lines or the clock did: one policy for
// both, the person's note is never overwritten, the report says the note
// is behind beads. A vault imported before beads_sha256 counted the
// inherited blockers holds the line's SHA-256 alone in the notes that
// inherit some: such a note is unchanged when its inherited_blockers are
// the ones computed now (and no deferral or broken cycle is in effect), so
// a re-import changes nothing until beads does.

// BeadsSource is the source property of a task note imported from beads.
const BeadsSource = "beads"

// Properties of an imported task note that the re-import reads.
const (
	propBeadsID   = "beads_id"
	propBeadsLine = "beads_sha256"
	propNoteSum   = "note_sha256"
)

// maxAncestry is how many parent-child links up a blocker is inherited, as
// far as beads goes.
const maxAncestry = 50

// Reasons an issue is skipped, by kind (the CLI counts them).
const (
	reasonOther     = "the vault already has this task note, and it was not imported from this issue: kept the vault's note (rename or move it, then import again)"
	reasonEdited    = "changed in beads since it was imported (its line, what it inherits from its ancestors, or a defer_until that passed), and its task note was edited in the vault since: kept the vault's note (to take beads' version, move the note out of the vault and import again)"
	reasonNoParse   = "its task note in the vault does not parse: kept as it is (fix it, or move it out of the vault, and import again)"
	reasonNotText   = "holds a NUL character, which a note cannot: left out"
	reasonDuplicate = "its task note is the note of another issue of the file: left out"
)

// BeadsImportOptions are the inputs of ImportBeads.
type BeadsImportOptions struct {
	Project string
	// Source names the file in the report and the commit, e.g.
	// "issues.jsonl".
	Source string
	// DryRun reads everything and writes nothing: the report says what an
	// import would do.
	DryRun bool
}

// BeadsNote is what an import did (or would do) with one issue.
type BeadsNote struct {
	// ID is the issue's beads id; TaskID the task's (the note's name).
	ID     string `json:"id"`
	TaskID string `json:"task_id"`
	// Note is the note's path from the vault root.
	Note string `json:"note"`
	// Action is "create", "update", "unchanged" or "skip".
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
}

// Actions of a BeadsNote.
const (
	BeadsCreate    = "create"
	BeadsUpdate    = "update"
	BeadsUnchanged = "unchanged"
	BeadsSkip      = "skip"
)

// BeadsReport is what ImportBeads did, or with DryRun would do.
type BeadsReport struct {
	DryRun bool `json:"dry_run"`
	// Issues is the number of issues given.
	Issues    int `json:"issues"`
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	// Skipped are the issues not imported, Path "FILE:LINE (ID)".
	Skipped []importer.Skipped `json:"skipped"`
	// Warnings are the dependencies the file's lines have that were left
	// out (importer.BeadsIssue.Dropped), those left out of depends_on
	// because they would close a cycle, which the task graph refuses, and
	// issues that wait for themselves through an ancestor.
	Warnings []string    `json:"warnings"`
	Notes    []BeadsNote `json:"notes"`
}

// errBeadsDryRun ends a dry run's transaction without writing.
var errBeadsDryRun = errors.New("dry run")

// BeadsTaskStatus is the task status of a beads status:
//
//	open                  pending       ready unless it waits for an open task
//	in_progress, hooked   in_progress   ready likewise
//	blocked, deferred     blocked       never ready; holds its dependents back
//	closed                completed
//	tombstone, pinned     archived      neither ready nor holding anything back
//
// and blocked for a status of the repository's own (beads leaves those out
// of `bd ready`). In both, a task waiting for a task that is not completed
// or archived is not ready; in beads, an issue waiting for one that is not
// closed (or deleted, or pinned).
//
// An import also makes blocked, as deferred, an issue that would be
// pending or in_progress while it is deferred until later: its own
// defer_until, or a parent's, is after the time of the import (`bd ready`
// leaves it out until then; its status, open or in progress, still holds
// its dependents back, and so does blocked).
func BeadsTaskStatus(status string) string {
	switch status {
	case importer.BeadsOpen, "":
		return session.TaskPending
	case importer.BeadsInProgress, importer.BeadsHooked:
		return session.TaskInProgress
	case importer.BeadsClosed:
		return session.TaskCompleted
	case importer.BeadsTombstone, importer.BeadsPinned:
		return session.TaskArchived
	}
	return session.TaskBlocked
}

// BeadsTaskPriority is the task priority of a beads priority. beads counts
// from 0, critical, to 4, backlog; a task's priority is higher first (`task
// new --priority`): P0 is 4, P1 3, P2 2, P3 1, P4 0 (and a priority out of
// beads' range keeps its place: 4 minus it).
func BeadsTaskPriority(p int) int { return 4 - p }

// beadsTaskIDs maps beads ids to task ids (note names): an id that is a
// valid note name (letters, digits, '-', '_', at most 100 bytes) is kept;
// in another, every other character becomes '_' ("bd-a3f8.1" →
// "bd-a3f8_1", a leading '-' or '_' gets an "x" before it). A name longer
// than 100 bytes, cut to 80, and a name that another id already has — the
// valid ids first, then in byte order, letter case aside for the file
// systems that ignore it — get "-" and 8 hex digits of the id's SHA-256.
// The same ids always give the same names.
func beadsTaskIDs(ids []string) map[string]string {
	out := make(map[string]string, len(ids))
	taken := map[string]bool{}
	sorted := slices.Clone(ids)
	sort.Strings(sorted)
	sorted = slices.Compact(sorted)
	// Valid ids first: they keep their names.
	for pass := 0; pass < 2; pass++ {
		for _, id := range sorted {
			valid := vault.CheckName("task id", id) == nil && len(id) <= 100
			if valid != (pass == 0) {
				continue
			}
			name := beadsName(id)
			if taken[strings.ToLower(name)] {
				name = hashedName(name, id)
			}
			for n := 2; taken[strings.ToLower(name)]; n++ {
				name = hashedName(name, id+"#"+strconv.Itoa(n))
			}
			taken[strings.ToLower(name)] = true
			out[id] = name
		}
	}
	return out
}

// beadsName is id as a note name, without regard to other ids.
func beadsName(id string) string {
	if vault.CheckName("task id", id) == nil && len(id) <= 100 {
		return id
	}
	var b strings.Builder
	for _, r := range id {
		if r < 0x80 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" || name[0] == '-' || name[0] == '_' {
		name = "x" + name
	}
	if len(name) > 100 {
		name = hashedName(strings.TrimRight(name[:80], "-_"), id)
	}
	return name
}

func hashedName(name, id string) string {
	sum := sha256.Sum256([]byte(id))
	return name + "-" + hex.EncodeToString(sum[:4])
}

// beadsPlan is what an issue's note links to, in task ids.
type beadsPlan struct {
	taskID         string
	dependsOn      []string // blocks, own
	inherited      []string // the ancestors' blockers
	parent         string
	related        []string
	discoveredFrom []string
	external       []string // "blocks external:…"
	other          []string // "waits-for bd-x"
	// cycleDropped are the own blockers left out of depends_on to break a
	// cycle (in related instead).
	cycleDropped []string
	// deferUntil is the issue's defer_until and parentDeferUntil the
	// latest of its parents', each set only while it is after the time of
	// the import and the issue's status maps to pending or in_progress:
	// the task is then blocked.
	deferUntil       time.Time
	parentDeferUntil time.Time
	// status is the task status; sum is beads_sha256 (beadsSum).
	status string
	sum    string
}

// planBeads works out every issue's links, and breaks the cycles of
// depends_on (the task graph refuses them; beads refuses a cycle of blocks
// too, but a file merged by hand may have one, and inherited blockers may
// close one beads does not see, when an epic waits for its own child);
// then every issue's task status at the time now (deferrals), and its
// beads_sha256.
func planBeads(issues []importer.BeadsIssue, now time.Time) ([]beadsPlan, []string) {
	ids := make([]string, 0, len(issues))
	byID := make(map[string]int, len(issues))
	for i, is := range issues {
		ids = append(ids, is.ID)
		byID[is.ID] = i
	}
	names := beadsTaskIDs(ids)
	name := func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return beadsName(id)
	}
	parents := make([][]string, len(issues)) // beads ids
	blockers := make([][]string, len(issues))
	plans := make([]beadsPlan, len(issues))
	for i, is := range issues {
		p := &plans[i]
		p.taskID = names[is.ID]
		for _, d := range is.Dependencies {
			if strings.HasPrefix(d.DependsOnID, "external:") {
				p.external = appendNew(p.external, d.Type+" "+d.DependsOnID)
				continue
			}
			to := name(d.DependsOnID)
			switch d.Type {
			case importer.BeadsBlocks:
				blockers[i] = appendNew(blockers[i], d.DependsOnID)
				p.dependsOn = appendNew(p.dependsOn, to)
			case importer.BeadsParentChild:
				parents[i] = appendNew(parents[i], d.DependsOnID)
				if p.parent == "" {
					p.parent = to
				} else if to != p.parent {
					p.related = appendNew(p.related, to)
				}
			case importer.BeadsRelated:
				p.related = appendNew(p.related, to)
			case importer.BeadsDiscoveredFrom:
				p.related = appendNew(p.related, to)
				p.discoveredFrom = appendNew(p.discoveredFrom, to)
			default:
				p.related = appendNew(p.related, to)
				p.other = appendNew(p.other, d.Type+" "+d.DependsOnID)
			}
		}
	}
	// Blockers are inherited down parent-child links, as far as beads
	// follows them.
	var selfBlocked []string
	for i := range issues {
		p := &plans[i]
		seen := map[int]bool{i: true}
		frontier := []int{i}
		for depth := 0; depth < maxAncestry && len(frontier) > 0; depth++ {
			var next []int
			for _, c := range frontier {
				for _, pid := range parents[c] {
					a, ok := byID[pid]
					if !ok || seen[a] {
						continue
					}
					seen[a] = true
					next = append(next, a)
					for _, b := range blockers[a] {
						switch to := name(b); {
						case to == p.taskID:
							selfBlocked = appendNew(selfBlocked, fmt.Sprintf("%s inherits itself as a blocker from its ancestor %s, which waits for it: bd ready never lists it, the task graph does once its other blockers are done", p.taskID, names[issues[a].ID]))
						case !slices.Contains(p.dependsOn, to):
							p.inherited = appendNew(p.inherited, to)
						}
					}
				}
			}
			frontier = next
		}
	}
	warnings := append(selfBlocked, breakCycles(plans)...)
	// Deferrals: an issue deferred until after now, or whose parent is (one
	// link up, whatever the parent's status), is not in bd ready.
	for i, is := range issues {
		p := &plans[i]
		p.status = BeadsTaskStatus(is.Status)
		if p.status != session.TaskPending && p.status != session.TaskInProgress {
			continue
		}
		if is.DeferUntil.After(now) {
			p.deferUntil = is.DeferUntil
		}
		for _, pid := range parents[i] {
			if a, ok := byID[pid]; ok && issues[a].DeferUntil.After(now) && issues[a].DeferUntil.After(p.parentDeferUntil) {
				p.parentDeferUntil = issues[a].DeferUntil
			}
		}
		if !p.deferUntil.IsZero() || !p.parentDeferUntil.IsZero() {
			p.status = session.TaskBlocked
		}
	}
	for i := range plans {
		plans[i].sum = beadsSum(issues[i].SHA256, plans[i])
	}
	return plans, warnings
}

// beadsSum is beads_sha256 of an issue whose line's SHA-256 is lineSum:
// lineSum itself when the plan takes nothing from other lines or from the
// clock; else the SHA-256 of lineSum followed, a line each, by what it
// takes: "inherits X" for each inherited blocker, "cycle X" for each
// blocker left out of depends_on to break a cycle, "deferred until T" and
// "parent deferred until T" for a deferral in effect (T in RFC 3339 with
// nanoseconds, UTC).
func beadsSum(lineSum string, p beadsPlan) string {
	var from []string
	for _, x := range p.inherited {
		from = append(from, "inherits "+x)
	}
	for _, x := range p.cycleDropped {
		from = append(from, "cycle "+x)
	}
	if !p.deferUntil.IsZero() {
		from = append(from, "deferred until "+p.deferUntil.UTC().Format(time.RFC3339Nano))
	}
	if !p.parentDeferUntil.IsZero() {
		from = append(from, "parent deferred until "+p.parentDeferUntil.UTC().Format(time.RFC3339Nano))
	}
	if len(from) == 0 {
		return lineSum
	}
	sum := sha256.Sum256([]byte(lineSum + "\n" + strings.Join(from, "\n") + "\n"))
	return hex.EncodeToString(sum[:])
}

// onlyInherits reports whether p takes nothing from other lines or the
// clock but inherited blockers: what a note imported before beads_sha256
// counted them can be checked against (its inherited_blockers).
func (p beadsPlan) onlyInherits() bool {
	return len(p.cycleDropped) == 0 && p.deferUntil.IsZero() && p.parentDeferUntil.IsZero()
}

// breakCycles drops depends_on links until the links of plans have no
// cycle: in each cycle found, an inherited link if it has one, else the
// link that closes it (kept in related_to). It returns a warning per link.
func breakCycles(plans []beadsPlan) []string {
	var warnings []string
	at := make(map[string]int, len(plans))
	for i, p := range plans {
		at[p.taskID] = i
	}
	for range 10000 {
		ts := make([]Task, len(plans))
		for i, p := range plans {
			ts[i] = Task{ID: p.taskID, DependsOn: append(slices.Clone(p.dependsOn), p.inherited...)}
		}
		cyc := findCycle(ts)
		if cyc == nil {
			break
		}
		from, to, inherited := cyc[len(cyc)-2], cyc[len(cyc)-1], false
		for k := 0; k+1 < len(cyc); k++ {
			if slices.Contains(plans[at[cyc[k]]].inherited, cyc[k+1]) {
				from, to, inherited = cyc[k], cyc[k+1], true
				break
			}
		}
		p := &plans[at[from]]
		loop := strings.Join(cyc, " → ")
		if inherited {
			p.inherited = slices.DeleteFunc(p.inherited, func(x string) bool { return x == to })
			warnings = append(warnings, fmt.Sprintf("%s inherits %s as a blocker from an ancestor, which would close the cycle %s: left out of its depends_on (bd ready never lists these issues)", from, to, loop))
		} else {
			p.dependsOn = slices.DeleteFunc(p.dependsOn, func(x string) bool { return x == to })
			p.related = appendNew(p.related, to)
			p.cycleDropped = appendNew(p.cycleDropped, to)
			warnings = append(warnings, fmt.Sprintf("%s waits for %s, which closes the cycle %s: kept in related_to, not in depends_on (the task graph refuses a cycle; bd ready never lists these issues)", from, to, loop))
		}
	}
	return warnings
}

func appendNew(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// ImportBeads writes issues (read from a beads issues.jsonl) as task notes
// of o.Project in one commit (see above), deferrals as of the service
// clock's time. For an issue whose note exists:
//
//   - unchanged when the note is what the import would write now, or when
//     the note was edited since the import wrote it but the issue is the
//     same: its line, and what the note takes from other lines and the
//     clock (beads_sha256; for a note imported before beads_sha256 counted
//     inherited blockers, its line and inherited_blockers);
//   - rewritten (updated) when the note is still byte for byte what an
//     earlier import wrote (note_sha256), unless it is what an import
//     before beads_sha256 counted inherited blockers wrote for the issue
//     as it is now (then unchanged);
//   - else kept, and the issue skipped with the reason: a note edited
//     since, one not imported from this issue, one that does not parse.
//
// An issue with a NUL character is skipped. progress, when not nil, is
// called after each issue. With o.DryRun nothing is written.
func (s *Service) ImportBeads(o BeadsImportOptions, issues []importer.BeadsIssue, progress func(done, total int)) (BeadsReport, vault.Result, error) {
	rep := BeadsReport{DryRun: o.DryRun}
	project, err := s.Project(o.Project)
	if err != nil {
		return rep, vault.Result{}, err
	}
	src := session.FirstNonEmpty(o.Source, importer.BeadsFile)
	var warnings []string
	for _, is := range issues {
		for _, d := range is.Dropped {
			warnings = append(warnings, fmt.Sprintf("%s:%d (%s): %s", src, is.Line, is.ID, d))
		}
	}
	plans, more := planBeads(issues, s.NowUTC())
	warnings = append(warnings, more...)
	res, err := s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		rep = BeadsReport{DryRun: o.DryRun, Issues: len(issues), Skipped: []importer.Skipped{}, Warnings: session.NonNil(slices.Clone(warnings)), Notes: make([]BeadsNote, 0, len(issues))}
		written := map[string]bool{}
		for i, is := range issues {
			if err := s.importBeadsIssue(tx, project, src, is, plans[i], written, o.DryRun, &rep); err != nil {
				return vault.Change{}, fmt.Errorf("importing issue %s (%s line %d): %w", is.ID, src, is.Line, err)
			}
			if progress != nil {
				progress(i+1, len(issues))
			}
		}
		if o.DryRun {
			return vault.Change{}, errBeadsDryRun
		}
		summary := fmt.Sprintf("%d tasks from beads %s", rep.Created, src)
		if rep.Updated > 0 {
			summary = fmt.Sprintf("%d tasks, %d updated, from beads %s", rep.Created, rep.Updated, src)
		}
		return vault.Change{Operation: "import", Summary: summary, Trailers: map[string]string{"Change-Type": "migration"}}, nil
	})
	if errors.Is(err, errBeadsDryRun) {
		return rep, vault.Result{}, nil
	}
	return rep, res, err
}

// importBeadsIssue decides about one issue and queues its note's write.
func (s *Service) importBeadsIssue(tx *vault.Tx, project, src string, is importer.BeadsIssue, p beadsPlan, written map[string]bool, dryRun bool, rep *BeadsReport) error {
	rel := session.TaskPath(project, p.taskID)
	out := BeadsNote{ID: is.ID, TaskID: p.taskID, Note: rel}
	done := func(action, reason string) error {
		out.Action, out.Reason = action, reason
		rep.Notes = append(rep.Notes, out)
		switch action {
		case BeadsCreate:
			rep.Created++
		case BeadsUpdate:
			rep.Updated++
		case BeadsUnchanged:
			rep.Unchanged++
		case BeadsSkip:
			rep.Skipped = append(rep.Skipped, importer.Skipped{Path: fmt.Sprintf("%s:%d (%s)", src, is.Line, is.ID), Reason: reason})
		}
		return nil
	}
	if written[rel] {
		return done(BeadsSkip, reasonDuplicate)
	}
	written[rel] = true
	data, err := s.renderBeadsNote(project, is, p)
	if err != nil {
		return err
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return done(BeadsSkip, reasonNotText)
	}
	write := func(action string) error {
		if !dryRun {
			if err := tx.Write(rel, data); err != nil {
				return err
			}
		}
		return done(action, "")
	}
	if !tx.Exists(rel) {
		return write(BeadsCreate)
	}
	var d *session.Doc
	cur, err := tx.ReadNote(rel, func(b []byte) error {
		var err error
		d, err = s.ParseDoc(rel, b)
		return err
	})
	switch {
	case err != nil && cur == nil:
		return err
	case bytes.Equal(cur, data):
		return done(BeadsUnchanged, "")
	case err != nil:
		return done(BeadsSkip, reasonNoParse)
	}
	if d.Prop("source") != BeadsSource || d.Prop(propBeadsID) != is.ID {
		return done(BeadsSkip, reasonOther)
	}
	stored := d.Prop(propBeadsLine)
	// Written when beads_sha256 was the line's alone (or when the note took
	// nothing from other lines).
	lineOnly := stored == is.SHA256 && p.sum != is.SHA256
	if importedAsIs(cur, d.Note.BodyOffset()) {
		if lineOnly {
			lp := p
			lp.sum = is.SHA256
			before, err := s.renderBeadsNote(project, is, lp)
			if err != nil {
				return err
			}
			if bytes.Equal(cur, before) {
				return done(BeadsUnchanged, "") // as imported, under the earlier beads_sha256
			}
		}
		return write(BeadsUpdate)
	}
	// Edited in the vault: kept; unchanged while the issue is as imported.
	switch {
	case stored == p.sum && p.sum != is.SHA256:
		return done(BeadsUnchanged, "") // its line, and what it takes from others
	case stored == is.SHA256 && p.onlyInherits() && slices.Equal(d.Note.GetList("inherited_blockers"), session.TaskLinks(project, p.inherited)):
		// Its line, and the inherited blockers the note holds: none when
		// the import took nothing from other lines, those an import before
		// beads_sha256 counted them wrote.
		return done(BeadsUnchanged, "")
	}
	return done(BeadsSkip, reasonEdited)
}

// renderBeadsNote renders issue is's task note, note_sha256 included.
func (s *Service) renderBeadsNote(project string, is importer.BeadsIssue, p beadsPlan) ([]byte, error) {
	return s.renderBeadsNoteWith(project, is, p, appendProps)
}

// renderBeadsNoteWith is renderBeadsNote adding the import's properties
// with add, or one at a time when add declines.
func (s *Service) renderBeadsNoteWith(project string, is importer.BeadsIssue, p beadsPlan, add func(string, []byte, []beadsProp) (*note.Note, bool)) ([]byte, error) {
	rel := session.TaskPath(project, p.taskID)
	title := session.OneLine(is.Title)
	if title == "" {
		title = is.ID
	}
	created := `""`
	if !is.CreatedAt.IsZero() {
		created = note.FormatTime(is.CreatedAt)
	}
	parent := `""`
	if p.parent != "" {
		parent = note.Scalar(session.TaskLink(project, p.parent))
	}
	b, err := s.Render("task.md", map[string]string{
		"ID": note.Scalar(p.taskID), "Name": note.Scalar(title), "Priority": strconv.Itoa(BeadsTaskPriority(is.Priority)),
		"KeyFiles": note.ListValue([]string{}), "Blocks": note.ListValue([]string{}),
		"DependsOn":    note.ListValue(session.TaskLinks(project, append(slices.Clone(p.dependsOn), p.inherited...))),
		"RelatedTo":    note.ListValue(session.TaskLinks(project, p.related)),
		"Parent":       parent,
		"Now":          created,
		"Heading":      title,
		"KeyFilesList": strings.Join(keyFileLines(nil), "\n"),
	})
	if err != nil {
		return nil, err
	}
	d, err := s.ParseDoc(rel, b)
	if err != nil {
		return nil, err
	}
	nl := d.Newline()
	if text := beadsSections(is, nl); text != "" {
		at := len(d.Body)
		for _, sec := range d.MD.Sections {
			if sec.Level == 2 {
				at = sec.Start
				break
			}
		}
		if at == len(d.Body) && len(d.Body) > 0 && !bytes.HasSuffix(d.Body, []byte("\n")) {
			text = nl + text
		}
		d.Edit(at, at, text)
	}
	d.Set("status", session.FirstNonEmpty(p.status, BeadsTaskStatus(is.Status)))
	if !is.UpdatedAt.IsZero() {
		d.Set("updated", is.UpdatedAt)
	}
	props := []beadsProp{{"source", BeadsSource}, {propBeadsID, is.ID}, {"beads_status", is.Status}, {"beads_priority", is.Priority}}
	if is.IssueType != "" {
		props = append(props, beadsProp{"issue_type", is.IssueType})
	}
	props = append(props, beadsProp{"labels", session.NonNil(is.Labels)})
	for _, kv := range [][2]string{{"assignee", is.Assignee}, {"external_ref", is.ExternalRef}} {
		if kv[1] != "" {
			props = append(props, beadsProp{kv[0], kv[1]})
		}
	}
	if !is.ClosedAt.IsZero() {
		props = append(props, beadsProp{"closed_at", is.ClosedAt})
	}
	if is.CloseReason != "" {
		props = append(props, beadsProp{"close_reason", is.CloseReason})
	}
	if !is.DeferUntil.IsZero() {
		props = append(props, beadsProp{"defer_until", is.DeferUntil})
	}
	if !p.parentDeferUntil.IsZero() {
		props = append(props, beadsProp{"parent_defer_until", p.parentDeferUntil})
	}
	for _, l := range []beadsProp{
		{"discovered_from", session.TaskLinks(project, p.discoveredFrom)},
		{"inherited_blockers", session.TaskLinks(project, p.inherited)},
		{"external_dependencies", p.external},
		{"other_dependencies", p.other},
	} {
		if len(l.value.([]string)) > 0 {
			props = append(props, l)
		}
	}
	props = append(props, beadsProp{propBeadsLine, session.FirstNonEmpty(p.sum, is.SHA256)}, beadsProp{propNoteSum, zeroSum})
	out, err := d.Bytes()
	if err != nil {
		return nil, err
	}
	n, ok := add(rel, out, props)
	if !ok {
		// A template whose front matter is not as the vault's is: one
		// property at a time.
		if d, err = s.ParseDoc(rel, out); err != nil {
			return nil, err
		}
		for _, p := range props {
			d.Set(p.key, p.value)
		}
		if out, err = d.Bytes(); err != nil {
			return nil, err
		}
		if n, err = note.Parse(rel, out); err != nil {
			return nil, err
		}
	}
	return stampNote(slices.Clone(n.Bytes()), n.BodyOffset())
}

// beadsProp is a property of an imported note: value is a string, an int,
// a time.Time or a []string, as note.Set takes them.
type beadsProp struct {
	key   string
	value any
}

// appendProps adds props, none of which data has, at the end of data's
// front matter in one edit, written as note.Set writes them: the many
// properties of 500 notes cost one parse each rather than one a property.
// ok is false when data's front matter is not a block of properties at
// the line start with LF line endings, or the result does not read back as
// props; nothing is then done.
func appendProps(rel string, data []byte, props []beadsProp) (*note.Note, bool) {
	n, err := note.Parse(rel, data)
	if err != nil || !n.HasFrontMatter() || !bytes.HasPrefix(data, []byte("---\n")) || bytes.HasPrefix(data[4:], []byte(" ")) ||
		bytes.IndexByte(data[:n.BodyOffset()], '\r') >= 0 {
		return nil, false
	}
	keys := n.Keys()
	for _, p := range props {
		if slices.Contains(keys, p.key) {
			return nil, false
		}
	}
	end := n.BodyOffset()
	if end < 4 || data[end-1] != '\n' {
		return nil, false
	}
	at := bytes.LastIndexByte(data[:end-1], '\n') + 1
	if string(data[at:end]) != "---\n" {
		return nil, false
	}
	var b bytes.Buffer
	b.Write(data[:at])
	for _, p := range props {
		b.WriteString(p.key + ":")
		switch v := p.value.(type) {
		case string:
			b.WriteString(" " + note.Scalar(v))
		case int:
			b.WriteString(" " + strconv.Itoa(v))
		case time.Time:
			b.WriteString(" " + note.FormatTime(v))
		case []string:
			b.WriteString(note.ListValue(v))
		default:
			return nil, false
		}
		b.WriteString("\n")
	}
	b.Write(data[at:])
	m, err := note.Parse(rel, b.Bytes())
	if err != nil || !bytes.Equal(m.Body(), n.Body()) {
		return nil, false
	}
	for _, p := range props {
		var want string
		switch v := p.value.(type) {
		case string:
			want = v
		case int:
			want = strconv.Itoa(v)
		case time.Time:
			want = note.FormatTime(v)
		case []string:
			if !slices.Equal(m.GetList(p.key), v) {
				return nil, false
			}
			continue
		}
		if got, ok := m.Get(p.key); !ok || got != want {
			return nil, false
		}
	}
	return m, true
}

// beadsSections renders the issue's texts as the note's sections, ending in
// a blank line ("" when it has none).
func beadsSections(is importer.BeadsIssue, nl string) string {
	var b strings.Builder
	for _, sec := range []struct{ title, text string }{
		{"Description", is.Description}, {"Approach", is.Design},
		{"Acceptance criteria", is.AcceptanceCriteria}, {"Notes", is.Notes},
	} {
		if sec.text == "" {
			continue
		}
		b.WriteString("## " + sec.title + nl + nl + verbatim(sec.text, nl) + nl)
	}
	if len(is.Comments) > 0 {
		b.WriteString("## Comments" + nl + nl)
		for _, c := range is.Comments {
			head := session.FirstNonEmpty(session.OneLine(c.Author), "unknown")
			if !c.CreatedAt.IsZero() {
				head += " · " + note.FormatTime(c.CreatedAt)
			}
			b.WriteString("### " + head + nl + nl)
			if c.Text != "" {
				b.WriteString(verbatim(c.Text, nl) + nl)
			}
		}
	}
	return b.String()
}

// verbatim renders text so that the note holds it byte for byte: as it is
// when it keeps the note's H2 sections as they are, else in a fenced
// block. The result ends in a line ending.
func verbatim(text, nl string) string {
	end := ""
	if !strings.HasSuffix(text, "\n") {
		end = nl
	}
	if keepsSections(text) {
		return text + end
	}
	fence := strings.Repeat("`", max(3, longestBackticks(text)+1))
	return "_As written in beads (in a code block: as Markdown it would break this note's sections):_" + nl + nl +
		fence + "markdown" + nl + text + end + fence + nl
}

// keepsSections reports whether text, placed in an H2 section of a note,
// leaves the sections as they are: no H1 or H2 heading of its own, no block
// (code, HTML) left open to swallow the next section, no CR or NUL.
func keepsSections(text string) bool {
	if strings.ContainsAny(text, "\r\x00") {
		return false
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	probe := text + "\n## probe\n" // as verbatim and beadsSections place it
	at := strings.LastIndex(probe, "## probe")
	found := false
	for _, sec := range markdown.ScanSections([]byte(probe)) {
		if sec.Level > 2 {
			continue
		}
		if sec.Start != at || sec.Title != "probe" {
			return false
		}
		found = true
	}
	return found
}

func longestBackticks(s string) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// zeroSum is note_sha256's value while the note's SHA-256 is taken.
var zeroSum = strings.Repeat("0", 64)

// noteSumRe finds note_sha256's value in a note's front matter.
var noteSumRe = lazyregexp.New(`(?m)^note_sha256: "?([0-9a-f]{64})"?\r?$`)

// noteSum locates note_sha256's 64 digits in data's front matter (which
// ends at bodyOffset).
func noteSum(data []byte, bodyOffset int) (int, int, bool) {
	m := noteSumRe().FindSubmatchIndex(data[:bodyOffset])
	if m == nil {
		return 0, 0, false
	}
	return m[2], m[3], true
}

// stampNote writes data's SHA-256, taken with note_sha256 as zeros, into
// note_sha256.
func stampNote(data []byte, bodyOffset int) ([]byte, error) {
	i, j, ok := noteSum(data, bodyOffset)
	if !ok {
		return nil, fmt.Errorf("the task note has no %s property to stamp", propNoteSum)
	}
	copy(data[i:j], zeroSum)
	sum := sha256.Sum256(data)
	copy(data[i:j], hex.EncodeToString(sum[:]))
	return data, nil
}

// importedAsIs reports whether data is byte for byte a note as an import
// wrote it: its note_sha256 is its own SHA-256.
func importedAsIs(data []byte, bodyOffset int) bool {
	i, j, ok := noteSum(data, bodyOffset)
	if !ok {
		return false
	}
	want := string(data[i:j])
	c := slices.Clone(data)
	copy(c[i:j], zeroSum)
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]) == want
}
