package vault

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// A note path that holds a folder, a symbolic link, a FIFO or a socket is
// not read (a FIFO would block) nor written over: the error names what is
// there, and the operation writes nothing.
func TestSpecialFilesAreNotNotes(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	root := v.Root
	if err := os.Mkdir(filepath.Join(root, "folder.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeNote(t, v, "target.md", "target\n")
	if err := os.Symlink("target.md", filepath.Join(root, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(root, "sock.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for rel, kind := range map[string]string{"folder.md": "a folder", "link.md": "a symbolic link", "fifo.md": "a FIFO", "sock.md": "a socket"} {
		_, err := v.ReadFile(rel)
		if errs.CodeOf(err) != errs.NoteNotAFile || !strings.Contains(err.Error(), kind) {
			t.Errorf("reading %s: %v; want errs.NoteNotAFile naming %s", rel, err, kind)
		}
		if _, err := v.Transact(writeOp(rel, "x\n")); errs.CodeOf(err) != errs.NoteNotAFile {
			t.Errorf("writing %s: %v", rel, err)
		}
	}
	if got := readNote(t, v, "target.md"); got != "target\n" {
		t.Errorf("the link's target = %q", got)
	}
	if _, err := v.ReadFile("missing.md"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing note: %v", err)
	}
}

// Operating-system errors get the code a user can act on, and a message
// saying what to do; an error that already has a code keeps it.
func TestOSErrorCodes(t *testing.T) {
	t.Parallel()
	for errno, code := range map[syscall.Errno]errs.Code{
		syscall.EACCES: errs.PermissionDenied, syscall.EROFS: errs.PermissionDenied,
		syscall.ENOSPC: errs.DiskFull, syscall.EDQUOT: errs.DiskFull,
		syscall.EISDIR: errs.NoteNotAFile, syscall.ENOTDIR: errs.NoteNotAFile,
		syscall.ELOOP: errs.PathOutsideVault, syscall.EIO: errs.InternalError,
	} {
		err := osError(&os.PathError{Op: "write", Path: "/x", Err: errno}, "p/n.md", "writing")
		if OSErrorCode(errno) != code || errs.CodeOf(err) != code || !strings.Contains(err.Error(), "writing p/n.md") {
			t.Errorf("%v: %v (%v), want %v", errno, err, errs.CodeOf(err), code.Name)
		}
		var e *errs.Error
		if errors.As(err, &e) && e.Details["note"] != "p/n.md" {
			t.Errorf("%v: details %v", errno, e.Details)
		}
	}
	if err := osError(&os.PathError{Err: syscall.ENOSPC}, "n.md", "writing"); !strings.Contains(err.Error(), "the disk is full") {
		t.Errorf("disk full: %v", err)
	}
	if err := osError(&os.PathError{Err: syscall.EROFS}, "n.md", "writing"); !strings.Contains(err.Error(), "read-only") {
		t.Errorf("read-only: %v", err)
	}
	coded := errs.New(errs.LockTimeout, "held")
	if err := osError(coded, "n.md", "writing"); err != error(coded) {
		t.Errorf("a coded error was rewrapped: %v", err)
	}
	if OSErrorCode(errors.New("plain")) != errs.InternalError {
		t.Error("a plain error got a code")
	}
}

// Where the file system cannot exchange two files, the replaced note ends
// up at the temporary path and the new version in place.
func TestLinkAndRenameKeepsTheReplacedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmp, abs := filepath.Join(dir, "tmp"), filepath.Join(dir, "n.md")
	os.WriteFile(tmp, []byte("new\n"), 0o644)
	os.WriteFile(abs, []byte("old\n"), 0o644)
	if err := linkAndRename(tmp, abs); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(abs); string(b) != "new\n" {
		t.Errorf("the note holds %q", b)
	}
	if b, _ := os.ReadFile(tmp); string(b) != "old\n" {
		t.Errorf("the temporary path holds %q", b)
	}
	if err := linkAndRename(filepath.Join(dir, "none"), abs); err == nil {
		t.Error("no error for a new version that is not there")
	}
	if b, _ := os.ReadFile(abs); string(b) != "new\n" {
		t.Errorf("a failed exchange changed the note: %q", b)
	}
}
