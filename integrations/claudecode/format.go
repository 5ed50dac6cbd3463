package claudecode

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sessionvault/sessionvault/internal/session"
)

// A vault in a format newer than this binary writes (vault.CheckWritable)
// is read, never written, by the hooks: PreToolUse decides as usual from
// the state (a state it cannot read fails closed, as a broken note does)
// but notes nothing for PostToolUse; PostToolUse and PreCompact record
// nothing; SessionStart hands the agent the state with why nothing is
// recorded. What the hooks do not record is said once per Claude Code
// session (formatRefused), not on every tool call.

// formatRefused is the answer of a hook that records nothing because svc's
// vault is in a newer format: the first time in the Claude Code session
// (the input's session_id) for that vault, a warning (exit 1) saying why;
// after that, nothing. nil error when the vault is writable.
func formatRefused(svc *session.Service, in Input) (Response, error) {
	err := svc.V.CheckWritable()
	if err == nil {
		return Allow(), nil
	}
	if !firstNotice(svc.V.Root, in.SessionID, svc.V.Config.Version) {
		return Allow(), err
	}
	return Warn("this Claude Code session's tool calls are not recorded (command history, heartbeats, evidence)", err), err
}

// firstNotice reports whether this is the first notice, in the Claude Code
// session sessionID, that the vault at root in format version is not
// written. It marks the notice given by creating an empty file in the
// system's temporary folder (never in the vault); when that file cannot be
// made, every call is the first (better said again than never).
func firstNotice(root, sessionID string, version int) bool {
	sum := sha256.Sum256([]byte(root + "\x00" + sessionID + "\x00" + strconv.Itoa(version)))
	p := filepath.Join(os.TempDir(), "sessionvault-format-notice-"+hex.EncodeToString(sum[:12]))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false
	}
	if err == nil {
		f.Close()
	}
	return true
}

// formatContext is what SessionStart adds to the agent's context for a
// vault in a newer format ("" otherwise): that nothing of the session is
// recorded, and what a person does.
func formatContext(svc *session.Service) string {
	err := svc.V.CheckWritable()
	if err == nil {
		return ""
	}
	return "sessionvault: " + err.Error() + ". Until then sessionvault records nothing of this session (its commands that write fail); reading the state works. Tell the person."
}
