package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// agentCall is the script command `agent EVENT` (SessionStart, Stop) or
// `agent TOOL JSON-INPUT` (Bash, Read, Edit, Write): it plays Claude Code in
// the script's folder. It runs the hook commands of .claude/settings.json
// there — as `hooks install` wrote them, through sh, with the hook input on
// stdin — and, for a tool, PreToolUse first (a deny stops the call), the
// tool itself (a Bash command runs in sh; Read, Edit and Write act on the
// file), then PostToolUse. It prints the tool's output and the hooks'
// answers on stdout; a deny (or a Stop block) on stderr. `! agent` expects a
// deny or a block.
func agentCall(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: agent SessionStart|Stop | agent TOOL JSON-INPUT")
	}
	a := &scriptAgent{ts: ts, dir: ts.MkAbs(".")}
	denied := false
	switch args[0] {
	case "SessionStart":
		a.hooks("SessionStart", "", map[string]any{"source": "startup", "model": "claude-opus-4-1"})
	case "Stop":
		out := a.hooks("Stop", "", map[string]any{"stop_hook_active": false})
		if strings.Contains(out, `"decision":"block"`) {
			fmt.Fprintln(ts.Stderr(), "blocked:", out)
			denied = true
		}
	default:
		if len(args) != 2 {
			ts.Fatalf("agent %s: give the tool's input as JSON", args[0])
		}
		var input map[string]any
		if err := json.Unmarshal([]byte(args[1]), &input); err != nil {
			ts.Fatalf("agent %s: the input is not a JSON object: %v", args[0], err)
		}
		fields := map[string]any{"tool_name": args[0], "tool_input": input, "tool_use_id": fmt.Sprintf("toolu_%d", a.next())}
		if code, _, stderr := a.run("PreToolUse", args[0], fields); code == 2 {
			fmt.Fprintln(ts.Stderr(), "denied:", stderr)
			denied = true
			break
		}
		fields["tool_response"] = a.tool(args[0], input)
		a.hooks("PostToolUse", args[0], fields)
	}
	if denied != neg {
		if neg {
			ts.Fatalf("agent %s: not denied", args[0])
		}
		ts.Fatalf("agent %s: denied", args[0])
	}
}

// scriptAgent is one `agent` call.
type scriptAgent struct {
	ts  *testscript.TestScript
	dir string
}

func (a *scriptAgent) next() int {
	n := 0
	if b, err := os.ReadFile(filepath.Join(a.dir, ".agent-calls")); err == nil {
		fmt.Sscan(string(b), &n)
	}
	n++
	_ = os.WriteFile(filepath.Join(a.dir, ".agent-calls"), []byte(fmt.Sprint(n)), 0o644)
	return n
}

// env is the environment the hooks and tools run with: the script's.
func (a *scriptAgent) env() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
		"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "SESSIONVAULT_VAULT", "SESSIONVAULT_NOW", "GOCOVERDIR"} {
		if v := a.ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// hooks runs the hooks of event and returns what they printed on stdout.
func (a *scriptAgent) hooks(event, tool string, fields map[string]any) string {
	_, out, _ := a.run(event, tool, fields)
	return out
}

// run runs every hook command settings.json has for event (and tool, by
// its matcher) with the hook input on stdin; it returns the last exit code
// that is not 0 and the hooks' output.
func (a *scriptAgent) run(event, tool string, fields map[string]any) (code int, stdout, stderr string) {
	data, err := os.ReadFile(filepath.Join(a.dir, ".claude", "settings.json"))
	a.ts.Check(err)
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	a.ts.Check(json.Unmarshal(data, &settings))
	in := map[string]any{"session_id": "agent-script", "transcript_path": filepath.Join(a.dir, ".claude", "t.jsonl"),
		"cwd": a.dir, "hook_event_name": event, "permission_mode": "default"}
	for k, v := range fields {
		in[k] = v
	}
	input, err := json.Marshal(in)
	a.ts.Check(err)
	var outs, errs strings.Builder
	for _, group := range settings.Hooks[event] {
		if group.Matcher != "" && tool != "" && !regexp.MustCompile("^(?:"+group.Matcher+")$").MatchString(tool) {
			continue
		}
		for _, h := range group.Hooks {
			cmd := exec.Command("sh", "-c", h.Command)
			cmd.Dir, cmd.Env = a.dir, a.env()
			cmd.Stdin = strings.NewReader(string(input))
			var o, e strings.Builder
			cmd.Stdout, cmd.Stderr = &o, &e
			err := cmd.Run()
			if x, ok := err.(*exec.ExitError); ok {
				code = x.ExitCode()
			} else if err != nil {
				a.ts.Fatalf("hook %s: %v", event, err)
			}
			outs.WriteString(o.String())
			errs.WriteString(e.String())
		}
	}
	fmt.Fprint(a.ts.Stdout(), outs.String())
	return code, outs.String(), errs.String()
}

// tool carries out a tool call the hooks let through and returns its
// tool_response.
func (a *scriptAgent) tool(name string, input map[string]any) map[string]any {
	str := func(k string) string { s, _ := input[k].(string); return s }
	path := str("file_path")
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(a.dir, path)
	}
	switch name {
	case "Bash":
		cmd := exec.Command("sh", "-c", str("command"))
		cmd.Dir, cmd.Env = a.dir, a.env()
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		fmt.Fprint(a.ts.Stdout(), o.String())
		fmt.Fprint(a.ts.Stdout(), e.String())
		if err != nil {
			a.ts.Fatalf("Bash %s: %v\n%s%s", str("command"), err, o.String(), e.String())
		}
		return map[string]any{"stdout": o.String(), "stderr": e.String(), "interrupted": false, "isImage": false}
	case "Read":
		data, err := os.ReadFile(path)
		a.ts.Check(err)
		return map[string]any{"type": "text", "file": map[string]any{"filePath": path, "content": string(data)}}
	case "Edit":
		data, err := os.ReadFile(path)
		a.ts.Check(err)
		if !strings.Contains(string(data), str("old_string")) {
			a.ts.Fatalf("Edit %s: %q is not in the file", path, str("old_string"))
		}
		a.ts.Check(os.WriteFile(path, []byte(strings.Replace(string(data), str("old_string"), str("new_string"), 1)), 0o644))
		return map[string]any{"filePath": path, "oldString": str("old_string"), "newString": str("new_string")}
	case "Write":
		a.ts.Check(os.WriteFile(path, []byte(str("content")), 0o644))
		return map[string]any{"type": "create", "filePath": path}
	}
	a.ts.Fatalf("agent: no tool %s here (Bash, Read, Edit, Write)", name)
	return nil
}
