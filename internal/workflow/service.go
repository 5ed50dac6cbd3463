// Package workflow holds the orchestrator workflow of a session: the agents
// started and ended, the handoffs between them, the reviewers' verdicts and
// the workflow phases. What it writes lives in the session's state note
// (its model and parsing are the session package's); every operation runs
// through the session service's write path (session.Service.Transact).
package workflow

import "github.com/sessionvault/sessionvault/internal/session"

// Service runs the workflow operations on one vault: the session service (its
// state API, clock and vault) with the workflow verbs on top.
type Service struct{ *session.Service }

// New returns the workflow service over s.
func New(s *session.Service) *Service { return &Service{s} }

// WithOp returns a copy of s whose next operations carry the operation id
// opID (session.Service.WithOp): an operation that already took effect
// under that id is not done again.
func (s *Service) WithOp(opID string) *Service { return New(s.Service.WithOp(opID)) }
