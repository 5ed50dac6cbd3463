package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The targets of the MCP tool calls through a running server: the
// round trip of get_task_graph over 1,000 tasks, p50, in milliseconds; and
// the warm-up calls made on each tool before its timed rounds.
const (
	targetMCPGraphMs = 10
	mcpWarmUp        = 5
)

// mcpCallFigures starts `sessionvault mcp --toolsets tasks` (-bin) as its own
// process on the vault taskGraphFigure made in work, connects a real MCP
// client to it over stdio (the go-sdk's CommandTransport: newline-delimited
// JSON-RPC on the server's stdin and stdout, as an agent's client talks to
// it), starts a session through session_start, and times the round trip of
// each tool call, from the client's request to its decoded result:
// session_update and get_task_graph (the whole graph) one after the other,
// o.rounds rounds after mcpWarmUp calls of each. It then times the server's
// share of get_task_graph (rawGraphTimes). It prints the p50 and p90 of
// each, with the target, and records them as mcp/session-update/,
// mcp/task-graph/ and mcp/task-graph-raw/ p50 and p90 (ms). A tool error,
// or a graph without o.graphTasks tasks, is an error naming the tool; the
// server's stderr is in it.
func mcpCallFigures(o options, work string, figs *figures) error {
	dir := taskVaultDir(work)
	var stderr strings.Builder
	cmd := exec.Command(o.bin, "--vault", dir, "--project", benchProject, "mcp", "--toolsets", "tasks")
	cmd.Dir = dir
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "svbench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("starting %s mcp: %w: %s", o.bin, err, stderr.String())
	}
	defer func() { _ = cs.Close() }() // (on an early return; closed and checked below)
	call := func(tool string, args map[string]any) (*mcp.CallToolResult, time.Duration, error) {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		d := time.Since(t0)
		if err != nil {
			return nil, d, fmt.Errorf("mcp %s: %w: %s", tool, err, stderr.String())
		}
		if res.IsError {
			return nil, d, fmt.Errorf("mcp %s: tool error: %s", tool, resultText(res))
		}
		return res, d, nil
	}
	if _, _, err := call("session_start", map[string]any{"objective": "benchmark", "branch": "bench", "commit": "0"}); err != nil {
		return err
	}
	graph := func() (time.Duration, error) {
		res, d, err := call("get_task_graph", map[string]any{})
		if err != nil {
			return d, err
		}
		if n := graphTotal(res); n != o.graphTasks {
			return d, fmt.Errorf("mcp get_task_graph: the graph has %d tasks, want %d", n, o.graphTasks)
		}
		return d, nil
	}
	update := func(i int) (time.Duration, error) {
		_, d, err := call("session_update", map[string]any{"message": "step " + strconv.Itoa(i)})
		return d, err
	}
	for i := 0; i < mcpWarmUp; i++ {
		if _, err := update(-1 - i); err != nil {
			return err
		}
		if _, err := graph(); err != nil {
			return err
		}
	}
	var updates, graphs []time.Duration
	for r := 0; r < o.rounds; r++ {
		du, err := update(r)
		if err != nil {
			return err
		}
		dg, err := graph()
		if err != nil {
			return err
		}
		updates, graphs = append(updates, du), append(graphs, dg)
	}
	if err := cs.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("closing the MCP session: %w: %s", err, stderr.String())
	}
	raw, err := rawGraphTimes(o, dir)
	if err != nil {
		return err
	}
	fmt.Printf("\nMCP tool calls through a running `sessionvault mcp` (stdio, %s tasks, %d rounds after %d warm-up calls), round trip:\n",
		thousands(o.graphTasks), o.rounds, mcpWarmUp)
	for _, row := range []struct {
		tool, key string
		times     []time.Duration
		target    int // p50 target in ms, 0: none
	}{{"session_update", "session-update", updates, 0}, {"get_task_graph", "task-graph", graphs, targetMCPGraphMs}} {
		p50, p90 := pct(row.times, 50), pct(row.times, 90)
		line := fmt.Sprintf("  %-16s p50 %7.2f ms   p90 %7.2f ms", row.tool, msOf(p50), msOf(p90))
		if row.target > 0 {
			line += fmt.Sprintf("   (target p50 <= %d ms)", row.target)
			if msOf(p50) > float64(row.target) {
				line += " *"
			}
		}
		fmt.Println(line)
		figs.dur("mcp/"+row.key+"/p50", p50)
		figs.dur("mcp/"+row.key+"/p90", p90)
	}
	p50, p90 := pct(raw, 50), pct(raw, 90)
	fmt.Printf("  %-16s p50 %7.2f ms   p90 %7.2f ms   the server's share: raw JSON-RPC, the response read but not decoded\n", "get_task_graph", msOf(p50), msOf(p90))
	figs.dur("mcp/task-graph-raw/p50", p50)
	figs.dur("mcp/task-graph-raw/p90", p90)
	return nil
}

// rawGraphTimes starts `sessionvault mcp` on the vault dir again and times
// get_task_graph (the whole graph) as raw JSON-RPC over its stdio, o.rounds
// times after mcpWarmUp calls: from writing the request line to reading the
// response line, which is checked to hold the summary of o.graphTasks tasks
// but not decoded. That is the server's share of a round trip (and the
// pipe's); the rest of the client's is its decoding of the result.
func rawGraphTimes(o options, dir string) ([]time.Duration, error) {
	var stderr strings.Builder
	cmd := exec.Command(o.bin, "--vault", dir, "--project", benchProject, "mcp", "--toolsets", "tasks")
	cmd.Dir = dir
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("raw mcp: %w", err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("raw mcp: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("raw mcp: starting %s: %w", o.bin, err)
	}
	defer func() {
		_ = in.Close()
		_ = cmd.Wait() // (it exits at the end of its input)
	}()
	out := bufio.NewReaderSize(outPipe, 1<<20)
	exchange := func(request string) ([]byte, time.Duration, error) {
		t0 := time.Now()
		if _, err := io.WriteString(in, request+"\n"); err != nil {
			return nil, 0, fmt.Errorf("raw mcp: writing: %w: %s", err, stderr.String())
		}
		line, err := out.ReadBytes('\n')
		if err != nil {
			return nil, 0, fmt.Errorf("raw mcp: reading: %w: %s", err, stderr.String())
		}
		return line, time.Since(t0), nil
	}
	if _, _, err := exchange(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"svbench","version":"1"}}}`); err != nil {
		return nil, err
	}
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		return nil, fmt.Errorf("raw mcp: writing: %w", err)
	}
	want := []byte(`"total_tasks":` + strconv.Itoa(o.graphTasks))
	var times []time.Duration
	for i := 1; i <= mcpWarmUp+o.rounds; i++ {
		line, d, err := exchange(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"get_task_graph","arguments":{}}}`)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(line, want) {
			return nil, fmt.Errorf("raw mcp: get_task_graph answered without %s: %.300s", want, line)
		}
		if i > mcpWarmUp {
			times = append(times, d)
		}
	}
	return times, nil
}

// resultText returns the text content of a tool result.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// graphTotal returns summary.total_tasks of a get_task_graph result's
// structured content, -1 when it has none.
func graphTotal(res *mcp.CallToolResult) int {
	m, _ := res.StructuredContent.(map[string]any)
	sum, _ := m["summary"].(map[string]any)
	n, ok := sum["total_tasks"].(float64)
	if !ok {
		return -1
	}
	return int(n)
}
