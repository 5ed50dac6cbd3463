// Package errs is the registry of sessionvault's stable error codes: numbers
// in E16xx ranges, each with a name. Every error a user can meet carries one
// code; the CLI prints its name and the message, and `--json` gives
// {"code","name","message","details"}.
package errs

import (
	"errors"
	"fmt"
)

// Code is a stable error code: a number in the E16xx ranges and a
// name in SCREAMING_SNAKE_CASE. Codes are never renumbered.
type Code struct {
	ID   string // e.g. "E1601"
	Name string // e.g. "SESSION_ALREADY_ACTIVE"
}

// The registry. Ranges: E1600-E1609 session, E1610-E1619 notes and input, and
// tasks (E1610 and E1613), E1620-E1629 checkpoints and rollback, E1630-E1639
// recovery, E1640-E1649 conflicts, E1650-E1659 git and sync, E1660-E1669 task
// switching, E1670-E1679 feature plans and command history (below),
// E1680-E1685 the orchestrator workflow (their own block below), E1686-E1689
// export, E1690-E1699 configuration and vault.
var (
	SessionNotFound        = Code{"E1600", "SESSION_NOT_FOUND"}
	SessionAlreadyActive   = Code{"E1601", "SESSION_ALREADY_ACTIVE"}
	NoActiveSession        = Code{"E1602", "NO_ACTIVE_SESSION"}
	SessionCrashed         = Code{"E1603", "SESSION_CRASHED"}
	DuplicateDecisionTitle = Code{"E1604", "DUPLICATE_DECISION_TITLE"}
	BlockerNotFound        = Code{"E1605", "BLOCKER_NOT_FOUND"}
	BlockerAlreadyResolved = Code{"E1606", "BLOCKER_ALREADY_RESOLVED"}
	ProjectNotFound        = Code{"E1607", "PROJECT_NOT_FOUND"}
	GateNotPassed          = Code{"E1608", "GATE_NOT_PASSED"}
	ProtocolInvalid        = Code{"E1609", "PROTOCOL_INVALID"}
	TaskNotFound           = Code{"E1610", "TASK_NOT_FOUND"}
	// EvidenceNotVerified: the evidence given for a checklist item does not
	// hold (a file that is not the protocol's, a commit not in the code
	// repository, a check command that fails); the message names the fix.
	EvidenceNotVerified      = Code{"E1611", "EVIDENCE_NOT_VERIFIED"}
	UpdateValidationFailed   = Code{"E1612", "UPDATE_VALIDATION_FAILED"}
	TaskLocked               = Code{"E1613", "TASK_LOCKED"}
	StateParseError          = Code{"E1614", "STATE_PARSE_ERROR"}
	NoteTooLarge             = Code{"E1615", "NOTE_TOO_LARGE"}
	PathOutsideVault         = Code{"E1616", "PATH_OUTSIDE_VAULT"}
	NoteNotAFile             = Code{"E1617", "NOTE_NOT_A_FILE"}
	TaskGraphCycle           = Code{"E1618", "TASK_GRAPH_CYCLE"}
	CheckpointCreationFailed = Code{"E1620", "CHECKPOINT_CREATION_FAILED"}
	InvalidCheckpointScope   = Code{"E1621", "INVALID_CHECKPOINT_SCOPE"}
	CheckpointNotFound       = Code{"E1622", "CHECKPOINT_NOT_FOUND"}
	VersionNotFound          = Code{"E1623", "VERSION_NOT_FOUND"}
	RollbackFailed           = Code{"E1624", "ROLLBACK_FAILED"}
	RecoverySessionNotFound  = Code{"E1631", "RECOVERY_SESSION_NOT_FOUND"}
	SessionNotCrashed        = Code{"E1632", "SESSION_NOT_CRASHED"}
	ConcurrentUpdate         = Code{"E1640", "CONCURRENT_UPDATE"}
	StateChangedOutside      = Code{"E1641", "STATE_CHANGED_OUTSIDE"}
	ConflictNotFound         = Code{"E1642", "CONFLICT_NOT_FOUND"}
	ConflictAlreadyResolved  = Code{"E1643", "CONFLICT_ALREADY_RESOLVED"}
	ResolutionFailed         = Code{"E1644", "RESOLUTION_FAILED"}
	// InvalidConflictType is E1645, not E1641: E1641 was already
	// STATE_CHANGED_OUTSIDE (codes are never renumbered).
	InvalidConflictType = Code{"E1645", "INVALID_CONFLICT_TYPE"}
	GitWriteFailed      = Code{"E1651", "GIT_WRITE_FAILED"}
	GitLocked           = Code{"E1652", "GIT_LOCKED"}
	ImportFailed        = Code{"E1653", "IMPORT_FAILED"}
	RemoteSyncFailed    = Code{"E1654", "REMOTE_SYNC_FAILED"}
	// NetworkUnavailable: a service over the network (a git remote, Linear)
	// could not be reached: a name that does not resolve, a refused or
	// timed-out connection. Nothing was changed.
	NetworkUnavailable = Code{"E1657", "NETWORK_UNAVAILABLE"}
	// ImportSourceNotFound: the folder or file given to an import does not
	// exist, or holds nothing of the kind (no memory bank, no
	// .claude/sessions folder).
	ImportSourceNotFound = Code{"E1655", "IMPORT_SOURCE_NOT_FOUND"}
	// ImportFormatUnknown: the file given to an import is not in the format
	// the importer reads (an aider history without a single chat).
	ImportFormatUnknown = Code{"E1656", "IMPORT_FORMAT_UNKNOWN"}
	SourceTaskNotFound  = Code{"E1660", "SOURCE_TASK_NOT_FOUND"}
	TargetTaskNotFound  = Code{"E1661", "TARGET_TASK_NOT_FOUND"}
	TaskSwitchFailed    = Code{"E1662", "TASK_SWITCH_FAILED"}
	VaultNotFound       = Code{"E1690", "VAULT_NOT_FOUND"}
	ConfigInvalid       = Code{"E1691", "CONFIG_INVALID"}
	LockTimeout         = Code{"E1692", "LOCK_TIMEOUT"}
	InvalidCommand      = Code{"E1693", "INVALID_COMMAND"}
	PermissionDenied    = Code{"E1694", "PERMISSION_DENIED"}
	DiskFull            = Code{"E1695", "DISK_FULL"}
	// VaultFormatNewer: the vault (or its remote) is in a newer format than
	// this binary writes; nothing was written. Reading commands still work.
	VaultFormatNewer = Code{"E1696", "VAULT_FORMAT_NEWER"}
	// MachineRecordInvalid: this clone's per-machine record
	// (.sessionvault/state/machine) cannot be read, so ids made here could
	// collide with another machine's; nothing was written.
	MachineRecordInvalid = Code{"E1697", "MACHINE_RECORD_INVALID"}
	// DaemonNotInstalled: `serve` hands over to the sessionvault-daemon
	// binary, which is neither beside sessionvault nor on PATH. Nothing
	// was started.
	DaemonNotInstalled = Code{"E1698", "DAEMON_NOT_INSTALLED"}
	InternalError      = Code{"E1699", "INTERNAL_ERROR"}

	// ExportWriteFailed: an export's --output file could not be written
	// (its folder is missing or not writable); nothing was written there.
	ExportWriteFailed = Code{"E1686", "EXPORT_WRITE_FAILED"}
)

// The orchestrator workflow: agents, invocations, handoffs, verdicts,
// workflow phases.
var (
	// UnknownAgent: an agent name that is neither one of the built-in agent
	// types nor in the vault's agent_types.
	UnknownAgent = Code{"E1680", "UNKNOWN_AGENT"}
	// NoActiveAgent: agent end or handoff with no agent invocation in progress.
	NoActiveAgent = Code{"E1681", "NO_ACTIVE_AGENT"}
	// AgentAlreadyActive: agent start while another agent's invocation is in progress.
	AgentAlreadyActive = Code{"E1682", "AGENT_ALREADY_ACTIVE"}
	// InvalidWorkflowPhase: a workflow phase that is not planning,
	// implementation, validation or complete, or a move back without --force.
	InvalidWorkflowPhase = Code{"E1683", "INVALID_WORKFLOW_PHASE"}
	// InvalidVerdict: a verdict's decision or confidence outside its range.
	InvalidVerdict = Code{"E1684", "INVALID_VERDICT"}
	// InvocationNotFound: no agent invocation with the id asked for.
	InvocationNotFound = Code{"E1685", "INVOCATION_NOT_FOUND"}
)

// Feature plans, command history and the .ai-session exchange.
var (
	InvalidFeatureId         = Code{"E1670", "INVALID_FEATURE_ID"}
	FeatureNotFound          = Code{"E1671", "FEATURE_NOT_FOUND"}
	FeatureAlreadyExists     = Code{"E1672", "FEATURE_ALREADY_EXISTS"}
	InvalidFeatureTransition = Code{"E1673", "INVALID_FEATURE_TRANSITION"}
	PlanValidationFailed     = Code{"E1674", "PLAN_VALIDATION_FAILED"}
	HistoryEntryInvalid      = Code{"E1675", "HISTORY_ENTRY_INVALID"}
	AiSessionNotFound        = Code{"E1676", "AI_SESSION_NOT_FOUND"}
	ExportFailed             = Code{"E1677", "EXPORT_FAILED"}
)

// All lists every code, for documentation and tests.
var All = []Code{SessionNotFound, SessionAlreadyActive, NoActiveSession, SessionCrashed, DuplicateDecisionTitle,
	BlockerNotFound, BlockerAlreadyResolved, ProjectNotFound, GateNotPassed, ProtocolInvalid, StateChangedOutside, EvidenceNotVerified, UpdateValidationFailed, StateParseError, NoteTooLarge, PathOutsideVault, NoteNotAFile, SessionNotCrashed,
	TaskNotFound, TaskLocked, TaskGraphCycle, CheckpointCreationFailed, InvalidCheckpointScope, CheckpointNotFound, VersionNotFound, RollbackFailed,
	RecoverySessionNotFound, ConflictNotFound, ConflictAlreadyResolved, ResolutionFailed, InvalidConflictType, SourceTaskNotFound, TargetTaskNotFound, TaskSwitchFailed, ExportWriteFailed,
	InvalidFeatureId, FeatureNotFound, FeatureAlreadyExists, InvalidFeatureTransition, PlanValidationFailed, HistoryEntryInvalid, AiSessionNotFound, ExportFailed,
	ConcurrentUpdate, GitWriteFailed, GitLocked, ImportFailed, RemoteSyncFailed, NetworkUnavailable, ImportSourceNotFound, ImportFormatUnknown, VaultNotFound, ConfigInvalid, LockTimeout, InvalidCommand, PermissionDenied, DiskFull, VaultFormatNewer, MachineRecordInvalid, DaemonNotInstalled, InternalError,
	UnknownAgent, NoActiveAgent, AgentAlreadyActive, InvalidWorkflowPhase, InvalidVerdict, InvocationNotFound}

// Error is an error with a stable code. Details holds machine-readable
// context (e.g. {"note": "demo/session-current-state.md", "line": 3}).
type Error struct {
	Code    Code
	Message string
	Details map[string]any
	Err     error
}

func (e *Error) Error() string { return e.Message }

func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with code whose message is msg plus err's text; err
// stays reachable through errors.Is/As.
func Wrap(code Code, err error, msg string) *Error {
	return &Error{Code: code, Message: msg + ": " + err.Error(), Err: err}
}

// With returns e with one detail added.
func (e *Error) With(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// CodeOf returns the code carried by err, or Internal when it has none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return InternalError
}

// Is reports whether err carries code.
func Is(err error, code Code) bool { return CodeOf(err) == code }
