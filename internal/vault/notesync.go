package vault

import "sync"

// noteSyncs are the fsyncs of an operation's new note versions and of their
// folders (durability fsync: a commit barrier that covers the work tree
// needs none), started as soon as a write round has placed them. The
// commit waits for them after its own barrier and before it becomes
// visible (history.IndexLock.SetBeforeVisible), so they overlap the
// commit's work instead of coming before it: one round of device flushes
// fewer per operation.
type noteSyncs struct {
	wg    sync.WaitGroup
	mu    sync.Mutex
	first error
}

// start runs fn in its own goroutine; wait returns the first error.
func (s *noteSyncs) start(fn func() error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := fn(); err != nil {
			s.mu.Lock()
			if s.first == nil {
				s.first = err
			}
			s.mu.Unlock()
		}
	}()
}

// wait waits for every fsync started and returns the first error (the
// same on every call).
func (s *noteSyncs) wait() error {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first
}

// endSyncs waits for the note fsyncs the operation started, if any, and
// ends their window: rounds after it fsync before they return. It returns
// their first error.
func (w *writer) endSyncs() error {
	if w.syncs == nil {
		return nil
	}
	err := w.syncs.wait()
	w.syncs = nil
	return err
}
