package session

import (
	"bytes"
	"testing"
)

// The key index answers exactly as a scan of the body does, for the keys
// of every entry line and for near misses (another digit, a longer target).
func TestKeyIndexAgreesWithScan(t *testing.T) {
	bodies := []string{
		"## Updates\n\n- a ^u-1\n- b ^u-12\n- c ^u-3x\n",
		"- [[decisions/x|x]] and [[y#h]] and [[[z]]] and [[w\n",
		"| 2026-11-22T10:00:00Z | rule | fix |\n^^u-7 ^d-\n[[]] [[a",
		"### [[sessions/2026-11-22-session-01]]\n- [[sessions/a|a]] ^h-2\n",
	}
	keys := []string{"^u-1", "^u-12", "^u-2", "^u-3", "^u-7", "[[decisions/x", "[[decisions", "[[y", "[[z", "[[[z",
		"[[w", "[[a", "[[sessions/2026-11-22-session-01", "[[sessions/a", "^h-2",
		"| 2026-11-22T10:00:00Z | rule | fix |", "| other |"}
	for _, b := range bodies {
		for _, extra := range []string{"", "\n- late ^u-120\n"} {
			body := []byte(b + extra)
			x := NewKeyIndex(body)
			for _, k := range keys {
				if got, want := x.Has(k), hasKey(body, k); got != want {
					t.Errorf("body %q, key %q: index says %v, scan says %v", body, k, got, want)
				}
			}
			for _, l := range bytes.Split(body, []byte("\n")) {
				if k := entryKey(l); k != "" && x.Has(k) != hasKey(body, k) {
					t.Errorf("body %q, key %q of its own line: index and scan differ", body, k)
				}
			}
		}
	}
}

// Entry ids of a secondary machine (^d-1-mb) are keys of their own: present
// beside ^d-1 they are found (not restored a second time), and ^d-1 is not
// found in ^d-1-mb.
func TestRestoreKeysWithMachineNames(t *testing.T) {
	body := []byte("- one ^d-1-mb\n- two ^u-12-laptop\n")
	x := NewKeyIndex(body)
	for key, want := range map[string]bool{"^d-1-mb": true, "^u-12-laptop": true, "^d-1": false, "^u-12": false, "^u-1": false} {
		if got := x.Has(key); got != want {
			t.Errorf("keyIndex.has(%q) = %v, want %v", key, got, want)
		}
		if got := hasKey(body, key); got != want {
			t.Errorf("hasKey(%q) = %v, want %v", key, got, want)
		}
	}
}
