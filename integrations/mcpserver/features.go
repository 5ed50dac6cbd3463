package mcpserver

import (
	"context"
	"time"

	"github.com/sessionvault/sessionvault/internal/features"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// The features toolset's tools: feature plans (the notes in <project>/features/) and
// the command history (the per-session logs sessions/<id>/commands.md),
// the same operations as `sessionvault feature ...` and `history ...`.
type (
	CreateFeatureIn struct {
		Name        string `json:"name" jsonschema:"the feature's name"`
		FeatureID   string `json:"feature_id,omitempty" jsonschema:"{slug}-{YYYY-MM-DD} (default: from the name and today)"`
		Description string `json:"description,omitempty" jsonschema:"what the feature is"`
		OpID        string `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	// FeatureOut is what a feature operation returns: the feature as
	// written, the session whose active feature it set or cleared, the
	// commit.
	FeatureOut struct {
		FeatureID string `json:"feature_id"`
		// Note is the feature's note, from the vault root.
		Note string `json:"note"`
		// Session is the active session whose active feature this set or
		// cleared.
		Session string `json:"session,omitempty"`
		// Commit is the operation's commit (none when nothing changed).
		Commit  string           `json:"commit,omitempty"`
		Feature features.Feature `json:"feature"`
	}
	ListFeaturesIn struct {
		Status string `json:"status,omitempty" jsonschema:"only this status: active, paused or completed"`
	}
	ListFeaturesOut struct {
		Features []features.Feature `json:"features"`
		// ActiveFeature is the active session's active feature.
		ActiveFeature string `json:"active_feature,omitempty"`
	}
	FeatureIDIn struct {
		FeatureID string `json:"feature_id" jsonschema:"the feature's id"`
	}
	SetFeatureStatusIn struct {
		FeatureID string `json:"feature_id" jsonschema:"the feature's id"`
		Status    string `json:"status" jsonschema:"active, paused or completed"`
		OpID      string `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	SwitchFeatureIn struct {
		FeatureID string `json:"feature_id" jsonschema:"the feature's id"`
		OpID      string `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	UpdatePlanIn struct {
		FeatureID      string   `json:"feature_id" jsonschema:"the feature's id"`
		TaskID         string   `json:"task_id" jsonschema:"the task to add or change"`
		Phase          string   `json:"phase,omitempty" jsonschema:"phase name or id (required for a new task)"`
		PhaseID        string   `json:"phase_id,omitempty" jsonschema:"a new phase's id (default: its name's slug)"`
		Description    *string  `json:"description,omitempty" jsonschema:"what the task does (required for a new task)"`
		Agent          *string  `json:"agent,omitempty" jsonschema:"the agent assigned"`
		Status         *string  `json:"status,omitempty" jsonschema:"pending, in_progress, completed or blocked"`
		StartedAt      string   `json:"started_at,omitempty" jsonschema:"RFC 3339 or 2026-11-25T09:30 (default: when it leaves pending)"`
		CompletedAt    string   `json:"completed_at,omitempty" jsonschema:"RFC 3339 or 2026-11-25T09:30 (default: when it completes)"`
		Artifacts      []string `json:"artifacts,omitempty" jsonschema:"files the task made, added"`
		ClearArtifacts bool     `json:"clear_artifacts,omitempty" jsonschema:"empty the task's artifacts first"`
		OpID           string   `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
)

// Command history inputs.
type (
	RecordCommandIn struct {
		Command    string `json:"command" jsonschema:"a command line, or a tool's name"`
		Arguments  string `json:"arguments,omitempty" jsonschema:"its arguments"`
		Model      string `json:"model,omitempty" jsonschema:"the model, e.g. opus"`
		Agent      string `json:"agent,omitempty" jsonschema:"the agent that ran it"`
		TaskID     string `json:"task_id,omitempty" jsonschema:"default: the active task; - for none"`
		FeatureID  string `json:"feature_id,omitempty" jsonschema:"default: the active feature; - for none"`
		Status     string `json:"status,omitempty" jsonschema:"success (default) or failure"`
		DurationMs *int64 `json:"duration_ms,omitempty" jsonschema:"how long it ran"`
		Error      string `json:"error,omitempty" jsonschema:"why it failed"`
		Timestamp  string `json:"timestamp,omitempty" jsonschema:"RFC 3339 or 2026-11-25T09:30 (default now)"`
		Session    string `json:"session,omitempty" jsonschema:"default: the active session"`
	}
	HistoryIn struct {
		Session   string `json:"session,omitempty" jsonschema:"default: the active or last session; all: every one"`
		FeatureID string `json:"feature_id,omitempty" jsonschema:"only commands recorded for this feature"`
		Limit     int    `json:"limit,omitempty" jsonschema:"only the newest N entries"`
	}
)

func featureOut(o features.FeatureOutcome) FeatureOut {
	return FeatureOut{FeatureID: o.Feature.ID, Note: o.Feature.Note, Session: o.Session, Commit: o.Result.Commit, Feature: o.Feature}
}

// featureTools are the features toolset: create_feature, list_features,
// get_feature, set_feature_status, switch_feature and update_feature_plan,
// and the command history's record_command and get_command_history.
func (s *Server) featureTools() []toolDef {
	return []toolDef{
		tool(FeaturesToolset, &mcp.Tool{Name: "create_feature", Description: "Create a feature plan (a note in features/); it becomes the active session's feature."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in CreateFeatureIn) (*mcp.CallToolResult, FeatureOut, error) {
				out, err := features.New(s.svc.WithOp(in.OpID)).FeatureNew(features.NewFeatureOptions{Project: s.project, Name: in.Name, ID: in.FeatureID, Description: in.Description})
				if err != nil {
					return nil, FeatureOut{}, s.toolErr(err)
				}
				return nil, featureOut(out), nil
			}),
		tool(FeaturesToolset, &mcp.Tool{Name: "list_features", Description: "The project's features, each with its plan.", Annotations: readOnly()},
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
			}),
		tool(FeaturesToolset, &mcp.Tool{Name: "get_feature", Description: "A feature and its implementation plan (phases and tasks).", Annotations: readOnly()},
			func(ctx context.Context, _ *mcp.CallToolRequest, in FeatureIDIn) (*mcp.CallToolResult, features.Feature, error) {
				f, err := features.New(s.svc).Feature(s.project, in.FeatureID)
				if err != nil {
					return nil, features.Feature{}, s.toolErr(err)
				}
				return nil, f, nil
			}),
		tool(FeaturesToolset, &mcp.Tool{Name: "set_feature_status", Description: "Set a feature's status; active makes it the active session's feature."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in SetFeatureStatusIn) (*mcp.CallToolResult, FeatureOut, error) {
				out, err := features.New(s.svc.WithOp(in.OpID)).SetFeatureStatus(s.project, in.FeatureID, in.Status)
				if err != nil {
					return nil, FeatureOut{}, s.toolErr(err)
				}
				return nil, featureOut(out), nil
			}),
		tool(FeaturesToolset, &mcp.Tool{Name: "switch_feature", Description: "Make a feature the active session's feature (a paused one becomes active)."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in SwitchFeatureIn) (*mcp.CallToolResult, FeatureOut, error) {
				out, err := features.New(s.svc.WithOp(in.OpID)).SwitchFeature(s.project, in.FeatureID)
				if err != nil {
					return nil, FeatureOut{}, s.toolErr(err)
				}
				return nil, featureOut(out), nil
			}),
		tool(FeaturesToolset, &mcp.Tool{Name: "update_feature_plan", Description: "Add a task to a feature's plan, or change one (only the fields given)."},
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
			}),
		tool(FeaturesToolset, &mcp.Tool{Name: "record_command", Description: "Append a command an agent ran to the session's command log (for agents no hook sees)."},
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
			}),
		tool(FeaturesToolset, &mcp.Tool{Name: "get_command_history", Description: "A session's command history (the calls the hooks saw, and recorded commands), oldest first.", Annotations: readOnly()},
			func(ctx context.Context, _ *mcp.CallToolRequest, in HistoryIn) (*mcp.CallToolResult, features.History, error) {
				h, err := features.New(s.svc).CommandHistory(features.HistoryOptions{Project: s.project, Session: in.Session, Feature: in.FeatureID, Limit: in.Limit})
				if err != nil {
					return nil, features.History{}, s.toolErr(err)
				}
				return nil, h, nil
			}),
	}
}
