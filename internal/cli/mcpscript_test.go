package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

// scriptCmds are the testscript commands the CLI scripts add to the
// standard ones.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){"mcp": mcpCall, "agent": agentCall}
}

// mcpCall is the script command `mcp [--toolsets NAMES] TOOL
// [JSON-ARGUMENTS]`: it starts `sessionvault mcp [--toolsets NAMES]` as a
// process in the script's folder and environment, calls TOOL through a real
// MCP client (the SDK's CommandTransport over stdio) and prints the tool's
// structured result as JSON on stdout, or a tool error's text (or the
// client's error, e.g. for a tool the server does not serve) on stderr.
// `! mcp` expects a tool error or a client error.
func mcpCall(ts *testscript.TestScript, neg bool, args []string) {
	serve := []string{"mcp"}
	if len(args) > 1 && args[0] == "--toolsets" {
		serve, args = append(serve, args[:2]...), args[2:]
	}
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: mcp [--toolsets NAMES] TOOL [JSON-ARGUMENTS]")
	}
	in := map[string]any{}
	if len(args) == 2 {
		if err := json.Unmarshal([]byte(args[1]), &in); err != nil {
			ts.Fatalf("mcp %s: the arguments are not a JSON object: %v", args[0], err)
		}
	}
	bin := ""
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, "sessionvault"); dir != "" && executable(p) {
			bin = p
			break
		}
	}
	if bin == "" {
		ts.Fatalf("mcp: no sessionvault on the script's PATH")
	}
	cmd := exec.Command(bin, serve...)
	cmd.Dir = ts.MkAbs(".")
	for _, k := range []string{"PATH", "HOME", "SESSIONVAULT_VAULT", "SESSIONVAULT_NOW", "SESSIONVAULT_PROJECT", "GIT_CONFIG_NOSYSTEM",
		"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		if v := ts.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "testscript", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		ts.Fatalf("mcp: connecting to sessionvault mcp: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: args[0], Arguments: in})
	if err != nil {
		ts.Logf("client error: %v", err)
		_, _ = ts.Stderr().Write([]byte(err.Error() + "\n"))
		if !neg {
			ts.Fatalf("mcp %s: %v", args[0], err)
		}
		return
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text = append(text, t.Text)
			}
		}
		ts.Logf("tool error: %s", strings.Join(text, "\n"))
		_, _ = ts.Stderr().Write([]byte(strings.Join(text, "\n") + "\n"))
		if !neg {
			ts.Fatalf("mcp %s: tool error", args[0])
		}
		return
	}
	if neg {
		ts.Fatalf("mcp %s: no tool error", args[0])
	}
	out, err := json.MarshalIndent(res.StructuredContent, "", "  ")
	if err != nil {
		ts.Fatalf("mcp %s: %v", args[0], err)
	}
	_, _ = ts.Stdout().Write(append(out, '\n'))
}

// executable reports whether path is a file someone may run.
func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
