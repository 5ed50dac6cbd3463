package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
	"github.com/sessionvault/sessionvault/integrations/mcpserver"
	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/policy"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/session"
)

// mcpOptions wires the MCP server of svc's project, serving toolsets besides
// the session toolset: the resume prompt and the tool decisions are the
// Claude Code integration's, so that a tool call and a hook see the same.
func mcpOptions(svc *session.Service, project, version string, toolsets []string) mcpserver.Options {
	h := claudecode.Handler{Open: func() (*session.Service, error) { return svc, nil }, Project: project, Policy: policyFrom(svc.V),
		PolicyConfig: policy.Config{UnknownMCP: svc.V.Config.UnknownMCPTools}}
	return mcpserver.Options{
		Project: project,
		Version: version,
		ResumePrompt: func(st session.State, proto *protocol.Protocol, limit int) string {
			return claudecode.ResumePrompt(svc, st, proto, "", "", limit)
		},
		Decide:   func(tool string, input json.RawMessage) (bool, string) { return h.Decide(tool, input, "") },
		Toolsets: toolsets,
	}
}

// toolsetsFlag checks the --toolsets value of c: the toolsets it names, or
// a usage error naming the known ones.
func toolsetsFlag(c *cobra.Command, value string) ([]string, error) {
	names, err := mcpserver.CheckToolsets(mcpserver.SplitToolsets(value))
	if err != nil {
		e := &errs.Error{Code: errs.InvalidCommand, Message: fmt.Sprintf("--toolsets: %v (see `%s --help`)", err, c.CommandPath()), Err: err}
		return nil, e.With("flag", "--toolsets")
	}
	return names, nil
}

// configToolsets are the toolsets of the vault's mcp.toolsets setting,
// which `sessionvault mcp` serves without --toolsets; an unknown name is a
// configuration error naming the key.
func configToolsets(cfg config.Config) ([]string, error) {
	names, err := mcpserver.CheckToolsets(cfg.MCP.Toolsets)
	if err != nil {
		return nil, errs.Wrap(errs.ConfigInvalid, err, config.File+": mcp.toolsets").With("key", "mcp.toolsets")
	}
	return names, nil
}

// mcpLong is `sessionvault mcp --help`'s text: the toolsets and their tools
// as the server lists them, and the resources.
func mcpLong() string {
	var b strings.Builder
	b.WriteString(`Serves the Model Context Protocol over stdio (newline-delimited JSON-RPC on
stdin/stdout; logs go to stderr only). Each tool runs the same code as its CLI
verb: same validation, same notes, one commit per change.

Every tool served costs an agent tokens before its first message, so the tools
come in toolsets: the session toolset is always served, and --toolsets (or
mcp.toolsets in ` + config.File + `) switches others on; all switches on
every one.

Toolsets:
`)
	for _, ts := range mcpserver.Toolsets() {
		name := ts.Name
		if ts.Default {
			name += " (default)"
		}
		fmt.Fprintf(&b, "\n  %s: %s\n", name, ts.About)
		b.WriteString(wrapWords(ts.Tools, "    ", 80))
	}
	b.WriteString("\nResources, whatever the toolsets:\n")
	b.WriteString(wrapWords(mcpserver.ResourceURIs(), "  ", 80))
	return strings.TrimSuffix(b.String(), "\n")
}

// wrapWords joins words with ", " in lines of at most width bytes, each
// starting with indent.
func wrapWords(words []string, indent string, width int) string {
	var b strings.Builder
	line := indent
	for i, w := range words {
		if i < len(words)-1 {
			w += ","
		}
		if line != indent && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += w
	}
	return b.String() + line + "\n"
}

func (a *app) mcpCommand() *cobra.Command {
	var toolsets string
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Run the MCP server over stdio (the session operations as tools)",
		Long:  mcpLong(),
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			var sets []string
			flag := c.Flags().Changed("toolsets")
			if flag {
				var err error
				if sets, err = toolsetsFlag(c, toolsets); err != nil {
					return err
				}
			}
			svc, err := a.service()
			if err != nil {
				return err
			}
			if !flag {
				if sets, err = configToolsets(svc.V.Config); err != nil {
					return err
				}
			}
			srv, err := mcpserver.New(svc, mcpOptions(svc, a.project, versionString(), sets))
			if err != nil {
				return errs.Wrap(errs.InternalError, err, "starting the MCP server")
			}
			if err := srv.Run(c.Context(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, os.ErrClosed) {
				fmt.Fprintln(a.stderr, "sessionvault mcp:", err)
			}
			return nil
		},
	}
	c.Flags().StringVar(&toolsets, "toolsets", "", "serve these toolsets besides the session toolset: a comma-separated list of `NAMES` (tasks, features, workflow, admin, or all); default: the vault's mcp.toolsets")
	var dir, installSets string
	var print bool
	install := &cobra.Command{
		Use:   "install [--project-dir DIR] [--toolsets NAMES] [--print]",
		Short: "Write (or print) the .mcp.json entry for Claude Code, keeping other servers",
		Long: `Adds the sessionvault server to DIR/.mcp.json (other servers are kept) and
links DIR to this vault on this machine, as hooks install does. The entry runs
sessionvault from PATH and names no path of this machine, so .mcp.json can be
committed; on another machine, run this (or hooks install) once there.
--toolsets writes ` + "`sessionvault mcp --toolsets NAMES`" + ` into the entry; without it,
an entry's toolsets are kept (see ` + "`sessionvault mcp --help`" + `).`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			var sets []string
			if c.Flags().Changed("toolsets") {
				var err error
				if sets, err = toolsetsFlag(c, installSets); err != nil {
					return err
				}
			}
			v, err := a.openVault()
			if err != nil {
				return err
			}
			// No path of this machine (teams commit .mcp.json): sessionvault
			// from PATH, the vault through this machine's link for DIR.
			entry := mcpEntry(sets)
			if print {
				b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"sessionvault": entry}}, "", "  ")
				fmt.Fprintln(a.stdout, string(b))
				return nil
			}
			links, _, err := config.SaveRepoLink(dir, config.RepoLink{Vault: v.Root, Project: a.project})
			if err != nil {
				return errs.Wrap(errs.ConfigInvalid, err, "linking the repository to the vault")
			}
			path := filepath.Join(dir, ".mcp.json")
			cfg := map[string]any{}
			old, err := os.ReadFile(path)
			if err == nil && len(bytes.TrimSpace(old)) > 0 {
				if err := json.Unmarshal(old, &cfg); err != nil {
					return errs.New(errs.ConfigInvalid, "%s is not valid JSON (%v); nothing was changed", path, err)
				}
			}
			servers, _ := cfg["mcpServers"].(map[string]any)
			if servers == nil {
				servers = map[string]any{}
			}
			if !c.Flags().Changed("toolsets") {
				entry = mcpEntry(entryToolsets(servers["sessionvault"]))
			}
			servers["sessionvault"] = entry
			cfg["mcpServers"] = servers
			out, _ := json.MarshalIndent(cfg, "", "  ")
			out = append(out, '\n')
			if bytes.Equal(out, old) {
				return a.emit(map[string]any{"path": path, "changed": false, "links": links}, path+": sessionvault already configured, nothing changed")
			}
			if err := os.WriteFile(path, out, 0o644); err != nil {
				return err
			}
			return a.emit(map[string]any{"path": path, "changed": true, "links": links}, path+": sessionvault MCP server added (it finds the vault "+v.Root+" through "+links+")")
		},
	}
	install.Flags().StringVar(&dir, "project-dir", ".", "the Claude Code project folder")
	install.Flags().BoolVar(&print, "print", false, "print the entry instead of writing .mcp.json")
	install.Flags().StringVar(&installSets, "toolsets", "", "the entry serves these toolsets besides the session toolset: a comma-separated list of `NAMES` (tasks, features, workflow, admin, or all)")
	c.AddCommand(install)
	return c
}

// mcpEntry is the .mcp.json entry that runs `sessionvault mcp`, with
// --toolsets when toolsets names any.
func mcpEntry(toolsets []string) map[string]any {
	args := []any{"mcp"}
	if len(toolsets) > 0 {
		args = append(args, "--toolsets", strings.Join(toolsets, ","))
	}
	return map[string]any{"type": "stdio", "command": "sessionvault", "args": args}
}

// entryToolsets are the toolsets an existing .mcp.json entry of sessionvault
// serves (its --toolsets value), nil for none or an entry of another shape.
func entryToolsets(entry any) []string {
	e, _ := entry.(map[string]any)
	args, _ := e["args"].([]any)
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--toolsets" {
			value, _ := args[i+1].(string)
			if names, err := mcpserver.CheckToolsets(mcpserver.SplitToolsets(value)); err == nil {
				return names
			}
		}
	}
	return nil
}
