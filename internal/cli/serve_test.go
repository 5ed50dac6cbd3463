package cli

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sessionvault/sessionvault/integrations/linear/lineartest"
)

// TestServeScript runs `sessionvault serve` as a real process against the
// fake Linear (testdata/serve): it hands over to the sessionvault-daemon
// binary, built and found on PATH.
func TestServeScript(t *testing.T) {
	t.Parallel()
	daemonDir := filepath.Dir(robustDaemon(t))
	fake := lineartest.New(t, lineartest.WithKey(testKey))
	fake.AddIssue("ENG-7", "Daemon demo")
	poll := func(ts *testscript.TestScript, what string, ok func() (bool, string)) {
		deadline := time.Now().Add(15 * time.Second)
		last := ""
		for time.Now().Before(deadline) {
			var good bool
			if good, last = ok(); good {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		ts.Fatalf("%s: not seen within 15 s (last: %.300s)", what, last)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/serve",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", env.Getenv("PATH")+string(os.PathListSeparator)+daemonDir)
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("LINEAR_API_URL", fake.URL())
			env.Setenv("LINEAR_API_KEY", testKey)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"free-port": func(ts *testscript.TestScript, neg bool, args []string) {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				ts.Check(err)
				port := l.Addr().(*net.TCPAddr).Port
				l.Close()
				ts.Setenv(args[0], strconv.Itoa(port))
			},
			"linear-comment": func(ts *testscript.TestScript, neg bool, args []string) {
				re := regexp.MustCompile(args[1])
				poll(ts, "a comment on "+args[0]+" matching "+args[1], func() (bool, string) {
					for _, c := range fake.Comments(args[0]) {
						if re.MatchString(c.Body) {
							return true, c.Body
						}
					}
					return false, fmt.Sprint(fake.Comments(args[0]))
				})
			},
			"linear-comments": func(ts *testscript.TestScript, neg bool, args []string) {
				want, _ := strconv.Atoi(args[1])
				if got := len(fake.Comments(args[0])); got != want {
					ts.Fatalf("%s has %d comments, want %d", args[0], got, want)
				}
			},
			"http-ok": func(ts *testscript.TestScript, neg bool, args []string) {
				re := regexp.MustCompile("(?m)" + args[1])
				poll(ts, "GET "+args[0]+" matching "+args[1], func() (bool, string) {
					resp, err := http.Get(args[0])
					if err != nil {
						return false, err.Error()
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					return resp.StatusCode == 200 && re.Match(b), strings.TrimSpace(string(b))
				})
			},
		},
	})
}

// serve, as a real process (sessionvault handing over to the
// sessionvault-daemon beside it), exits 0 within 5 s of SIGTERM.
func TestServeStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	bin := robustDaemon(t)
	v := newVault(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--vault", v, "serve", "--listen", addr)
	cmd.Env = append(os.Environ(), "LINEAR_API_KEY=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("serve did not answer /healthz: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM: %s", err, stderr.String())
		}
		if strings.Contains(stderr.String(), " is version ") {
			t.Errorf("serve warned of another version, though the daemon was built from the same source: %s", stderr.String())
		}
		t.Logf("stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("serve still running 5 s after SIGTERM: %s", stderr.String())
	}
}

// Without sessionvault-daemon beside sessionvault or on PATH, serve starts
// nothing and says how to install it, with its own code.
func TestServeWithoutTheDaemonSaysHowToInstallIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // the binary alone: the daemon may be built beside robustBinary
	bin := binaryIn(t, dir)
	v := newVault(t)
	for _, json := range []bool{false, true} {
		argv := []string{"--vault", v, "serve", "--listen", "127.0.0.1:0"}
		if json {
			argv = append([]string{"--json"}, argv...)
		}
		cmd := exec.Command(bin, argv...)
		cmd.Env = append(os.Environ(), "PATH="+dir) // no sessionvault-daemon anywhere on it
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("serve without the daemon: %v, want exit 1\n%s", err, out)
		}
		for _, want := range []string{"E1698", "DAEMON_NOT_INSTALLED", "in " + dir, "go install github.com/sessionvault/sessionvault/cmd/sessionvault-daemon@latest", "make install"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("json=%v: the error lacks %q:\n%s", json, want, out)
			}
		}
	}
}

// binaryIn puts the sessionvault binary robustBinary built into dir, alone
// (a hard link where it can: a copy written here could still be open for
// writing in a process another test is starting, and fail to run).
func binaryIn(t *testing.T, dir string) string {
	t.Helper()
	src := robustBinary(t)
	bin := filepath.Join(dir, "sessionvault")
	if os.Link(src, bin) == nil {
		return bin
	}
	if out, err := exec.Command("cp", src, bin).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return bin
}

// The sessionvault binary links none of the daemon's parts: their package
// initialisation would run at the start of every command.
func TestSessionvaultLinksNoDaemonParts(t *testing.T) {
	t.Parallel()
	gotool, err := goTool()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gotool, "list", "-deps", "github.com/sessionvault/sessionvault/cmd/sessionvault").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/prometheus/") || pkg == "github.com/sessionvault/sessionvault/internal/daemon" {
			t.Errorf("cmd/sessionvault links %s: only sessionvault-daemon may", pkg)
		}
	}
	out, err = exec.Command(gotool, "list", "-deps", "github.com/sessionvault/sessionvault/cmd/sessionvault-daemon").Output()
	if err != nil || !strings.Contains(string(out), "github.com/sessionvault/sessionvault/internal/daemon\n") {
		t.Errorf("cmd/sessionvault-daemon does not link the daemon (%v)", err)
	}
}
