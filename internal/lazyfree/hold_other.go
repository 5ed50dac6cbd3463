//go:build !linux

package lazyfree

// holdHelps: elsewhere a file held open may not be replaced (Windows), and
// no file system this was measured on discards as it frees.
const holdHelps = false

func openHeld(string) (int, bool) { return -1, false }

func closeHeld(int) {}
