package imports

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/session/sessiontest"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// testService returns the imports service over a fresh vault with project
// demo, made as `sessionvault init --project demo` makes it, under the clock
// *now (the system clock when now is nil).
func testService(tb testing.TB, now *time.Time) *Service {
	tb.Helper()
	var clock func() time.Time
	if now != nil {
		clock = func() time.Time { return *now }
	}
	open := func(v *vault.Vault) *session.Service {
		s := session.New(v)
		s.Now = clock
		return s
	}
	root := filepath.Join(tb.TempDir(), "vault")
	if err := sessiontest.MakeVault(root, "demo", func(v *vault.Vault, project string) error {
		_, err := open(v).InitProject(project)
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	v, err := vault.Open(root)
	if err != nil {
		tb.Fatal(err)
	}
	return New(open(v))
}
