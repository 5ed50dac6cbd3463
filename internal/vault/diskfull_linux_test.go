//go:build linux && !portable

package vault

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// A disk that fills up between the note's swap and the commit: the
// operation fails with DISK_FULL and leaves the note as it was, though
// taking the change back then has no free block to write a file into.
// (Linux's write path only: the swap back needs a read lease on the note,
// which the portable path of macOS and Windows does not have.)
func TestDiskFullAfterTheSwapLeavesTheNote(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a small file system to fill needs root (mount -t tmpfs)")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	dir := filepath.Join(mnt, "vault")
	v := newVaultIn(t, dir)
	mustTransact(t, v, writeOp("n.md", "start\n"))
	before := head(t, v)
	filler := filepath.Join(mnt, "filler")
	v.afterSwap = func() {
		v.afterSwap = nil
		f, err := os.Create(filler)
		if err != nil {
			t.Error(err)
			return
		}
		buf := make([]byte, 16<<10)
		for {
			if _, err := f.Write(buf); err != nil {
				break
			}
		}
		f.Close()
	}
	_, err := v.Transact(appendOp("n.md", "engine", nil))
	wantCode(t, err, errs.DiskFull)
	if got := readNote(t, v, "n.md"); got != "start\n" {
		t.Errorf("n.md = %q after the failed operation, want it as it was", got)
	}
	if head(t, v) != before {
		t.Error("HEAD moved")
	}
	os.Remove(filler)
	mustTransact(t, v, appendOp("n.md", "room again", nil))
	if got := readNote(t, v, "n.md"); got != "start\nroom again\n" {
		t.Errorf("n.md = %q once there is room again", got)
	}
	tmp := filepath.Join(dir, ".sessionvault", "state", "tmp")
	left, _ := os.ReadDir(tmp)
	for _, e := range left {
		if b, _ := os.ReadFile(filepath.Join(tmp, e.Name())); strings.Contains(string(b), "engine") {
			t.Errorf("the engine's version is left in .sessionvault/state/tmp/%s", e.Name())
		}
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("fsck: %v %s", err, out)
	}
}
