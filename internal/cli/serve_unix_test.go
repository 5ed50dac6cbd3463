//go:build unix

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// serve hands the whole command line over to sessionvault-daemon, as given,
// in the same process; a daemon of another version is run with a warning
// that names the install command. (The daemon here is a shell script that
// says what it was given.)
func TestServeHandsTheCommandLineToTheDaemon(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(robustBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "sessionvault")
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	daemon := `#!/bin/sh
if [ "$1" = --version ]; then echo "sessionvault v0.0.1-old"; exit 0; fi
echo "daemon pid $$ got: $*"
exit 3
`
	if err := os.WriteFile(filepath.Join(dir, DaemonProgram), []byte(daemon), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `echo "shell pid $$"; exec "$0" "$@"`, bin, "--vault", "some where", "serve", "--schedule", "@every 1m", "--listen", "127.0.0.1:0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 3 {
		t.Fatalf("serve: %v, want the daemon's exit 3\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "shell pid ") {
		t.Fatalf("stdout: %q", out)
	}
	pid := strings.TrimPrefix(lines[0], "shell pid ")
	if want := "daemon pid " + pid + " got: --vault some where serve --schedule @every 1m --listen 127.0.0.1:0"; lines[1] != want {
		t.Errorf("the daemon ran as\n  %s\nwant (the same process, the same command line)\n  %s", lines[1], want)
	}
	for _, want := range []string{`"level":"WARN"`, "is version v0.0.1-old", "go install github.com/sessionvault/sessionvault/cmd/sessionvault-daemon@latest"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
