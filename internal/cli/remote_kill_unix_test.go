//go:build unix

package cli

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/testenv"
)

// kill -9 during a sync (the whole process group: sessionvault and the git
// it runs, as when a machine stops; the remote is served over HTTP, so its
// server side is not killed with it): nothing recorded is lost, and the
// next sync completes and converges.
//
// Not parallel: the kills fall 0-400 ms into a sync, a window not scaled to
// how long a sync takes here; with other tests beside it a sync is slower
// and every kill lands near its start.
func TestRemoteSyncKilled(t *testing.T) {
	clones := newRemoteVaultAt(t, 2, httpRemote(t))
	a, b := clones[0], clones[1]
	rng := rand.New(rand.NewPCG(3, 5))
	var entries []string
	kills := 0
	for round := 0; round < testenv.Size(4, 12); round++ {
		for _, c := range clones {
			msg := fmt.Sprintf("round %d on %s", round, c.name)
			c.sv("update", msg)
			entries = append(entries, msg)
		}
		a.sv("remote", "sync")
		cmd := exec.Command(b.bin, "--vault", b.dir, "remote", "sync")
		cmd.Env = b.env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(time.Duration(rng.IntN(400)) * time.Millisecond):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			kills++
		}
	}
	for pass := 0; pass < 2; pass++ {
		for _, c := range clones {
			c.sv("remote", "sync")
		}
	}
	if kills == 0 {
		t.Fatal("no sync was killed")
	}
	sa := readFile(t, filepath.Join(a.dir, "demo", "session-current-state.md"))
	sb := readFile(t, filepath.Join(b.dir, "demo", "session-current-state.md"))
	if sa != sb {
		t.Errorf("the clones' current states differ after the syncs")
	}
	for _, e := range entries {
		if n := strings.Count(sa, " "+e+" ^"); n != 1 {
			t.Errorf("update %q is there %d times", e, n)
		}
	}
	for _, c := range clones {
		if st := c.git("status", "--porcelain"); st != "" {
			t.Errorf("%s: git status not clean:\n%s", c.name, st)
		}
		c.git("fsck", "--strict")
		if out, err := c.try("check"); err != nil {
			t.Errorf("%s: check: %v\n%s", c.name, err, out)
		}
	}
	t.Logf("%d of 12 syncs killed", kills)
}
