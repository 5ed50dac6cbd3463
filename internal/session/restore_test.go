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
			x := newKeyIndex(body)
			for _, k := range keys {
				if got, want := x.has(k), hasKey(body, k); got != want {
					t.Errorf("body %q, key %q: index says %v, scan says %v", body, k, got, want)
				}
			}
			for _, l := range bytes.Split(body, []byte("\n")) {
				if k := entryKey(l); k != "" && x.has(k) != hasKey(body, k) {
					t.Errorf("body %q, key %q of its own line: index and scan differ", body, k)
				}
			}
		}
	}
}
