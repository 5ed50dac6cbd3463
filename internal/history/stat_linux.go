package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func fromStatT(st *syscall.Stat_t) statData {
	return statData{
		ctimeSec: uint32(st.Ctim.Sec), ctimeNsec: uint32(st.Ctim.Nsec),
		mtimeSec: uint32(st.Mtim.Sec), mtimeNsec: uint32(st.Mtim.Nsec),
		dev: uint32(st.Dev), ino: uint32(st.Ino),
		mode: st.Mode,
		uid:  st.Uid, gid: st.Gid,
		size:     uint32(st.Size),
		fullSize: st.Size,
	}
}

func stampOf(st *syscall.Stat_t) fileStamp {
	return fileStamp{
		dev: st.Dev, ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
	}
}

// lstat returns the stat data of path without following a final symlink.
func lstat(path string) (statData, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(path, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return statData{}, &os.PathError{Op: "lstat", Path: path, Err: err}
		}
		return fromStatT(&st), nil
	}
}

// fstatStamp returns the stamp of an open file.
func fstatStamp(f *os.File) (fileStamp, int64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return fileStamp{}, 0, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return stampOf(&st), st.Mtim.Sec, nil
}

// lstatStamp returns the stamp of path and its mtime in seconds.
func lstatStamp(path string) (fileStamp, int64, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return fileStamp{}, 0, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return stampOf(&st), st.Mtim.Sec, nil
}

func isENOTDIR(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

const haveSyncfs = true

// statHasChangeTime says the stat data holds the file's real ctime, inode
// and device, which no program can set back: what verifiedBlobs needs to
// vouch for a file.
const statHasChangeTime = true

// syncfs makes every write to the file system holding dir durable, with one
// syncfs(2).
func syncfs(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		err = unix.Syncfs(int(f.Fd()))
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return &os.PathError{Op: "syncfs", Path: dir, Err: err}
	}
	return nil
}

// statFromInfo returns the stat data of a FileInfo from os.Stat, Lstat or
// File.Stat.
func statFromInfo(fi os.FileInfo) (statData, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statData{}, false
	}
	return fromStatT(st), true
}

// haveBatch reports whether the file system holding dir commits its journal
// in order, so that one fsync makes every earlier write-out and directory
// change durable (ext4, XFS, btrfs: what git's core.fsyncMethod=batch relies
// on). Elsewhere each file and folder is fsynced.
func haveBatch(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC:
		return ext4Journalled(dir)
	case unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC:
		return true
	}
	return false
}

// ext4Journalled reports whether the ext4 file system holding dir has a
// journal: one made without (mkfs.ext4 -O ^has_journal, common on virtual
// machines' disks) orders nothing, and an fsync there makes only its own
// file (and a new file's folder) durable. The kernel says so in
// /sys/fs/ext4/<device>/journal_task ("<none>") and by a /proc/fs/jbd2
// entry per journal; when neither can be read it is taken to have one, as
// ext4 has by default.
func ext4Journalled(dir string) bool {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return true
	}
	link, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))))
	if err != nil {
		return true
	}
	dev := filepath.Base(link)
	if task, err := os.ReadFile("/sys/fs/ext4/" + dev + "/journal_task"); err == nil {
		return strings.TrimSpace(string(task)) != "<none>"
	}
	if _, err := os.Stat("/proc/fs/jbd2"); err != nil {
		return true
	}
	journals, _ := filepath.Glob("/proc/fs/jbd2/" + dev + "-*")
	return len(journals) > 0
}

// writeout writes a file's dirty pages to the device and waits for them
// (sync_file_range(2)), without a journal commit or a cache flush: the
// barrier that follows brings both.
func writeout(f *os.File) error {
	for {
		err := unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "sync_file_range", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// startWriteout starts the write-back of a file's dirty pages without
// waiting (a hint: writeout waits for them and reports errors).
func startWriteout(f *os.File) {
	_ = unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE) // a hint; writeout checks
}
