package session

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/integrity"
)

// On a vault in a format newer than this binary writes, reading the state
// (`status`, the SessionStart prompt, a Read of the note) still ends the
// clash notice, as the notice says: the acknowledgement is kept in
// per-machine state files, which no format concerns. Nothing else is
// recorded.
func TestStateReadEndsTheClashNoticeOnANewerFormat(t *testing.T) {
	t.Parallel()
	s, _ := testService(t)
	if _, err := s.Start(StartOptions{Project: "demo", Objective: "Mine"}); err != nil {
		t.Fatal(err)
	}
	// As a sync leaves it: the session this machine works in is no longer
	// the current one.
	if err := s.V.WriteState(workingName("demo"), []byte("2026-01-01-session-09-other\n")); err != nil {
		t.Fatal(err)
	}
	if s.ClashNotice("demo") == "" {
		t.Fatal("no clash notice to end")
	}
	p := filepath.Join(s.V.Root, filepath.FromSlash(config.File))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	newer := regexp.MustCompile(`(?m)^version: *\d+`).ReplaceAll(data, []byte("version: 7"))
	if err := os.WriteFile(p+".new", newer, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil { // as git pull brings another machine's migrate
		t.Fatal(err)
	}
	if !s.V.NewerFormat() {
		t.Fatal("the vault is not in a newer format")
	}
	observed, _ := s.V.ReadState(integrity.ObservedFile("demo"))
	if err := s.ObserveStateRead("demo", "status"); err != nil {
		t.Fatal(err)
	}
	if n := s.ClashNotice("demo"); n != "" {
		t.Errorf("the notice goes on after the state was read: %s", n)
	}
	if after, _ := s.V.ReadState(integrity.ObservedFile("demo")); string(after) != string(observed) {
		t.Errorf("an observation was recorded on a vault in a newer format: %q", after)
	}
}
