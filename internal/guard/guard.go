// Package guard decides a Claude Code tool call (PreToolUse) from the tool
// policy table (package policy) and the facts of the project's verified
// session state, and keeps those facts in a signed cache beside the state, so
// that a decision on an unchanged state needs neither the note nor git (a
// hook decides in milliseconds). The full hook handler
// (integrations/claudecode), `blocked-reason` and the MCP server decide
// through it; the lean sessionvault-hook binary decides from its cache alone
// and hands everything else to the full binary. It imports nothing of the
// module but policy: no note parser, no git.
package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionvault/sessionvault/internal/policy"
	"github.com/sessionvault/sessionvault/internal/shellquote"
)

// Facts is what a PreToolUse decision reads from the project's current
// state once it is verified (its seal checked): whether a session is active,
// its mode, and the start checklist's open MUST items.
type Facts struct {
	Session string `json:"session"` // the session id, "" when idle
	Active  bool   `json:"active"`  // status active, crashed or recovered
	// Mode is the mode in force: analysis, planning, coding or disabled
	// (coding when the note names none or an unknown one).
	Mode string `json:"mode"`
	// StartMissing are the MUST items of the start checklist that lack
	// evidence (the start gate), in checklist order; empty once it passes.
	StartMissing []Missing `json:"start_missing,omitempty"`
	// GateError, when not empty, says why the start gate could not be
	// checked (the protocol cannot be read): calls that need the gate are
	// denied with it (fail closed). Such facts are never cached.
	GateError string `json:"gate_error,omitempty"`
	// Unreadable, when not empty, says why the state could not be read or
	// verified (a note that does not parse, a state changed outside
	// sessionvault): every call that needs the state is denied (fail
	// closed), with what a person does. Tampered says it is the latter.
	// Such facts are cached like any others: the next call on the same
	// unchanged files is denied without reading them again.
	Unreadable string `json:"unreadable,omitempty"`
	Tampered   bool   `json:"tampered,omitempty"`
	// Clash is the notice for an agent whose session, the one its machine
	// works in, is no longer the current one (it lost a clash of two
	// machines' sessions, or another machine ended it): PreToolUse hands
	// it over as additionalContext, or with its deny. "" when none.
	Clash string `json:"clash,omitempty"`
}

// Missing is one open checklist item of a gate and what to do about it. Do
// may quote `sessionvault ...` commands; Runnable makes them runnable.
type Missing struct {
	ID   string `json:"id"`
	Step string `json:"step"`
	Do   string `json:"do"`
}

// Place is where a decision is made: the vault (absolute root), the project
// and the vault's default project (commands name --project only for another).
type Place struct {
	Root           string
	Project        string
	DefaultProject string
}

// Verdict is a decision on one tool call: allowed, or denied for Reason
// (what to do next). Class is the call's class in the policy table.
type Verdict struct {
	Allowed bool
	Reason  string
	Class   policy.Class
}

func allow(c policy.Class) Verdict            { return Verdict{Allowed: true, Class: c} }
func deny(c policy.Class, why string) Verdict { return Verdict{Reason: why, Class: c} }

// Screen decides what needs no session state: a call that reaches a
// person's command is denied; a reading call (by the table of package
// policy, or a tool the vault declares read-only in t) is allowed. decided is
// false for every other call: Decide it with the state's facts. Screen may
// mark call as Read.
func Screen(call *policy.Call, t policy.Table) (v Verdict, decided bool) {
	if call.Class == policy.Person {
		return deny(call.Class, call.Why+"; the agent may not run a person's command (sessionvault accept, mode set disabled, hooks install)"), true
	}
	if call.Class != policy.Read && t.IsReadOnly(call.Tool) {
		call.Class = policy.Read // declared read-only by the vault's read_only_tools
	}
	if call.Class == policy.Read {
		return allow(call.Class), true
	}
	return Verdict{}, false
}

// Decide decides a call Screen left open, from the verified state's facts:
// everything passes in mode disabled; a call that edits or may write a file
// inside the vault is denied (paths taken relative to cwd — the hook input's,
// "" = the working directory — and resolved through symlinks); sessionvault's
// own tools and commands pass; without an active session, against the mode,
// or while MUST items of the start checklist lack evidence, the call is
// denied with the command to run.
func Decide(call policy.Call, cwd string, at Place, t policy.Table, f Facts) Verdict {
	if f.Unreadable != "" {
		return deny(call.Class, at.unreadable(f))
	}
	if f.Mode == policy.ModeDisabled {
		return allow(call.Class)
	}
	if p := writesInVault(call, cwd, at.Root); p != "" {
		return deny(call.Class, p+" is in the session vault: notes there are written through sessionvault (update, decide, block, evidence record, ...), so that every change is verified, signed and committed")
	}
	if call.Class == policy.Way {
		return allow(call.Class)
	}
	if !f.Active {
		return deny(call.Class, "no session is active. Start one: `"+at.Command(`start --objective "..."`)+"`")
	}
	if !policy.Allows(f.Mode, call.Class) || t.BlockedBy(f.Mode, call.Tool) {
		return deny(call.Class, fmt.Sprintf("mode %s allows reading only, and %s. If the work calls for it, switch: `%s`", f.Mode, call.Why, at.Command("mode set coding")))
	}
	if f.GateError != "" {
		return deny(call.Class, f.GateError+"; failing closed")
	}
	if len(f.StartMissing) == 0 {
		return allow(call.Class)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the session start protocol is incomplete: %d MUST item(s) lack evidence. Do this first:", len(f.StartMissing))
	for _, m := range f.StartMissing {
		fmt.Fprintf(&b, "\n- %s %s: %s", m.ID, m.Step, at.Runnable(m.Do, cwd))
	}
	return deny(call.Class, b.String())
}

// unreadable is the deny of a call on a state that cannot be read or
// verified: why, and what a person does.
func (p Place) unreadable(f Facts) string {
	accept := p.Command("accept")
	if f.Tampered {
		note := shellquote.Quote(p.Project + "/session-current-state.md")
		git := "git -C " + shellquote.Quote(p.Root)
		return f.Unreadable + ". A person reviews the change (`" + git + " diff -- " + note + "; " + git + " log -p -3 -- " + note + "`) and runs `" + accept + "`; until then only read-only tools run"
	}
	restore := "git -C " + shellquote.Quote(p.Root) + " checkout -- " + shellquote.Quote(p.Project+"/session-current-state.md")
	return "the session state cannot be read: " + f.Unreadable + ". Fix the note, or restore it as last committed (`" + restore + "`); then a person runs `" + accept + "`; until then only read-only tools run"
}

// Command returns the sessionvault command line for args, runnable in a
// POSIX shell from any folder: it names the vault and, when not the default,
// the project.
func (p Place) Command(args string) string {
	c := "sessionvault --vault " + shellquote.Quote(p.Root)
	if p.Project != "" && p.Project != p.DefaultProject {
		c += " --project " + shellquote.Quote(p.Project)
	}
	return c + " " + args
}

// Runnable rewrites every `sessionvault ...` command quoted in text as
// Command does (one that already names its vault with --vault is left as
// it is), so that it works pasted into a shell in any folder. An
// evidence record whose check runs in the code repository (--run, --sha)
// also gets --dir codeDir (the folder the agent works in, e.g. the hook
// input's cwd; "" or a folder of the vault leaves it to the command, which
// checks in the session's code repository).
func (p Place) Runnable(text, codeDir string) string {
	var b strings.Builder
	const open = "`sessionvault "
	for {
		i := strings.Index(text, open)
		if i < 0 {
			break
		}
		j := strings.IndexByte(text[i+len(open):], '`')
		if j < 0 {
			break
		}
		args := text[i+len(open) : i+len(open)+j]
		if strings.HasPrefix(args, "--vault ") { // already names its vault
			b.WriteString(text[:i+len(open)+j+1])
			text = text[i+len(open)+j+1:]
			continue
		}
		if codeDir != "" && !insideDir(resolvePath(codeDir), resolvePath(p.Root)) && strings.HasPrefix(args, "evidence record ") && (strings.Contains(args, " --run") || strings.Contains(args, " --sha ")) {
			args += " --dir " + shellquote.Quote(codeDir)
		}
		b.WriteString(text[:i])
		b.WriteString("`" + p.Command(args) + "`")
		text = text[i+len(open)+j+1:]
	}
	b.WriteString(text)
	return b.String()
}

// writesInVault returns the first file a call edits or may write that lies
// in the vault (root), or "": paths are taken relative to cwd (the hook
// input's; else the hook's own working folder) and resolved through
// symlinks, so the Serena link (<repo>/.serena/memories) and relative paths
// count. A shell that names a file only at run time ("?") counts when cwd is
// in the vault.
func writesInVault(call policy.Call, cwd, root string) string {
	if call.Class != policy.Edit && call.Class != policy.Write {
		return ""
	}
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	paths := call.Paths
	if call.Memories {
		paths = append(paths, filepath.Join(".serena", "memories", "x.md"))
	}
	realRoot := resolvePath(root)
	for _, p := range paths {
		if p == "?" {
			p = "."
		}
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if insideDir(resolvePath(p), realRoot) {
			if call.Memories {
				return "Serena's memories folder (" + filepath.Join(cwd, ".serena", "memories") + ")"
			}
			return p
		}
	}
	return ""
}

// resolvePath returns p with symlinks resolved in its longest existing
// prefix (the rest, not yet created, appended).
func resolvePath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// insideDir reports whether path lies in dir (after cleaning; symlinks are
// not resolved).
func insideDir(path, dir string) bool {
	rel, err := filepath.Rel(dir, filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
