// Package integrity owns what makes the engine's records trustworthy: the
// vault's HMAC key, the signatures over the records kept in the state
// folder (the seal of a project's current state, the facts cache the hooks
// read, the tool evidence), and the names of those state files. The session
// service signs and verifies with it; the guard (and the lean hook binary
// through it) reads the same files by the same names. It imports nothing
// from the module and no YAML, so the hook binary stays small.
package integrity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// StateDir is the vault's git-ignored state folder, relative to its root
// (config.StateDir; repeated here so that integrity needs no YAML).
const StateDir = ".sessionvault/state"

// The state files, relative to StateDir.
const (
	// KeyFile holds the vault's HMAC key (at least 32 bytes, mode 0600).
	KeyFile = "key"
	// CallsDir holds one file per tool call a hook let through
	// (calls/<tool_use_id>), which PostToolUse takes back.
	CallsDir = "calls"
	// ToolCallsDir holds the record of each writing tool call in progress
	// (toolcalls/<tool_use_id>): the stat identity of the notes it may
	// change, which its PostToolUse compares.
	ToolCallsDir = "toolcalls"
)

// SignatureFile is the file of a project's seal: the signed part of its
// current state, as JSON with its MAC.
func SignatureFile(project string) string { return "signature-" + project }

// ToolsFile is the file of a project's tool evidence: the tool calls the
// hooks saw, one signed line each.
func ToolsFile(project string) string { return "tools-" + project }

// ObservedFile is the file of a project's observed evidence: what the
// engine saw for itself (the state handed to the agent, a passing check), one
// signed line each.
func ObservedFile(project string) string { return "observed-" + project }

// ProtocolCacheFile is the file of a project's parsed protocol, signed and
// keyed by the document's SHA-256.
func ProtocolCacheFile(project string) string { return "protocol-" + project + ".json" }

// CodeRepoFile is the file naming the code repository a project's active
// session works in (an absolute path), as its start found it.
func CodeRepoFile(project string) string { return "coderepo-" + project }

// ToolCallFile is the file of a project's writing tool call in progress
// when the call has no tool_use_id (ToolCallsDir holds those that have
// one): the stat identity of the notes it may change.
func ToolCallFile(project string) string { return "toolcall-" + project }

// GuardCacheFile is the file of a project's facts cache: the facts of the
// last verified reading of its state, signed.
func GuardCacheFile(project string) string { return "guard-" + project + ".json" }

// VerifiedCacheFile is the file of a project's last verified reading of its
// current state, signed.
func VerifiedCacheFile(project string) string { return "verified-" + project + ".json" }

// Path returns the absolute path of the state file name in the vault at
// root.
func Path(root, name string) string {
	return filepath.Join(root, filepath.FromSlash(StateDir), filepath.FromSlash(name))
}

// ReadKey returns the vault's HMAC key: $SESSIONVAULT_SECRET, else the key
// file (at least 32 bytes). An error says there is none yet (CreateKey makes
// it) or that the file is too short.
func ReadKey(root string) ([]byte, error) {
	if k := os.Getenv("SESSIONVAULT_SECRET"); k != "" {
		return []byte(k), nil
	}
	k, err := os.ReadFile(Path(root, KeyFile))
	if err != nil {
		return nil, err
	}
	if len(k) < 32 {
		return nil, errors.New("the vault's key is shorter than 32 bytes")
	}
	return k, nil
}

// Key returns the vault's HMAC key (ReadKey), making a random 32-byte key
// file (mode 0600, fsynced) on first use. Two processes making it at once
// get the same key: the key is written whole to a file of its own, then
// linked into place, which fails when another process's key is there
// already — the loser reads the winner's, never a key file half written.
// Errors are the file system's, wrapped with the file's path.
func Key(root string) ([]byte, error) {
	if k, err := ReadKey(root); err == nil {
		return k, nil
	}
	p := Path(root, KeyFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("making the vault's key: %w", err)
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".key-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("making the vault's key: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(k); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the vault's key %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the vault's key %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("writing the vault's key %s: %w", p, err)
	}
	switch err := os.Link(f.Name(), p); {
	case err == nil:
		return k, nil
	case errors.Is(err, os.ErrExist):
		return ReadKey(root) // another process made it first: its key
	default:
		return createKey(p, k) // a file system without hard links
	}
}

// createKey makes the key file p holding k by an exclusive create, for a
// file system without hard links; a process that loses the create waits
// (at most a second) for the winner's key to be whole, and reads it.
func createKey(p string, k []byte) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		for deadline := time.Now().Add(time.Second); ; time.Sleep(5 * time.Millisecond) {
			got, err := os.ReadFile(p)
			if err == nil && len(got) >= 32 || time.Now().After(deadline) {
				if err == nil && len(got) < 32 {
					err = errors.New("the vault's key is shorter than 32 bytes")
				}
				return got, err
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("making the vault's key: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(k); err != nil {
		return nil, fmt.Errorf("writing the vault's key %s: %w", p, err)
	}
	return k, f.Sync()
}

// Sign returns the HMAC-SHA256 under key of parts, concatenated, as 64
// lowercase hex digits: the signature of the records sessionvault keeps in
// the state folder (seal, caches, tool evidence).
func Sign(key []byte, parts ...[]byte) string {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// SignJSON is Sign over prefix followed by v's JSON encoding (map keys
// sorted); the error is json.Marshal's.
func SignJSON(key []byte, prefix string, v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return Sign(key, []byte(prefix), data), nil
}

// Equal reports whether two signatures are the same, in constant time.
func Equal(a, b string) bool { return hmac.Equal([]byte(a), []byte(b)) }
