package vault

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/filelock"
)

// fileLock is a held cross-process lock on .sessionvault/state/lock: flock(2)
// on Unix, LockFileEx on Windows. The kernel releases it when the process
// dies, so a killed sessionvault never leaves the vault locked.
type fileLock struct{ f *os.File }

// lock takes the vault's cross-process lock, waiting up to the configured
// lock timeout; past it the error carries errs.LockTimeout.
func (v *Vault) lock() (*fileLock, error) {
	d, err := v.stateDir("")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(d, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the vault lock %s: %w", path, err)
	}
	held, err := filelock.Within(f, v.Config.LockTimeout.Duration, time.Millisecond, 32*time.Millisecond)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if !held {
		f.Close()
		return nil, errs.New(errs.LockTimeout, "another sessionvault process has held the vault lock %s for over %s", path, v.Config.LockTimeout.Duration)
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) unlock() {
	filelock.Unlock(l.f)
	l.f.Close()
}
