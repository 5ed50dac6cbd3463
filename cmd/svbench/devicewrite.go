package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// Sizes of the device-write row: the preallocated file and one write.
const (
	deviceWriteFileBytes = 1 << 20
	deviceWriteBytes     = 4096
)

// deviceWrite is the main table's floor of any durable commit: one op
// overwrites deviceWriteBytes in place in a preallocated, already flushed
// file and flushes them to the device (fdatasync on Linux, fsync
// elsewhere). That is the whole I/O of a durability that writes one journal
// record per commit, so a phase's cost of it is what no durable design can
// pay less than on this disk.
type deviceWrite struct {
	f   *os.File
	buf []byte
}

// newDeviceWrite creates the preallocated file in work, writes it whole and
// flushes it.
func newDeviceWrite(work string) (*deviceWrite, error) {
	f, err := os.OpenFile(filepath.Join(work, "device-write.bin"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the device-write file: %w", err)
	}
	if _, err := f.Write(make([]byte, deviceWriteFileBytes)); err != nil {
		f.Close()
		return nil, fmt.Errorf("the device-write file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("the device-write file: %w", err)
	}
	return &deviceWrite{f: f, buf: make([]byte, deviceWriteBytes)}, nil
}

// op writes round i's block (a different place each round) and flushes it.
func (d *deviceWrite) op(i int) error {
	d.buf[0] = byte(i)
	slots := int64(deviceWriteFileBytes / deviceWriteBytes)
	off := (int64(i)%slots + slots) % slots * deviceWriteBytes
	if _, err := d.f.WriteAt(d.buf, off); err != nil {
		return fmt.Errorf("device write: %w", err)
	}
	if err := dataSync(d.f); err != nil {
		return fmt.Errorf("device write: %w", err)
	}
	return nil
}

// Close closes the file (the work folder's removal removes it).
func (d *deviceWrite) Close() error { return d.f.Close() }
