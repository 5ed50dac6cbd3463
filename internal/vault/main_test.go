package vault

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/sessionvault/sessionvault/internal/testenv"
)

// killChildEnv, set in a child process of the test binary, makes it run
// one operation that is killed part way (killChild) instead of the tests.
const killChildEnv = "SESSIONVAULT_TEST_KILL_CHILD"

// killSpec says what the killed child does: in the vault Dir, append Line
// to Rel (as the operation OpID, "" for none) and be killed At "swap" (the
// new version in place, before the commit) or "commit" (right after the
// commit, before the operation's records).
type killSpec struct {
	Dir, At, OpID, Rel, Line string
}

// TestMain runs the tests, or, in a child process started with
// killChildEnv set, the operation to be killed.
func TestMain(m *testing.M) {
	if spec := os.Getenv(killChildEnv); spec != "" {
		killChild(spec)
		os.Exit(3) // not killed
	}
	os.Exit(testenv.Run(m))
}

// killChild runs the operation spec describes and kills the process at its
// kill point.
func killChild(spec string) {
	var s killSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	v, err := Open(s.Dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	kill := func() {
		p, _ := os.FindProcess(os.Getpid())
		p.Kill()
		select {} // until the signal lands
	}
	if s.At == "swap" {
		v.afterSwap = kill
	}
	_, _, err = v.TransactOnce(s.OpID, func(tx *Tx) (Change, error) {
		cur, _ := tx.Read(s.Rel)
		ch := Change{Operation: "append", Summary: s.Line}
		if s.At == "commit" {
			ch.Committed = func(Result) error { kill(); return nil }
		}
		return ch, tx.Write(s.Rel, append(cur, []byte(s.Line+"\n")...))
	})
	fmt.Fprintln(os.Stderr, "the operation was not killed:", err)
}
