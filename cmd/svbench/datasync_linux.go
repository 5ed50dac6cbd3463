package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// dataSync flushes f's data to the device without its timestamps
// (fdatasync(2)).
func dataSync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
