package lazyregexp

import (
	"sync"
	"testing"
)

// TestNewCompilesOnceOnFirstUse checks that the expression matches what it
// should, and that concurrent first uses all get the one compiled value.
func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`^h-(\d+)$`)
	if !re().MatchString("h-12") || re().MatchString("x-12") {
		t.Fatal("the expression does not match as written")
	}
	var wg sync.WaitGroup
	got := make(chan any, 8)
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); got <- re() }()
	}
	wg.Wait()
	close(got)
	first := re()
	for g := range got {
		if g != first {
			t.Fatal("two calls returned different compiled expressions")
		}
	}
}

// TestNewPanicsOnBadExpressionAtFirstUse checks that a bad expression fails
// loudly where it is first used, not silently.
func TestNewPanicsOnBadExpressionAtFirstUse(t *testing.T) {
	re := New(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("a bad expression compiled without a panic")
		}
	}()
	re()
}
