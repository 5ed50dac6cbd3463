// Command sessionvault keeps an AI coding agent's session state in a
// git-versioned Obsidian vault. See `sessionvault --help`.
package main

import (
	"os"
	"runtime"
	"runtime/debug"

	"github.com/sessionvault/sessionvault/internal/cli"
)

// gcFreeHeap is the memory a run grows to before its first garbage
// collection (see deferGC): an update on a vault of 10,000 notes allocates
// about 11 MB.
const gcFreeHeap = 32 << 20

func main() {
	deferGC()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// deferGC puts the garbage collector off until the heap reaches
// gcFreeHeap: most commands live for milliseconds and allocate a few MB,
// and collecting it would only cost them time. The first collection, at
// that bound, hands the collector back to its defaults, so a command that
// runs long (mcp, serve) or reads a lot (import, check) runs as before
// past it. GOGC or GOMEMLIMIT in the environment keep their own settings.
func deferGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(gcFreeHeap)
	// An object the first collection frees, whose cleanup restores the
	// defaults (64 bytes: not batched with other objects).
	runtime.AddCleanup(new([64]byte), func(percent int) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}, percent)
}
