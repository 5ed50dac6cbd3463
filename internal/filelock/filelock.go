// Package filelock takes and releases exclusive cross-process locks on open
// files: flock(2) on Unix, LockFileEx on the file's first byte on Windows.
// The kernel releases a lock when its process dies, so a killed process
// never leaves a file locked. It links nothing but the standard library and
// golang.org/x/sys, for the lean hook.
package filelock

import (
	"os"
	"time"
)

// Within takes the exclusive lock of f (TryLock), trying again after first,
// then after twice as long each time up to most, until timeout has passed.
// held is false, with no error, when another process still holds it then;
// an error is one the lock call itself returned.
func Within(f *os.File, timeout, first, most time.Duration) (held bool, err error) {
	deadline := time.Now().Add(timeout)
	for wait := first; ; wait = min(2*wait, most) {
		if held, err := TryLock(f); held || err != nil {
			return held, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		time.Sleep(wait)
	}
}
