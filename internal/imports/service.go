// Package imports writes what the importers (package importer, pure parsers)
// read into the vault: imported sessions as archived session notes, the
// import records that make an import idempotent, and memory banks.
package imports

import "github.com/sessionvault/sessionvault/internal/session"

// Service runs the imports operations on one vault: the session service (its
// state API, clock and vault) with the imports verbs on top.
type Service struct{ *session.Service }

// New returns the imports service over s.
func New(s *session.Service) *Service { return &Service{s} }

// WithOp returns a copy of s whose next operations carry the operation id
// opID (session.Service.WithOp): an operation that already took effect
// under that id is not done again.
func (s *Service) WithOp(opID string) *Service { return New(s.Service.WithOp(opID)) }
