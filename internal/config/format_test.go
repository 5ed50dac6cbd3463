package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/vaultloc"
)

// A vault `init` makes is in the format this binary writes; a config
// without a version line, or with one below the oldest, is in the oldest.
func TestRenderWritesTheFormatVersion(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		config string
		want   int
	}{
		{string(Render("demo")), FormatVersion},
		{"default_project: demo\n", OldestFormat},
		{"version: 0\n", OldestFormat},
		{"version: 7\n", 7},
	} {
		if err := os.MkdirAll(filepath.Join(dir, Dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, File), []byte(c.config), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(dir)
		if err != nil || cfg.Version != c.want {
			t.Errorf("Load of %.40q: version %d, %v; want %d", c.config, cfg.Version, err, c.want)
		}
		if v, err := VersionOf([]byte(c.config)); err != nil || v != c.want {
			t.Errorf("VersionOf(%.40q) = %d, %v; want %d", c.config, v, err, c.want)
		}
	}
	if _, err := VersionOf([]byte("version: [1\n")); err == nil {
		t.Error("VersionOf of YAML that does not parse: no error")
	}
}

// CheckWritable passes the formats this binary writes and refuses a newer
// one with a *NewerFormatError (E1696 once the vault gives it its code),
// naming the vault's format and the newest this binary writes.
func TestCheckWritable(t *testing.T) {
	for v := OldestFormat; v <= FormatVersion; v++ {
		if err := CheckWritable(v); err != nil {
			t.Errorf("CheckWritable(%d) = %v; want nil", v, err)
		}
	}
	err := CheckWritable(FormatVersion + 5)
	var nf *NewerFormatError
	if !errors.As(err, &nf) || nf.Version != 7 {
		t.Fatalf("CheckWritable(%d) = %v; want a NewerFormatError", FormatVersion+5, err)
	}
	want := "this vault is in format 7; this sessionvault (version " + vaultloc.BinaryVersion() + ") writes formats up to 2: install a newer sessionvault release (`go install github.com/sessionvault/sessionvault/cmd/sessionvault@latest github.com/sessionvault/sessionvault/cmd/sessionvault-hook@latest github.com/sessionvault/sessionvault/cmd/sessionvault-daemon@latest`)"
	if err.Error() != want {
		t.Errorf("message %q\nwant    %q", err.Error(), want)
	}
}

// Upgrade edits the version line in place and adds the commented
// claim_lease setting (format 2) when the file has none: every other byte
// is kept — comments, a trailing comment on the version line, settings,
// CRLF line endings.
func TestUpgradeKeepsEveryOtherByte(t *testing.T) {
	lease := "# How long a task claim taken through the git remote holds unless its holder\n# renews it (task lock, heartbeat and remote sync renew it while its session works).\nclaim_lease: 30m\n"
	for _, c := range []struct {
		name, in, want string
		changes        int
	}{
		{"a person's config",
			"# our team's vault\nversion: 1   # bumped by migrate\ndefault_project: shop\n\n# keep this\nheartbeat_timeout: 45m\nhistory_full: 3\n",
			"# our team's vault\nversion: 2   # bumped by migrate\ndefault_project: shop\n\n# keep this\nheartbeat_timeout: 45m\n" + lease + "history_full: 3\n", 2},
		{"claim_lease already set",
			"version: 1\nclaim_lease: 1h\n",
			"version: 2\nclaim_lease: 1h\n", 1},
		{"claim_lease commented out",
			"version: 1\n# claim_lease: 1h\n",
			"version: 2\n# claim_lease: 1h\n", 1},
		{"no heartbeat_timeout, no final newline",
			"version: 1\ndefault_project: shop",
			"version: 2\ndefault_project: shop\n" + lease, 2},
		{"no version line",
			"# settings\n\ndefault_project: shop\nclaim_lease: 10m\n",
			"# settings\n\nversion: 2\ndefault_project: shop\nclaim_lease: 10m\n", 1},
		{"CRLF",
			"version: 1\r\nheartbeat_timeout: 30m\r\nhistory_full: 3\r\n",
			"version: 2\r\nheartbeat_timeout: 30m\r\n" + strings.ReplaceAll(lease, "\n", "\r\n") + "history_full: 3\r\n", 2},
		{"a nested version is not the vault's",
			"linear:\n  version: 9\nversion: 1\nclaim_lease: 5m\n",
			"linear:\n  version: 9\nversion: 2\nclaim_lease: 5m\n", 1},
	} {
		up, err := Upgrade([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(up.Data) != c.want || up.From != 1 || len(up.Changes) != c.changes {
			t.Errorf("%s: from %d, changes %q, got\n%s\nwant\n%s", c.name, up.From, up.Changes, up.Data, c.want)
		}
	}

	// The rendered config of a format-1 vault: only the version changes.
	cur := Render("demo")
	old := []byte(strings.Replace(string(cur), "version: 2\n", "version: 1\n", 1))
	up, err := Upgrade(old)
	if err != nil || string(up.Data) != string(cur) || len(up.Changes) != 1 || up.Changes[0] != "version: 1 → 2" {
		t.Errorf("Render's config in format 1: changes %q, %v; got\n%s", up.Changes, err, up.Data)
	}

	// In the format already: unchanged. Newer: refused. Broken YAML: an error.
	if up, err := Upgrade(cur); err != nil || string(up.Data) != string(cur) || up.From != FormatVersion || len(up.Changes) != 0 {
		t.Errorf("Upgrade of a format %d config: from %d, changes %q, %v; want it unchanged", FormatVersion, up.From, up.Changes, err)
	}
	var nf *NewerFormatError
	if _, err := Upgrade([]byte("# newer\nversion: 7\n")); !errors.As(err, &nf) || !strings.Contains(err.Error(), "format 7") {
		t.Errorf("Upgrade of a format 7 config: %v; want a NewerFormatError naming format 7", err)
	}
	if _, err := Upgrade([]byte("version: [1\n")); err == nil {
		t.Error("Upgrade of YAML that does not parse: no error")
	}
}
