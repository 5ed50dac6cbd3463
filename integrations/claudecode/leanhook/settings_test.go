package leanhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/integrity"
)

// loadSettings reads config.yaml once and then its snapshot, until the file
// changes — a same-size rewrite with its modification time put back
// included — and never trusts a snapshot it did not sign; settings that do
// not parse are config.Load's error.
func TestLoadSettingsFollowsTheConfig(t *testing.T) {
	t.Setenv("SESSIONVAULT_SECRET", "")
	root := t.TempDir()
	cfg := filepath.Join(root, ".sessionvault", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
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
	write("version: 2\ndefault_project: demo\nread_only_tools: [Foo]\nlock_timeout: 5s\n")
	for i := 0; i < 2; i++ {
		s, err := loadSettings(root)
		if err != nil || s.Version != 2 || s.DefaultProject != "demo" || strings.Join(s.ReadOnlyTools, ",") != "Foo" || s.LockTimeout != 5*time.Second {
			t.Fatalf("read %d: %+v, %v", i, s, err)
		}
	}
	snap := integrity.Path(root, settingsName)
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("no snapshot: %v", err)
	}

	write("version: 2\ndefault_project: demo\nread_only_tools: [Bar]\nlock_timeout: 5s\n")
	if s, err := loadSettings(root); err != nil || strings.Join(s.ReadOnlyTools, ",") != "Bar" {
		t.Errorf("after a same-size rewrite: %+v, %v; want Bar", s, err)
	}

	data, _ := os.ReadFile(snap)
	forged := strings.Replace(string(data), `"Bar"`, `"Bash"`, 1)
	if err := os.WriteFile(snap, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := loadSettings(root); err != nil || strings.Join(s.ReadOnlyTools, ",") != "Bar" {
		t.Errorf("after the snapshot was forged: %+v, %v; want the file's Bar", s, err)
	}

	write("version: [2\n")
	if _, err := loadSettings(root); err == nil || !strings.Contains(err.Error(), "config.yaml") {
		t.Errorf("settings that do not parse: %v; want config.Load's error naming the file", err)
	}
}
