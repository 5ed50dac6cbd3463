package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// hookEnv is where the PreToolUse hook is timed: a vault whose session has
// many updates and a complete start protocol (accepted, evidence recorded),
// and the code repository the agent works in.
type hookEnv struct {
	vault, code string
	updates     int
}

// setupHookVault creates, in work, a vault of project "demo" whose session
// has updates updates, and a code repository beside it.
func setupHookVault(bin, work string, updates int) (hookEnv, error) {
	h := hookEnv{vault: filepath.Join(work, "hookvault"), code: filepath.Join(work, "code"), updates: updates}
	fmt.Fprintf(os.Stderr, "preparing the hook's session of %d updates ...\n", updates)
	for _, st := range [][]string{
		{"git", "init", "-q", "-b", "feat/bench", h.code},
		{"git", "-C", h.code, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "--allow-empty", "-m", "start"},
		{bin, "init", h.vault, "--project", "demo"},
		{bin, "--vault", h.vault, "start", "--objective", "hook benchmark"},
		{bin, "--vault", h.vault, "update", "first"},
	} {
		if err := sh(work, st[0], st[1:]...); err != nil {
			return h, fmt.Errorf("preparing the hook's vault: %w", err)
		}
	}
	if err := bulkSession(bin, h.vault, "demo", h.code, updates); err != nil {
		return h, err
	}
	for _, st := range [][]string{
		{"--vault", h.vault, "evidence", "record", "c-1", "--file", "session-current-state.md"},
		{"--vault", h.vault, "evidence", "record", "c-2"},
		{"--vault", h.vault, "evidence", "record", "c-3", "--run"},
	} {
		if err := sh(h.code, bin, st...); err != nil {
			return h, fmt.Errorf("preparing the hook's vault: %w", err)
		}
	}
	return h, nil
}

// call runs one PreToolUse decision for tool (on file x.go of the code
// repository) with hookBin, process start to exit; a denial is an error.
func (h hookEnv) call(hookBin, tool string) error {
	in, err := h.input(tool)
	if err != nil {
		return err
	}
	if err := runProc(h.code, in, hookBin, "--vault", h.vault, "pre-tool-use"); err != nil {
		return fmt.Errorf("PreToolUse %s was not allowed: %w", tool, err)
	}
	return nil
}

// input is the PreToolUse hook input of a call of tool on file x.go of the
// code repository.
func (h hookEnv) input(tool string) (string, error) {
	in, err := json.Marshal(map[string]any{
		"session_id": "b", "cwd": h.code, "hook_event_name": "PreToolUse", "tool_name": tool,
		"tool_input": map[string]string{"file_path": filepath.Join(h.code, "x.go")},
	})
	if err != nil {
		return "", fmt.Errorf("encoding the hook input: %w", err)
	}
	return string(in), nil
}

// post runs one PostToolUse of a call of tool with hookBin, process start
// to exit: a Read of x.go of the code repository (it records the heartbeat
// and the tool history), or a Bash call `go test ./...` of round i (the
// command history records it too); a warning or failure is an error.
func (h hookEnv) post(hookBin, tool string, i int) error {
	fields := map[string]any{
		"session_id": "b", "cwd": h.code, "hook_event_name": "PostToolUse", "tool_name": tool,
		"tool_input":    map[string]string{"file_path": filepath.Join(h.code, "x.go")},
		"tool_response": map[string]any{"type": "text", "file": map[string]any{"filePath": filepath.Join(h.code, "x.go"), "content": "package x\n"}},
		"tool_use_id":   fmt.Sprintf("toolu_bench%d", i+1),
	}
	if tool == "Bash" {
		fields["tool_input"] = map[string]string{"command": "go test ./...", "description": "Run the tests"}
		fields["tool_response"] = map[string]any{"stdout": "ok  \texample.com/x\t0.01s\n", "stderr": "", "interrupted": false}
	}
	in, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("encoding the hook input: %w", err)
	}
	if err := runProc(h.code, string(in), hookBin, "--vault", h.vault, "post-tool-use"); err != nil {
		return fmt.Errorf("PostToolUse %s: %w", tool, err)
	}
	return nil
}

// bulkSession grows the active session of project in vaultDir, whose only
// update is "first", to n updates: it inserts updates 2..n as lines of the
// session note (as a hand edit would) and accepts the edit with `sessionvault
// accept`, run in cwd.
func bulkSession(bin, vaultDir, project, cwd string, n int) error {
	if n <= 1 {
		return nil
	}
	note := filepath.Join(vaultDir, project, "session-current-state.md")
	data, err := os.ReadFile(note)
	if err != nil {
		return fmt.Errorf("reading the session note: %w", err)
	}
	grown, err := insertBulkUpdates(data, n)
	if err != nil {
		return fmt.Errorf("%s: %w", note, err)
	}
	if err := os.WriteFile(note, grown, 0o644); err != nil {
		return fmt.Errorf("writing the bulk updates: %w", err)
	}
	if err := sh(cwd, bin, "--vault", vaultDir, "--project", project, "accept"); err != nil {
		return fmt.Errorf("accepting the bulk updates: %w", err)
	}
	return nil
}

// insertBulkUpdates returns note with the lines of updates 2..n inserted
// after the line of update 1, whose message is "first".
func insertBulkUpdates(note []byte, n int) ([]byte, error) {
	first := []byte("· note · first ^u-1\n")
	i := bytes.Index(note, first)
	if i < 0 {
		return nil, fmt.Errorf("no line of the first update (%q)", first)
	}
	i += len(first)
	var b bytes.Buffer
	b.Write(note[:i])
	for k := 2; k <= n; k++ {
		fmt.Fprintf(&b, "- 2026-11-22T10:00:00Z · note · bulk update number %d with a few more words ^u-%d\n", k, k)
	}
	b.Write(note[i:])
	return b.Bytes(), nil
}
