package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
)

// beat is the time of m's last heartbeat of session id of project demo
// (zero when it has none).
func (m *machine) beat(id string) time.Time {
	if t := m.LastBeat("demo", id); t != nil {
		return *t
	}
	return time.Time{}
}

// Heartbeats travel beside the branch: a machine's ShareHeartbeats writes
// its beats to refs/sessionvault/heartbeat/<machine> without a commit on
// the branch; the other machine, once it has fetched that ref, takes the
// beat of the session its current state holds when it is later than its
// own (no machine then takes that session for crashed); a machine writes
// its ref from its own beats only, and none while it has none.
func TestHeartbeatsTravelBesideTheBranch(t *testing.T) {
	t.Parallel()
	a, b := twoMachines(t, t0)
	a.tick(time.Minute)
	a.ok(a.Start(session.StartOptions{Project: "demo", Objective: "on a"}))
	b.pull(a)
	id := a.sessionID()

	if ref, err := b.ShareHeartbeats(); err != nil || ref != "" {
		t.Fatalf("b with no beat: ref %q, %v", ref, err)
	}
	if refs := b.git("for-each-ref", HeartbeatRefs); refs != "" {
		t.Errorf("b with no beat wrote refs:\n%s", refs)
	}

	a.tick(20 * time.Minute) // 9:21
	a.ok(a.Heartbeat("demo"))
	head := a.git("rev-parse", "HEAD")
	ma, err := a.V.Machine()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := a.ShareHeartbeats()
	if err != nil || ref != HeartbeatRefs+ma.Name {
		t.Fatalf("a: ref %q, %v; want %s", ref, err, HeartbeatRefs+ma.Name)
	}
	if a.git("rev-parse", "HEAD") != head {
		t.Errorf("sharing heartbeats made a commit on the branch")
	}
	if got := a.git("show", ref+":demo"); got != "2026-11-26T09:21:00Z "+id {
		t.Errorf("a's heartbeat ref holds %q", got)
	}

	b.git("fetch", "--quiet", a.V.Root, "+"+HeartbeatRefs+"*:"+HeartbeatRefs+"*")
	ref, err = b.ShareHeartbeats()
	if err != nil || ref != "" {
		t.Fatalf("b, with a's beat fetched and none of its own: ref %q, %v", ref, err)
	}
	if got, want := b.beat(id), t0.Add(21*time.Minute); !got.Equal(want) {
		t.Errorf("b's last beat of %s: %v, want a's %v", id, got, want)
	}
	if refs := b.git("for-each-ref", "--format=%(refname)", HeartbeatRefs); refs != HeartbeatRefs+ma.Name {
		t.Errorf("b's heartbeat refs: %q, want a's only", refs)
	}
	// 44 minutes after the start, 24 after a's beat: alive on b too.
	b.now = t0.Add(45 * time.Minute)
	st, err := b.Status("demo")
	if err != nil || st.Status != session.StatusActive {
		t.Errorf("b's status of a's session 24 minutes after a's beat: %s %v", st.Status, err)
	}
	b.ok(b.Heartbeat("demo"))
	ref, err = b.ShareHeartbeats()
	if err != nil || ref != HeartbeatRefs+"mb" {
		t.Fatalf("b after its own beat: ref %q, %v", ref, err)
	}
	if got := b.git("show", ref+":demo"); got != "2026-11-26T09:45:00Z "+id {
		t.Errorf("b's heartbeat ref holds %q", got)
	}
	if got, want := b.beat(id), t0.Add(45*time.Minute); !got.Equal(want) {
		t.Errorf("b's own later beat was replaced by a's older one: %v", got)
	}
}

// Of the beats other machines' refs hold, ShareHeartbeats takes only a
// later beat of the session the current state holds: not an earlier one,
// not another session's, not one that is no time, not one for another
// project, and never one from this machine's own ref.
func TestShareHeartbeatsTakesOnlyALaterBeatOfTheSession(t *testing.T) {
	t.Parallel()
	a, _ := twoMachines(t, t0)
	a.tick(time.Minute)
	a.ok(a.Start(session.StartOptions{Project: "demo", Objective: "beats"}))
	id := a.sessionID()
	a.tick(10 * time.Minute) // 9:11
	a.ok(a.Heartbeat("demo"))
	ma, err := a.V.Machine()
	if err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	for name, beat := range map[string]string{
		"earlier":  at(5*time.Minute) + " " + id,
		"other":    at(50*time.Minute) + " 2026-11-26-session-07",
		"garbled":  "soon " + id,
		"empty":    "",
		ma.Name:    at(55*time.Minute) + " " + id, // this machine's own ref
		"elsewhen": at(40*time.Minute) + " " + id, // the only one to take
	} {
		if err := a.V.WriteSideRef(HeartbeatRefs+name, map[string][]byte{"demo": []byte(beat + "\n"), "elsewhere": []byte(at(59*time.Minute) + " " + id + "\n")}); err != nil {
			t.Fatal(err)
		}
	}
	// The own ref written above is replaced by this machine's own beats.
	ref, err := a.ShareHeartbeats()
	if err != nil || ref != HeartbeatRefs+ma.Name {
		t.Fatalf("ref %q, %v", ref, err)
	}
	if got, want := a.beat(id), t0.Add(40*time.Minute); !got.Equal(want) {
		t.Errorf("last beat %v, want %v (elsewhen's)", got, want)
	}
	if got := a.git("show", ref+":demo"); !strings.HasPrefix(got, "2026-11-26T09:11:00Z ") {
		t.Errorf("this machine's ref holds %q, want its own beat of 9:11", got)
	}
	// Taken once: sharing again takes nothing older.
	if _, err := a.ShareHeartbeats(); err != nil {
		t.Fatal(err)
	}
	if got, want := a.beat(id), t0.Add(40*time.Minute); !got.Equal(want) {
		t.Errorf("last beat after a second share %v, want %v", got, want)
	}
}
