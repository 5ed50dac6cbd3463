// Package tasks holds a project's task contexts: the task notes, switching
// the active task, task locks, checkpoints and rollback, conflicts between
// tasks, and the task graph. Every operation runs through the session
// service's write path (session.Service.Transact), so it is one commit or,
// when it fails, no change at all.
package tasks

import (
	"sync"

	"github.com/sessionvault/sessionvault/internal/notecache"
	"github.com/sessionvault/sessionvault/internal/session"
)

// Service runs the task operations on one vault. It is the session service
// (its state API, clock and vault) with the task verbs on top.
type Service struct {
	*session.Service
	// cache, when set, keeps the tasks read from their notes between the
	// operations of a long-lived process (WithCache).
	cache *TaskCache
}

// TaskCache keeps the tasks read from task notes between operations, each
// with the stat identity of the note it was read from (package notecache):
// a note is read and parsed again only once it changed, by whoever changed
// it. A long-lived process (the MCP server) makes one with NewTaskCache and
// passes it to every Service it makes (WithCache); it holds one entry per
// task note of the projects read, and drops those whose note is gone. It
// also keeps the last task graphs encoded (TaskGraphJSON), for as long as
// no task note changes. It is safe for concurrent use.
type TaskCache struct {
	// notes are the tasks read, each kept as it was read (never modified).
	notes *notecache.Cache[*Task]

	mu sync.Mutex
	// graphGen is the generation of notes the graphs were built at.
	graphGen uint64
	// graphs are the graphs encoded at graphGen, by project and options.
	graphs map[graphKey][]byte
}

// NewTaskCache returns an empty task cache.
func NewTaskCache() *TaskCache { return &TaskCache{notes: notecache.New[*Task]()} }

// Len returns the number of task notes the cache holds a task of.
func (c *TaskCache) Len() int { return c.notes.Len() }

// New returns the task service over s. It reads every task note each time
// it reads the tasks, as a CLI process does; see WithCache.
func New(s *session.Service) *Service { return &Service{Service: s} }

// WithCache returns a copy of s that reads the tasks through c (nil: reads
// every task note each time).
func (s *Service) WithCache(c *TaskCache) *Service {
	cp := *s
	cp.cache = c
	return &cp
}

// WithOp returns a copy of s whose next operations carry the operation id
// opID (session.Service.WithOp): an operation that already took effect
// under that id is not done again.
func (s *Service) WithOp(opID string) *Service {
	return New(s.Service.WithOp(opID)).WithCache(s.cache)
}
