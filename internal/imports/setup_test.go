package imports

import (
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session/servicetest"
)

// testService returns the imports service over a fresh vault with project
// demo, under the clock *now (the system clock when now is nil).
func testService(tb testing.TB, now *time.Time) *Service { return New(servicetest.New(tb, now)) }
