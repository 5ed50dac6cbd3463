// Package reconcile holds what a merge from another machine needs
// afterwards (sessions both machines started, entries both added), and
// which parts of each canonical note are the engine's lists that the note
// merge joins by entry id (NoteOwnership). It runs through the session
// service's write path (session.Service.Transact).
package reconcile

import "github.com/sessionvault/sessionvault/internal/session"

// Service runs the reconcile operations on one vault: the session service (its
// state API, clock and vault) with the reconcile verbs on top.
type Service struct{ *session.Service }

// New returns the reconcile service over s.
func New(s *session.Service) *Service { return &Service{s} }

// WithOp returns a copy of s whose next operations carry the operation id
// opID (session.Service.WithOp): an operation that already took effect
// under that id is not done again.
func (s *Service) WithOp(opID string) *Service { return New(s.Service.WithOp(opID)) }
