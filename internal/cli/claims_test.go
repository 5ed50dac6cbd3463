package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// claimPair is two clones of a vault served over git's smart HTTP
// protocol, both holding task "parser" and claim_lease lease.
func claimPair(t *testing.T, lease string) (a, b *clone) {
	t.Helper()
	clones := newRemoteVaultAt(t, 2, httpRemote(t))
	a, b = clones[0], clones[1]
	cfg := filepath.Join(a.dir, ".sessionvault", "config.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\nversion: 2\n") {
		t.Fatalf("a new vault is not in format 2, where locks are claims through the remote:\n%s", data)
	}
	if !strings.Contains(string(data), "\nclaim_lease: 30m\n") {
		t.Fatalf("no claim_lease setting in the new vault's config:\n%s", data)
	}
	text := strings.Replace(string(data), "\nclaim_lease: 30m\n", "\nclaim_lease: "+lease+"\n", 1)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if text != string(data) {
		a.git("commit", "--quiet", "-am", "claims for "+lease)
	}
	for _, task := range []string{"parser", "lexer", "printer"} {
		a.sv("task", "new", task, "--id", task)
	}
	a.sv("remote", "sync")
	b.sv("remote", "sync")
	return a, b
}

// lockCmd is `task lock TASK` on c, not yet started.
func (c *clone) lockCmd(task string) *exec.Cmd {
	cmd := exec.Command(c.bin, "--vault", c.dir, "task", "lock", task)
	cmd.Env = c.env
	return cmd
}

// machine is c's machine name as `remote setup` recorded it.
func (c *clone) machine() string {
	c.t.Helper()
	data, err := os.ReadFile(filepath.Join(c.dir, ".sessionvault", "state", "machine"))
	if err != nil {
		c.t.Fatal(err)
	}
	i := strings.Index(string(data), `"name":"`)
	if i < 0 {
		c.t.Fatalf("machine record %s", data)
	}
	rest := string(data[i+len(`"name":"`):])
	return rest[:strings.IndexByte(rest, '"')]
}

// Two clones claim the same task at the same moment, 50 rounds, over
// HTTP: each round exactly one holds it, and the other is refused with
// E1613 naming the holder's machine; the holder releases it for the next
// round.
func TestClaimsOneHolderARound(t *testing.T) {
	t.Parallel()
	a, b := claimPair(t, "30m")
	names := map[*clone]string{a: a.machine(), b: b.machine()}
	for round := 0; round < 50; round++ {
		cs := []*clone{a, b}
		cmds := []*exec.Cmd{a.lockCmd("parser"), b.lockCmd("parser")}
		outs := make([]strings.Builder, 2)
		for i, cmd := range cmds {
			cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		}
		for _, cmd := range cmds {
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
		}
		var winner *clone
		var refusal string
		for i, cmd := range cmds {
			if err := cmd.Wait(); err == nil {
				if winner != nil {
					t.Fatalf("round %d: both clones hold the claim:\n%s\n%s", round, outs[0].String(), outs[1].String())
				}
				winner = cs[i]
			} else {
				refusal = outs[i].String()
			}
		}
		if winner == nil {
			t.Fatalf("round %d: neither clone holds the claim:\n%s\n%s", round, outs[0].String(), outs[1].String())
		}
		if !strings.Contains(refusal, "E1613") || !strings.Contains(refusal, "claimed on origin by") || !strings.Contains(refusal, "(machine "+names[winner]+")") {
			t.Fatalf("round %d: the refusal does not name the holder's machine %s:\n%s", round, names[winner], refusal)
		}
		winner.sv("task", "unlock", "parser")
	}
}

// A holder killed (kill -9) while it claims, at any moment: the other
// clone is refused while the claim's lease runs, names the holder, and
// takes the claim once the lease has ended.
func TestClaimsOfAKilledHolderEndWithTheLease(t *testing.T) {
	t.Parallel()
	a, b := claimPair(t, "3s")
	for i, delay := range []time.Duration{0, 40 * time.Millisecond, 400 * time.Millisecond} {
		task := []string{"parser", "lexer", "printer"}[i]
		cmd := a.lockCmd(task)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		killed := time.Now()
		out, err := b.try("task", "lock", task)
		if err != nil && (!strings.Contains(out, "E1613") || !strings.Contains(out, "(machine "+a.machine()+")")) {
			t.Fatalf("killed after %v: the refusal does not name the holder:\n%s", delay, out)
		}
		if err != nil {
			time.Sleep(time.Until(killed.Add(4 * time.Second)))
			b.sv("task", "lock", task)
		}
		if out, err := a.try("task", "lock", task); err == nil || !strings.Contains(out, "(machine "+b.machine()+")") {
			t.Fatalf("killed after %v: b took the claim, yet a's lock says:\n%s", delay, out)
		}
	}
}

// Offline, a lock is provisional; the next sync confirms it on the remote,
// or removes it when another machine claimed the task first, and says so.
func TestClaimsOfflineSettleAtTheNextSync(t *testing.T) {
	t.Parallel()
	a, b := claimPair(t, "30m")
	url := b.git("remote", "get-url", "origin")
	b.git("remote", "set-url", "origin", "http://127.0.0.1:9/remote.git")
	for _, task := range []string{"parser", "lexer"} {
		if out := b.sv("task", "lock", task); !strings.Contains(out, "provisional") {
			t.Fatalf("an offline lock of %s:\n%s", task, out)
		}
	}
	a.sv("task", "lock", "lexer")
	b.git("remote", "set-url", "origin", url)
	out := b.sv("remote", "sync")
	if !strings.Contains(out, "claim of parser on origin confirmed") ||
		!strings.Contains(out, "the provisional lock of lexer was refused") || !strings.Contains(out, "(machine "+a.machine()+")") {
		t.Fatalf("the sync after an offline lock:\n%s", out)
	}
	if show := b.sv("--json", "task", "show", "lexer"); strings.Contains(show, `"machine": "`+b.machine()+`"`) {
		t.Fatalf("b still holds lexer after the refusal:\n%s", show)
	}
	if out, err := a.try("task", "lock", "parser"); err == nil || !strings.Contains(out, "(machine "+b.machine()+")") {
		t.Fatalf("parser, confirmed for b, is lockable by a:\n%s", out)
	}
}

// claimRefs lists the claim refs on c's remote.
func (c *clone) claimRefs() string {
	c.t.Helper()
	return c.git("ls-remote", "origin", "refs/sessionvault/claims/*")
}

// A lock that cannot be written claims nothing on the remote (a vault in a
// newer format); ending a session releases what it claimed, at once.
func TestClaimsFollowTheLock(t *testing.T) {
	t.Parallel()
	a, b := claimPair(t, "30m")
	cfg := filepath.Join(b.dir, ".sessionvault", "config.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(data), "\nversion: 2\n", "\nversion: 7\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := b.try("task", "lock", "lexer"); err == nil || !strings.Contains(out, "E1696") {
		t.Fatalf("a lock on a vault of a newer format: %v\n%s", err, out)
	}
	if refs := b.claimRefs(); refs != "" {
		t.Fatalf("a lock refused by the vault's format left a claim:\n%s", refs)
	}
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}

	// a's session (started by newRemoteVault) claims parser; its end frees it.
	a.sv("task", "lock", "parser")
	if refs := a.claimRefs(); !strings.Contains(refs, "refs/sessionvault/claims/demo/parser") {
		t.Fatalf("no claim on the remote after the lock: %q", refs)
	}
	if out := a.sv("end", "--summary", "done"); !strings.Contains(out, "claim of parser on origin released") {
		t.Fatalf("end does not say it released the claim:\n%s", out)
	}
	if refs := a.claimRefs(); refs != "" {
		t.Fatalf("the ended session's claim is still on the remote:\n%s", refs)
	}
	b.sv("task", "lock", "parser")
}
