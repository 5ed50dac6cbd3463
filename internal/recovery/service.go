// Package recovery holds what an agent needs to resume after a crash or a
// context compaction: whether a session needs recovering, the resume prompt
// (the active task's context, the workflow, the recent tool calls, the
// changes not yet committed, the memory bank), the recovery points PreCompact
// records and the recent tool history.
package recovery

import "github.com/sessionvault/sessionvault/internal/session"

// Service runs the recovery operations on one vault: the session service (its
// state API, clock and vault) with the recovery verbs on top.
type Service struct{ *session.Service }

// New returns the recovery service over s.
func New(s *session.Service) *Service { return &Service{s} }
