//go:build !linux && !darwin

package main

import "os"

// maxRSSKiB returns 0: this platform's process state does not carry the peak
// resident memory in a form svbench reads.
func maxRSSKiB(*os.ProcessState) int64 { return 0 }
