package features

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/vault"
)

// Every value a command entry holds — line breaks, tabs, backslashes,
// backquotes, leading and trailing spaces, the separators of the line
// format — reads back exactly from its code span.
func TestCommandLineRoundTrip(t *testing.T) {
	values := []string{"go test ./...", "a`b", "``", "` x `", " lead", "trail ", "  both  ", "   ", "`", "x · **error:** `y` ^h-9",
		"echo \"a\\nb\"", "line1\nline2\r\n\tend", `\`, `\\n`, "\\\n", "C:\\temp\\new", "ü · 日本", "[[demo/tasks/x|x]]"}
	r := rand.New(rand.NewSource(3))
	alphabet := []rune("ab `\\\n\r\tnrt·*^|[]")
	for i := 0; i < 300; i++ {
		var b strings.Builder
		for j := r.Intn(12) + 1; j > 0; j-- {
			b.WriteRune(alphabet[r.Intn(len(alphabet))])
		}
		values = append(values, b.String())
	}
	d := int64(42)
	for _, v := range values {
		e := CommandEntry{ID: "h-7", Timestamp: time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC), Status: session.CommandFailure, Command: v, Arguments: v, Error: v,
			Model: "sonnet", Agent: "agent-1", TaskID: "impl-core", FeatureID: "orch-2025-01-09", DurationMs: &d, taskLinked: true}
		if strings.TrimSpace(v) == "" {
			e.Command = "cmd" + v
		}
		line := formatCommand("demo", e)
		if strings.ContainsAny(line, "\n\r") {
			t.Fatalf("%q: the line holds a line break: %q", v, line)
		}
		got, why := parseCommand(line)
		if why != "" {
			t.Fatalf("%q: %s\n%s", v, why, line)
		}
		got.Session, got.Log, got.Line = e.Session, e.Log, e.Line
		gj, _ := json.Marshal(got)
		ej, _ := json.Marshal(e)
		if string(gj) != string(ej) || !got.taskLinked || got.featureLinked {
			t.Fatalf("%q:\n%s\nread back as %s\nwant %s", v, line, gj, ej)
		}
	}
}

// A clock that goes backwards (and an explicit time older than the last
// entry) gives entries the log's last time: timestamps never go back.
func TestCommandTimesAreMonotonic(t *testing.T) {
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "clocks"}); err != nil {
		t.Fatal(err)
	}
	rec := func(cmd string, at *time.Time) RecordOutcome {
		t.Helper()
		out, err := s.RecordCommand(RecordOptions{Project: "demo", Command: cmd, At: at})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	rec("first", nil)
	now = now.Add(-time.Hour) // the clock goes back an hour
	if out := rec("second", nil); !out.Clamped || !out.Entry.Timestamp.Equal(time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("second = %+v, want clamped to 10:00", out)
	}
	// The hook's path clamps the same way.
	if _, _, err := s.RecordToolCommand("demo", ToolCall{Tool: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	rec("explicit", &old)
	now = now.Add(3 * time.Hour)
	rec("later", nil)
	h, err := s.CommandHistory(HistoryOptions{Project: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, e := range h.Entries {
		got = append(got, e.Command+"@"+e.Timestamp.Format("15:04"))
		if i > 0 && e.Timestamp.Before(h.Entries[i-1].Timestamp) {
			t.Errorf("%s is older than the entry before it", e.ID)
		}
	}
	if want := "first@10:00 second@10:00 ls@10:00 explicit@10:00 later@12:00"; strings.Join(got, " ") != want {
		t.Errorf("entries = %s, want %s", strings.Join(got, " "), want)
	}
}

// Appends never rewrite a byte: each write adds to the end of what was
// there, also with many writers at once (each entry once, ids in order).
func TestCommandLogIsAppendOnly(t *testing.T) {
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "appends"}); err != nil {
		t.Fatal(err)
	}
	out, err := s.RecordCommand(RecordOptions{Project: "demo", Command: "first"})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.V.Root, filepath.FromSlash(out.Entry.Log))
	before, _ := os.ReadFile(p)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			v, err := vault.Open(s.V.Root) // a writer of its own, as another process is
			if err != nil {
				t.Error(err)
				return
			}
			ws := New(session.New(v))
			ws.Now = s.Now
			for i := 0; i < 10; i++ {
				if _, err := ws.RecordCommand(RecordOptions{Project: "demo", Command: "w" + string(rune('0'+w)), Arguments: strings.Repeat("x", 100*i)}); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	after, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(after), string(before)) {
		t.Fatal("the log's earlier bytes changed")
	}
	h, err := s.CommandHistory(HistoryOptions{Project: "demo"})
	if err != nil || len(h.Problems) > 0 {
		t.Fatal(err, h.Problems)
	}
	if len(h.Entries) != 41 {
		t.Fatalf("%d entries, want 41", len(h.Entries))
	}
	for i, e := range h.Entries {
		if want := "h-" + strconv.Itoa(i+1); e.ID != want {
			t.Errorf("entry %d has id %s, want %s", i+1, e.ID, want)
		}
	}
}

// What the hook records of a tool call: Bash's command line and its other
// inputs, an MCP tool's name and input, the failure's error, the subagent;
// other tools are not recorded.
func TestRecordToolCommand(t *testing.T) {
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "hooks"}); err != nil {
		t.Fatal(err)
	}
	d := int64(1500)
	for _, c := range []ToolCall{
		{Tool: "Bash", Input: json.RawMessage(`{"command":"go test ./...","description":"Run the tests","timeout":120000}`), DurationMs: &d, AgentType: "Explore", Model: "claude-sonnet-4-5"},
		{Tool: "Read", Input: json.RawMessage(`{"file_path":"/x"}`)},
		{Tool: "mcp__serena__find_symbol", Input: json.RawMessage(`{"name":"Main","depth":1}`), Failed: true, Error: "symbol not found"},
		{Tool: "Bash", Input: json.RawMessage(`{"command":"` + strings.Repeat("y", 5000) + `"}`), AgentID: "weird id!"},
	} {
		if _, _, err := s.RecordToolCommand("demo", c); err != nil {
			t.Fatal(err)
		}
	}
	h, _ := s.CommandHistory(HistoryOptions{Project: "demo"})
	if len(h.Entries) != 3 {
		t.Fatalf("%d entries, want 3 (Read is not recorded): %+v", len(h.Entries), h.Entries)
	}
	e := h.Entries[0]
	if e.Command != "go test ./..." || e.Arguments != `{"description":"Run the tests","timeout":120000}` || *e.DurationMs != 1500 || e.Agent != "Explore" || e.Model != "claude-sonnet-4-5" || e.Status != session.CommandSuccess {
		t.Errorf("Bash entry = %+v", e)
	}
	if e := h.Entries[1]; e.Command != "mcp__serena__find_symbol" || e.Arguments != `{"depth":1,"name":"Main"}` || e.Status != session.CommandFailure || e.Error != "symbol not found" {
		t.Errorf("MCP entry = %+v", e)
	}
	if e := h.Entries[2]; len(e.Command) > session.HookFieldCut+40 || !strings.HasSuffix(e.Command, "bytes cut]") || e.Agent != "weird-id-" {
		t.Errorf("long entry: %d bytes, agent %q", len(e.Command), e.Agent)
	}
}

// BenchmarkRecordToolCommand is what the PostToolUse hook adds per Bash or
// MCP call (the append and its fsync, the state read through the signed
// cache); BenchmarkHookHeartbeatBeside is the hook's heartbeat in the same
// vault, for scale.
func BenchmarkRecordToolCommand(b *testing.B) {
	s := testService(b, nil)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "bench"}); err != nil {
		b.Fatal(err)
	}
	call := ToolCall{Tool: "Bash", Input: json.RawMessage(`{"command":"go test ./...","description":"Run the tests"}`)}
	if _, _, err := s.RecordToolCommand("demo", call); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := s.RecordToolCommand("demo", call); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHookHeartbeatBeside(b *testing.B) {
	s := testService(b, nil)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "bench"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.HookHeartbeat("demo"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordAndCommitCommand is the hook's path when the log is due
// for a commit (its first entry, then every HistoryCommitEvery): the append
// and the agent's commit of the log.
func BenchmarkRecordAndCommitCommand(b *testing.B) {
	s := testService(b, nil)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "bench"}); err != nil {
		b.Fatal(err)
	}
	call := ToolCall{Tool: "Bash", Input: json.RawMessage(`{"command":"go test ./..."}`)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		log, _, err := s.RecordToolCommand("demo", call)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.CommitCommandLogs("demo", log); err != nil {
			b.Fatal(err)
		}
	}
}
