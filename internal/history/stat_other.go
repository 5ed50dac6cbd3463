//go:build !linux

package history

import (
	"errors"
	"os"
	"syscall"
)

// On systems other than Linux only what os.FileInfo offers portably is used
// (no ctime, inode, device, uid or gid). The stat data then matches git's less
// often, which costs extra hashing and lets git re-hash such entries; entries
// are never wrongly clean.

func fromFileInfo(fi os.FileInfo) statData {
	mt := fi.ModTime()
	mode := uint32(fi.Mode().Perm())
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		mode |= sIFLNK
	case fi.Mode().IsRegular():
		mode |= sIFREG
	case fi.IsDir():
		mode |= sIFDIR
	}
	sd := statData{
		mtimeSec: uint32(mt.Unix()), mtimeNsec: uint32(mt.Nanosecond()),
		ctimeSec: uint32(mt.Unix()), ctimeNsec: uint32(mt.Nanosecond()),
		mode: mode, size: uint32(fi.Size()), fullSize: fi.Size(),
	}
	return sd
}

func lstat(path string) (statData, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return statData{}, err
	}
	return fromFileInfo(fi), nil
}

func stampFromInfo(fi os.FileInfo) (fileStamp, int64) {
	mt := fi.ModTime()
	dev, ino := fileIdentity(fi)
	return fileStamp{dev: dev, ino: ino, size: fi.Size(), mtime: mt.UnixNano()}, mt.Unix()
}

func fstatStamp(f *os.File) (fileStamp, int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileStamp{}, 0, err
	}
	s, sec := stampFromInfo(fi)
	return s, sec, nil
}

func lstatStamp(path string) (fileStamp, int64, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileStamp{}, 0, err
	}
	s, sec := stampFromInfo(fi)
	return s, sec, nil
}

func isENOTDIR(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

const haveSyncfs = false

// statHasChangeTime is false: the stat data's ctime is the mtime (which a
// program can set back) and it has no inode or device, so verifiedBlobs
// never vouches for a file here.
const statHasChangeTime = false

func syncfs(string) error { return nil }

// statFromInfo returns the stat data of a FileInfo from os.Stat, Lstat or
// File.Stat.
func statFromInfo(fi os.FileInfo) (statData, bool) { return fromFileInfo(fi), true }

func haveBatch(string) bool { return false }

func writeout(f *os.File) error { return f.Sync() }

func startWriteout(*os.File) {}
