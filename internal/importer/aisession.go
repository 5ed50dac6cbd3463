package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	yaml "go.yaml.in/yaml/v3"
)

// The .ai-session folder (the exchange format docs/features.md describes,
// version 1.0), its layout and data formats:
//
//	.ai-session/
//	  active-features.yaml             active_features: [{feature_id, started_at, last_active, status}]
//	  <feature-id>/implementation-plan.yaml   feature {id, name, description, created_at}, phases [{phase_id, name, tasks [...]}]
//	  <feature-id>/history.jsonl       one JSON object per line: timestamp, command, arguments, model, agent, task_id, status, duration_ms, error
//	  <feature-id>/state.yaml          version "1.0", feature_id, current_state {active_task, model_in_use, started_at, last_updated}
//	  README.md
//
// ReadAISession reads such a folder into an [AISession] (never writing to
// it); [AISession.Files] renders one, deterministically: features sorted by
// id, the format's keys in its order, strings double-quoted, times in UTC to
// the second, no clock read. Missing files are no error (a feature folder
// without a plan has an empty plan, one without history.jsonl no history); a
// file or line that cannot be read is skipped and reported with its path and
// line.

// AISessionVersion is the state.yaml version this package reads and writes
// (a missing version is 1.0).
const AISessionVersion = "1.0"

// AISession is an .ai-session folder as data.
type AISession struct {
	Features []AIFeature
}

// AIFeature is one feature: its entry in active-features.yaml, its
// implementation plan, its history and its state.
type AIFeature struct {
	ID          string
	Name        string
	Description string
	Status      string // active, paused or completed
	CreatedAt   *time.Time
	StartedAt   *time.Time
	LastActive  *time.Time
	Phases      []AIPhase
	History     []AIHistoryEntry
	// State is state.yaml as read (nil when absent); Files derives it (see
	// AIState).
	State *AIState
}

// AIPhase is one phase of a plan.
type AIPhase struct {
	ID    string
	Name  string
	Tasks []AITask
}

// AITask is one task of a phase.
type AITask struct {
	TaskID      string
	Description string
	Agent       string
	Status      string // pending, in_progress, completed or blocked
	StartedAt   *time.Time
	CompletedAt *time.Time
	Artifacts   []string
	// Line is the task's line in implementation-plan.yaml (0 when not read
	// from a file).
	Line int
}

// AIHistoryEntry is one line of history.jsonl. Empty strings stand for the
// format's nulls.
type AIHistoryEntry struct {
	Timestamp  time.Time
	Command    string
	Arguments  string
	Model      string
	Agent      string
	TaskID     string
	Status     string // success or failure
	DurationMs *int64
	Error      string
	Line       int // its line in history.jsonl (0 when not read from a file)
}

// AIState is state.yaml's current_state. Files writes active_task as the
// plan's first in_progress task, model_in_use as the model of the feature's
// last history entry that names one, started_at and last_updated as the
// feature's started_at and last_active: derived from the plan and the
// history, so that it never disagrees with them.
type AIState struct {
	Version     string
	ActiveTask  string
	ModelInUse  string
	StartedAt   *time.Time
	LastUpdated *time.Time
}

var (
	aiFeatureIDRe = lazyregexp.New(`^[a-z0-9]+(?:-[a-z0-9]+)*-\d{4}-\d{2}-\d{2}$`)
	yamlLineRe    = lazyregexp.New(`line (\d+): `)
)

// ---- reading ----

// ReadAISession reads the .ai-session folder dir. The error is for a
// folder that does not exist or cannot be listed; everything else that
// cannot be read is in skipped, each with its path (relative to dir) and
// the reason, naming the line.
func ReadAISession(dir string) (AISession, []Skipped, error) {
	var a AISession
	var skipped []Skipped
	fi, err := os.Stat(dir)
	if err != nil {
		return a, nil, err
	}
	if !fi.IsDir() {
		return a, nil, fmt.Errorf("%s is not a folder", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return a, nil, err
	}
	byID := map[string]*AIFeature{}
	get := func(id string) *AIFeature {
		if f, ok := byID[id]; ok {
			return f
		}
		f := &AIFeature{ID: id, Status: "active"}
		byID[id] = f
		return f
	}
	listed := map[string]bool{}
	if data, err := os.ReadFile(filepath.Join(dir, "active-features.yaml")); err == nil {
		list, sk := aiParseActiveFeatures(data)
		skipped = append(skipped, sk...)
		for _, e := range list {
			f := get(e.ID)
			f.Status, f.StartedAt, f.LastActive = e.Status, e.StartedAt, e.LastActive
			listed[e.ID] = true
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		skipped = append(skipped, Skipped{Path: "active-features.yaml", Reason: "unreadable: " + err.Error()})
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !e.IsDir() {
			continue
		}
		if !aiFeatureIDRe().MatchString(name) {
			skipped = append(skipped, Skipped{Path: name + "/", Reason: "not a feature folder: its name is not a feature id {slug}-{YYYY-MM-DD}"})
			continue
		}
		f := get(name)
		if why := aiReadFeatureDir(filepath.Join(dir, name), f, &skipped); why != "" {
			delete(byID, name)
			skipped = append(skipped, Skipped{Path: name + "/", Reason: why})
		}
	}
	for id, f := range byID {
		if f.StartedAt == nil {
			f.StartedAt = f.CreatedAt
		}
		if f.CreatedAt == nil {
			f.CreatedAt = f.StartedAt
		}
		if f.LastActive == nil {
			f.LastActive = f.StartedAt
		}
		if f.Name == "" {
			f.Name = id
		}
		a.Features = append(a.Features, *f)
	}
	sort.Slice(a.Features, func(i, j int) bool { return a.Features[i].ID < a.Features[j].ID })
	return a, skipped, nil
}

type aiListEntry struct {
	ID                    string
	Status                string
	StartedAt, LastActive *time.Time
}

// parseActiveFeatures reads active-features.yaml; entries that cannot be
// read are skipped with their line.
func aiParseActiveFeatures(data []byte) ([]aiListEntry, []Skipped) {
	const file = "active-features.yaml"
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, []Skipped{{Path: file, Reason: aiYAMLReason(file, err)}}
	}
	doc := yDoc(&root)
	if doc == nil {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, nil
		}
		return nil, []Skipped{{Path: file, Reason: file + ":1: not a mapping with active_features"}}
	}
	seq := yValue(doc, "active_features")
	if seq == nil || seq.Kind != yaml.SequenceNode {
		if seq != nil && seq.Tag == "!!null" {
			return nil, nil
		}
		return nil, []Skipped{{Path: file, Reason: fmt.Sprintf("%s:%d: active_features is not a list", file, doc.Line)}}
	}
	var out []aiListEntry
	var skipped []Skipped
	for _, n := range seq.Content {
		var e struct {
			FeatureID  string  `yaml:"feature_id"`
			StartedAt  *string `yaml:"started_at"`
			LastActive *string `yaml:"last_active"`
			Status     string  `yaml:"status"`
		}
		bad := func(why string) {
			line := n.Line
			if k, _, ok := strings.Cut(why, " "); ok && n.Kind == yaml.MappingNode {
				line = yLine(n, strings.TrimSuffix(k, ":"))
			}
			skipped = append(skipped, Skipped{Path: file, Reason: fmt.Sprintf("%s:%d: %s", file, line, why)})
		}
		if err := n.Decode(&e); err != nil {
			bad(strings.TrimPrefix(err.Error(), "yaml: "))
			continue
		}
		if !aiFeatureIDRe().MatchString(e.FeatureID) {
			bad(fmt.Sprintf("feature_id %q is not a feature id {slug}-{YYYY-MM-DD}", e.FeatureID))
			continue
		}
		if e.Status == "" {
			e.Status = "active"
		}
		if e.Status != "active" && e.Status != "paused" && e.Status != "completed" {
			bad(fmt.Sprintf("status %q is not active, paused or completed", e.Status))
			continue
		}
		le := aiListEntry{ID: e.FeatureID, Status: e.Status}
		var err error
		if le.StartedAt, err = aiOptTime(e.StartedAt); err != nil {
			bad("started_at: " + err.Error())
			continue
		}
		if le.LastActive, err = aiOptTime(e.LastActive); err != nil {
			bad("last_active: " + err.Error())
			continue
		}
		out = append(out, le)
	}
	return out, skipped
}

// readFeatureDir reads a feature folder into f; a non-empty result is why
// the whole feature is skipped (a plan or state that cannot be read).
func aiReadFeatureDir(dir string, f *AIFeature, skipped *[]Skipped) string {
	rel := func(name string) string { return f.ID + "/" + name }
	if data, err := os.ReadFile(filepath.Join(dir, "state.yaml")); err == nil {
		st, why := aiParseState(rel("state.yaml"), data, f.ID)
		if why != "" {
			return why
		}
		f.State = st
	} else if !errors.Is(err, fs.ErrNotExist) {
		return rel("state.yaml") + ": unreadable: " + err.Error()
	}
	if data, err := os.ReadFile(filepath.Join(dir, "implementation-plan.yaml")); err == nil {
		if why := aiParsePlan(rel("implementation-plan.yaml"), data, f, skipped); why != "" {
			return why
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return rel("implementation-plan.yaml") + ": unreadable: " + err.Error()
	}
	if data, err := os.ReadFile(filepath.Join(dir, "history.jsonl")); err == nil {
		f.History, *skipped = aiParseHistory(rel("history.jsonl"), data, *skipped)
	} else if !errors.Is(err, fs.ErrNotExist) {
		*skipped = append(*skipped, Skipped{Path: rel("history.jsonl"), Reason: "unreadable: " + err.Error()})
	}
	return ""
}

func aiParseState(file string, data []byte, id string) (*AIState, string) {
	var s struct {
		Version   *string `yaml:"version"`
		FeatureID string  `yaml:"feature_id"`
		Current   struct {
			ActiveTask  *string `yaml:"active_task"`
			ModelInUse  *string `yaml:"model_in_use"`
			StartedAt   *string `yaml:"started_at"`
			LastUpdated *string `yaml:"last_updated"`
		} `yaml:"current_state"`
	}
	if err := yaml.Unmarshal(data, &s); err != nil {
		return nil, aiYAMLReason(file, err)
	}
	st := &AIState{Version: AISessionVersion}
	if s.Version != nil {
		st.Version = *s.Version
	}
	if st.Version != AISessionVersion {
		return nil, fmt.Sprintf("%s: version %q is not supported (sessionvault reads version %s; migrate the folder first)", file, st.Version, AISessionVersion)
	}
	if s.FeatureID != "" && s.FeatureID != id {
		return nil, fmt.Sprintf("%s: feature_id %q is not its folder's %q", file, s.FeatureID, id)
	}
	st.ActiveTask, st.ModelInUse = aiDeref(s.Current.ActiveTask), aiDeref(s.Current.ModelInUse)
	st.StartedAt, _ = aiOptTime(s.Current.StartedAt)
	st.LastUpdated, _ = aiOptTime(s.Current.LastUpdated)
	return st, ""
}

// parsePlan reads implementation-plan.yaml into f; tasks that cannot be
// read are skipped with their line; a plan that cannot be read at all, or
// that names another feature, is why f is skipped.
func aiParsePlan(file string, data []byte, f *AIFeature, skipped *[]Skipped) string {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return aiYAMLReason(file, err)
	}
	doc := yDoc(&root)
	if doc == nil {
		if len(bytes.TrimSpace(data)) == 0 {
			return ""
		}
		return file + ":1: not a mapping with feature and phases"
	}
	if fn := yValue(doc, "feature"); fn != nil && fn.Kind == yaml.MappingNode {
		var head struct {
			ID          string  `yaml:"id"`
			Name        string  `yaml:"name"`
			Description string  `yaml:"description"`
			CreatedAt   *string `yaml:"created_at"`
		}
		if err := fn.Decode(&head); err != nil {
			return fmt.Sprintf("%s:%d: feature: %s", file, fn.Line, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if head.ID != "" && head.ID != f.ID {
			return fmt.Sprintf("%s:%d: feature.id %q is not its folder's %q", file, fn.Line, head.ID, f.ID)
		}
		f.Name, f.Description = aiOneLine(head.Name), aiOneLine(head.Description)
		t, err := aiOptTime(head.CreatedAt)
		if err != nil {
			return fmt.Sprintf("%s:%d: feature.created_at: %s", file, fn.Line, err)
		}
		f.CreatedAt = t
	}
	phases := yValue(doc, "phases")
	if phases == nil || phases.Tag == "!!null" {
		return ""
	}
	if phases.Kind != yaml.SequenceNode {
		return fmt.Sprintf("%s:%d: phases is not a list", file, phases.Line)
	}
	for _, pn := range phases.Content {
		var p struct {
			PhaseID string    `yaml:"phase_id"`
			Name    string    `yaml:"name"`
			Tasks   yaml.Node `yaml:"tasks"`
		}
		if err := pn.Decode(&p); err != nil {
			return fmt.Sprintf("%s:%d: phase: %s", file, pn.Line, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		ph := AIPhase{ID: strings.TrimSpace(p.PhaseID), Name: aiOneLine(p.Name)}
		if ph.ID == "" && ph.Name == "" {
			return fmt.Sprintf("%s:%d: a phase with neither phase_id nor name", file, pn.Line)
		}
		for _, tn := range p.Tasks.Content {
			var t struct {
				TaskID      string   `yaml:"task_id"`
				Description string   `yaml:"description"`
				Agent       *string  `yaml:"agent"`
				Status      string   `yaml:"status"`
				StartedAt   *string  `yaml:"started_at"`
				CompletedAt *string  `yaml:"completed_at"`
				Artifacts   []string `yaml:"artifacts"`
			}
			bad := func(why string) {
				line := tn.Line
				if k, _, ok := strings.Cut(why, ":"); ok && tn.Kind == yaml.MappingNode {
					line = yLine(tn, k)
				}
				*skipped = append(*skipped, Skipped{Path: file, Reason: fmt.Sprintf("%s:%d: task skipped: %s", file, line, why)})
			}
			if err := tn.Decode(&t); err != nil {
				bad(strings.TrimPrefix(err.Error(), "yaml: "))
				continue
			}
			task := AITask{TaskID: strings.TrimSpace(t.TaskID), Description: aiOneLine(t.Description), Agent: aiDeref(t.Agent), Status: t.Status, Artifacts: t.Artifacts, Line: tn.Line}
			if task.Status == "" {
				task.Status = "pending"
			}
			if task.Artifacts == nil {
				task.Artifacts = []string{}
			}
			var err error
			if task.StartedAt, err = aiOptTime(t.StartedAt); err != nil {
				bad("started_at: " + err.Error())
				continue
			}
			if task.CompletedAt, err = aiOptTime(t.CompletedAt); err != nil {
				bad("completed_at: " + err.Error())
				continue
			}
			ph.Tasks = append(ph.Tasks, task)
		}
		f.Phases = append(f.Phases, ph)
	}
	return ""
}

// parseHistory reads history.jsonl; lines that cannot be read are skipped
// with their line.
func aiParseHistory(file string, data []byte, skipped []Skipped) ([]AIHistoryEntry, []Skipped) {
	var out []AIHistoryEntry
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		bad := func(why string) {
			skipped = append(skipped, Skipped{Path: file, Reason: fmt.Sprintf("%s:%d: %s", file, i+1, why)})
		}
		var r struct {
			Timestamp  string          `json:"timestamp"`
			Command    string          `json:"command"`
			Arguments  json.RawMessage `json:"arguments"`
			Model      *string         `json:"model"`
			Agent      *string         `json:"agent"`
			TaskID     *string         `json:"task_id"`
			Status     string          `json:"status"`
			DurationMs *float64        `json:"duration_ms"`
			Error      *string         `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			bad("invalid JSON: " + err.Error())
			continue
		}
		e := AIHistoryEntry{Command: r.Command, Model: aiDeref(r.Model), Agent: aiDeref(r.Agent), TaskID: aiDeref(r.TaskID), Status: r.Status, Error: aiDeref(r.Error), Line: i + 1}
		t, err := aiTime(r.Timestamp)
		if err != nil {
			bad("timestamp: " + err.Error())
			continue
		}
		e.Timestamp = t
		if strings.TrimSpace(e.Command) == "" {
			bad("no command")
			continue
		}
		if e.Status != "success" && e.Status != "failure" {
			bad(fmt.Sprintf("status %q is not success or failure", e.Status))
			continue
		}
		if len(r.Arguments) > 0 && string(r.Arguments) != "null" {
			var s string
			if json.Unmarshal(r.Arguments, &s) == nil {
				e.Arguments = s
			} else {
				var b bytes.Buffer
				if json.Compact(&b, r.Arguments) == nil {
					e.Arguments = b.String()
				}
			}
		}
		if r.DurationMs != nil {
			if *r.DurationMs < 0 || *r.DurationMs > math.MaxInt64/2 {
				bad(fmt.Sprintf("duration_ms %v is out of range", *r.DurationMs))
				continue
			}
			d := int64(math.Round(*r.DurationMs))
			e.DurationMs = &d
		}
		out = append(out, e)
	}
	return out, skipped
}

func aiYAMLReason(file string, err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRe().FindStringSubmatchIndex(msg); m != nil {
		return file + ":" + msg[m[2]:m[3]] + ": invalid YAML: " + msg[:m[0]] + msg[m[1]:]
	}
	return file + ": invalid YAML: " + msg
}

func yDoc(root *yaml.Node) *yaml.Node {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

func yValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// yLine is the line of key's value in mapping m, else m's line.
func yLine(m *yaml.Node, key string) int {
	if v := yValue(m, key); v != nil {
		return v.Line
	}
	return m.Line
}

func aiDeref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// parseTime reads an ISO 8601 time with a zone (RFC 3339), returned in UTC
// to the second (as the vault keeps times).
func aiTime(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time like 2025-01-09T10:00:00Z", v)
	}
	return t.UTC().Truncate(time.Second), nil
}

func aiOptTime(v *string) (*time.Time, error) {
	if v == nil || strings.TrimSpace(*v) == "" {
		return nil, nil
	}
	t, err := aiTime(*v)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

func aiOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ---- writing ----

// Files renders a as the files of an .ai-session folder: paths relative to
// it (slash-separated) and their content, deterministic (see the package's
// .ai-session notes). Every feature gets its plan, history (empty when it
// has none) and state.
func (a AISession) Files() map[string][]byte {
	out := map[string][]byte{}
	features := append([]AIFeature(nil), a.Features...)
	sort.Slice(features, func(i, j int) bool { return features[i].ID < features[j].ID })
	list := &yaml.Node{Kind: yaml.SequenceNode}
	if len(features) == 0 {
		list.Style = yaml.FlowStyle
	}
	for _, f := range features {
		list.Content = append(list.Content, yMap(
			"feature_id", yStr(f.ID), "started_at", yTime(f.StartedAt), "last_active", yTime(f.LastActive), "status", yStr(f.Status)))
		out[f.ID+"/implementation-plan.yaml"] = yEncode(aiPlanNode(f))
		out[f.ID+"/history.jsonl"] = aiHistoryJSONL(f.History)
		st := DeriveState(f)
		out[f.ID+"/state.yaml"] = yEncode(yMap(
			"version", yStr(AISessionVersion), "feature_id", yStr(f.ID),
			"current_state", yMap("active_task", yOptStr(st.ActiveTask), "model_in_use", yOptStr(st.ModelInUse),
				"started_at", yTime(st.StartedAt), "last_updated", yTime(st.LastUpdated))))
	}
	out["active-features.yaml"] = yEncode(yMap("active_features", list))
	out["README.md"] = []byte(aiSessionReadme)
	return out
}

// DeriveState is the state.yaml Files writes for f (see AIState).
func DeriveState(f AIFeature) AIState {
	st := AIState{Version: AISessionVersion, StartedAt: f.StartedAt, LastUpdated: f.LastActive}
	for _, p := range f.Phases {
		for _, t := range p.Tasks {
			if t.Status == "in_progress" && st.ActiveTask == "" {
				st.ActiveTask = t.TaskID
			}
		}
	}
	for _, e := range f.History {
		if e.Model != "" {
			st.ModelInUse = e.Model
		}
	}
	return st
}

func aiPlanNode(f AIFeature) *yaml.Node {
	phases := &yaml.Node{Kind: yaml.SequenceNode}
	if len(f.Phases) == 0 {
		phases.Style = yaml.FlowStyle
	}
	for _, p := range f.Phases {
		tasks := &yaml.Node{Kind: yaml.SequenceNode}
		if len(p.Tasks) == 0 {
			tasks.Style = yaml.FlowStyle
		}
		for _, t := range p.Tasks {
			arts := &yaml.Node{Kind: yaml.SequenceNode}
			if len(t.Artifacts) == 0 {
				arts.Style = yaml.FlowStyle
			}
			for _, x := range t.Artifacts {
				arts.Content = append(arts.Content, yStr(x))
			}
			tasks.Content = append(tasks.Content, yMap(
				"task_id", yStr(t.TaskID), "description", yStr(t.Description), "agent", yOptStr(t.Agent), "status", yStr(t.Status),
				"started_at", yTime(t.StartedAt), "completed_at", yTime(t.CompletedAt), "artifacts", arts))
		}
		phases.Content = append(phases.Content, yMap("phase_id", yStr(p.ID), "name", yStr(p.Name), "tasks", tasks))
	}
	return yMap(
		"feature", yMap("id", yStr(f.ID), "name", yStr(f.Name), "description", yStr(f.Description), "created_at", yTime(f.CreatedAt)),
		"phases", phases)
}

// historyLine is one line of history.jsonl: the format's fields in its
// order; error only for a failure.
type aiHistoryLine struct {
	Timestamp  string  `json:"timestamp"`
	Command    string  `json:"command"`
	Arguments  string  `json:"arguments"`
	Model      *string `json:"model"`
	Agent      *string `json:"agent"`
	TaskID     *string `json:"task_id"`
	Status     string  `json:"status"`
	DurationMs *int64  `json:"duration_ms"`
	Error      *string `json:"error,omitempty"`
}

func aiHistoryJSONL(entries []AIHistoryEntry) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	p := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for _, e := range entries {
		l := aiHistoryLine{Timestamp: e.Timestamp.UTC().Format(time.RFC3339), Command: e.Command, Arguments: e.Arguments,
			Model: p(e.Model), Agent: p(e.Agent), TaskID: p(e.TaskID), Status: e.Status, DurationMs: e.DurationMs}
		if e.Status == "failure" {
			msg := e.Error
			l.Error = &msg
		}
		_ = enc.Encode(l) // plain values: never fails
	}
	return b.Bytes()
}

func yEncode(n *yaml.Node) []byte {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	_ = enc.Encode(n) // a tree of scalars, maps and lists: never fails
	_ = enc.Close()
	return b.Bytes()
}

func yMap(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: kv[i].(string)}, kv[i+1].(*yaml.Node))
	}
	return m
}

func yStr(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Style: yaml.DoubleQuotedStyle}
}

func yNull() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"} }

func yOptStr(v string) *yaml.Node {
	if v == "" {
		return yNull()
	}
	return yStr(v)
}

func yTime(t *time.Time) *yaml.Node {
	if t == nil {
		return yNull()
	}
	return yStr(t.UTC().Format(time.RFC3339))
}

// aiSessionReadme is the README.md of an exported folder: fixed text, so
// that a second export of the same notes is byte-identical.
const aiSessionReadme = `# .ai-session

Session state in the .ai-session layout, version 1.0, exported by
` + "`sessionvault export ai-session`" + ` from a sessionvault vault, where
the notes are the source of truth:

- ` + "`active-features.yaml`" + `: every feature of the project, with its status
  (active, paused, completed), started_at and last_active.
- ` + "`<feature-id>/implementation-plan.yaml`" + `: the feature and its plan, from
  ` + "`<project>/features/<feature-id>.md`" + `.
- ` + "`<feature-id>/history.jsonl`" + `: the commands recorded while the feature was the
  session's active feature, oldest first, from the sessions' command logs
  (` + "`<project>/sessions/<session-id>/commands.md`" + `).
- ` + "`<feature-id>/state.yaml`" + `: version 1.0; its current_state is derived from the
  plan (the first in_progress task) and the history (the last model named).

Read it back with ` + "`sessionvault import ai-session DIR`" + `.
`
