package features

import (
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/session/servicetest"
)

// The vault checks every test here uses (servicetest).
type vaultState = servicetest.Snapshot

var (
	gitOut          = servicetest.Git
	subjects        = servicetest.Subjects
	snapshotVault   = servicetest.Take
	assertUnchanged = servicetest.AssertUnchanged
	assertClean     = servicetest.AssertClean
	wantCode        = servicetest.WantCode
)

// readNote reads a vault note.
func readNote(t testing.TB, s *Service, rel string) string {
	t.Helper()
	return servicetest.ReadNote(t, s.V.Root, rel)
}

// personCommits writes files into the vault as a person does, and commits
// them with git (not through the engine).
func personCommits(t testing.TB, s *Service, files map[string]string) {
	t.Helper()
	servicetest.PersonCommits(t, s.V.Root, files)
}

// withTimeZone sets the vault's time_zone and returns a service over the
// vault opened again (the settings are read when it opens), under *now.
func withTimeZone(t testing.TB, s *Service, zone string, now *time.Time) *Service {
	t.Helper()
	cfg := readNote(t, s, ".sessionvault/config.yaml")
	personCommits(t, s, map[string]string{".sessionvault/config.yaml": cfg + "\ntime_zone: " + zone + "\n"})
	return New(servicetest.Reopen(t, s.V.Root, now))
}

// activeFeatureProp is the active_feature property of the project's current
// state note ("" when it has none).
func activeFeatureProp(t testing.TB, s *Service) string {
	t.Helper()
	cur, _, _ := session.Paths("demo")
	for _, l := range strings.Split(readNote(t, s, cur), "\n") {
		if v, ok := strings.CutPrefix(l, "active_feature:"); ok {
			return strings.Trim(strings.TrimSpace(v), `'"`)
		}
	}
	return ""
}

// personRemoves removes a note from the vault as a person does, committing
// the removal with git.
func personRemoves(t testing.TB, s *Service, rel string) {
	t.Helper()
	gitOut(t, s.V.Root, "rm", "-q", rel)
	gitOut(t, s.V.Root, "-c", "user.name=Sam", "-c", "user.email=sam@example.invalid", "commit", "-qm", "a person removes "+rel)
}
