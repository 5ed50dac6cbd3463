package lazyfree

import "golang.org/x/sys/unix"

// holdHelps: Linux file systems free a file's blocks at its last close.
const holdHelps = true

// openHeld opens path for reading without following a symbolic link, and
// keeps it only when it is a regular file (O_NONBLOCK: a FIFO does not
// block the open).
func openHeld(path string) (fd int, ok bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, false
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		_ = unix.Close(fd)
		return -1, false
	}
	return fd, true
}

func closeHeld(fd int) { _ = unix.Close(fd) }
