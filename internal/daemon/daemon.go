// Package daemon is `sessionvault serve`: it runs the sync on a robfig/cron
// schedule (runs never overlap), watches the vault with fsnotify and commits
// a person's edits promptly (debounced), marks sessions with a stale
// heartbeat as crashed, and serves /healthz and Prometheus /metrics on a
// loopback address: its own counters and the session_orchestration_* metrics,
// read from the vault (orchestration.go).
// It stops when its context ends, after the running job.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/robfig/cron/v3"

	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/syncer"
)

// Daemon holds what serve runs. Sync may be nil (no sync target configured).
type Daemon struct {
	Svc      *session.Service
	Projects []string
	Sync     func(ctx context.Context) (syncer.Summary, error)
	Schedule string        // robfig/cron spec, e.g. "@every 15m"
	Listen   string        // loopback address for /healthz and /metrics, e.g. 127.0.0.1:7878
	Debounce time.Duration // quiet time before a person's edits are committed (default 2s)
	Log      *slog.Logger

	// RemoteSync, when set, runs one `remote sync` and returns its one-line
	// summary: on RemoteSchedule (a robfig/cron spec; "" = only after
	// commits) and RemoteDebounce (default 30s) after the branch last moved
	// (an operation, a person's edit committed), unless the last sync left
	// HEAD where it is. Runs never overlap.
	RemoteSync     func(ctx context.Context) (string, error)
	RemoteSchedule string
	RemoteDebounce time.Duration

	remoteMu   sync.Mutex // held by a running remote sync
	remoteHead string     // HEAD after the last remote sync

	metrics *metrics
	ready   chan string // receives the bound address (tests)
}

type metrics struct {
	reg        *prometheus.Registry
	syncRuns   *prometheus.CounterVec
	remoteRuns *prometheus.CounterVec
	syncItems  *prometheus.CounterVec
	commits    *prometheus.CounterVec
	crashMarks prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.syncRuns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sessionvault_sync_runs_total", Help: "Sync runs by result (ok, stopped, error)."}, []string{"result"})
	m.remoteRuns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sessionvault_remote_sync_runs_total", Help: "Remote sync runs (git fetch, merge, push) by result (ok, error)."}, []string{"result"})
	m.syncItems = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sessionvault_sync_items_total", Help: "Sessions handled by sync runs, by outcome."}, []string{"outcome"})
	m.commits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sessionvault_commits_total", Help: "Commits the daemon made, by kind (person-edit, crash)."}, []string{"kind"})
	m.crashMarks = prometheus.NewCounter(prometheus.CounterOpts{Name: "sessionvault_sessions_marked_crashed_total", Help: "Sessions marked crashed for a stale heartbeat."})
	m.reg.MustRegister(m.syncRuns, m.remoteRuns, m.syncItems, m.commits, m.crashMarks, collectors.NewGoCollector())
	for _, r := range []string{"ok", "stopped", "error"} {
		m.syncRuns.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "error"} {
		m.remoteRuns.WithLabelValues(r)
	}
	for _, o := range []string{"created", "updated", "unchanged", "failed"} {
		m.syncItems.WithLabelValues(o)
	}
	for _, k := range []string{"person-edit", "crash"} {
		m.commits.WithLabelValues(k)
	}
	return m
}

// Run serves until ctx ends, then waits for the running job and returns nil.
func (d *Daemon) Run(ctx context.Context) error {
	if d.Log == nil {
		d.Log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	if d.Debounce <= 0 {
		d.Debounce = 2 * time.Second
	}
	if d.RemoteDebounce <= 0 {
		d.RemoteDebounce = 30 * time.Second
	}
	d.metrics = newMetrics()
	d.metrics.reg.MustRegister(newOrchestration(d.Svc, d.Projects, d.Log))
	host, _, err := net.SplitHostPort(d.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", d.Listen, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--listen %q: serve listens on a loopback address only (127.0.0.1, ::1, localhost)", d.Listen)
	}
	ln, err := net.Listen("tcp", d.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", d.Listen, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle("/metrics", promhttp.HandlerFor(d.metrics.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.Log.Error("the metrics endpoint stopped", "listen", ln.Addr().String(), "error", err.Error())
		}
	}()

	jobCtx, cancelJobs := context.WithCancel(context.Background())
	defer cancelJobs()
	c := cron.New(cron.WithChain(cron.SkipIfStillRunning(cron.DiscardLogger)))
	if d.Sync != nil {
		if _, err := c.AddFunc(d.Schedule, func() { d.runSync(jobCtx) }); err != nil {
			_ = srv.Close() // closes ln
			return fmt.Errorf("--schedule %q: %w", d.Schedule, err)
		}
	}
	if d.RemoteSync != nil && d.RemoteSchedule != "" {
		if _, err := c.AddFunc(d.RemoteSchedule, func() { d.runRemoteSync(jobCtx, true) }); err != nil {
			_ = srv.Close()
			return fmt.Errorf("remote.schedule %q: %w", d.RemoteSchedule, err)
		}
	}
	if _, err := c.AddFunc("@every 1m", func() { d.markCrashed() }); err != nil {
		d.Log.Error("crashed sessions will not be marked", "error", err.Error())
	}
	c.Start()

	var wg sync.WaitGroup
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := d.watch(watchCtx, &wg); err != nil {
		d.Log.Warn("watching the vault failed; person edits are committed by the next operation", "error", err.Error())
	}
	d.Log.Info("serving", "listen", ln.Addr().String(), "schedule", d.Schedule, "vault", d.Svc.V.Root)
	if d.ready != nil {
		d.ready <- ln.Addr().String()
	}

	<-ctx.Done()
	d.Log.Info("stopping: waiting for the running job")
	stopped := c.Stop() // no new runs; wait for the running one
	select {
	case <-stopped.Done():
	case <-time.After(4 * time.Second):
		cancelJobs() // a run that will not finish in time is interrupted; its ledger is saved per item
		<-stopped.Done()
	}
	stopWatch()
	wg.Wait()
	shut, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		d.Log.Warn("the metrics endpoint did not stop in time", "error", err.Error())
	}
	d.Log.Info("stopped")
	return nil
}

func (d *Daemon) runSync(ctx context.Context) {
	start := time.Now()
	sum, err := d.Sync(ctx)
	m := d.metrics
	m.syncItems.WithLabelValues("created").Add(float64(sum.Created))
	m.syncItems.WithLabelValues("updated").Add(float64(sum.Updated))
	m.syncItems.WithLabelValues("unchanged").Add(float64(sum.Unchanged))
	m.syncItems.WithLabelValues("failed").Add(float64(sum.Failed))
	switch {
	case err != nil:
		m.syncRuns.WithLabelValues("error").Inc()
		d.Log.Error("sync", "error", err.Error(), "summary", sum.String())
	case sum.Stopped != "":
		m.syncRuns.WithLabelValues("stopped").Inc()
		d.Log.Warn("sync stopped", "reason", sum.Stopped, "summary", sum.String())
	default:
		m.syncRuns.WithLabelValues("ok").Inc()
		d.Log.Info("sync", "summary", sum.String(), "ms", time.Since(start).Milliseconds())
	}
}

// runRemoteSync runs RemoteSync unless one is running; always false means
// it is skipped when HEAD is where the last sync left it (a run after a
// commit that was the sync's own).
func (d *Daemon) runRemoteSync(ctx context.Context, always bool) {
	if !d.remoteMu.TryLock() {
		return
	}
	defer d.remoteMu.Unlock()
	head, _ := d.Svc.V.Head()
	if !always && head != "" && head == d.remoteHead {
		return
	}
	summary, err := d.RemoteSync(ctx)
	if err != nil {
		d.metrics.remoteRuns.WithLabelValues("error").Inc()
		d.Log.Error("remote sync", "error", err.Error())
		return
	}
	d.remoteHead, _ = d.Svc.V.Head()
	d.metrics.remoteRuns.WithLabelValues("ok").Inc()
	d.Log.Info("remote sync", "summary", summary)
}

func (d *Daemon) markCrashed() {
	for _, p := range d.Projects {
		marked, err := d.Svc.MarkCrashed(p)
		if err != nil {
			d.Log.Error("marking crashed sessions", "project", p, "error", err.Error())
			continue
		}
		if marked != "" {
			d.metrics.crashMarks.Inc()
			d.metrics.commits.WithLabelValues("crash").Inc()
			d.Log.Warn("session marked crashed", "project", p, "session", marked)
		}
	}
}

// watch commits a person's edits to notes, debounced. It never signs them:
// a change to the sealed part of a current state waits for a person's
// `sessionvault accept` (see session.Accept).
func (d *Daemon) watch(ctx context.Context, wg *sync.WaitGroup) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	root := d.Svc.V.Root
	add := func(dir string) {
		_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return nil // an unreadable folder is not watched; the next operation commits its edits
			}
			if p != root && strings.HasPrefix(e.Name(), ".") {
				return filepath.SkipDir
			}
			if err := w.Add(p); err != nil {
				d.Log.Warn("not watching a folder; its person edits are committed by the next operation", "folder", p, "error", err.Error())
			}
			return nil
		})
	}
	add(root)
	heads := filepath.Join(root, ".git", "refs", "heads")
	if d.RemoteSync != nil {
		// The branch moving (a commit by anyone) starts the remote sync's
		// debounce. Branch names with a slash live one folder deeper.
		add(heads)
		if err := w.Add(filepath.Join(root, ".git")); err != nil { // packed-refs
			d.Log.Warn("not watching .git; the remote sync runs on its schedule", "error", err.Error())
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() { _ = w.Close() }()
		pending := map[string]bool{}
		timer := time.NewTimer(time.Hour)
		timer.Stop()
		remote := time.NewTimer(time.Hour)
		remote.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-w.Events:
				if ev.Op&fsnotify.Create != 0 {
					if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
						add(ev.Name)
					}
				}
				if d.RemoteSync != nil && (strings.HasPrefix(ev.Name, heads+string(filepath.Separator)) || filepath.Base(ev.Name) == "packed-refs") && !strings.HasSuffix(ev.Name, ".lock") {
					remote.Reset(d.RemoteDebounce)
					continue
				}
				rel, err := filepath.Rel(root, ev.Name)
				if err != nil || !strings.HasSuffix(rel, ".md") || strings.HasPrefix(rel, ".") {
					continue
				}
				pending[filepath.ToSlash(rel)] = true
				timer.Reset(d.Debounce)
			case err := <-w.Errors:
				d.Log.Warn("watch", "error", fmt.Sprint(err))
			case <-remote.C:
				wg.Add(1)
				go func() {
					defer wg.Done()
					d.runRemoteSync(ctx, false)
				}()
			case <-timer.C:
				var paths []string
				for p := range pending {
					if session.IsCommandLog(p) {
						// The agent's command history, not a person's edit.
						project, _, _ := strings.Cut(p, "/")
						if _, err := d.Svc.CommitCommandLogs(project, p); err != nil {
							d.Log.Error("committing a command log", "log", p, "error", err.Error())
						}
						continue
					}
					paths = append(paths, p)
				}
				pending = map[string]bool{}
				hash, err := d.Svc.V.CommitOutsideEdits(paths)
				if err != nil {
					d.Log.Error("committing a person's edits", "error", err.Error())
					continue
				}
				if hash != "" {
					d.metrics.commits.WithLabelValues("person-edit").Inc()
					// Never re-signed here: a change to the sealed fields
					// waits for a person's `sessionvault accept`.
					d.Log.Info("committed a person's edits", "commit", hash, "paths", len(paths))
				}
			}
		}
	}()
	return nil
}
