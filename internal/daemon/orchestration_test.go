package daemon

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/recovery"

	"github.com/sessionvault/sessionvault/internal/tasks"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// scrape gathers reg and returns each sample as `name{k="v",...}` → value:
// a counter's or gauge's value, a histogram's sample count, with its sum
// as name_sum{...} and its buckets as name_bucket{...,le="..."}.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering: %v", err)
	}
	out := map[string]float64{}
	key := func(name string, labels []string) string {
		sort.Strings(labels)
		if len(labels) == 0 {
			return name
		}
		return name + "{" + strings.Join(labels, ",") + "}"
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			name := mf.GetName()
			switch {
			case m.GetCounter() != nil:
				out[key(name, labels)] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key(name, labels)] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				h := m.GetHistogram()
				out[key(name, labels)] = float64(h.GetSampleCount())
				out[key(name+"_sum", labels)] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					le := `le="` + strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64) + `"`
					out[key(name+"_bucket", append(append([]string(nil), labels...), le))] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	return out
}

// expect fails t for each sample of want that got does not hold, or holds
// with another value.
func expect(t *testing.T, step string, got, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: no sample %s", step, k)
		case g != v:
			t.Errorf("%s: %s = %v, want %v", step, k, g, v)
		}
	}
}

// Every session_orchestration_* metric serve reports, read from a vault in
// which the session service saved, switched, checkpointed, rolled back,
// detected and resolved; a later scrape counts only what happened since.
func TestOrchestrationMetrics(t *testing.T) {
	dir := t.TempDir()
	history.Init(dir)
	os.MkdirAll(filepath.Join(dir, ".sessionvault"), 0o755)
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	svc := session.New(v)
	clock := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	svc.Now = func() time.Time { return clock }
	tick := func(d time.Duration) { clock = clock.Add(d) }
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(svc.InitProject("demo"))
	must(svc.InitProject("other"))
	must(svc.Start(session.StartOptions{Project: "demo", Objective: "metrics"}))
	must(tasks.New(svc).TaskNew(tasks.NewTaskOptions{Project: "demo", Name: "A", ID: "a", KeyFiles: []string{"f.go"}}))
	must(tasks.New(svc).TaskNew(tasks.NewTaskOptions{Project: "demo", Name: "B", ID: "b", KeyFiles: []string{"f.go"}}))
	phase := func(p string) tasks.TaskUpdate { return tasks.TaskUpdate{Phase: &p} }
	tick(10 * time.Second)
	must(tasks.New(svc).SaveTask(tasks.SaveTaskOptions{Project: "demo", TaskID: "a", Updates: phase("p1")}))
	tick(10 * time.Second)
	must(tasks.New(svc).SwitchTask(tasks.SwitchOptions{Project: "demo", From: "a", To: "b", Updates: phase("p2")}))
	tick(10 * time.Second)
	cp, err := tasks.New(svc).CreateCheckpoint(tasks.CheckpointOptions{Project: "demo", Label: "L", Tasks: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	tick(10 * time.Second)
	must(tasks.New(svc).SaveTask(tasks.SaveTaskOptions{Project: "demo", TaskID: "a", Updates: phase("p3")}))
	tick(10 * time.Second)
	rb, err := tasks.New(svc).Rollback(tasks.RollbackOptions{Project: "demo", TaskID: "a", Checkpoint: cp.Checkpoint.ID})
	if err != nil || rb.BackupCheckpointID == "" {
		t.Fatalf("rollback to the checkpoint: %+v %v", rb, err)
	}
	tick(10 * time.Second)
	if rb, err = tasks.New(svc).Rollback(tasks.RollbackOptions{Project: "demo", TaskID: "a", Version: 1}); err != nil || rb.BackupCheckpointID == "" {
		t.Fatalf("rollback to version 1: %+v %v", rb, err)
	}
	det, err := tasks.New(svc).DetectConflicts("demo", nil, nil)
	if err != nil || len(det.Detected) != 1 {
		t.Fatalf("detect: %+v %v", det, err)
	}
	must(tasks.New(svc).ResolveConflict(tasks.ResolveOptions{Project: "demo", ID: det.Detected[0].ID, Action: "merge"}))
	// A lock left to expire: a second conflict, left unresolved.
	must(tasks.New(svc).LockTask("demo", "b", "someone-else", nil))
	tick(tasks.TaskLockTTL + time.Minute)
	if det, err = tasks.New(svc).DetectConflicts("demo", nil, nil); err != nil || len(det.Detected) != 1 {
		t.Fatalf("second detect: %+v %v", det, err)
	}
	// Another project's save and checkpoint are not the daemon's.
	must(tasks.New(svc).TaskNew(tasks.NewTaskOptions{Project: "other", Name: "C", ID: "c"}))
	must(tasks.New(svc).SaveTask(tasks.SaveTaskOptions{Project: "other", TaskID: "c", Updates: phase("x")}))
	must(tasks.New(svc).CreateCheckpoint(tasks.CheckpointOptions{Project: "other", Label: "elsewhere"}))
	// The session compacted (a recovery point) and last beat 90 s ago.
	must(svc.Heartbeat("demo"))
	if err := recovery.New(svc).RecordRecoveryPoint("demo", "auto", ""); err != nil {
		t.Fatal(err)
	}
	tick(90 * time.Second)

	reg := prometheus.NewRegistry()
	reg.MustRegister(newOrchestration(svc, []string{"demo"}, slog.New(slog.NewJSONHandler(io.Discard, nil))))
	first := map[string]float64{
		MetricSessionsActive:                                                 1,
		MetricRecoveryNeeded:                                                 1,
		MetricHeartbeatAge:                                                   1,
		MetricHeartbeatAge + "_sum":                                          90,
		MetricHeartbeatAge + `_bucket{le="60"}`:                              0,
		MetricHeartbeatAge + `_bucket{le="120"}`:                             1,
		MetricContextSaves + `{backend="vault"}`:                             2,
		MetricContextSaveDuration + `{backend="vault"}`:                      2,
		MetricCheckpoints + `{scope="task",type="manual"}`:                   1,
		MetricCheckpoints + `{scope="task",type="auto"}`:                     2,
		MetricRollbacks + `{type="checkpoint"}`:                              1,
		MetricRollbacks + `{type="version"}`:                                 1,
		MetricConflictsDetected + `{severity="medium",type="file_conflict"}`: 1,
		MetricConflictsDetected + `{severity="high",type="lock_collision"}`:  1,
		MetricConflictsUnresolved:                                            1,
		MetricConflictsResolved + `{action="merge"}`:                         1,
		MetricConflictsResolved + `{action="ignore"}`:                        0,
		MetricTaskSwitches:                                                   1,
		MetricTaskSwitchDuration:                                             1,
	}
	got := scrape(t, reg)
	expect(t, "first scrape", got, first)
	for k := range got {
		if strings.HasPrefix(k, MetricCheckpoints+"{") && !strings.Contains(k, `scope="task"`) {
			t.Errorf("first scrape: %s = %v: the other project's checkpoint counted", k, got[k])
		}
	}
	for _, name := range []string{"session_orchestration_sessions_active", "session_orchestration_recovery_needed",
		"session_orchestration_heartbeat_age_seconds", "session_orchestration_context_saves_total",
		"session_orchestration_context_save_duration_seconds", "session_orchestration_checkpoints_total",
		"session_orchestration_rollbacks_total", "session_orchestration_conflicts_detected_total",
		"session_orchestration_conflicts_unresolved", "session_orchestration_conflicts_resolved_total",
		"session_orchestration_task_switches_total", "session_orchestration_task_switch_duration_seconds"} {
		found := false
		for k := range got {
			found = found || k == name || strings.HasPrefix(k, name+"{")
		}
		if !found {
			t.Errorf("no metric named %s", name)
		}
	}

	// Nothing happened: nothing more is counted.
	expect(t, "second scrape", scrape(t, reg), first)

	// One more save: exactly one more, nothing else moves.
	must(tasks.New(svc).SaveTask(tasks.SaveTaskOptions{Project: "demo", TaskID: "a", Updates: phase("p4")}))
	third := map[string]float64{}
	for k, v := range first {
		third[k] = v
	}
	third[MetricContextSaves+`{backend="vault"}`] = 3
	third[MetricContextSaveDuration+`{backend="vault"}`] = 3
	expect(t, "after one more save", scrape(t, reg), third)

	// Tags made after the first listing are counted: a rollback's backup,
	// then a checkpoint.
	if rb, err = tasks.New(svc).Rollback(tasks.RollbackOptions{Project: "demo", TaskID: "a", Version: 2}); err != nil || rb.BackupCheckpointID == "" {
		t.Fatalf("rollback to version 2: %+v %v", rb, err)
	}
	third[MetricRollbacks+`{type="version"}`] = 2
	third[MetricCheckpoints+`{scope="task",type="auto"}`] = 3
	expect(t, "after a rollback", scrape(t, reg), third)
	must(tasks.New(svc).CreateCheckpoint(tasks.CheckpointOptions{Project: "demo", Label: "M", Type: "milestone"}))
	third[MetricCheckpoints+`{scope="global",type="milestone"}`] = 1
	expect(t, "after a checkpoint", scrape(t, reg), third)
}

// The walk reads only the commits since the HEAD it last saw: each scrape
// after a save counts that save alone, and remembers HEAD.
func TestOrchestrationWalkIsIncremental(t *testing.T) {
	dir, svc, _ := startedSession(t)
	svc.Now = nil
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tasks.New(svc).TaskNew(tasks.NewTaskOptions{Project: "demo", Name: "A", ID: "a"}))
	o := newOrchestration(svc, []string{"demo"}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	reg := prometheus.NewRegistry()
	reg.MustRegister(o)
	saves := func() float64 { return scrape(t, reg)[MetricContextSaves+`{backend="vault"}`] }
	for i := 1; i <= 3; i++ {
		p := strconv.Itoa(i)
		must(tasks.New(svc).SaveTask(tasks.SaveTaskOptions{Project: "demo", TaskID: "a", Updates: tasks.TaskUpdate{Phase: &p}}))
		if got := saves(); got != float64(i) {
			t.Fatalf("after save %d: %v saves", i, got)
		}
	}
	head, _ := svc.V.Head()
	if o.head != head {
		t.Errorf("last walked %s, HEAD is %s", o.head, head)
	}
	// A commit's Duration-Ms trailer is observed in seconds.
	os.WriteFile(filepath.Join(dir, "demo", "by-hand.md"), []byte("x\n"), 0o644)
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("add", "demo/by-hand.md")
	git("commit", "-q", "-m", "task-switch: to a\n\nOperation: task-switch\nDuration-Ms: 250\nTask: a")
	got := scrape(t, reg)
	expect(t, "after a switch of 250 ms", got, map[string]float64{
		MetricTaskSwitches:                              1,
		MetricTaskSwitchDuration + "_sum":               0.25,
		MetricTaskSwitchDuration + `_bucket{le="0.1"}`:  0,
		MetricTaskSwitchDuration + `_bucket{le="0.25"}`: 1,
		MetricContextSaves + `{backend="vault"}`:        3,
	})
}
