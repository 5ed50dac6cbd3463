//go:build unix

package cli

// Bad input at the write path (issue: concurrent writers, "Bad input at the
// write path"): each case gets a non-zero exit with its stable code, and
// HEAD, the index and the work tree are byte for byte as they were. They
// run the built binary on a real vault with the real git CLI.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// vaultSnapshot is what must not change: HEAD, the index file's bytes, and
// every work-tree file (content and kind) outside .git and the state folder.
func vaultSnapshot(t *testing.T, v string) string {
	t.Helper()
	head, err := exec.Command("git", "-c", "safe.directory=*", "-C", v, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := os.ReadFile(filepath.Join(v, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(idx)
	var lines []string
	filepath.WalkDir(v, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(v, p)
		if rel == ".git" || rel == filepath.Join(".sessionvault", "state") {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		entry := rel + " " + fi.Mode().Type().String()
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			s := sha256.Sum256(b)
			entry += " " + hex.EncodeToString(s[:8])
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			entry += " -> " + target
		}
		lines = append(lines, entry)
		return nil
	})
	sort.Strings(lines)
	return strings.TrimSpace(string(head)) + "\nindex " + hex.EncodeToString(sum[:]) + "\n" + strings.Join(lines, "\n")
}

// refused runs argv with --json and checks the refusal: a non-zero exit,
// the code, and nothing changed.
func refused(t *testing.T, bin, v string, code errs.Code, argv ...string) string {
	t.Helper()
	before := vaultSnapshot(t, v)
	out, errOut, exit := svExec(bin, v, append([]string{"--json"}, argv...)...)
	if exit == 0 {
		t.Fatalf("%v: exit 0, want a refusal with %s\n%s", argv, code.ID, out)
	}
	var res struct {
		Success bool
		Error   struct{ Code, Name, Message string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: no JSON error (%v): %s %s", argv, err, out, errOut)
	}
	if res.Error.Code != code.ID {
		t.Fatalf("%v: %s %s %q, want %s %s", argv, res.Error.Code, res.Error.Name, res.Error.Message, code.ID, code.Name)
	}
	if after := vaultSnapshot(t, v); after != before {
		t.Fatalf("%v changed the vault:\nbefore:\n%s\nafter:\n%s", argv, before, after)
	}
	return res.Error.Message
}

func TestBadInputAtTheWritePath(t *testing.T) {
	t.Parallel()
	bin := robustBinary(t)

	t.Run("invalid UTF-8 in an argument or a flag", func(t *testing.T) {
		v := robustVault(t, bin, "bad input")
		refused(t, bin, v, errs.UpdateValidationFailed, "update", "caf\xe9")
		msg := refused(t, bin, v, errs.UpdateValidationFailed, "decide", "--title", "t\xff", "--choice", "c", "--rationale", "r")
		if !strings.Contains(msg, "--title") {
			t.Errorf("the error does not name the flag: %s", msg)
		}
		refused(t, bin, v, errs.UpdateValidationFailed, "block", "ok", "--severity", "\xc3")
		refused(t, bin, v, errs.UpdateValidationFailed, "start", "--force", "--objective", "x", "--branch", "b\xff")
	})

	t.Run("a project subfolder linked outside the vault", func(t *testing.T) {
		v := robustVault(t, bin, "links")
		outside := t.TempDir()
		for _, sub := range []string{"decisions", "sessions"} {
			if err := os.Symlink(outside, filepath.Join(v, "demo", sub)); err != nil {
				t.Fatal(err)
			}
		}
		refused(t, bin, v, errs.PathOutsideVault, "decide", "--title", "escape", "--choice", "c", "--rationale", "r")
		refused(t, bin, v, errs.PathOutsideVault, "end", "--summary", "escape")
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("written outside the vault: %v", ents)
		}
	})

	t.Run("a note that is a FIFO, a socket or a device", func(t *testing.T) {
		v := robustVault(t, bin, "special files")
		note := filepath.Join(v, "demo", "session-current-state.md")
		keep := note + ".keep"
		os.Rename(note, keep)
		if err := syscall.Mkfifo(note, 0o644); err != nil {
			t.Fatal(err)
		}
		refused(t, bin, v, errs.NoteNotAFile, "update", "into a FIFO") // hung forever before
		os.Remove(note)
		// (bound at a short path, as socket paths are limited to 108 bytes,
		// then moved into place)
		short, err := os.MkdirTemp("", "sv")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(short)
		l, err := net.Listen("unix", filepath.Join(short, "s"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(short, "s"), note); err != nil {
			t.Fatal(err)
		}
		refused(t, bin, v, errs.NoteNotAFile, "update", "into a socket")
		l.Close()
		os.Remove(note)
		// A character device: /dev/null's numbers (needs CAP_MKNOD).
		if err := syscall.Mknod(note, syscall.S_IFCHR|0o644, 1<<8|3); err == nil {
			refused(t, bin, v, errs.NoteNotAFile, "update", "into a device")
			os.Remove(note)
		} else {
			t.Logf("mknod: %v (the device case is the same check as the two above)", err)
		}
		if err := os.Mkdir(note, 0o755); err != nil {
			t.Fatal(err)
		}
		refused(t, bin, v, errs.NoteNotAFile, "update", "into a folder")
		os.Remove(note)
		os.Rename(keep, note)
	})

	t.Run("a canonical note that is a symlink", func(t *testing.T) {
		v := robustVault(t, bin, "symlinked note")
		note := filepath.Join(v, "demo", "session-current-state.md")
		real := filepath.Join(v, "demo", "real-state.md")
		os.Rename(note, real)
		if err := os.Symlink("real-state.md", note); err != nil {
			t.Fatal(err)
		}
		exec.Command("git", "-C", v, "add", "-A").Run()
		exec.Command("git", "-C", v, "commit", "-qm", "link").Run()
		refused(t, bin, v, errs.NoteNotAFile, "update", "through a link")
		if fi, err := os.Lstat(note); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the link was replaced: %v %v", fi, err)
		}
	})

	t.Run("duplicate keys in front matter", func(t *testing.T) {
		v := robustVault(t, bin, "duplicates")
		note := filepath.Join(v, "demo", "session-current-state.md")
		b, _ := os.ReadFile(note)
		dup := strings.Replace(string(b), "status: active\n", "status: active\nstatus: idle\n", 1)
		os.WriteFile(note, []byte(dup), 0o644)
		msg := refused(t, bin, v, errs.StateParseError, "update", "on a note with two status keys")
		if !strings.Contains(msg, `"status" is defined twice`) {
			t.Errorf("message: %s", msg)
		}
	})

}

// The operating system's refusals get codes of their own, not E1699: a
// read-only folder and a full disk.
func TestOSErrorsHaveCodes(t *testing.T) {
	t.Parallel()
	bin := robustBinary(t)
	t.Run("read-only folder", func(t *testing.T) {
		// A world-readable place: when the test runs as root, the command
		// runs as nobody (root writes into read-only folders).
		base, err := os.MkdirTemp("", "sv-readonly-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(base)
		os.Chmod(base, 0o755)
		// A link, not a copy: a file this process has open for writing
		// cannot be run by another test's fork ("text file busy").
		bin := filepath.Join(base, "sessionvault")
		if err := os.Link(robustBinary(t), bin); err != nil {
			b, _ := os.ReadFile(robustBinary(t))
			os.WriteFile(bin, b, 0o755)
		}
		v := filepath.Join(base, "vault")
		svMustExec(t, bin, v, "init", v, "--project", "demo")
		svMustExec(t, bin, v, "start", "--objective", "read-only")
		proj := filepath.Join(v, "demo")
		run := func(argv ...string) (string, int) {
			cmd := exec.Command(bin, append([]string{"--vault", v, "--json"}, argv...)...)
			if os.Geteuid() == 0 {
				// root writes anywhere: run as nobody, owning the vault.
				if err := chownAll(v, 65534, 65534); err != nil {
					t.Fatal(err)
				}
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
				cmd.Env = append(os.Environ(), "HOME=/nonexistent")
			}
			out, _ := cmd.Output()
			return string(out), cmd.ProcessState.ExitCode()
		}
		if err := os.Chmod(proj, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(proj, 0o755)
		before := vaultSnapshot(t, v)
		out, code := run("update", "into a read-only folder")
		if code == 0 || !strings.Contains(out, errs.PermissionDenied.ID) {
			t.Fatalf("exit %d: %s", code, out)
		}
		if after := vaultSnapshot(t, v); after != before {
			t.Fatalf("changed:\n%s\n%s", before, after)
		}
	})
	t.Run("full disk", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("a small file system to fill needs root (mount -t tmpfs)")
		}
		mnt := t.TempDir()
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
			t.Skipf("mount tmpfs: %v %s", err, out)
		}
		defer exec.Command("umount", "-l", mnt).Run()
		v := filepath.Join(mnt, "vault")
		svMustExec(t, bin, v, "init", v, "--project", "demo")
		svMustExec(t, bin, v, "start", "--objective", "full disk")
		// Fill the file system.
		f, _ := os.Create(filepath.Join(mnt, "filler"))
		buf := make([]byte, 64<<10)
		for {
			if _, err := f.Write(buf); err != nil {
				break
			}
		}
		f.Close()
		before := vaultSnapshot(t, v)
		out, _, code := svExec(bin, v, "--json", "update", strings.Repeat("a long update ", 30))
		if code == 0 || !strings.Contains(out, errs.DiskFull.ID) {
			t.Fatalf("exit %d: %s", code, out)
		}
		if after := vaultSnapshot(t, v); after != before {
			t.Fatalf("changed:\n%s\n%s", before, after)
		}
		os.Remove(filepath.Join(mnt, "filler"))
		if _, _, code := svExec(bin, v, "update", "room again"); code != 0 {
			t.Fatal("the vault does not work once there is room again")
		}
		if out, err := exec.Command("git", "-C", v, "fsck", "--strict").CombinedOutput(); err != nil {
			t.Fatalf("fsck: %v %s", err, out)
		}
	})
}

func chownAll(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// A NUL byte reaches the engine only through JSON (MCP): refused with its
// code, nothing changed — it used to land in the commit message and break
// `git fsck --strict`.
func TestMCPRefusesNUL(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	cs := inMemory(t, v)
	mustCall(t, cs, "session_start", map[string]any{"objective": "NUL"})
	before := vaultSnapshot(t, v)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"session_update", map[string]any{"message": "before\x00after"}},
		{"record_decision", map[string]any{"title": "t", "choice": "c\x00", "rationale": "r"}},
		{"record_blocker", map[string]any{"description": "x", "severity": "low\x00"}},
		{"session_update", map[string]any{"message": "ok", "tags": []string{"a\x00b"}}},
		{"session_end", map[string]any{"summary": "s", "next": []string{"n\x00"}}},
	} {
		_, isErr, text := call(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(text, "E1612") || !strings.Contains(text, "NUL") {
			t.Errorf("%s %v: isError=%v %s", c.tool, c.args, isErr, text)
		}
	}
	if after := vaultSnapshot(t, v); after != before {
		t.Fatalf("changed:\n%s\n%s", before, after)
	}
	if out, err := exec.Command("git", "-C", v, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("fsck: %v %s", err, out)
	}
}

// Another git process holding index.lock: the command waits (bounded), then
// says which lock and for how long, and changes nothing; once it is gone
// the command works.
func TestGitLockHeldByAnotherProcess(t *testing.T) {
	t.Parallel()
	bin := robustBinary(t)
	v := robustVault(t, bin, "locked")
	lock := filepath.Join(v, ".git", "index.lock")
	if err := os.WriteFile(lock, []byte("git's"), 0o644); err != nil {
		t.Fatal(err)
	}
	msg := refused(t, bin, v, errs.GitLocked, "update", "while git holds the index")
	if !strings.Contains(msg, lock) || !strings.Contains(msg, "(for ") {
		t.Fatalf("the error does not name the lock and its age: %s", msg)
	}
	if b, err := os.ReadFile(lock); err != nil || string(b) != "git's" {
		t.Fatalf("the other process's lock was touched: %q %v", b, err)
	}
	os.Remove(lock)
	svMustExec(t, bin, v, "update", "after the lock")
}

// A command retried with the same --op-id (after an error or a lost reply)
// makes no second entry or commit and answers with the first result; over
// MCP the same with op_id.
func TestOpIDMakesARetryANoOp(t *testing.T) {
	t.Parallel()
	bin := robustBinary(t)
	v := robustVault(t, bin, "retries")
	first := svMustExec(t, bin, v, "--json", "--op-id", "req-42", "update", "only once")
	commits := func() string {
		out, _ := exec.Command("git", "-C", v, "rev-list", "--count", "HEAD").Output()
		return strings.TrimSpace(string(out))
	}
	n := commits()
	again := svMustExec(t, bin, v, "--json", "--op-id", "req-42", "update", "only once")
	var a, b struct {
		Data struct {
			ID     string `json:"id"`
			Repeat bool   `json:"repeat"`
			Git    struct {
				Commit string `json:"commit"`
			} `json:"git"`
		} `json:"data"`
	}
	json.Unmarshal([]byte(first), &a)
	json.Unmarshal([]byte(again), &b)
	if a.Data.ID != "u-1" || b.Data.ID != "u-1" || !b.Data.Repeat || a.Data.Repeat || b.Data.Git.Commit != a.Data.Git.Commit || a.Data.Git.Commit == "" {
		t.Fatalf("first %s\nagain %s", first, again)
	}
	if commits() != n {
		t.Fatal("the retry made a commit")
	}
	if ups := robustStatus(t, bin, v); len(ups) != 1 {
		t.Fatalf("updates = %v", ups)
	}
	log, _ := exec.Command("git", "-C", v, "log", "-1", "--format=%B").Output()
	if !strings.Contains(string(log), "Op-Id: req-42") || !strings.Contains(string(log), "Entry: u-1") {
		t.Fatalf("trailers:\n%s", log)
	}
	// Another id is another operation.
	if out := svMustExec(t, bin, v, "--op-id", "req-43", "update", "only once"); strings.TrimSpace(out) != "u-2" {
		t.Fatalf("a new id: %s", out)
	}
	refused(t, bin, v, errs.UpdateValidationFailed, "--op-id", "has spaces", "update", "x")

	cs := inMemory(t, v)
	r1 := mustCall(t, cs, "record_blocker", map[string]any{"description": "once", "op_id": "mcp-7"})
	r2 := mustCall(t, cs, "record_blocker", map[string]any{"description": "once", "op_id": "mcp-7"})
	if r1["id"] != "b-1" || r2["id"] != "b-1" || r2["repeat"] != true || r1["commit"] != r2["commit"] {
		t.Fatalf("MCP retry: %v then %v", r1, r2)
	}
}

// A sessionvault killed while waiting for git's index lock leaves its
// marker; the index.lock there is git's, and the next operation must wait
// for it, not take it over or remove it.
func TestKilledMarkerLeavesGitsLockAlone(t *testing.T) {
	t.Parallel()
	bin := robustBinary(t)
	v := robustVault(t, bin, "marker")
	marker := filepath.Join(v, ".sessionvault", "state", "committing")
	if err := os.WriteFile(marker, []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(v, ".git", "index.lock")
	if err := os.WriteFile(lock, []byte("git's"), 0o644); err != nil {
		t.Fatal(err)
	}
	// git finishes its commit a moment later.
	go func() { time.Sleep(300 * time.Millisecond); os.Remove(lock) }()
	svMustExec(t, bin, v, "update", "after git's commit")
	// And with a marker that names another lock: git's stays until it is done.
	os.WriteFile(marker, []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n1\n"), 0o644)
	os.WriteFile(lock, []byte("git's"), 0o644)
	msg := refused(t, bin, v, errs.GitLocked, "update", "while git holds it")
	if b, err := os.ReadFile(lock); err != nil || string(b) != "git's" || !strings.Contains(msg, "index.lock") {
		t.Fatalf("git's lock: %q %v; %s", b, err, msg)
	}
	os.Remove(lock)
	svMustExec(t, bin, v, "update", "once git is done")
}
