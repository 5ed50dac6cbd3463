package features

import (
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/session/servicetest"
)

// withTimeZone sets the vault's time_zone and returns a service over the
// vault opened again, under *now (servicetest.WithTimeZone).
func withTimeZone(t testing.TB, s *Service, zone string, now *time.Time) *Service {
	t.Helper()
	return New(servicetest.WithTimeZone(t, s.V.Root, zone, now))
}

// activeFeatureProp is the active_feature property of the project's current
// state note ("" when it has none).
func activeFeatureProp(t testing.TB, s *Service) string {
	t.Helper()
	cur, _, _ := session.Paths("demo")
	for _, l := range strings.Split(servicetest.ReadNote(t, s.V.Root, cur), "\n") {
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
	servicetest.Git(t, s.V.Root, "rm", "-q", rel)
	servicetest.Git(t, s.V.Root, "-c", "user.name=Sam", "-c", "user.email=sam@example.invalid", "commit", "-qm", "a person removes "+rel)
}
