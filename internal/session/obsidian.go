package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/sessionvault/sessionvault/internal/vault"
)

// TypesFile is Obsidian's file of property types (Settings → Properties),
// relative to the vault.
const TypesFile = ".obsidian/types.json"

// PropertyTypes are the Obsidian property types of every property the
// engine writes in its notes (current state, archived sessions, decision
// notes, the logs), so that every device shows them the same: datetime for
// times, number for counts, multitext for lists, tags for tags, text for the
// rest.
var PropertyTypes = map[string]string{
	"type": "text", "project": "text", "status": "text", "session": "text", "objective": "text",
	"progress": "number", "progress_start": "number", "epic": "text", "linear": "text",
	"branch": "text", "commit": "text", "started": "datetime", "updated": "datetime",
	"ended": "datetime", "continues": "text", "last_session": "text", "version": "number",
	"phase": "text", "mode": "text", "duration_minutes": "number", "summary": "text",
	"id": "text", "title": "text", "date": "datetime", "impact": "text", "category": "text",
	"alternatives": "multitext", "violations": "number", "sessions": "number", "decisions": "number",
	"tags": "tags",
	// the orchestrator workflow and who made a decision
	"active_agent": "text", "workflow_phase": "text", "last_agent_change": "datetime",
	"decided_by": "text", "approved_by": "multitext", "rejected_by": "multitext",
	// feature notes, the current state's active feature, command logs
	"feature_id": "text", "name": "text", "description": "text", "created_at": "datetime",
	"started_at": "datetime", "last_active": "datetime", "active_feature": "text",
}

// MergeTypes returns .obsidian/types.json with the engine's property types
// added to existing (nil: no file yet): a type the vault already declares is
// kept (a person may have chosen another), and so is everything else in the
// file. changed is false when nothing was missing.
func MergeTypes(existing []byte) (out []byte, changed bool, err error) {
	doc := map[string]any{}
	if len(bytes.TrimSpace(existing)) > 0 {
		if err := json.Unmarshal(existing, &doc); err != nil {
			return nil, false, fmt.Errorf("%s is not valid JSON (%w); fix it, or delete it for Obsidian to write it again", TypesFile, err)
		}
	}
	types, _ := doc["types"].(map[string]any)
	if types == nil {
		if doc["types"] != nil {
			return nil, false, fmt.Errorf("%s: \"types\" is not an object", TypesFile)
		}
		types = map[string]any{}
	}
	keys := make([]string, 0, len(PropertyTypes))
	for k := range PropertyTypes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := types[k]; !ok {
			types[k] = PropertyTypes[k]
			changed = true
		}
	}
	if !changed {
		return existing, false, nil
	}
	doc["types"] = types
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, false, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), true, nil
}

// writeObsidianFiles adds, in tx, what makes a project's notes native in
// Obsidian: the property types (merged into .obsidian/types.json) and a
// base (Obsidian Bases) of the project's sessions, one of its decisions and
// one of its features (the features.base template), each only when
// missing. It returns the paths it writes.
func (s *Service) writeObsidianFiles(tx *vault.Tx, project string) ([]string, error) {
	var written []string
	old, err := tx.Read(TypesFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if b, changed, err := MergeTypes(old); err != nil {
		return nil, err
	} else if changed {
		if err := tx.Write(TypesFile, b); err != nil {
			return nil, err
		}
		written = append(written, TypesFile)
	}
	for name, content := range map[string]string{
		project + "/sessions.base":  sessionsBase(project),
		project + "/decisions.base": decisionsBase(project),
	} {
		if tx.Exists(name) {
			continue
		}
		if err := tx.Write(name, []byte(content)); err != nil {
			return nil, err
		}
		written = append(written, name)
	}
	if name := project + "/" + FeatureBase; !tx.Exists(name) {
		b, err := s.Render(FeatureBase, map[string]string{"Project": project})
		if err != nil {
			return nil, err
		}
		if err := tx.Write(name, b); err != nil {
			return nil, err
		}
		written = append(written, name)
	}
	sort.Strings(written)
	return written, nil
}

// sessionsBase is the Obsidian base (Obsidian help: Bases syntax) of a
// project's sessions: the archived ones and the current state, newest first.
func sessionsBase(project string) string {
	return `filters:
  and:
    - file.inFolder("` + project + `")
    - or:
        - 'type == "session"'
        - 'type == "session-state"'
formulas:
  hours: 'if(duration_minutes, (duration_minutes / 60).toFixed(1), "")'
properties:
  formula.hours:
    displayName: Hours
  duration_minutes:
    displayName: Minutes
views:
  - type: table
    name: Sessions
    order:
      - file.name
      - status
      - phase
      - progress
      - objective
      - started
      - duration_minutes
      - formula.hours
    sort:
      - property: started
        direction: DESC
`
}

// decisionsBase is the Obsidian base of a project's decision notes.
func decisionsBase(project string) string {
	return `filters:
  and:
    - file.inFolder("` + project + `/decisions")
    - 'type == "decision"'
views:
  - type: table
    name: Decisions
    order:
      - file.name
      - title
      - impact
      - category
      - date
      - session
    sort:
      - property: date
        direction: DESC
`
}
