// Package tasks holds a project's task contexts: the task notes, switching
// the active task, task locks, checkpoints and rollback, conflicts between
// tasks, and the task graph. Every operation runs through the session
// service's write path (session.Service.Transact), so it is one commit or,
// when it fails, no change at all.
package tasks

import "github.com/sessionvault/sessionvault/internal/session"

// Service runs the task operations on one vault. It is the session service
// (its state API, clock and vault) with the task verbs on top.
type Service struct{ *session.Service }

// New returns the task service over s.
func New(s *session.Service) *Service { return &Service{s} }

// WithOp returns a copy of s whose next operations carry the operation id
// opID (session.Service.WithOp): an operation that already took effect
// under that id is not done again.
func (s *Service) WithOp(opID string) *Service { return New(s.Service.WithOp(opID)) }
