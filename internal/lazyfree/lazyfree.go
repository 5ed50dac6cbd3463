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

// pending bounds the files waiting for the closer; past it Done closes
// the file itself.
const pending = 256

// Freer holds files about to be replaced or removed and closes them in the
// background. The zero value is ready to use, and a nil *Freer holds
// nothing. It is safe for concurrent use.
type Freer struct {
	once sync.Once
	ch   chan int // file descriptors
	wg   sync.WaitGroup
	held atomic.Int64
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

// closeLater hands fd to the closer goroutine, started on first use, or
// closes it here when the closer is behind.
func (f *Freer) closeLater(fd int) {
	f.once.Do(func() {
		f.ch = make(chan int, pending)
		go func() {
			for fd := range f.ch {
				closeHeld(fd)
				f.wg.Done()
			}
		}()
	})
	f.wg.Add(1)
	select {
	case f.ch <- fd:
	default:
		f.wg.Done()
		closeHeld(fd)
	}
}

// Wait returns once every file handed over so far is closed (its blocks
// freed).
func (f *Freer) Wait() {
	if f != nil {
		f.wg.Wait()
	}
}
