package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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

// mcpOptions wires the MCP server of svc's project: the resume prompt and
// the tool decisions are the Claude Code integration's, so that a tool call
// and a hook see the same.
func mcpOptions(svc *session.Service, project, version string) mcpserver.Options {
	h := claudecode.Handler{Open: func() (*session.Service, error) { return svc, nil }, Project: project, Policy: policyFrom(svc.V),
		PolicyConfig: policy.Config{UnknownMCP: svc.V.Config.UnknownMCPTools}}
	return mcpserver.Options{
		Project: project,
		Version: version,
		ResumePrompt: func(st session.State, proto *protocol.Protocol, limit int) string {
			return claudecode.ResumePrompt(svc, st, proto, "", "", limit)
		},
		Decide: func(tool string, input json.RawMessage) (bool, string) { return h.Decide(tool, input, "") },
	}
}

func (a *app) mcpCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Run the MCP server over stdio (every session operation as a tool)",
		Long: `Serves the Model Context Protocol over stdio (newline-delimited JSON-RPC on
stdin/stdout; logs go to stderr only). Tools: session_start, session_update,
record_decision, record_blocker, resolve_blocker, session_end, session_status,
heartbeat, check_recovery, get_unified_context, validate_gate, advance_phase,
record_evidence, get_blocked_reason, set_mode. Resources: session://state,
session://checklist, session://history, session://violations. Each tool runs
the same code as its CLI verb: same validation, same notes, one commit per change.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			srv := mcpserver.New(svc, mcpOptions(svc, a.project, versionString()))
			if err := srv.Run(c.Context(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, os.ErrClosed) {
				fmt.Fprintln(a.stderr, "sessionvault mcp:", err)
			}
			return nil
		},
	}
	var dir string
	var print bool
	install := &cobra.Command{
		Use:   "install [--project-dir DIR] [--print]",
		Short: "Write (or print) the .mcp.json entry for Claude Code, keeping other servers",
		Long: `Adds the sessionvault server to DIR/.mcp.json (other servers are kept) and
links DIR to this vault on this machine, as hooks install does. The entry runs
sessionvault from PATH and names no path of this machine, so .mcp.json can be
committed; on another machine, run this (or hooks install) once there.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			v, err := a.openVault()
			if err != nil {
				return err
			}
			// No path of this machine (teams commit .mcp.json): sessionvault
			// from PATH, the vault through this machine's link for DIR.
			entry := map[string]any{"type": "stdio", "command": "sessionvault", "args": []any{"mcp"}}
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
	c.AddCommand(install)
	return c
}
