// Package features holds feature plans (a feature's phases and tasks), the
// command history of every session (one append-only log note each), and the
// .ai-session exchange with other tools. Every operation runs through the
// session service's write path (session.Service.Transact).
package features

import "github.com/sessionvault/sessionvault/internal/session"

// Service runs the features operations on one vault: the session service (its
// state API, clock and vault) with the features verbs on top.
type Service struct{ *session.Service }

// New returns the features service over s.
func New(s *session.Service) *Service { return &Service{s} }

// WithOp returns a copy of s whose next operations carry the operation id
// opID (session.Service.WithOp): an operation that already took effect
// under that id is not done again.
func (s *Service) WithOp(opID string) *Service { return New(s.Service.WithOp(opID)) }
