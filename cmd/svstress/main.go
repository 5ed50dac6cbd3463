// Command svstress runs sessionvault beside writers that take none of its
// locks (a person, an editor or git writing beside the engine): for each
// scenario, loops of `sessionvault update`, `decide` and `block` — each a
// process of the real binary, some killed with SIGKILL and retried with the
// same --op-id — run against one vault while one outside writer, also its
// own process, keeps writing:
//
//	append      a person appending lines in place (>>)
//	truncate    a save as Obsidian does it: truncate, write half, pause, write the rest
//	rename      a save by another editor: a temporary file renamed over the note
//	stale       an editor that keeps a buffer and saves it without reloading
//	git         `git add -A && git commit` in a loop (Obsidian Git, a person), the real git CLI
//
// At the end one more operation runs, and it checks: every line the writer
// wrote is in the note exactly once; every acknowledged engine entry is there
// exactly once with its own id; each acknowledged operation has exactly one
// commit, whose tree holds the bytes its State-Checksum names; `git fsck
// --strict` is clean; `git status` is clean. It prints a table per scenario
// and exits 1 when any count that must be 0 is not. Run it with `make
// stress`.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "writer" {
		os.Exit(writerMain(os.Args[2:]))
	}
	cfg := defaultConfig()
	flag.StringVar(&cfg.Bin, "bin", "bin/sessionvault", "the sessionvault binary")
	flag.IntVar(&cfg.Updates, "updates", cfg.Updates, "`update` operations per scenario")
	flag.IntVar(&cfg.Decides, "decides", cfg.Decides, "`decide` operations per scenario")
	flag.IntVar(&cfg.Blocks, "blocks", cfg.Blocks, "`block` operations per scenario")
	flag.Float64Var(&cfg.KillRate, "kill", cfg.KillRate, "fraction of engine processes killed with SIGKILL at a random point (each is retried with the same --op-id)")
	scen := flag.String("scenarios", strings.Join(Scenarios, ","), "scenarios to run, comma-separated")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep each scenario's vault")
	flag.BoolVar(&cfg.SplitIndex, "split-index", false, "run on git's split index (core.splitIndex=true), as init leaves a vault of 5,000 files or more")
	flag.Parse()
	cfg.Scenarios = strings.Split(*scen, ",")
	bin, err := filepath.Abs(cfg.Bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "svstress:", err)
		os.Exit(2)
	}
	cfg.Bin = bin
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "svstress:", err)
		os.Exit(2)
	}
	cfg.Writer = []string{self, "writer"}
	cfg.Log = os.Stderr
	start := time.Now()
	reports, err := Run(cfg)
	fmt.Println(Table(reports))
	fmt.Fprintf(os.Stderr, "svstress: %d scenarios in %s\n", len(reports), time.Since(start).Round(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, "svstress:", err)
		os.Exit(1)
	}
	for _, r := range reports {
		if !r.Clean() {
			os.Exit(1)
		}
	}
}
