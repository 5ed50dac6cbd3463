package daemon

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sessionvault/sessionvault/internal/recovery"

	"github.com/sessionvault/sessionvault/internal/tasks"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sessionvault/sessionvault/internal/session"
)

// The session_orchestration_* metrics. The operations they count run in other
// processes (the CLI, the MCP server), so serve reads them from the vault,
// where every operation is one commit:
//
//   - counters and duration histograms come from the commits' trailers
//     (Operation, Duration-Ms, Rollback-To, Backup-Checkpoint, Checkpoint,
//     Action), walked incrementally: the first scrape walks the history
//     once, each later one only the commits since the HEAD it last saw;
//   - checkpoints by type and scope come from the checkpoint/<id> tags'
//     messages, each tag counted once;
//   - conflicts detected come from <project>/conflicts.md, each recorded
//     conflict counted once;
//   - the gauges and the heartbeat age are read at each scrape (Status,
//     CheckRecovery, Conflicts).
//
// Only the commits that touch the daemon's projects' folders, and only their
// checkpoints and conflicts, count (all of the vault with no project). A
// counter never goes down: a commit or conflict line removed from the vault
// later stays counted.
const (
	// MetricSessionsActive is a gauge: the projects whose current state
	// holds an active session (active, recovered or crashed).
	MetricSessionsActive = "session_orchestration_sessions_active"
	// MetricRecoveryNeeded is a gauge: the sessions CheckRecovery reports
	// as needing recovery (crash or compaction).
	MetricRecoveryNeeded = "session_orchestration_recovery_needed"
	// MetricHeartbeatAge is a histogram in seconds: at each scrape, the age
	// of each active session's last sign of life (heartbeat, update or
	// start). It describes the sessions of that moment, not an accumulation.
	MetricHeartbeatAge = "session_orchestration_heartbeat_age_seconds"
	// MetricContextSaves is a counter by backend ("vault"): context saves
	// (task-save commits).
	MetricContextSaves = "session_orchestration_context_saves_total"
	// MetricContextSaveDuration is a histogram in seconds by backend
	// ("vault"): each context save's duration (its Duration-Ms trailer).
	MetricContextSaveDuration = "session_orchestration_context_save_duration_seconds"
	// MetricCheckpoints is a counter by type and scope: checkpoint tags,
	// backups made by a rollback (type auto) included.
	MetricCheckpoints = "session_orchestration_checkpoints_total"
	// MetricRollbacks is a counter by type (checkpoint, version): rollback
	// commits.
	MetricRollbacks = "session_orchestration_rollbacks_total"
	// MetricConflictsDetected is a counter by type and severity: conflicts
	// recorded in conflicts.md.
	MetricConflictsDetected = "session_orchestration_conflicts_detected_total"
	// MetricConflictsUnresolved is a gauge: recorded conflicts neither
	// resolved nor ignored.
	MetricConflictsUnresolved = "session_orchestration_conflicts_unresolved"
	// MetricConflictsResolved is a counter by action (use_a, use_b, merge,
	// custom, ignore): conflicts-resolve commits.
	MetricConflictsResolved = "session_orchestration_conflicts_resolved_total"
	// MetricTaskSwitches is a counter: task-switch commits.
	MetricTaskSwitches = "session_orchestration_task_switches_total"
	// MetricTaskSwitchDuration is a histogram in seconds: each task switch's
	// duration (its Duration-Ms trailer).
	MetricTaskSwitchDuration = "session_orchestration_task_switch_duration_seconds"
)

// durationBuckets are the upper bounds, in seconds, of the save and switch
// duration histograms (the target for a save is 0.5 s at p99).
var durationBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// heartbeatBuckets are the upper bounds, in seconds, of the heartbeat age
// histogram (heartbeats are meant to come a minute apart; the default crash
// timeout is 30 minutes).
var heartbeatBuckets = []float64{10, 30, 60, 120, 300, 600, 1800, 3600, 6 * 3600, 24 * 3600}

// pendingTagWait is how long a checkpoint named by a commit but not yet
// tagged makes each scrape list the tags again: the tag follows its commit
// within milliseconds unless the process was killed between the two.
const pendingTagWait = time.Minute

// orchestration is a prometheus.Collector of the session_orchestration_*
// metrics.
// Collect brings the counters up to date with the vault, then reports them
// and the gauges of the moment. Safe for concurrent scrapes.
type orchestration struct {
	svc      *session.Service
	projects []string
	log      *slog.Logger

	mu          sync.Mutex
	head        string               // the last commit walked ("" = none yet)
	tagsListed  bool                 // the checkpoint tags were listed once
	tagsSeen    map[string]bool      // checkpoint tags counted (or of another project)
	pendingTags map[string]time.Time // checkpoint ids walked, tag not seen yet → when first walked
	conflicts   map[string]bool      // "<project>/<id>" of conflicts counted

	saves       *prometheus.CounterVec
	saveDur     *prometheus.HistogramVec
	checkpoints *prometheus.CounterVec
	rollbacks   *prometheus.CounterVec
	detected    *prometheus.CounterVec
	resolved    *prometheus.CounterVec
	switches    prometheus.Counter
	switchDur   prometheus.Histogram

	activeDesc, recoveryDesc, heartbeatDesc, unresolvedDesc *prometheus.Desc
}

// checkpointScopes are the scopes a checkpoint tag may name.
var checkpointScopes = []string{"global", "task", "multi_task"}

// conflictSeverities are the severities a recorded conflict may have.
var conflictSeverities = []string{"low", "medium", "high", "critical"}

func newOrchestration(svc *session.Service, projects []string, log *slog.Logger) *orchestration {
	o := &orchestration{svc: svc, projects: projects, log: log,
		tagsSeen: map[string]bool{}, pendingTags: map[string]time.Time{}, conflicts: map[string]bool{}}
	o.saves = prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricContextSaves,
		Help: "Context saves (task-save commits in the vault's history), by backend."}, []string{"backend"})
	o.saveDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricContextSaveDuration,
		Help: "Duration of each context save in seconds (its commit's Duration-Ms trailer), by backend.", Buckets: durationBuckets}, []string{"backend"})
	o.checkpoints = prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricCheckpoints,
		Help: "Checkpoints (checkpoint/<id> tags, a rollback's backups included), by type and scope."}, []string{"type", "scope"})
	o.rollbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRollbacks,
		Help: "Rollbacks (rollback commits), by what they rolled back to: checkpoint or version."}, []string{"type"})
	o.detected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricConflictsDetected,
		Help: "Conflicts detected (recorded in conflicts.md, each once), by type and severity."}, []string{"type", "severity"})
	o.resolved = prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricConflictsResolved,
		Help: "Conflict resolutions (conflicts-resolve commits), by action."}, []string{"action"})
	o.switches = prometheus.NewCounter(prometheus.CounterOpts{Name: MetricTaskSwitches,
		Help: "Task switches (task-switch commits)."})
	o.switchDur = prometheus.NewHistogram(prometheus.HistogramOpts{Name: MetricTaskSwitchDuration,
		Help: "Duration of each task switch in seconds (its commit's Duration-Ms trailer).", Buckets: durationBuckets})
	o.activeDesc = prometheus.NewDesc(MetricSessionsActive, "Projects whose current state holds an active session (active, recovered or crashed).", nil, nil)
	o.recoveryDesc = prometheus.NewDesc(MetricRecoveryNeeded, "Sessions that need recovery (crash or compaction), as check_recovery reports them.", nil, nil)
	o.heartbeatDesc = prometheus.NewDesc(MetricHeartbeatAge, "Age in seconds of each active session's last sign of life, at the scrape.", nil, nil)
	o.unresolvedDesc = prometheus.NewDesc(MetricConflictsUnresolved, "Recorded conflicts neither resolved nor ignored.", nil, nil)
	o.saves.WithLabelValues("vault")
	o.saveDur.WithLabelValues("vault")
	for _, t := range []string{"checkpoint", "version"} {
		o.rollbacks.WithLabelValues(t)
	}
	for _, a := range tasks.ConflictActions {
		o.resolved.WithLabelValues(a)
	}
	return o
}

// Describe sends the descriptors of every metric o reports.
func (o *orchestration) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range o.vectors() {
		c.Describe(ch)
	}
	ch <- o.activeDesc
	ch <- o.recoveryDesc
	ch <- o.heartbeatDesc
	ch <- o.unresolvedDesc
}

func (o *orchestration) vectors() []prometheus.Collector {
	return []prometheus.Collector{o.saves, o.saveDur, o.checkpoints, o.rollbacks, o.detected, o.resolved, o.switches, o.switchDur}
}

// Collect brings the counters up to date with the vault and sends every
// metric. A failure to read part of the vault is logged and leaves what it
// would have changed as it was; the scrape still succeeds.
func (o *orchestration) Collect(ch chan<- prometheus.Metric) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.walk(); err != nil {
		o.log.Warn("metrics: reading the vault's history", "error", err.Error())
	}
	if err := o.countCheckpoints(); err != nil {
		o.log.Warn("metrics: listing the checkpoint tags", "error", err.Error())
	}
	active, needRecovery, unresolved := 0, 0, 0
	var ages []float64
	now := time.Now()
	if o.svc.Now != nil {
		now = o.svc.Now()
	}
	for _, p := range o.projects {
		if st, err := o.svc.Current(p); err != nil {
			o.log.Warn("metrics: reading the session state", "project", p, "error", err.Error())
		} else if st.Active() {
			active++
			if st.LastSign != nil {
				ages = append(ages, max(0, now.Sub(*st.LastSign).Seconds()))
			}
		}
		if rep, err := recovery.New(o.svc).CheckRecovery(recovery.RecoveryOptions{Project: p}); err != nil {
			o.log.Warn("metrics: checking recovery", "project", p, "error", err.Error())
		} else {
			needRecovery += len(rep.Sessions)
		}
		cs, err := tasks.New(o.svc).Conflicts(p)
		if err != nil {
			o.log.Warn("metrics: reading the conflicts", "project", p, "error", err.Error())
			continue
		}
		for _, c := range cs {
			if c.Status != tasks.ResolutionResolved && c.Status != tasks.ResolutionIgnored {
				unresolved++
			}
			if key := p + "/" + c.ID; !o.conflicts[key] {
				o.conflicts[key] = true
				o.detected.WithLabelValues(known(c.Type, tasks.ConflictTypes), known(c.Severity, conflictSeverities)).Inc()
			}
		}
	}
	for _, c := range o.vectors() {
		c.Collect(ch)
	}
	ch <- prometheus.MustNewConstMetric(o.activeDesc, prometheus.GaugeValue, float64(active))
	ch <- prometheus.MustNewConstMetric(o.recoveryDesc, prometheus.GaugeValue, float64(needRecovery))
	ch <- prometheus.MustNewConstMetric(o.unresolvedDesc, prometheus.GaugeValue, float64(unresolved))
	ch <- prometheus.MustNewConstHistogram(o.heartbeatDesc, uint64(len(ages)), sum(ages), cumulative(ages, heartbeatBuckets))
}

// walk counts the operations of the commits made since the last walk (the
// whole history the first time): `git log last..HEAD` limited to the
// projects' folders. HEAD moved back (a reset) walks nothing; a last commit
// that no longer exists starts again from HEAD without counting.
func (o *orchestration) walk() error {
	head, err := o.svc.V.Head()
	if err != nil || head == "" || head == o.head {
		return err
	}
	rev := head
	if o.head != "" {
		rev = o.head + ".." + head
	}
	args := []string{"log", "--full-history", "--format=%x1e%H%x1f%(trailers:only,unfold)", rev, "--"}
	args = append(args, o.projects...)
	out, err := o.git(args...)
	if err != nil {
		if o.head != "" {
			if _, cerr := o.git("cat-file", "-e", o.head+"^{commit}"); cerr != nil {
				o.log.Warn("metrics: the last commit counted is gone from the vault; counting from HEAD on", "commit", o.head, "head", head)
				o.head = head
				return nil
			}
		}
		return err
	}
	for _, rec := range strings.Split(string(out), "\x1e") {
		_, trailers, ok := strings.Cut(strings.TrimLeft(rec, "\n"), "\x1f")
		if !ok {
			continue
		}
		o.count(parseTrailers(trailers))
	}
	o.head = head
	return nil
}

// count advances the counters for one commit's trailers.
func (o *orchestration) count(t map[string]string) {
	seconds := func() (float64, bool) {
		ms, err := strconv.ParseInt(t["Duration-Ms"], 10, 64)
		return float64(ms) / 1000, err == nil && ms >= 0
	}
	switch t["Operation"] {
	case "task-save":
		o.saves.WithLabelValues("vault").Inc()
		if s, ok := seconds(); ok {
			o.saveDur.WithLabelValues("vault").Observe(s)
		}
	case "task-switch":
		o.switches.Inc()
		if s, ok := seconds(); ok {
			o.switchDur.Observe(s)
		}
	case "checkpoint":
		o.expectTag(t["Checkpoint"])
	case "rollback":
		kind := "version"
		if strings.HasPrefix(t["Rollback-To"], "cp-") {
			kind = "checkpoint"
		}
		o.rollbacks.WithLabelValues(kind).Inc()
		o.expectTag(t["Backup-Checkpoint"])
	case "conflicts-resolve":
		o.resolved.WithLabelValues(known(t["Action"], tasks.ConflictActions)).Inc()
	}
}

// expectTag notes that checkpoint id's tag should exist: the next listing
// of the tags counts it.
func (o *orchestration) expectTag(id string) {
	if id != "" && !o.tagsSeen["checkpoint/"+id] {
		if _, ok := o.pendingTags[id]; !ok {
			o.pendingTags[id] = time.Now()
		}
	}
}

// countCheckpoints counts the checkpoint tags not counted yet. It lists the
// tags the first time and then only while a walked commit names a
// checkpoint whose tag was not seen yet (for pendingTagWait at most).
func (o *orchestration) countCheckpoints() error {
	for id, since := range o.pendingTags {
		if time.Since(since) > pendingTagWait {
			delete(o.pendingTags, id)
		}
	}
	if o.tagsListed && len(o.pendingTags) == 0 {
		return nil
	}
	tags, err := o.svc.V.Tags("checkpoint/")
	if err != nil {
		return err
	}
	o.tagsListed = true
	for _, tag := range tags {
		if o.tagsSeen[tag.Name] {
			continue
		}
		o.tagsSeen[tag.Name] = true
		delete(o.pendingTags, strings.TrimPrefix(tag.Name, "checkpoint/"))
		t := parseTrailers(tag.Message)
		if len(o.projects) > 0 && !slices.Contains(o.projects, t["Project"]) {
			continue
		}
		o.checkpoints.WithLabelValues(known(t["Checkpoint-Type"], tasks.CheckpointTypes), known(t["Checkpoint-Scope"], checkpointScopes)).Inc()
	}
	return nil
}

// git runs the git CLI in the vault, never prompting.
func (o *orchestration) git(args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", o.svc.V.Root}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %s: %w", args[0], strings.TrimSpace(stderr.String()), err)
	}
	return out.Bytes(), nil
}

// parseTrailers reads the "Key: value" lines of text (the last one of a
// key wins).
func parseTrailers(text string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok && k != "" && !strings.ContainsAny(k, " \t") {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// known returns v when list holds it, else "other": a value written by
// hand cannot add label values without bound.
func known(v string, list []string) string {
	if slices.Contains(list, v) {
		return v
	}
	return "other"
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// cumulative returns, for each bound, how many of v are at most it.
func cumulative(v []float64, bounds []float64) map[float64]uint64 {
	m := make(map[float64]uint64, len(bounds))
	for _, b := range bounds {
		for _, x := range v {
			if x <= b {
				m[b]++
			}
		}
		if _, ok := m[b]; !ok {
			m[b] = 0
		}
	}
	return m
}
