package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/integrity"
)

// A settings snapshot is used while config.yaml keeps the identity it was
// read at — a same-size rewrite with its modification time put back ends
// it — and only when its signature checks; one taken while the file
// changed is not saved.
func TestSettingsSnapshotFollowsTheConfig(t *testing.T) {
	t.Setenv("SESSIONVAULT_SECRET", "")
	root := t.TempDir()
	cfg := filepath.Join(root, ".sessionvault", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok := LoadSettings(root); ok {
		t.Fatal("settings without a key or a snapshot")
	}
	if _, err := integrity.Key(root); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		t.Helper()
		fi, _ := os.Stat(cfg)
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if fi != nil { // keep the modification time: only the change time and content differ
			os.Chtimes(cfg, fi.ModTime(), fi.ModTime())
		}
	}
	write("read_only_tools: [Foo]\n")
	id, err := SettingsIdentity(root)
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{Version: 2, DefaultProject: "demo", ReadOnlyTools: []string{"Foo"}, LockTimeout: 5 * time.Second}
	if err := SaveSettings(root, id, want); err != nil {
		t.Fatal(err)
	}
	if s, ok := LoadSettings(root); !ok || s.DefaultProject != "demo" || strings.Join(s.ReadOnlyTools, ",") != "Foo" || s.LockTimeout != 5*time.Second {
		t.Errorf("snapshot: %+v %v", s, ok)
	}

	data, _ := os.ReadFile(integrity.Path(root, settingsName))
	forged := strings.Replace(string(data), `"Foo"`, `"Bash"`, 1)
	os.WriteFile(integrity.Path(root, settingsName), []byte(forged), 0o644)
	if s, ok := LoadSettings(root); ok {
		t.Errorf("a forged snapshot was used: %+v", s)
	}
	SaveSettings(root, id, want)

	write("read_only_tools: [Bar]\n")
	if s, ok := LoadSettings(root); ok {
		t.Errorf("after a same-size rewrite the old snapshot was used: %+v", s)
	}
	if err := SaveSettings(root, id, want); err != nil || func() bool { _, ok := LoadSettings(root); return ok }() {
		t.Errorf("settings read before the rewrite were saved as the file's: %v", err)
	}
}
