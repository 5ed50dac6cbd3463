// Package lazyfree keeps the freeing of a replaced or removed file's blocks
// off the path of an operation.
//
// On a file system that discards freed blocks as it frees them (ext4
// without a journal mounted with -o discard, common on virtual machines'
// disks), replacing a file by a rename, or removing it, waits in the
// rename or unlink until the device has discarded the old file's blocks;
// on a busy disk that request queues behind every other program's writes
// (13 ms and more each, measured beside a process writing and flushing
// 64 MB files). A file still open when it is replaced or removed keeps its
// blocks until its last close, so a Freer opens such a file before the
// caller replaces it and closes it afterwards on a goroutine of its own:
// the discard then happens there, beside the operation. A short-lived
// process's held files are closed when it exits.
package lazyfree

import (
	"sync"
	"sync/atomic"
)

// maxPending bounds the files waiting for the closer; past it done closes
// the file itself.
const maxPending = 256

// Freer holds files about to be replaced or removed and closes them in the
// background, on a goroutine that runs while there are files to close. The
// zero value is ready to use, and a nil *Freer holds nothing. It is safe for
// concurrent use.
type Freer struct {
	mu      sync.Mutex
	idle    *sync.Cond // signalled when the closer stops (Wait)
	pending []int      // file descriptors handed over, not yet closed
	running bool       // a closer goroutine is draining pending
	held    atomic.Int64
}

// Hold opens the file at path, if there is one and holding helps on this
// system (Linux), before the caller replaces or removes it. Call the
// function it returns once that is done (or failed): it hands the file to
// the background closer. Holding never fails: a file that cannot be opened
// is not held.
func (f *Freer) Hold(path string) (done func()) {
	if f == nil || !holdHelps {
		return func() {}
	}
	fd, ok := openHeld(path)
	if !ok {
		return func() {}
	}
	f.held.Add(1)
	return func() { f.closeLater(fd) }
}

// Held returns how many files Hold has held so far.
func (f *Freer) Held() int64 {
	if f == nil {
		return 0
	}
	return f.held.Load()
}

// Active reports whether Hold holds anything here (a non-nil Freer, on
// Linux): callers choose a replacement over an in-place truncation by it.
func (f *Freer) Active() bool { return f != nil && holdHelps }

// closeLater hands fd to the closer, starting it if it is not running, or
// closes fd here when maxPending files are already waiting.
func (f *Freer) closeLater(fd int) {
	f.mu.Lock()
	if len(f.pending) >= maxPending {
		f.mu.Unlock()
		closeHeld(fd)
		return
	}
	f.pending = append(f.pending, fd)
	if !f.running {
		f.running = true
		go f.drain()
	}
	f.mu.Unlock()
}

// drain closes the pending files until there are none, then stops.
func (f *Freer) drain() {
	f.mu.Lock()
	for len(f.pending) > 0 {
		fd := f.pending[0]
		f.pending = f.pending[1:]
		f.mu.Unlock()
		closeHeld(fd)
		f.mu.Lock()
	}
	f.running = false
	if f.idle != nil {
		f.idle.Broadcast()
	}
	f.mu.Unlock()
}

// Wait returns once every file handed over before it returns is closed
// (its blocks freed).
func (f *Freer) Wait() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.idle == nil {
		f.idle = sync.NewCond(&f.mu)
	}
	for f.running {
		f.idle.Wait()
	}
}
