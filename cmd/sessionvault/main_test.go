package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// deferGC turns the collector off up to gcFreeHeap, and its first
// collection gives the collector back its settings.
func TestDeferGCHandsTheCollectorBackAfterTheFirstCollection(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	percent := debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1) // a negative limit only reads it
	defer func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}()

	deferGC()
	if got := debug.SetMemoryLimit(-1); got != gcFreeHeap {
		t.Fatalf("the memory limit is %d, not %d, before the first collection", got, gcFreeHeap)
	}
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC is %d, not off, before the first collection", got)
	}
	runtime.GC()
	for deadline := time.Now().Add(10 * time.Second); debug.SetMemoryLimit(-1) != limit; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the memory limit is still %d after a collection, not %d", debug.SetMemoryLimit(-1), limit)
		}
		runtime.GC()
	}
	if got := debug.SetGCPercent(percent); got != percent {
		t.Errorf("GOGC is %d after the first collection, not %d", got, percent)
	}
}

// GOGC or GOMEMLIMIT in the environment keep the collector as they set it.
func TestDeferGCLeavesTheEnvironmentsSettings(t *testing.T) {
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			t.Setenv(env, "100")
			limit := debug.SetMemoryLimit(-1)
			deferGC()
			if got := debug.SetMemoryLimit(-1); got != limit {
				debug.SetMemoryLimit(limit)
				t.Fatalf("with %s set, the memory limit changed to %d", env, got)
			}
		})
	}
}
