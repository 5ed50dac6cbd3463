package tasks

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
)

// benchTasks makes a vault of project "demo" with n task notes (every tenth
// depending on the one before) and returns its service.
func benchTaskVault(b *testing.B, n int) *Service {
	b.Helper()
	s := testService(b, nil)
	for i := 0; i < n; i++ {
		o := NewTaskOptions{Project: "demo", Name: "task " + strconv.Itoa(i), KeyFiles: []string{"src/f" + strconv.Itoa(i%97) + ".go"}}
		if i%10 == 9 {
			o.DependsOn = []string{"task-" + strconv.Itoa(i-1)}
		}
		if _, err := s.TaskNew(o); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkTaskGraph1000 is get_task_graph over 1,000 task notes (the target:
// at most 50 ms).
func BenchmarkTaskGraph1000(b *testing.B) {
	s := benchTaskVault(b, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g, err := s.TaskGraphOf(GraphOptions{Project: "demo"})
		if err != nil || g.Summary.TotalTasks != 1000 {
			b.Fatalf("%v %d", err, g.Summary.TotalTasks)
		}
	}
}

// BenchmarkTaskGraph1000Cached is get_task_graph over 1,000 task notes as
// the MCP server reads them: through a task cache filled by a first call,
// no note changed since (the target: at most 10 ms through the server).
func BenchmarkTaskGraph1000Cached(b *testing.B) {
	s := benchTaskVault(b, 1000)
	old := time.Now().Add(-time.Hour)
	notes, _ := filepath.Glob(filepath.Join(s.V.Root, "demo", session.TasksDir, "*.md"))
	for _, p := range notes {
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	cs := s.WithCache(NewTaskCache())
	if _, err := cs.TaskGraphOf(GraphOptions{Project: "demo"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g, err := cs.TaskGraphOf(GraphOptions{Project: "demo"})
		if err != nil || g.Summary.TotalTasks != 1000 {
			b.Fatalf("%v %d", err, g.Summary.TotalTasks)
		}
	}
}

// BenchmarkSwitchTask is switch_task between two tasks of an active
// session; BenchmarkUpdateBeside is one update in the same vault (the
// target: switch within 2x of an update; make bench measures it at 10,000
// notes).
func BenchmarkSwitchTask(b *testing.B) {
	s := benchTaskVault(b, 2)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "bench"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i & 1
		if _, err := s.SwitchTask(SwitchOptions{Project: "demo", From: "task-" + strconv.Itoa(j), To: "task-" + strconv.Itoa(1-j)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdateBeside(b *testing.B) {
	s := benchTaskVault(b, 2)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "bench"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Update(session.UpdateOptions{Project: "demo", Message: "step " + strconv.Itoa(i)}); err != nil {
			b.Fatal(err)
		}
	}
}
