package vault

import (
	"strings"
	"testing"
)

// The driver that falls back names its fallback binary quoted for sh, in
// forward slashes (Git for Windows' sh takes C:/...), and reads back as
// the same binary; other command lines are not it.
func TestFallbackMergeDriverCommand(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"", "/usr/local/bin/sessionvault", "/Users/pat/my tools/sessionvault", "/opt/it's/sessionvault", "C:/Users/Pat Doe/go/bin/sessionvault.exe"} {
		cmd := FallbackMergeDriverCommand(bin)
		if !strings.HasPrefix(cmd, "command -v sessionvault >/dev/null 2>&1 && exec sessionvault merge-driver %O %A %B %P; ") ||
			!strings.HasSuffix(cmd, "; exec git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B") {
			t.Errorf("FallbackMergeDriverCommand(%q) = %q", bin, cmd)
		}
		if bin != "" && !strings.Contains(cmd, "[ -x "+shellQuote(bin)+" ] && exec "+shellQuote(bin)+" merge-driver %O %A %B %P; ") {
			t.Errorf("FallbackMergeDriverCommand(%q) = %q: no fallback to it", bin, cmd)
		}
		if got, ok := ParseFallbackMergeDriver(cmd); !ok || got != bin {
			t.Errorf("ParseFallbackMergeDriver(%q) = %q, %v; want %q", cmd, got, ok, bin)
		}
	}
	for _, cmd := range []string{"", "sessionvault merge-driver %O %A %B %P", MergeDriverCommand("/usr/local/bin/sessionvault"),
		FallbackMergeDriverCommand("/a") + " extra", strings.Replace(FallbackMergeDriverCommand("/a"), "[ -x /a ] && exec /a", "[ -x /a ] && exec /b", 1)} {
		if got, ok := ParseFallbackMergeDriver(cmd); ok {
			t.Errorf("ParseFallbackMergeDriver(%q) = %q, true", cmd, got)
		}
	}
}

// The URL in the clone command refused setups print keeps no user or
// token of an https URL.
func TestWithoutPassword(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://pat:ghp_secret@github.com/pat/vault.git": "https://github.com/pat/vault.git",
		"HTTPS://ghp_secret@github.com/pat/vault.git":     "HTTPS://github.com/pat/vault.git",
		"http://host.example":                             "http://host.example",
		"git@github.com:pat/vault.git":                    "git@github.com:pat/vault.git",
		"ssh://git@host/pat/vault.git":                    "ssh://git@host/pat/vault.git",
		"/srv/git/vault.git":                              "/srv/git/vault.git",
	} {
		if got := withoutPassword(in); got != want {
			t.Errorf("withoutPassword(%q) = %q, want %q", in, got, want)
		}
	}
}
