// Package config reads a vault's settings: .sessionvault/config.yaml, then
// environment variables, into plain structs. Flags are applied by the CLI.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sessionvault/sessionvault/internal/vaultloc"
)

// Dir is the engine's folder inside a vault; File is its config file and
// StateDir its git-ignored, rebuildable state (locks, heartbeats, journal).
const (
	Dir      = vaultloc.Dir
	File     = vaultloc.File
	StateDir = vaultloc.StateDir
)

// Identity is a git author: who a commit says made the change.
type Identity struct {
	Name  string `yaml:"name"`
	Email string `yaml:"email"`
}

// Config is a vault's settings. Zero fields take the defaults of Default.
type Config struct {
	// Version is the vault's format version (see FormatVersion): what a
	// binary must understand to write the vault. A binary whose
	// FormatVersion is lower refuses to write (errs.VaultFormatNewer);
	// `sessionvault migrate` upgrades an older vault. A config without it
	// is in OldestFormat.
	Version int `yaml:"version"`
	// DefaultProject is the project used when --project is not given.
	DefaultProject string `yaml:"default_project"`
	// Agent authors the engine's commits.
	Agent Identity `yaml:"agent"`
	// Person authors the commits of edits made outside the engine (Obsidian, an editor).
	Person Identity `yaml:"person"`
	// HeartbeatTimeout: an active session whose last sign of life is older is crashed (default 30m).
	HeartbeatTimeout Duration `yaml:"heartbeat_timeout"`
	// ClaimLease is how long a task claim taken through the vault's git
	// remote (refs/sessionvault/claims/<task>) holds without its holder
	// renewing it (default 30m); the holder's heartbeat renews it.
	ClaimLease Duration `yaml:"claim_lease"`
	// HistoryFull is how many recent sessions session-history.md keeps in full (default 10).
	HistoryFull int `yaml:"history_full"`
	// LockTimeout bounds the wait for the vault lock (default 30s).
	LockTimeout Duration `yaml:"lock_timeout"`
	// DefaultMode is the mode a vault starts in: analysis, planning, coding
	// (default) or disabled.
	DefaultMode string `yaml:"default_mode"`
	// TimeZone is the IANA zone (e.g. "Europe/Berlin") of times written
	// without one — Obsidian's date-time properties (2026-11-23T10:30) and
	// dates (2026-11-23); "" means the machine's local zone.
	TimeZone string `yaml:"time_zone"`
	// ReadOnlyTools are Claude Code tool names (regular expressions) the
	// PreToolUse hook always allows; empty means the built-in list.
	ReadOnlyTools []string `yaml:"read_only_tools"`
	// ModeBlocks maps a mode to the tools it blocks (regular expressions);
	// modes not listed keep the built-in policy.
	ModeBlocks map[string][]string `yaml:"mode_blocks"`
	// UnknownMCPTools is what the PreToolUse hook takes a tool of an MCP
	// server it does not know (mcp__<server>__<tool>) to do: read, edit or
	// write (default write: allowed only in coding mode once the start gate
	// passes).
	UnknownMCPTools string `yaml:"unknown_mcp_tools"`
	// Durability is how a commit is made durable: "batch" (default: the
	// files the commit wrote are written out, then one journal commit makes
	// them and their folders durable before the commit is published and one
	// after; Linux on ext4, XFS and btrfs, elsewhere "fsync"), "fsync" (an
	// fsync of each file and folder the commit wrote) or "syncfs" (Linux:
	// one syncfs(2) of the vault's file system; it also waits for every
	// other program's writes to the same disk).
	Durability string `yaml:"durability"`
	// CompactUpdates bounds the updates an active session's current-state
	// note holds (history compaction): past it, the older half moves to the
	// session's archive note, <project>/sessions/<session>/archive.md, so
	// that an operation on a long session costs what it costs on a short one.
	// Default 200; negative = never compact.
	CompactUpdates int `yaml:"compact_updates"`
	// CompactInvocations bounds the agent invocations (of the orchestrator
	// workflow) the current-state note holds: past it, all but the newest 3
	// move to the session's archive note. Default 10; negative = never
	// compact.
	CompactInvocations int `yaml:"compact_invocations"`
	// AgentTypes are agent types the orchestrator workflow accepts besides
	// the built-in ones (orchestrator, analyst, ..., see
	// session.BuiltinAgentTypes): names of lowercase letters, digits and '-',
	// e.g. [docs-writer, release-manager].
	AgentTypes []string `yaml:"agent_types"`
	// Linear configures the sync to Linear.
	Linear Linear `yaml:"linear"`
	// Remote configures `remote sync` with a git remote.
	Remote Remote `yaml:"remote"`
	// MCP configures `sessionvault mcp`.
	MCP MCP `yaml:"mcp"`
}

// MCP is the settings of the MCP server.
type MCP struct {
	// Toolsets are the toolsets `sessionvault mcp` serves besides its
	// default one when run without --toolsets, e.g. [tasks, features] or
	// [all]. The names are checked by the server (an unknown one is an error
	// naming this key); a YAML list or a comma-separated string.
	Toolsets Names `yaml:"toolsets"`
}

// Names is a list of names written in YAML as a list ([a, b]) or as one
// comma-separated string ("a,b").
type Names []string

// UnmarshalYAML reads a list of names or a comma-separated string.
func (n *Names) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		*n = nil
		for _, s := range strings.Split(v.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*n = append(*n, s)
			}
		}
		return nil
	}
	var l []string
	if err := v.Decode(&l); err != nil {
		return fmt.Errorf("line %d: not a list of names: %w", v.Line, err)
	}
	*n = l
	return nil
}

// Remote is the settings of `remote sync`.
type Remote struct {
	// Name is the git remote (default "origin").
	Name string `yaml:"name"`
	// Branch is the remote branch ("" = the vault's current branch).
	Branch string `yaml:"branch"`
	// Schedule is the robfig/cron spec of `serve`'s remote sync ("" = serve
	// does not sync with the remote; e.g. "@every 5m").
	Schedule string `yaml:"schedule"`
	// Debounce is how long `serve` waits after the engine commits before a
	// sync (default 30s; only with a schedule).
	Debounce Duration `yaml:"debounce"`
}

// Linear is the sync-to-Linear settings. The API key is never here: it comes
// from LINEAR_API_KEY only.
type Linear struct {
	// Schedule is the robfig/cron spec of `serve`'s sync (default "@every 15m").
	Schedule string `yaml:"schedule"`
	// StateOnStart and StateOnEnd are workflow state names set on the linked
	// issue when a session starts and ends ("" = leave the state alone).
	StateOnStart string `yaml:"state_on_start"`
	StateOnEnd   string `yaml:"state_on_end"`
	// DecisionLabel is added to the issue when its session records decisions.
	DecisionLabel string `yaml:"decision_label"`
	// NoteURL is the base of the link back to a session note, e.g.
	// "obsidian://open?vault=work&file=" (the note's path is appended); "" =
	// no link.
	NoteURL string `yaml:"note_url"`
}

// Duration is a time.Duration written in YAML as "30m", "1h30m".
type Duration struct{ time.Duration }

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration like 30m or 1h: %w", n.Line, n.Value, err)
	}
	d.Duration = v
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// Default returns the settings used for anything the file leaves out.
func Default() Config {
	return Config{
		Version:            OldestFormat,
		Agent:              Identity{Name: "sessionvault agent", Email: "agent@sessionvault.invalid"},
		Person:             Identity{Name: "vault editor", Email: "person@sessionvault.invalid"},
		HeartbeatTimeout:   Duration{30 * time.Minute},
		ClaimLease:         Duration{30 * time.Minute},
		HistoryFull:        10,
		LockTimeout:        Duration{30 * time.Second},
		CompactUpdates:     DefaultCompactUpdates,
		CompactInvocations: DefaultCompactInvocations,
	}
}

// DefaultCompactUpdates is CompactUpdates when the config leaves it out.
const DefaultCompactUpdates = 200

// UpdatesKept is CompactUpdates with its default: the most updates a
// current-state note holds before the older half is compacted; 0 = never.
func (c Config) UpdatesKept() int {
	switch {
	case c.CompactUpdates == 0:
		return DefaultCompactUpdates
	case c.CompactUpdates < 0:
		return 0
	}
	return c.CompactUpdates
}

// DefaultCompactInvocations is CompactInvocations when the config leaves it
// out.
const DefaultCompactInvocations = 10

// InvocationsKept is CompactInvocations with its default: the most agent
// invocations a current-state note holds before all but the newest 3 are
// compacted; 0 = never.
func (c Config) InvocationsKept() int {
	switch {
	case c.CompactInvocations == 0:
		return DefaultCompactInvocations
	case c.CompactInvocations < 0:
		return 0
	}
	return c.CompactInvocations
}

// Load reads vaultDir/.sessionvault/config.yaml over the defaults, then the
// environment: SESSIONVAULT_AGENT_NAME, SESSIONVAULT_AGENT_EMAIL,
// SESSIONVAULT_PERSON_NAME, SESSIONVAULT_PERSON_EMAIL. A missing file gives
// the defaults; invalid YAML gives an error naming the file and line.
func Load(vaultDir string) (Config, error) {
	c := Default()
	path := filepath.Join(vaultDir, File)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return c, fmt.Errorf("reading %s: %w", path, err)
	}
	if err == nil {
		if err := yaml.Unmarshal(data, &c); err != nil {
			return c, fmt.Errorf("%s: %w", path, err)
		}
	}
	d := Default()
	if c.Version < OldestFormat {
		c.Version = OldestFormat
	}
	if c.HeartbeatTimeout.Duration <= 0 {
		c.HeartbeatTimeout = d.HeartbeatTimeout
	}
	if c.ClaimLease.Duration <= 0 {
		c.ClaimLease = d.ClaimLease
	}
	if c.HistoryFull <= 0 {
		c.HistoryFull = d.HistoryFull
	}
	if c.LockTimeout.Duration <= 0 {
		c.LockTimeout = d.LockTimeout
	}
	if c.Linear.Schedule == "" {
		c.Linear.Schedule = "@every 15m"
	}
	if _, err := c.Location(); err != nil {
		return c, fmt.Errorf("%s: time_zone: %w", path, err)
	}
	switch c.Durability {
	case "", "batch", "fsync", "syncfs":
	default:
		return c, fmt.Errorf("%s: durability: %q is not batch, fsync or syncfs", path, c.Durability)
	}
	for i, a := range c.AgentTypes {
		if !ValidAgentType(a) {
			return c, fmt.Errorf("%s: agent_types[%d]: %q is not an agent type name (lowercase letters, digits and '-', starting with a letter, e.g. docs-writer)", path, i, a)
		}
	}
	envOverride(&c.Agent.Name, "SESSIONVAULT_AGENT_NAME")
	envOverride(&c.Agent.Email, "SESSIONVAULT_AGENT_EMAIL")
	envOverride(&c.Person.Name, "SESSIONVAULT_PERSON_NAME")
	envOverride(&c.Person.Email, "SESSIONVAULT_PERSON_EMAIL")
	if c.Agent.Name == "" {
		c.Agent = d.Agent
	}
	if c.Person.Name == "" {
		c.Person = d.Person
	}
	return c, nil
}

// ValidAgentType reports whether name has the form of an agent type (e.g.
// "independent-thinker"): lowercase ASCII letters, digits and '-', starting
// with a letter, at most 64 bytes.
func ValidAgentType(name string) bool {
	if name == "" || len(name) > 64 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, c := range []byte(name) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// Location returns the zone of TimeZone (the machine's local zone when
// unset); an unknown zone name is an error.
func (c Config) Location() (*time.Location, error) {
	if c.TimeZone == "" {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(c.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("%q is not a time zone (use an IANA name such as Europe/Berlin or UTC): %w", c.TimeZone, err)
	}
	return loc, nil
}

func envOverride(dst *string, name string) {
	if v := os.Getenv(name); v != "" {
		*dst = v
	}
}

// Render returns the config file written by `sessionvault init`: every
// setting with a comment saying what it does.
func Render(project string) []byte {
	return []byte(`# sessionvault settings. Committed with the vault; edit freely.
# The vault's format. A sessionvault that writes only older formats refuses
# to write this vault; "sessionvault migrate" upgrades an older vault.
version: ` + strconv.Itoa(FormatVersion) + `
# Project used when a command gets no --project.
default_project: ` + project + `
# Who the engine's commits are authored as.
agent:
  name: sessionvault agent
  email: agent@sessionvault.invalid
# Who edits made outside the engine (Obsidian, an editor) are committed as.
person:
  name: vault editor
  email: person@sessionvault.invalid
# An active session with no sign of life for this long is crashed.
heartbeat_timeout: 30m
# How long a task claim taken through the git remote holds unless its holder
# renews it (task lock, heartbeat and remote sync renew it while its session works).
claim_lease: 30m
# How many recent sessions session-history.md keeps in full.
history_full: 10
# How long a command waits for another sessionvault process holding the vault.
lock_timeout: 30s
# The zone of times written without one (Obsidian's 2026-11-23T10:30 and
# 2026-11-23), as an IANA name; leave out for this machine's local zone.
# time_zone: Europe/Berlin
# What a tool of an MCP server the hooks' policy does not know may do: read,
# edit or write (the default: allowed only in coding mode past the start gate).
# unknown_mcp_tools: write
# How a commit is made durable: batch (the default: the files it wrote, then
# one journal commit; Linux on ext4 with a journal, XFS, btrfs, elsewhere
# fsync), fsync (each file and folder it wrote) or syncfs (Linux: one flush of
# the whole file system; also waits for other programs' writes to the disk).
# durability: fsync
# Claude Code hooks: tools that are always allowed, and the tools each mode
# blocks (regular expressions on the tool name). Leave out to use the defaults:
# read_only_tools: [Read, Glob, Grep, LS, WebFetch, WebSearch, TodoWrite, NotebookRead, BashOutput]
# mode_blocks:
#   analysis: [Edit, MultiEdit, Write, NotebookEdit, Bash]
#   planning: [Edit, MultiEdit, Write, NotebookEdit]
# The toolsets "sessionvault mcp" serves besides its session toolset: tasks,
# features, workflow, admin, or all ("sessionvault mcp --help" lists their
# tools). Each tool served costs an agent tokens before its first message.
# mcp:
#   toolsets: [tasks]
# Agent types the orchestrator workflow accepts besides the built-in ones
# (orchestrator, analyst, architect, planner, implementer, critic, qa, ...):
# agent_types: [docs-writer]
# Linear sync (sessionvault sync linear / serve). The API key comes from
# LINEAR_API_KEY only, never from this file.
linear:
  schedule: "@every 15m"
  state_on_start: ""
  state_on_end: ""
  decision_label: ""
  note_url: ""
`)
}
