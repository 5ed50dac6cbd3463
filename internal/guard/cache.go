package guard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/integrity"
	"github.com/sessionvault/sessionvault/templates"

	"github.com/sessionvault/sessionvault/internal/lazyfree"
)

// cacheFile is a project's facts cache, .sessionvault/state/guard-<project>.json:
// the facts of the last verified reading of its state, the identity of the
// files they were read from, and an HMAC over both with the vault's key.
type cacheFile struct {
	Identity string `json:"identity"`
	Facts    Facts  `json:"facts"`
	// Watch are the notes (vault-relative) whose change during a writing
	// tool call PostToolUse looks for (NoteToolCall records them).
	Watch []string `json:"watch"`
	// Deps are files outside the state the facts were read from (evidence
	// a gate re-checked: a recorded file, the code repository's HEAD), by
	// absolute path, with their stat identity ("none": missing) then.
	Deps map[string]string `json:"deps,omitempty"`
	// ToolEvidence: see Cached.ToolEvidence.
	ToolEvidence      []string `json:"tool_evidence,omitempty"`
	ToolEvidenceKnown bool     `json:"tool_evidence_known,omitempty"`
	// Log: see Cached.Log.
	Log LogFacts `json:"log,omitempty"`
	MAC string   `json:"mac"`
}

// Cached is what the facts cache holds for a project.
type Cached struct {
	Facts Facts
	Watch []string
	// Deps: see cacheFile.Deps. The facts hold while each still has its
	// stat identity.
	Deps map[string]string
	// ToolEvidence are the patterns of the protocol's `tool:` evidence (a
	// checklist item a tool call matching ^(?:PATTERN)$ ticks), known when
	// ToolEvidenceKnown; PostToolUse records such a call as evidence.
	ToolEvidence      []string
	ToolEvidenceKnown bool
	// Log is what the active session's command history entries take from
	// its state (RecordCommand).
	Log LogFacts
}

// Identity is the stat identity of every file a project's facts are read
// from: its current-state note, the note's seal (signature-<project>), the
// protocol document (the project's, else the vault's, else the one built
// into the binary, by its content: a binary with another built-in protocol
// does not trust facts read with this one's), the
// tool calls seen as evidence (tools-<project>) and the evidence the engine
// observed (observed-<project>). Any change to one of them
// changes it. The error is the state note's, when it cannot be stat'ed.
func Identity(root, project string) (string, error) {
	at := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	note, err := StatIdentity(at(project + "/session-current-state.md"))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("note " + note)
	for _, name := range []string{integrity.SignatureFile(project), integrity.ToolsFile(project), integrity.ObservedFile(project)} {
		id, err := StatIdentity(at(integrity.StateDir + "/" + name))
		if err != nil {
			id = "none"
		}
		b.WriteString("\n" + name + " " + id)
	}
	proto := builtInProtocol()
	for _, rel := range []string{project + "/SESSION-PROTOCOL.md", "SESSION-PROTOCOL.md"} {
		if id, err := StatIdentity(at(rel)); err == nil {
			proto = rel + " " + id
			break
		}
	}
	b.WriteString("\nprotocol " + proto)
	return b.String(), nil
}

// builtInProtocol names the protocol built into this binary (the default
// templates' SESSION-PROTOCOL.md) by the first 16 hex digits of its
// SHA-256 (about 4 µs a call: 3 KB hashed).
func builtInProtocol() string {
	data, err := fs.ReadFile(templates.FS, "SESSION-PROTOCOL.md")
	if err != nil {
		return "built in"
	}
	h := sha256.Sum256(data)
	return "built in " + hex.EncodeToString(h[:8])
}

func cacheMAC(key []byte, project string, c cacheFile) (string, error) {
	c.MAC = ""
	return integrity.SignJSON(key, "sessionvault guard facts v2\n"+project+"\n", c)
}

func cachePath(root, project string) string {
	return integrity.Path(root, integrity.GuardCacheFile(project))
}

// Save records facts as those of the files whose identity is id (taken by
// Identity before the state was read and verified), signed with key. The
// caller checks that Identity still gives id after the reading.
//
// freer (nil: none) holds the replaced cache file (lazyfree).
func Save(root, project string, key []byte, id string, c Cached, freer *lazyfree.Freer) error {
	f := cacheFile{Identity: id, Facts: c.Facts, Watch: c.Watch, Deps: c.Deps, ToolEvidence: c.ToolEvidence, ToolEvidenceKnown: c.ToolEvidenceKnown, Log: c.Log}
	mac, err := cacheMAC(key, project, f)
	if err != nil {
		return err
	}
	f.MAC = mac
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	path := cachePath(root, project)
	defer freer.Hold(path)()
	return writeState(root, filepath.Base(path), data)
}

// Load returns the cached facts of a project when they are those of its
// files as they are now (same Identity) and their signature checks with the
// vault's key. ok is false otherwise — no cache, a changed file, a cache
// that does not check, no key: the state must then be read and verified.
func Load(root, project string) (c Cached, ok bool) {
	key, err := integrity.ReadKey(root)
	if err != nil {
		return Cached{}, false
	}
	return LoadWith(root, project, key)
}

// LoadWith is Load with the vault's key already read (integrity.ReadKey):
// a hook call reads it once for this and LoadSettingsWith.
func LoadWith(root, project string, key []byte) (c Cached, ok bool) {
	id, err := Identity(root, project)
	if err != nil {
		return Cached{}, false
	}
	data, err := os.ReadFile(cachePath(root, project))
	if err != nil {
		return Cached{}, false
	}
	var f cacheFile
	if json.Unmarshal(data, &f) != nil || f.Identity != id {
		return Cached{}, false
	}
	want, err := cacheMAC(key, project, f)
	if err != nil || !integrity.Equal(want, f.MAC) {
		return Cached{}, false
	}
	for path, was := range f.Deps {
		now, err := StatIdentity(path)
		if err != nil {
			now = "none"
		}
		if now != was {
			return Cached{}, false
		}
	}
	return Cached{Facts: f.Facts, Watch: f.Watch, Deps: f.Deps, ToolEvidence: f.ToolEvidence, ToolEvidenceKnown: f.ToolEvidenceKnown, Log: f.Log}, true
}

// writeState replaces a file of the state folder by a rename (a reader
// sees the old content or the new, never a part), without fsync: what is
// kept there is rebuilt when lost.
func writeState(root, name string, data []byte) error {
	dir := integrity.Path(root, "")
	tmpDir := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	tmp := filepath.Join(tmpDir, name+"."+strconv.Itoa(os.Getpid())+"."+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
