//go:build unix

package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serve hands the whole command line over to sessionvault-daemon, as given,
// in the same process; a daemon of another version is run with a warning
// that names the install command. (The daemon here is a shell script that
// says what it was given.)
func TestServeHandsTheCommandLineToTheDaemon(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := binaryIn(t, dir)
	daemon := `#!/bin/sh
if [ "$1" = --version ]; then echo "sessionvault v0.0.1-old"; exit 0; fi
echo "daemon pid $$ got: $*"
exit 3
`
	err := os.WriteFile(filepath.Join(dir, DaemonProgram), []byte(daemon), 0o755)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	var stderr strings.Builder
	for try := 0; ; try++ {
		cmd := exec.Command("sh", "-c", `echo "shell pid $$"; exec "$0" "$@"`, bin, "--vault", "some where", "serve", "--schedule", "@every 1m", "--listen", "127.0.0.1:0")
		stderr.Reset()
		cmd.Stderr = &stderr
		out, err = cmd.Output()
		// The script just written may still be open for writing in a
		// process another test is starting (ETXTBSY): run it again.
		if try == 5 || !strings.Contains(stderr.String(), "text file busy") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
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

// A sessionvault under the daemon's name (a link to it, or a copy) is not
// run as the daemon over and over: serve fails at once, saying how to
// install the daemon.
func TestServeDoesNotHandOverToItself(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	for _, kind := range []string{"link", "copy"} {
		dir := t.TempDir()
		bin := binaryIn(t, dir)
		daemon := filepath.Join(dir, DaemonProgram)
		if kind == "link" {
			if err := os.Symlink("sessionvault", daemon); err != nil {
				t.Fatal(err)
			}
		} else if out, err := exec.Command("cp", bin, daemon).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, "--vault", v, "serve", "--listen", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), "PATH="+dir)
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("%s: serve still running after 30 s: %s", kind, out)
		}
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 || !strings.Contains(string(out), "DAEMON_NOT_INSTALLED") ||
			!strings.Contains(string(out), "go install github.com/sessionvault/sessionvault/cmd/sessionvault-daemon@latest") {
			t.Errorf("%s: %v, want exit 1 with DAEMON_NOT_INSTALLED and the install command:\n%s", kind, err, out)
		}
	}
}
