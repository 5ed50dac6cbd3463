package main

import (
	"os"
	"syscall"
)

// maxRSSKiB returns the peak resident memory of the exited process ps, in
// KiB (Linux reports ru_maxrss in KiB).
func maxRSSKiB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}
