//go:build !linux

package main

import "os"

// dataSync flushes f to the device (fsync: fdatasync is Linux's).
func dataSync(f *os.File) error { return f.Sync() }
