package imports

import (
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session/servicetest"
)

// withTimeZone sets the vault's time_zone and returns a service over the
// vault opened again, under *now (servicetest.WithTimeZone).
func withTimeZone(t testing.TB, s *Service, zone string, now *time.Time) *Service {
	t.Helper()
	return New(servicetest.WithTimeZone(t, s.V.Root, zone, now))
}
