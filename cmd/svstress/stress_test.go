package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sessionvault/sessionvault/internal/testenv"
)

// The writers run as their own processes: this test binary, started again
// with SVSTRESS_WRITER=1.
func TestMain(m *testing.M) {
	if os.Getenv("SVSTRESS_WRITER") == "1" {
		os.Exit(writerMain(os.Args[1:]))
	}
	os.Exit(testenv.Run(m))
}

// Every scenario of `make stress`, at a size that takes seconds: nothing a
// writer wrote is lost, every acknowledged entry is there once with its own
// id, each operation has one commit holding the engine's bytes, fsck and
// status are clean — with some engine processes killed and retried.
func TestScenariosSmall(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "sessionvault")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/sessionvault/sessionvault/cmd/sessionvault").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := Config{Bin: bin, Writer: []string{os.Args[0]}, WriterEnv: []string{"SVSTRESS_WRITER=1"},
		Updates: 16, Decides: 4, Blocks: 4, KillRate: 0.15, Scenarios: Scenarios}
	reports, err := Run(cfg)
	t.Logf("\n%s", Table(reports))
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != len(Scenarios) {
		t.Fatalf("%d reports for %d scenarios", len(reports), len(Scenarios))
	}
	for _, r := range reports {
		if !r.Clean() {
			t.Errorf("%s: %v", r.Scenario, r.Problems)
		}
		if r.PersonLines == 0 || r.Ops != cfg.Updates+cfg.Decides+cfg.Blocks+1 {
			t.Errorf("%s: the scenario did not run: %d person lines, %d operations", r.Scenario, r.PersonLines, r.Ops)
		}
	}
}
