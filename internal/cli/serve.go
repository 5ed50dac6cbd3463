package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/syncer"
)

// Options are what a binary adds to the command line MainWith runs.
type Options struct {
	// Serve runs the daemon on job until ctx ends (SIGINT, SIGTERM). It is
	// nil in the sessionvault binary: there `serve` hands over to the
	// sessionvault-daemon binary (cmd/sessionvault-daemon), which sets it.
	// So the daemon's packages (the Prometheus client and its collectors)
	// and their initialisation are off every other command's path.
	Serve func(ctx context.Context, job ServeJob) error
}

// ServeJob is the daemon's work as `sessionvault serve` reads it from its
// flags, the environment and the vault's config.
type ServeJob struct {
	Svc     *session.Service
	Project string // the project whose sessions are synced and marked crashed
	// LinearSync runs one Linear sync of Project, on Schedule (a
	// robfig/cron spec, e.g. "@every 15m"); nil when LINEAR_API_KEY is
	// unset: the sync is off.
	LinearSync func(ctx context.Context) (syncer.Summary, error)
	Schedule   string
	Listen     string // loopback address for /healthz and /metrics, e.g. 127.0.0.1:7878
	// RemoteSync runs one `remote sync` and returns its one-line summary,
	// on RemoteSchedule (a robfig/cron spec) and RemoteDebounce after the
	// branch last moved; nil when the config has no remote.schedule.
	RemoteSync     func(ctx context.Context) (string, error)
	RemoteSchedule string
	RemoteDebounce time.Duration
}

// DaemonProgram is the name of the binary `serve` hands over to, without
// the .exe Windows adds.
const DaemonProgram = "sessionvault-daemon"

func (a *app) serveCommand() *cobra.Command {
	var schedule, listen string
	c := &cobra.Command{
		Use:   "serve [--schedule SPEC] [--listen ADDR]",
		Short: "Run the daemon: scheduled Linear sync, commits of a person's edits, crash marking, /healthz and /metrics",
		Long: `Runs until SIGINT or SIGTERM, then exits 0 within 5 s after the running job:
- the Linear sync on a robfig/cron schedule (config linear.schedule, default
  "@every 15m"; --schedule overrides); runs never overlap; without LINEAR_API_KEY
  the sync is off and the rest runs;
- a watcher that commits a person's edits to notes promptly (debounced), as theirs;
- with a remote section in the config (remote.schedule set): remote sync on that
  schedule and remote.debounce (default 30s) after each commit;
- sessions whose heartbeat is stale are marked crashed;
- /healthz and Prometheus /metrics on a loopback address; logs are JSON on stderr.

The daemon is a binary of its own, sessionvault-daemon: serve runs it, found
beside sessionvault or on PATH, with this command line. Install it with
  go install github.com/sessionvault/sessionvault/cmd/sessionvault-daemon@latest
(` + "`make install`" + ` in a checkout installs it with the others). The other
commands start faster without its parts (the Prometheus client).`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if a.serve == nil {
				return a.handOffServe()
			}
			svc, project, err := a.projectService()
			if err != nil {
				return err
			}
			if schedule == "" {
				schedule = svc.V.Config.Linear.Schedule
			}
			job := ServeJob{Svc: svc, Project: project, Schedule: schedule, Listen: listen}
			if os.Getenv("LINEAR_API_KEY") != "" {
				if job.LinearSync, err = a.linearSync(svc, project, false, ""); err != nil {
					return err
				}
			} else {
				fmt.Fprintln(a.stderr, `{"level":"WARN","msg":"LINEAR_API_KEY is not set: the Linear sync is off"}`)
			}
			if r := svc.V.Config.Remote; r.Schedule != "" {
				job.RemoteSchedule, job.RemoteDebounce = r.Schedule, r.Debounce.Duration
				job.RemoteSync = func(context.Context) (string, error) {
					res, err := remoteSync(svc, "", "")
					return strings.ReplaceAll(syncText(res), "\n", "; "), err
				}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := a.serve(ctx, job); err != nil {
				return errs.Wrap(errs.InvalidCommand, err, "serve")
			}
			return nil
		},
	}
	c.Flags().StringVar(&schedule, "schedule", "", "cron spec of the sync, e.g. '@every 15m' (default: the config's linear.schedule)")
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:7878", "loopback address for /healthz and /metrics")
	return c
}

// handedOffEnv is set in the environment of the daemon binary serve hands
// over to: a `serve` that finds it set and has no daemon of its own was
// handed over to a binary that is not the daemon (sessionvault under the
// daemon's name), and fails instead of handing over again, forever.
const handedOffEnv = "SESSIONVAULT_SERVE_HANDED_OFF"

// handOffServe runs sessionvault-daemon with this command line (handOff):
// the daemon binary runs `serve` itself. A daemon of another version than
// this sessionvault (one left from an earlier install) is run all the
// same, with a warning on stderr that names the install command.
func (a *app) handOffServe() error {
	if by := os.Getenv(handedOffEnv); by != "" {
		return errs.New(errs.DaemonNotInstalled, "%s, run by sessionvault serve as the daemon, is a sessionvault without the daemon: install the daemon with `%s` (in a checkout of sessionvault: `make install`), then run serve again",
			by, daemonInstall())
	}
	bin, err := daemonBinary()
	if err != nil {
		return err
	}
	if have, want := daemonVersion(bin), buildVersion(); have != want {
		msg, _ := json.Marshal(fmt.Sprintf("%s is version %s, this sessionvault %s: install the matching one with `%s` (in a checkout: `make install`)",
			bin, have, want, daemonInstall()))
		fmt.Fprintf(a.stderr, "{\"level\":\"WARN\",\"msg\":%s}\n", msg)
	}
	if err := os.Setenv(handedOffEnv, bin); err != nil {
		return fmt.Errorf("handing serve over to %s: %w", bin, err)
	}
	return a.handOff(bin, a.args)
}

// daemonVersion is the buildVersion the daemon binary bin reports
// (`bin --version`, within 2 s), or why it reported none.
func daemonVersion(bin string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "unknown (" + bin + " --version: " + err.Error() + ")"
	}
	v := strings.TrimSpace(strings.TrimPrefix(string(out), "sessionvault "))
	if i := strings.LastIndex(v, " go"); i >= 0 {
		v = v[:i] // the Go toolchain it was built with
	}
	return v
}

// daemonBinary finds sessionvault-daemon: an executable file beside this
// executable (as `go install` and `make install` put it), else on PATH;
// never this executable itself. Its error, DAEMON_NOT_INSTALLED, says how
// to install it.
func daemonBinary() (string, error) {
	name := DaemonProgram
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	self, err := os.Executable()
	selfInfo, _ := os.Stat(self)
	usable := func(p string) bool {
		if _, err := exec.LookPath(p); err != nil { // not an executable file
			return false
		}
		fi, err := os.Stat(p)
		return err == nil && (selfInfo == nil || !os.SameFile(fi, selfInfo))
	}
	if err == nil {
		dirs := []string{filepath.Dir(self)}
		if real, err := filepath.EvalSymlinks(self); err == nil && filepath.Dir(real) != dirs[0] {
			dirs = append(dirs, filepath.Dir(real)) // a link to an installed binary
		}
		for _, dir := range dirs {
			if p := filepath.Join(dir, name); usable(p) {
				return p, nil
			}
		}
	}
	p, err := exec.LookPath(DaemonProgram)
	if err == nil && usable(p) {
		return p, nil
	}
	where := "beside sessionvault"
	if self != "" {
		where = "in " + filepath.Dir(self)
	}
	onPath := "nor on PATH"
	if errors.Is(err, exec.ErrDot) {
		onPath = "nor on PATH (only in a relative PATH entry, " + p + ", which is not searched)"
	}
	return "", errs.New(errs.DaemonNotInstalled, "sessionvault serve runs the daemon binary, %s, found neither %s %s: install it with `%s` (in a checkout of sessionvault: `make install`), then run serve again",
		DaemonProgram, where, onPath, daemonInstall())
}

// daemonInstall is the command that installs the daemon matching this
// sessionvault: `go install .../cmd/sessionvault-daemon@VERSION`.
func daemonInstall() string {
	return "go install github.com/sessionvault/sessionvault/cmd/" + DaemonProgram + "@" + releaseVersion()
}

// releaseVersion is the release this binary was installed at (e.g.
// v0.9.0), for a `go install ...@VERSION` that gets the matching daemon;
// "latest" for a build from a checkout (no version, or a pseudo-version
// such as v0.0.0-20261127114053-002408922192+dirty, which no one can
// install).
func releaseVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "latest"
	}
	v := info.Main.Version
	if !semver.IsValid(v) || module.IsPseudoVersion(v) || strings.Contains(v, "+") {
		return "latest"
	}
	return v
}
