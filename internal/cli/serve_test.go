package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
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
// fake Linear (testdata/serve).
func TestServeScript(t *testing.T) {
	t.Parallel()
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

// serve, as a real process, exits 0 within 5 s of SIGTERM.
func TestServeStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	bin := robustBinary(t)
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
		t.Logf("stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("serve still running 5 s after SIGTERM: %s", stderr.String())
	}
}
