package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/history/historytest"
)

// A session's start has git pack the vault's loose objects once there are
// more than gc.auto lets stand; the session goes on and ends without a
// warning, and git finds the vault sound.
func TestSessionStartPacksTheVault(t *testing.T) {
	t.Parallel()
	s, _ := testService(t)
	root := s.V.Root
	git := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	git("", "config", "gc.auto", "256") // more than one loose object in objects/17
	git("", "config", "gc.autoDetach", "false")
	for _, c := range historytest.ContentsIn17("loose", 2) { // more than one loose object in objects/17
		git(c, "hash-object", "-w", "--stdin")
	}
	out, err := s.Start(StartOptions{Project: "demo", Objective: "Packed"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Result.Warnings) > 0 {
		t.Errorf("start warned: %v", out.Result.Warnings)
	}
	packs := func() []string {
		p, _ := filepath.Glob(filepath.Join(root, ".git", "objects", "pack", "*.pack"))
		return p
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, gcPidErr := os.Stat(filepath.Join(root, ".git", "gc.pid"))
		if len(packs()) > 0 && gcPidErr != nil { // packed, and git gc is done
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pack 30 s after the start:\n%s", git("", "count-objects", "-v"))
		}
	}
	if _, err := s.Update(UpdateOptions{Project: "demo", Message: "after packing"}); err != nil {
		t.Fatal(err)
	}
	end, err := s.End("demo", "Packed and done", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(end.Result.Warnings) > 0 {
		t.Errorf("end warned: %v", end.Result.Warnings)
	}
	git("", "fsck", "--strict")
}
