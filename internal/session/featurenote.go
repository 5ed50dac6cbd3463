package session

// Where feature notes live and the statuses they hold: the state note reads
// the active feature; package features writes them.

// Feature plans: one note per feature, <project>/features/<feature-id>.md.
// Its properties are the feature's fields (type: feature, feature_id, name,
// description, status, created_at, started_at, last_active); its body holds
// the implementation plan, one H2 section per phase:
//
//	## Phase: Core commands
//
//	phase_id:: core
//
//	- [ ] [[demo/tasks/impl-core|impl-core]] · Implement the core commands · **agent:** opus · **status:** in_progress · **started:** 2025-01-09T10:00:00Z ^t-1
//	- [x] write-docs · Write the docs · **status:** completed · **started:** … · **completed:** … · **artifacts:** `README.md`, `docs/x.md` ^t-2
//
// The phase's id is the "phase_id:: ID" line (a Dataview inline field; a
// section without one has its name's slug). Each task is one list line
// ending in a block id (^t-N): its task_id (a wikilink to
// <project>/tasks/<task-id> when that task note exists when the line
// is written, plain otherwise), its description, then labelled fields in this
// order, each left out when empty: agent, status (always), started,
// completed (RFC 3339), artifacts (code spans). The box is ticked exactly when
// the status is completed. A person's edits of these lines are read back: a
// ticked box, or the status word completed, makes the task completed (to
// reopen a task, untick it and change its status word); the other fields as
// written.
// Sections and lines that are not phases or task lines, and properties the
// engine does not define, are the person's and kept byte for byte. The list
// of active features is a query over these notes (Features, and the Obsidian
// base <project>/features.base), not a second file.
const (
	FeaturesDir = "features"

	// Feature statuses.
	FeatureActive    = "active"
	FeaturePaused    = "paused"
	FeatureCompleted = "completed"

	PhaseTitlePrefix = "Phase: "
	FeatureBase      = "features.base"
)

// FeaturePath is a feature note's path from the vault root.
func FeaturePath(project, id string) string {
	return project + "/" + FeaturesDir + "/" + id + ".md"
}

// FeatureLink is the wikilink to a feature note, labelled with its id.
func FeatureLink(project, id string) string { return Link(project+"/"+FeaturesDir+"/"+id, id) }

// featureIDOf returns the feature id a property value names (a wikilink,
// a path or a bare id).
func featureIDOf(v string) string {
	if ids := TaskIDs(NonEmpty(v)); len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// MemoryBankDir is the folder of a project that holds its imported memory
// bank (Cline, Roo Code, Kilo Code): <project>/memory-bank/<name>.md, each
// note byte for byte under its own name and sub-folder. One folder, named
// as Cline and Roo name theirs, whatever tool wrote it: the notes stay
// apart from the canonical notes and from Serena's memories at the
// project's top, Serena lists them as "memory-bank/<name>", and Obsidian
// shows the memory bank as the folder its owners know.
const MemoryBankDir = "memory-bank"
