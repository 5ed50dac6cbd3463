package vault

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Durability of a write made with AtomicWrite.
const (
	// Durable fsyncs the file before the rename and its folder after it.
	Durable = iota
	// Volatile skips fsync: for rebuildable state (heartbeats, the journal),
	// where a power cut may lose the last write but a process kill never does.
	Volatile
)

// AtomicWrite replaces path with data so that a reader, or a killed process
// at any point, sees either the old content or the new, never a torn file:
// the data goes to a temporary file in tmpDir (same file system, outside the
// work tree), is fsynced (per durability), renamed over path, and path's
// folder is fsynced (Durable only). Missing parent folders of path are
// created. The new file's mode is 0644.
func AtomicWrite(tmpDir, path string, data []byte, durability int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating the folder of %s: %w", path, err)
	}
	name := filepath.Join(tmpDir, filepath.Base(path)+"."+strconv.Itoa(os.Getpid())+"."+strconv.FormatInt(time.Now().UnixNano(), 36))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, werr := f.Write(data)
	if werr == nil && durability != Volatile {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if durability != Durable {
		return nil
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing folder %s: %w", dir, err)
	}
	return nil
}
