package vault

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// claimPair is two machines' vaults sharing one bare remote.
func claimPair(t *testing.T) (a, b *Vault, bare string) {
	t.Helper()
	a, bare = newRemoteVault(t)
	writeNote(t, a, "demo/notes.md", "# notes\n")
	mustSync(t, a)
	return a, cloneVault(t, bare), bare
}

// Two machines claiming the same task at the same moment, round after
// round: exactly one holds it each round, the other is refused with the
// holder named; the holder renews it, releases it, and an expired claim is
// taken over.
func TestTakeClaimOneHolderARound(t *testing.T) {
	t.Parallel()
	a, b, _ := claimPair(t)
	now := time.Date(2026, 11, 26, 16, 0, 0, 0, time.UTC)
	const lease = 30 * time.Minute
	for round := 0; round < 20; round++ {
		var wg sync.WaitGroup
		var got [2]Claim
		var errsOf [2]error
		for i, v := range []*Vault{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], _, errsOf[i] = v.TakeClaim("origin", Claim{Project: "demo", Task: "T-1", Holder: []string{"s-a", "s-b"}[i], Machine: []string{"a", "b"}[i], Clone: []string{"ca", "cb"}[i]}, lease, now)
			}()
		}
		wg.Wait()
		winners := 0
		for i := range got {
			var held *ClaimHeldError
			switch {
			case errsOf[i] == nil:
				winners++
			case errors.As(errsOf[i], &held):
				if other := []string{"s-b", "s-a"}[i]; held.Claim.Holder != other || !held.Claim.Expires.Equal(now.Add(lease)) {
					t.Errorf("round %d: %d refused by %+v, want %s's claim", round, i, held.Claim, other)
				}
			default:
				t.Fatalf("round %d: %v", round, errsOf[i])
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d holders (%v)", round, winners, errsOf)
		}
		w := a
		if errsOf[0] != nil {
			w = b
		}
		c, ok, err := b.ReadClaim("origin", "demo", "T-1")
		if err != nil || !ok || c.Holder != got[map[*Vault]int{a: 0, b: 1}[w]].Holder {
			t.Fatalf("round %d: the remote's claim %+v %v %v", round, c, ok, err)
		}
		// The holder renews: the lease moves, the first take is kept.
		later := now.Add(10 * time.Minute)
		r, how, err := w.TakeClaim("origin", Claim{Project: "demo", Task: "T-1", Holder: c.Holder, Machine: c.Machine, Clone: c.Clone}, lease, later)
		if err != nil || how != ClaimRenewed || !r.Expires.Equal(later.Add(lease)) || !r.Taken.Equal(now) {
			t.Fatalf("round %d: renewal %+v %v", round, r, err)
		}
		if done, err := w.ReleaseClaim("origin", "demo", "T-1", c.Holder, c.Clone, false); err != nil || !done {
			t.Fatalf("round %d: release: %v", round, err)
		}
		if _, ok, err := a.ReadClaim("origin", "demo", "T-1"); ok || err != nil {
			t.Fatalf("round %d: released claim still there (%v)", round, err)
		}
	}

	// An expired claim is taken over once its grace has passed too; until
	// then it refuses, and another holder's release is refused without
	// force.
	a1 := Claim{Project: "demo", Task: "T-2", Holder: "s-a", Machine: "a", Clone: "ca"}
	b1 := Claim{Project: "demo", Task: "T-2", Holder: "s-b", Machine: "b", Clone: "cb"}
	if _, how, err := a.TakeClaim("origin", a1, 10*time.Minute, now); err != nil || how != ClaimCreated {
		t.Fatal(how, err)
	}
	if _, _, err := b.TakeClaim("origin", b1, 10*time.Minute, now.Add(10*time.Minute+30*time.Second)); !errors.Is(err, ErrClaimHeld) {
		t.Fatalf("past the lease's end, within its grace: %v", err)
	}
	if _, err := b.ReleaseClaim("origin", "demo", "T-2", "s-b", "cb", false); !errors.Is(err, ErrClaimHeld) {
		t.Fatalf("another holder's release: %v", err)
	}
	// The same session on another clone (even of the same machine name) is
	// another holder.
	if _, _, err := b.TakeClaim("origin", Claim{Project: "demo", Task: "T-2", Holder: "s-a", Machine: "a", Clone: "cb"}, 10*time.Minute, now.Add(time.Minute)); !errors.Is(err, ErrClaimHeld) {
		t.Fatalf("the holder's session on another clone: %v", err)
	}
	later := now.Add(10*time.Minute + ClaimGrace(10*time.Minute))
	c, how, err := b.TakeClaim("origin", b1, 10*time.Minute, later)
	if err != nil || how != ClaimTakeover || c.Holder != "s-b" || !c.Taken.Equal(later) {
		t.Fatalf("taking over an expired claim: %+v %q %v", c, how, err)
	}
	if done, err := a.ReleaseClaim("origin", "demo", "T-2", "s-a", "ca", true); err != nil || !done {
		t.Fatalf("a forced release: %v", err)
	}
	if _, ok, _ := b.ReadClaim("origin", "demo", "T-2"); ok {
		t.Fatal("a forced release left the claim")
	}
}

// A remote that cannot be reached is NETWORK_UNAVAILABLE, and nothing is
// claimed; task ids git would refuse in a ref name still make a ref.
func TestTakeClaimOffline(t *testing.T) {
	t.Parallel()
	a, _, bare := claimPair(t)
	if err := os.Rename(bare, bare+".away"); err != nil {
		t.Fatal(err)
	}
	gitT(t, a.Root, "remote", "set-url", "origin", "http://127.0.0.1:9/remote.git")
	_, _, err := a.TakeClaim("origin", Claim{Project: "demo", Task: "T-1", Holder: "s-a", Machine: "a", Clone: "ca"}, time.Minute, time.Now())
	wantCode(t, err, errs.NetworkUnavailable)
	gitT(t, a.Root, "remote", "set-url", "origin", bare)
	if err := os.Rename(bare+".away", bare); err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"a..b", "x.lock", ".hidden", "name with space"} {
		if _, _, err := a.TakeClaim("origin", Claim{Project: "demo", Task: task, Holder: "s-a", Machine: "a", Clone: "ca"}, time.Minute, time.Now()); err != nil {
			t.Errorf("%q: %v", task, err)
		}
		if c, ok, err := a.ReadClaim("origin", "demo", task); !ok || err != nil || c.Holder != "s-a" {
			t.Errorf("%q: read back %+v %v %v", task, c, ok, err)
		}
	}
	if out := gitT(t, filepath.Dir(bare), "-C", bare, "for-each-ref", "--format=%(refname)", ClaimRefs); out == "" {
		t.Error("no claim refs on the remote")
	}
}

// A remote that refuses the claim refs (a hook, a host's rule) is an
// error that says so, not an endless race nor a claim.
func TestTakeClaimRefusedByTheRemote(t *testing.T) {
	t.Parallel()
	a, _, bare := claimPair(t)
	hook := filepath.Join(bare, "hooks", "update")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ncase \"$1\" in refs/sessionvault/claims/*) echo no claims here >&2; exit 1;; esac\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err := a.TakeClaim("origin", Claim{Project: "demo", Task: "T-1", Holder: "s-a", Machine: "a", Clone: "ca"}, time.Minute, time.Now())
	wantCode(t, err, errs.RemoteSyncFailed)
	if err == nil || !strings.Contains(err.Error(), "refused the ref refs/sessionvault/claims/demo/T-1") {
		t.Errorf("the error does not say the remote refused the ref: %v", err)
	}
}
