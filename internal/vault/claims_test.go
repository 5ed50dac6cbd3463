package vault

import (
	"errors"
	"os"
	"path/filepath"
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
				got[i], errsOf[i] = v.TakeClaim("origin", Claim{Project: "demo", Task: "T-1", Holder: []string{"s-a", "s-b"}[i], Machine: []string{"a", "b"}[i]}, lease, now)
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
		r, err := w.TakeClaim("origin", Claim{Project: "demo", Task: "T-1", Holder: c.Holder, Machine: c.Machine}, lease, later)
		if err != nil || !r.Expires.Equal(later.Add(lease)) || !r.Taken.Equal(now) {
			t.Fatalf("round %d: renewal %+v %v", round, r, err)
		}
		if err := w.ReleaseClaim("origin", "demo", "T-1", c.Holder, c.Machine, false); err != nil {
			t.Fatalf("round %d: release: %v", round, err)
		}
		if _, ok, err := a.ReadClaim("origin", "demo", "T-1"); ok || err != nil {
			t.Fatalf("round %d: released claim still there (%v)", round, err)
		}
	}

	// An expired claim is taken over; until then it refuses, and another
	// holder's release is refused without force.
	if _, err := a.TakeClaim("origin", Claim{Project: "demo", Task: "T-2", Holder: "s-a", Machine: "a"}, time.Minute, now); err != nil {
		t.Fatal(err)
	}
	if _, err := b.TakeClaim("origin", Claim{Project: "demo", Task: "T-2", Holder: "s-b", Machine: "b"}, time.Minute, now.Add(59*time.Second)); !errors.Is(err, ErrClaimHeld) {
		t.Fatalf("before the lease's end: %v", err)
	}
	if err := b.ReleaseClaim("origin", "demo", "T-2", "s-b", "b", false); !errors.Is(err, ErrClaimHeld) {
		t.Fatalf("another holder's release: %v", err)
	}
	// The same session on another machine is another holder.
	if _, err := b.TakeClaim("origin", Claim{Project: "demo", Task: "T-2", Holder: "s-a", Machine: "b"}, time.Minute, now.Add(30*time.Second)); !errors.Is(err, ErrClaimHeld) {
		t.Fatalf("the holder's session on another machine: %v", err)
	}
	c, err := b.TakeClaim("origin", Claim{Project: "demo", Task: "T-2", Holder: "s-b", Machine: "b"}, time.Minute, now.Add(time.Minute))
	if err != nil || c.Holder != "s-b" || !c.Taken.Equal(now.Add(time.Minute)) {
		t.Fatalf("taking over an expired claim: %+v %v", c, err)
	}
	if err := a.ReleaseClaim("origin", "demo", "T-2", "s-a", "a", true); err != nil {
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
	_, err := a.TakeClaim("origin", Claim{Project: "demo", Task: "T-1", Holder: "s-a", Machine: "a"}, time.Minute, time.Now())
	wantCode(t, err, errs.NetworkUnavailable)
	gitT(t, a.Root, "remote", "set-url", "origin", bare)
	if err := os.Rename(bare+".away", bare); err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"a..b", "x.lock", ".hidden", "name with space"} {
		if _, err := a.TakeClaim("origin", Claim{Project: "demo", Task: task, Holder: "s-a", Machine: "a"}, time.Minute, time.Now()); err != nil {
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
