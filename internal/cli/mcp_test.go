package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sessionvault/sessionvault/integrations/mcpserver"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// allTools is every tool the issue names, sorted.
var allTools = []string{"advance_phase", "check_recovery", "claim_task", "create_checkpoint", "create_feature", "create_task", "detect_conflicts", "end_agent",
	"get_blocked_reason", "get_command_history", "get_feature", "get_task_graph", "get_unified_context", "handoff_agent", "heartbeat", "list_features",
	"record_blocker", "record_command", "record_decision", "record_evidence", "record_verdict", "resolve_blocker", "resolve_conflict", "rollback_to",
	"save_context_snapshot", "session_end", "session_recover", "session_start", "session_status", "session_update", "set_feature_status", "set_mode",
	"set_workflow_phase", "start_agent", "switch_feature", "switch_task", "sync_hot_context", "update_feature_plan", "validate_gate"}

// taskOrchestrationTools are the task orchestration tools (context, snapshots,
// checkpoints, rollback, task switching, conflicts, recovery, the task graph
// and the hot context), all of which the server has.
var taskOrchestrationTools = []string{"get_unified_context", "save_context_snapshot", "create_checkpoint", "rollback_to", "switch_task",
	"detect_conflicts", "resolve_conflict", "check_recovery", "get_task_graph", "sync_hot_context"}

// inMemory connects an MCP client to the server of vault v serving every
// toolset, in process.
func inMemory(t *testing.T, v string) *mcp.ClientSession {
	t.Helper()
	return inMemoryWith(t, v, []string{mcpserver.AllToolsets})
}

// inMemoryWith connects an MCP client to the server of vault v serving
// toolsets (nil: the default), in process.
func inMemoryWith(t *testing.T, v string, toolsets []string) *mcp.ClientSession {
	t.Helper()
	vv, err := vault.Open(v)
	if err != nil {
		t.Fatal(err)
	}
	svc := session.New(vv)
	srv, err := mcpserver.New(svc, mcpOptions(svc, "", "test", toolsets))
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (map[string]any, bool, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", tool, err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	out, _ := res.StructuredContent.(map[string]any)
	return out, res.IsError, text
}

func mustCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) map[string]any {
	t.Helper()
	out, isErr, text := call(t, cs, tool, args)
	if isErr {
		t.Fatalf("%s: %s", tool, text)
	}
	return out
}

// Every tool, in process, through a real MCP client; bad arguments come back
// as isError naming the argument with the stable code, and the server keeps
// serving.
func TestMCPToolsInMemory(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	cs := inMemory(t, v)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.InputSchema == nil || tl.OutputSchema == nil {
			t.Errorf("%s lacks an input or output schema", tl.Name)
		}
		ro := tl.Annotations != nil && tl.Annotations.ReadOnlyHint
		wantRO := map[string]bool{"session_status": true, "get_unified_context": true, "validate_gate": true, "get_blocked_reason": true, "get_task_graph": true,
			"list_features": true, "get_feature": true, "get_command_history": true}[tl.Name]
		if ro != wantRO {
			t.Errorf("%s readOnlyHint = %v", tl.Name, ro)
		}
	}
	sort.Strings(names)
	if strings.Join(names, ",") != strings.Join(allTools, ",") {
		t.Fatalf("tools = %v", names)
	}

	_, isErr, text := call(t, cs, "session_update", map[string]any{"message": "too early"})
	if !isErr || !strings.Contains(text, "E1602 NO_ACTIVE_SESSION") {
		t.Fatalf("update with no session: %v %s", isErr, text)
	}
	out := mustCall(t, cs, "session_start", map[string]any{"objective": "MCP session", "branch": "feat/mcp"})
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\d-session-01$`).MatchString(fmt.Sprint(out["session"])) {
		t.Fatalf("session_start = %v", out)
	}
	_, isErr, text = call(t, cs, "session_update", map[string]any{"message": "x", "progress": "abc"})
	if !isErr || !strings.Contains(text, "progress") || !strings.Contains(text, "E1612") {
		t.Fatalf("bad progress: %v %s", isErr, text)
	}
	if out := mustCall(t, cs, "session_update", map[string]any{"message": "next call works", "progress": 30}); out["id"] != "u-1" {
		t.Fatalf("update after a bad argument = %v", out)
	}
	mustCall(t, cs, "record_decision", map[string]any{"title": "T", "choice": "C", "rationale": "R", "alternatives": []string{"A"}})
	if out := mustCall(t, cs, "record_blocker", map[string]any{"description": "stuck", "severity": "high"}); out["id"] != "b-1" {
		t.Fatalf("record_blocker = %v", out)
	}
	mustCall(t, cs, "resolve_blocker", map[string]any{"blocker_id": "b-1", "resolution": "done"})
	_, isErr, text = call(t, cs, "resolve_blocker", map[string]any{"blocker_id": "b-9"})
	if !isErr || !strings.Contains(text, "E1605") {
		t.Fatalf("unknown blocker: %s", text)
	}
	mustCall(t, cs, "heartbeat", nil)
	if out := mustCall(t, cs, "check_recovery", nil); out["crashed"] != false {
		t.Fatalf("check_recovery = %v", out)
	}
	if out := mustCall(t, cs, "validate_gate", map[string]any{"phase": "start"}); out["passed"] != false {
		t.Fatalf("validate_gate = %v", out)
	}
	if out := mustCall(t, cs, "record_evidence", map[string]any{"item": "c-2"}); out["id"] != "c-2" {
		t.Fatalf("record_evidence = %v", out)
	}
	if out := mustCall(t, cs, "get_blocked_reason", nil); out["blocked"] != true || !strings.Contains(fmt.Sprint(out["reason"]), "c-1") {
		t.Fatalf("get_blocked_reason = %v", out)
	}
	mustCall(t, cs, "set_mode", map[string]any{"mode": "planning"})
	if _, isErr, text = call(t, cs, "set_mode", map[string]any{"mode": "disabled"}); !isErr || !strings.Contains(text, "person") {
		t.Fatalf("set_mode disabled: %s", text)
	}
	_, isErr, _ = call(t, cs, "advance_phase", nil)
	if !isErr {
		t.Fatal("advance_phase passed an incomplete start gate")
	}
	ctxOut := mustCall(t, cs, "get_unified_context", nil)
	if p := fmt.Sprint(ctxOut["prompt"]); !strings.Contains(p, "MCP session") || len(p) > 8<<10 {
		t.Fatalf("prompt = %q", p)
	}
	st := mustCall(t, cs, "session_status", nil)["state"].(map[string]any)
	if st["objective"] != "MCP session" || st["progress"] != float64(30) {
		t.Fatalf("status = %v", st)
	}
	for _, uri := range []string{"session://state", "session://checklist", "session://history", "session://violations"} {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text == "" {
			t.Fatalf("%s: %v", uri, err)
		}
	}
	if out := mustCall(t, cs, "session_end", map[string]any{"summary": "done", "next": []string{"more"}}); out["session"] == "" {
		t.Fatalf("session_end = %v", out)
	}
	assertClean(t, v)
}

// Tool schemas are snapshots: a changed schema fails until the snapshot is
// updated on purpose (SESSIONVAULT_UPDATE_SNAPSHOTS=1 go test ./internal/cli -run Schema).
func TestMCPToolSchemaSnapshot(t *testing.T) {
	t.Parallel()
	cs := inMemory(t, newVault(t))
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(tools.Tools, func(i, j int) bool { return tools.Tools[i].Name < tools.Tools[j].Name })
	got, _ := json.MarshalIndent(tools.Tools, "", "  ")
	path := filepath.Join("testdata", "mcp", "tools.json")
	if os.Getenv("SESSIONVAULT_UPDATE_SNAPSHOTS") != "" {
		os.WriteFile(path, append(got, '\n'), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no snapshot (%v); create it with SESSIONVAULT_UPDATE_SNAPSHOTS=1", err)
	}
	if strings.TrimSpace(string(want)) != strings.TrimSpace(string(got)) {
		t.Fatalf("tool schemas changed; if on purpose, update %s with SESSIONVAULT_UPDATE_SNAPSHOTS=1", path)
	}
}

// 100 concurrent tool calls on one session lose nothing; fsck is clean.
func TestMCPHundredConcurrentCalls(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	cs := inMemory(t, v)
	mustCall(t, cs, "session_start", map[string]any{"objective": "concurrency"})
	var wg sync.WaitGroup
	errc := make(chan string, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "session_update", Arguments: map[string]any{"message": fmt.Sprintf("m%03d", i)}})
			if err != nil || res.IsError {
				errc <- fmt.Sprintf("call %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	close(errc)
	for e := range errc {
		t.Error(e)
	}
	st := mustCall(t, cs, "session_status", nil)["state"].(map[string]any)
	ups, _ := st["updates"].([]any)
	seen := map[string]bool{}
	for _, u := range ups {
		seen[u.(map[string]any)["message"].(string)] = true
	}
	if len(ups) != 100 || len(seen) != 100 {
		t.Fatalf("%d updates, %d distinct messages", len(ups), len(seen))
	}
	if n := strings.Count(git(t, v, "log", "--format=%s"), "update: m"); n != 100 {
		t.Fatalf("%d update commits", n)
	}
	assertClean(t, v)
}

var (
	timeRe = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	shaRe  = regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	// observedRe: the time of observed evidence ("observed: start 10:02").
	observedRe = regexp.MustCompile(`(observed: [^·^]*?) \d\d:\d\d\b`)
)

// normalise masks what differs between two runs of the same operations:
// times, commit ids, the minute evidence was observed in.
func normalise(s string) string {
	s = observedRe.ReplaceAllString(s, "$1 HH:MM")
	return shaRe.ReplaceAllString(timeRe.ReplaceAllString(s, "TIME"), "SHA")
}

// The built binary over stdio with the SDK's CommandTransport: tools/list, a
// whole lifecycle through tools/call, one commit per mutating call, and the
// same notes as the same lifecycle through the CLI.
func TestMCPBinaryLifecycleMatchesCLI(t *testing.T) {
	t.Parallel()
	bin := robustBinary(t)
	vm, vc := newVault(t), newVault(t)
	cmd := exec.Command(bin, "--vault", vm, "mcp")
	cmd.Env = os.Environ()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != len(mcpserver.Toolsets()[0].Tools) {
		t.Fatalf("tools/list: %v (%d tools, want the session toolset's)", err, len(tools.Tools))
	}
	before := strings.Count(git(t, vm, "log", "--format=%s"), "\n")
	steps := []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"session_start", map[string]any{"objective": "Same either way", "branch": "feat/x", "commit": "abc1234"}, []string{"start", "--objective", "Same either way", "--branch", "feat/x", "--commit", "abc1234"}},
		{"session_update", map[string]any{"message": "did a thing", "progress": 40, "tags": []string{"x"}}, []string{"update", "did a thing", "--progress", "40", "--tag", "x"}},
		{"record_decision", map[string]any{"title": "Pick", "choice": "A", "rationale": "because", "alternatives": []string{"B"}, "impact": "high"}, []string{"decide", "--title", "Pick", "--choice", "A", "--rationale", "because", "--alternative", "B", "--impact", "high"}},
		{"record_blocker", map[string]any{"description": "wait", "severity": "low"}, []string{"block", "wait", "--severity", "low"}},
		{"resolve_blocker", map[string]any{"blocker_id": "b-1", "resolution": "ok"}, []string{"resolve", "b-1", "--resolution", "ok"}},
		{"session_end", map[string]any{"summary": "finished", "next": []string{"later"}}, []string{"end", "--summary", "finished", "--next", "later"}},
	}
	for _, s := range steps {
		mustCall(t, cs, s.tool, s.args)
		mustRun(t, vc, s.cli...)
	}
	if after := strings.Count(git(t, vm, "log", "--format=%s"), "\n"); after-before != len(steps) {
		t.Fatalf("%d commits for %d mutating calls", after-before, len(steps))
	}
	assertClean(t, vm)
	filepath.WalkDir(filepath.Join(vc, "demo"), func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(vc, p)
		c, _ := os.ReadFile(p)
		m, err := os.ReadFile(filepath.Join(vm, rel))
		if err != nil {
			t.Errorf("%s exists through the CLI but not through MCP", rel)
			return nil
		}
		if normalise(string(c)) != normalise(string(m)) {
			t.Errorf("%s differs between the CLI and MCP lifecycles:\n%s\n----\n%s", rel, normalise(string(c)), normalise(string(m)))
		}
		return nil
	})
}

// servedBy starts the built binary as `sessionvault --vault v ARGS...` (mcp
// and its flags) and lists its tools through a real MCP client over stdio:
// their names, sorted, and the bytes of the tools as compact JSON.
func servedBy(t *testing.T, bin, v string, args ...string) ([]string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--vault", v}, args...)...)
	cmd.Env = os.Environ()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "size", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	return names, len(b)
}

// What an agent's client reads before its first message: `sessionvault mcp`
// lists the session toolset in at most 12,000 bytes of tools (compact JSON),
// `sessionvault mcp --toolsets all` every tool in at most 40,000; what
// `mcp --help` lists is what the server serves.
func TestMCPToolsListSize(t *testing.T) {
	t.Parallel()
	bin := robustBinary(t)
	v := newVault(t)
	sets := mcpserver.Toolsets()

	names, size := servedBy(t, bin, v, "mcp")
	t.Logf("sessionvault mcp: %d tools, %d bytes", len(names), size)
	if size > 12000 {
		t.Errorf("tools/list of sessionvault mcp is %d bytes, more than 12,000", size)
	}
	if strings.Join(names, ",") != strings.Join(sets[0].Tools, ",") {
		t.Errorf("sessionvault mcp serves %v, --help lists %v", names, sets[0].Tools)
	}

	names, size = servedBy(t, bin, v, "mcp", "--toolsets", "all")
	t.Logf("sessionvault mcp --toolsets all: %d tools, %d bytes", len(names), size)
	if size > 40000 {
		t.Errorf("tools/list of sessionvault mcp --toolsets all is %d bytes, more than 40,000", size)
	}
	if strings.Join(names, ",") != strings.Join(allTools, ",") {
		t.Errorf("sessionvault mcp --toolsets all serves %v", names)
	}

	help := mustRun(t, v, "mcp", "--help")
	for _, ts := range sets {
		if !strings.Contains(help, "  "+ts.Name) {
			t.Errorf("mcp --help does not list the %s toolset:\n%s", ts.Name, help)
		}
		for _, tool := range ts.Tools {
			if !strings.Contains(help, tool) {
				t.Errorf("mcp --help does not list %s (%s):\n%s", tool, ts.Name, help)
			}
		}
	}
}

// Advice names a tool call only for a tool the server serves: without the
// workflow toolset, the resume prompt's next step for an agent in progress
// stays a CLI command, runnable as written; with it, it is end_agent.
func TestMCPAdviceNamesOnlyServedTools(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Advice by toolset")
	mustRun(t, v, "agent", "start", "analyst")

	prompt := fmt.Sprint(mustCall(t, inMemoryWith(t, v, nil), "get_unified_context", nil)["prompt"])
	if strings.Contains(prompt, "end_agent") || !regexp.MustCompile("`sessionvault --vault \\S+ agent end --summary ...`").MatchString(prompt) {
		t.Errorf("the default server's resume prompt:\n%s", prompt)
	}
	prompt = fmt.Sprint(mustCall(t, inMemoryWith(t, v, []string{"workflow"}), "get_unified_context", nil)["prompt"])
	if !strings.Contains(prompt, "`end_agent {\"summary\": \"...\"}`") || strings.Contains(prompt, "sessionvault agent end") {
		t.Errorf("the workflow server's resume prompt:\n%s", prompt)
	}
}
