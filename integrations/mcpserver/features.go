package mcpserver

import (
	"context"
	"time"

	"github.com/sessionvault/sessionvault/internal/features"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// Seed 003's tools: feature plans (the notes in <project>/features/) and
// the command history (the per-session logs sessions/<id>/commands.md),
// the same operations as `sessionvault feature ...` and `history ...`.
type (
	CreateFeatureIn struct {
		Name        string `json:"name" jsonschema:"the feature's name"`
		FeatureID   string `json:"feature_id,omitempty" jsonschema:"the id, {slug}-{YYYY-MM-DD} (default: the name's slug and today's date)"`
		Description string `json:"description,omitempty" jsonschema:"what the feature is"`
		OpID        string `json:"op_id,omitempty" jsonschema:"an id for this call (e.g. a UUID): a call repeated with the same op_id after an error or a lost reply does nothing again and returns the first result"`
	}
	// FeatureOut is what a feature operation returns: the feature as
	// written, the session whose active feature it set or cleared, the
	// commit.
	FeatureOut struct {
		FeatureID string           `json:"feature_id"`
		Note      string           `json:"note" jsonschema:"the feature's note, from the vault root"`
		Session   string           `json:"session,omitempty" jsonschema:"the active session whose active feature this set or cleared"`
		Commit    string           `json:"commit,omitempty" jsonschema:"the operation's commit (none when nothing changed)"`
		Feature   features.Feature `json:"feature"`
	}
	ListFeaturesIn struct {
		Status string `json:"status,omitempty" jsonschema:"only features with this status: active, paused or completed (active: the active features)"`
	}
	ListFeaturesOut struct {
		Features      []features.Feature `json:"features"`
		ActiveFeature string             `json:"active_feature,omitempty" jsonschema:"the active session's active feature"`
	}
	FeatureIDIn struct {
		FeatureID string `json:"feature_id" jsonschema:"the feature's id"`
	}
	SetFeatureStatusIn struct {
		FeatureID string `json:"feature_id" jsonschema:"the feature's id"`
		Status    string `json:"status" jsonschema:"active, paused or completed (a completed feature is reopened as active before it can be paused)"`
		OpID      string `json:"op_id,omitempty" jsonschema:"an id for this call (e.g. a UUID): a call repeated with the same op_id after an error or a lost reply does nothing again and returns the first result"`
	}
	SwitchFeatureIn struct {
		FeatureID string `json:"feature_id" jsonschema:"the feature the active session works on from now"`
		OpID      string `json:"op_id,omitempty" jsonschema:"an id for this call (e.g. a UUID): a call repeated with the same op_id after an error or a lost reply does nothing again and returns the first result"`
	}
	UpdatePlanIn struct {
		FeatureID      string   `json:"feature_id" jsonschema:"the feature's id"`
		TaskID         string   `json:"task_id" jsonschema:"the task to add or change"`
		Phase          string   `json:"phase,omitempty" jsonschema:"the task's phase by name or phase id (required for a new task; another phase moves the task)"`
		PhaseID        string   `json:"phase_id,omitempty" jsonschema:"the id of a new phase (default: its name's slug)"`
		Description    *string  `json:"description,omitempty" jsonschema:"what the task does (required for a new task)"`
		Agent          *string  `json:"agent,omitempty" jsonschema:"the agent assigned"`
		Status         *string  `json:"status,omitempty" jsonschema:"pending, in_progress, completed or blocked"`
		StartedAt      string   `json:"started_at,omitempty" jsonschema:"when the task started, RFC 3339 or 2026-11-25T09:30 in the vault's time_zone (default: when it first leaves pending)"`
		CompletedAt    string   `json:"completed_at,omitempty" jsonschema:"when it was completed, RFC 3339 or 2026-11-25T09:30 in the vault's time_zone (default: when it becomes completed)"`
		Artifacts      []string `json:"artifacts,omitempty" jsonschema:"files the task generated, added to its artifacts"`
		ClearArtifacts bool     `json:"clear_artifacts,omitempty" jsonschema:"empty the task's artifacts first"`
		OpID           string   `json:"op_id,omitempty" jsonschema:"an id for this call (e.g. a UUID): a call repeated with the same op_id after an error or a lost reply does nothing again and returns the first result"`
	}
)

// Command history inputs.
type (
	RecordCommandIn struct {
		Command    string `json:"command" jsonschema:"the command run (a command line, or a tool's name)"`
		Arguments  string `json:"arguments,omitempty" jsonschema:"its arguments"`
		Model      string `json:"model,omitempty" jsonschema:"the model that ran it, e.g. opus, sonnet, gemini"`
		Agent      string `json:"agent,omitempty" jsonschema:"the agent that ran it"`
		TaskID     string `json:"task_id,omitempty" jsonschema:"the task it was for (default: the session's active task; - for none)"`
		FeatureID  string `json:"feature_id,omitempty" jsonschema:"the feature it was for (default: the session's active feature; - for none)"`
		Status     string `json:"status,omitempty" jsonschema:"success (default) or failure"`
		DurationMs *int64 `json:"duration_ms,omitempty" jsonschema:"how long it ran, in milliseconds"`
		Error      string `json:"error,omitempty" jsonschema:"why it failed"`
		Timestamp  string `json:"timestamp,omitempty" jsonschema:"when it ran, RFC 3339 or 2026-11-25T09:30 in the vault's time_zone (default now; one older than the log's last entry gets that entry's time)"`
		Session    string `json:"session,omitempty" jsonschema:"the session whose log gets it (default: the active session)"`
	}
	HistoryIn struct {
		Session   string `json:"session,omitempty" jsonschema:"the session (default: the active one, else the last one; all: every session)"`
		FeatureID string `json:"feature_id,omitempty" jsonschema:"only commands recorded for this feature"`
		Limit     int    `json:"limit,omitempty" jsonschema:"only the newest N entries"`
	}
)

func featureOut(o features.FeatureOutcome) FeatureOut {
	return FeatureOut{FeatureID: o.Feature.ID, Note: o.Feature.Note, Session: o.Session, Commit: o.Result.Commit, Feature: o.Feature}
}

// addFeatureTools adds seed 003's tools: create_feature, list_features,
// get_feature, set_feature_status, switch_feature and update_feature_plan,
// and the command history's record_command and get_command_history.
func (s *Server) addFeatureTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "create_feature", Description: "Make a feature note (<project>/features/<feature-id>.md), active; with a session active it becomes the session's active feature."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in CreateFeatureIn) (*mcp.CallToolResult, FeatureOut, error) {
			out, err := features.New(s.svc.WithOp(in.OpID)).FeatureNew(features.NewFeatureOptions{Project: s.project, Name: in.Name, ID: in.FeatureID, Description: in.Description})
			if err != nil {
				return nil, FeatureOut{}, s.toolErr(err)
			}
			return nil, featureOut(out), nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "list_features", Description: "The project's features (status active: the active features), each with its plan, read from the notes.", Annotations: readOnly()},
		func(ctx context.Context, _ *mcp.CallToolRequest, in ListFeaturesIn) (*mcp.CallToolResult, ListFeaturesOut, error) {
			project, err := s.svc.Project(s.project)
			if err != nil {
				return nil, ListFeaturesOut{}, s.toolErr(err)
			}
			fs, err := features.New(s.svc).Features(project, in.Status)
			if err != nil {
				return nil, ListFeaturesOut{}, s.toolErr(err)
			}
			out := ListFeaturesOut{Features: fs}
			if st, err := s.svc.Current(project); err == nil && st.Active() {
				out.ActiveFeature = st.ActiveFeature
			}
			return nil, out, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "get_feature", Description: "A feature and its implementation plan (phases, tasks with agent, status, times and artifacts), as its note holds it.", Annotations: readOnly()},
		func(ctx context.Context, _ *mcp.CallToolRequest, in FeatureIDIn) (*mcp.CallToolResult, features.Feature, error) {
			f, err := features.New(s.svc).Feature(s.project, in.FeatureID)
			if err != nil {
				return nil, features.Feature{}, s.toolErr(err)
			}
			return nil, f, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "set_feature_status", Description: "Change a feature's status (active, paused, completed); active makes it the active session's feature, pausing or completing that feature clears it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in SetFeatureStatusIn) (*mcp.CallToolResult, FeatureOut, error) {
			out, err := features.New(s.svc.WithOp(in.OpID)).SetFeatureStatus(s.project, in.FeatureID, in.Status)
			if err != nil {
				return nil, FeatureOut{}, s.toolErr(err)
			}
			return nil, featureOut(out), nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "switch_feature", Description: "Make a feature the active session's active feature (the command history names it from then on); a paused one becomes active."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in SwitchFeatureIn) (*mcp.CallToolResult, FeatureOut, error) {
			out, err := features.New(s.svc.WithOp(in.OpID)).SwitchFeature(s.project, in.FeatureID)
			if err != nil {
				return nil, FeatureOut{}, s.toolErr(err)
			}
			return nil, featureOut(out), nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "update_feature_plan", Description: "Add a task to a feature's implementation plan or change one (only the fields given change); one commit."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in UpdatePlanIn) (*mcp.CallToolResult, FeatureOut, error) {
			o := features.PlanOptions{Project: s.project, FeatureID: in.FeatureID, TaskID: in.TaskID, Phase: in.Phase, PhaseID: in.PhaseID,
				Description: in.Description, Agent: in.Agent, Status: in.Status, Artifacts: in.Artifacts, ClearArtifacts: in.ClearArtifacts}
			for _, f := range []struct {
				name, v string
				dst     **time.Time
			}{{"started_at", in.StartedAt, &o.StartedAt}, {"completed_at", in.CompletedAt, &o.CompletedAt}} {
				if f.v == "" {
					continue
				}
				t, err := s.svc.ParseTime(f.v)
				if err != nil {
					return nil, FeatureOut{}, s.toolErr(errs.New(errs.PlanValidationFailed, "%s: %v", f.name, err).With("argument", f.name))
				}
				*f.dst = &t
			}
			out, err := features.New(s.svc.WithOp(in.OpID)).UpdatePlan(o)
			if err != nil {
				return nil, FeatureOut{}, s.toolErr(err)
			}
			return nil, featureOut(out), nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "record_command", Description: "Append a command an agent ran to the session's command log (sessions/<id>/commands.md) and commit it; for agents whose tool calls no hook sees."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in RecordCommandIn) (*mcp.CallToolResult, features.RecordOutcome, error) {
			o := features.RecordOptions{Project: s.project, Session: in.Session, Command: in.Command, Arguments: in.Arguments, Model: in.Model, Agent: in.Agent,
				TaskID: in.TaskID, FeatureID: in.FeatureID, Status: in.Status, DurationMs: in.DurationMs, Error: in.Error, Commit: true}
			if in.Timestamp != "" {
				t, err := s.svc.ParseTime(in.Timestamp)
				if err != nil {
					return nil, features.RecordOutcome{}, s.toolErr(errs.New(errs.HistoryEntryInvalid, "timestamp: %v", err).With("argument", "timestamp"))
				}
				o.At = &t
			}
			out, err := features.New(s.svc).RecordCommand(o)
			if err != nil {
				return nil, features.RecordOutcome{}, s.toolErr(err)
			}
			return nil, out, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "get_command_history", Description: "A session's command history (every Bash and MCP call the hooks saw, and recorded commands), oldest first.", Annotations: readOnly()},
		func(ctx context.Context, _ *mcp.CallToolRequest, in HistoryIn) (*mcp.CallToolResult, features.History, error) {
			h, err := features.New(s.svc).CommandHistory(features.HistoryOptions{Project: s.project, Session: in.Session, Feature: in.FeatureID, Limit: in.Limit})
			if err != nil {
				return nil, features.History{}, s.toolErr(err)
			}
			return nil, h, nil
		})
}
