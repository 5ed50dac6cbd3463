package tasks

import (
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session/servicetest"
)

// testService returns the tasks service over a fresh vault with project
// demo, under the clock *now (the system clock when now is nil).
func testService(tb testing.TB, now *time.Time) *Service { return New(servicetest.New(tb, now)) }

func strp(s string) *string { return &s }
