//go:build !unix

package session

import "io/fs"

func statExtra(fs.FileInfo) string { return "" }
