package targettest

import "testing"

// TestMemory runs the conformance suite on the in-memory target.
func TestMemory(t *testing.T) {
	Run(t, func(*testing.T) Harness {
		m := NewMemory()
		return Harness{Target: m, Backend: m}
	})
}
