package session

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sessionvault/sessionvault/internal/vault"
)

// benchTasks makes a vault of project "demo" with n task notes (every tenth
// depending on the one before) and returns its service.
func benchTaskVault(b *testing.B, n int) *Service {
	b.Helper()
	root := filepath.Join(b.TempDir(), "vault")
	if err := makeVault(root, "demo", nil); err != nil {
		b.Fatal(err)
	}
	v, err := vault.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	s := New(v)
	if _, err := s.InitProject("demo"); err != nil {
		b.Fatal(err)
	}
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

// BenchmarkTaskGraph1000 is get_task_graph over 1,000 task notes (issue 14:
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
