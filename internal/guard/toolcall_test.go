package guard

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/integrity"
)

// toolCallVault is a vault folder with the project's decisions note, and
// the watch list of its calls.
func toolCallVault(t *testing.T) (root, note string, watch []string) {
	t.Helper()
	root = t.TempDir()
	note = filepath.Join(root, "demo", "session-decisions.md")
	if err := os.MkdirAll(filepath.Dir(note), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(note, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, note, []string{"demo/session-decisions.md"}
}

// Two writing calls running at once (an agent's sub-agents) each have their
// own record: the one that ends first, having changed nothing, clears its
// own, and the other's PostToolUse still sees the note it changed (with one
// slot per project, the first cleared the second's record, and the
// second's edit went uncommitted as the agent's).
func TestParallelToolCallsKeepTheirOwnRecords(t *testing.T) {
	root, note, watch := toolCallVault(t)
	if err := NoteToolCall(root, "demo", "Bash", "toolu_A", watch); err != nil {
		t.Fatal(err)
	}
	if err := NoteToolCall(root, "demo", "Bash", "toolu_B", watch); err != nil {
		t.Fatal(err)
	}
	if SettleToolCall(root, "demo", "Bash", "toolu_B") {
		t.Fatal("call B changed nothing: reported changed")
	}
	if _, err := os.Stat(integrity.Path(root, integrity.ToolCallsDir+"/toolu_B")); !os.IsNotExist(err) {
		t.Errorf("call B's record kept: %v", err)
	}
	if err := os.WriteFile(note, []byte("a\nb\n"), 0o644); err != nil { // call A's edit
		t.Fatal(err)
	}
	if !SettleToolCall(root, "demo", "Bash", "toolu_A") {
		t.Fatal("call A changed the note: not seen")
	}
	changed, err := TakeToolCall(root, "demo", "Bash", "toolu_A")
	if err != nil || !slices.Equal(changed, watch) {
		t.Fatalf("TakeToolCall = %v, %v; want %v", changed, err, watch)
	}
	if changed, _ := TakeToolCall(root, "demo", "Bash", "toolu_A"); changed != nil {
		t.Errorf("taken twice: %v", changed)
	}
	if ents, _ := os.ReadDir(integrity.Path(root, integrity.ToolCallsDir)); len(ents) != 0 {
		t.Errorf("records left: %v", ents)
	}
}

// A PostToolUse whose call has no record of its own takes the project's
// slot, where a PreToolUse without a tool_use_id (or an older binary's)
// noted it; an id that is not a plain name uses the slot too.
func TestToolCallWithoutItsOwnRecordTakesTheSlot(t *testing.T) {
	root, note, watch := toolCallVault(t)
	if err := NoteToolCall(root, "demo", "Bash", "", watch); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(note, []byte("a\nc\n"), 0o644)
	if changed, err := TakeToolCall(root, "demo", "Bash", "toolu_C"); err != nil || !slices.Equal(changed, watch) {
		t.Fatalf("TakeToolCall = %v, %v; want %v", changed, err, watch)
	}
	if data, _ := os.ReadFile(integrity.Path(root, integrity.ToolCallFile("demo"))); len(data) != 0 {
		t.Errorf("the slot kept %q", data)
	}
	if err := NoteToolCall(root, "demo", "Bash", "../x", watch); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(integrity.Path(root, integrity.ToolCallFile("demo"))); len(data) == 0 {
		t.Error("a call whose id is not a plain name was not noted in the slot")
	}
}

// Records of calls whose PostToolUse never ran are removed once old.
func TestPruneToolCalls(t *testing.T) {
	root, _, watch := toolCallVault(t)
	NoteToolCall(root, "demo", "Bash", "toolu_old", watch)
	NoteToolCall(root, "demo", "Bash", "toolu_new", watch)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(integrity.Path(root, integrity.ToolCallsDir+"/toolu_old"), old, old)
	PruneToolCalls(root, time.Hour)
	ents, _ := os.ReadDir(integrity.Path(root, integrity.ToolCallsDir))
	if len(ents) != 1 || ents[0].Name() != "toolu_new" {
		t.Errorf("left %v, want toolu_new", ents)
	}
}

// A call's own record cut short (a kill or a power cut while PreToolUse
// wrote it: no end line, or nothing at all) vouches for nothing: its
// PostToolUse reports no change, even when the note did change (a person's
// edit, committed later as theirs), clears the record, and does not take
// the project's slot instead.
func TestToolCallRecordCutShort(t *testing.T) {
	root, note, watch := toolCallVault(t)
	if err := NoteToolCall(root, "demo", "Bash", "", watch); err != nil { // a stale slot record
		t.Fatal(err)
	}
	if err := NoteToolCall(root, "demo", "Bash", "toolu_K", watch); err != nil {
		t.Fatal(err)
	}
	own := integrity.Path(root, integrity.ToolCallsDir+"/toolu_K")
	data, _ := os.ReadFile(own)
	if len(data) < 10 || string(data[len(data)-5:]) != "\nend\n" {
		t.Fatalf("record %q; want it to end with its end line", data)
	}
	os.WriteFile(note, []byte("a\nthe person's line\n"), 0o644)
	for _, cut := range [][]byte{data[:len(data)-6], nil} {
		if err := os.WriteFile(own, cut, 0o644); err != nil {
			t.Fatal(err)
		}
		if SettleToolCall(root, "demo", "Bash", "toolu_K") {
			t.Errorf("record %q: reported changed", cut)
		}
		if _, err := os.Stat(own); !os.IsNotExist(err) {
			t.Errorf("record %q: not cleared (%v)", cut, err)
		}
		if slot, _ := os.ReadFile(integrity.Path(root, integrity.ToolCallFile("demo"))); len(slot) == 0 {
			t.Errorf("record %q: the project's slot was taken instead", cut)
		}
	}
	if err := os.WriteFile(own, data[:len(data)-6], 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := TakeToolCall(root, "demo", "Bash", "toolu_K"); err != nil || changed != nil {
		t.Errorf("TakeToolCall of a record cut short = %v, %v; want nothing", changed, err)
	}
}
