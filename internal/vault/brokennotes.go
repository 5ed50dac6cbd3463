package vault

import (
	"encoding/json"
	"fmt"
)

// brokenNotesFile is the state file that remembers the notes found broken
// — not passing their check (a front matter a person broke in Obsidian) —
// after a read that waited settleWait for a save in progress to finish: a
// JSON object from the vault-relative path to the note's stat identity then.
// A later read of a note with the same identity (inode, size, modification
// and change times) is the same broken note, not a save in progress, and
// fails at once with the same error instead of waiting again; any write to
// the note changes its identity.
const brokenNotesFile = "broken-notes.json"

// identity is id as brokenNotesFile holds it: every part of the stat,
// change time included.
func (id fileID) identity() string {
	return fmt.Sprintf("%d:%d:%d:%d:%d", id.dev, id.ino, id.size, id.mtime, id.ctime)
}

// knownBroken reports whether rel, with the stat identity id, is a note an
// earlier read found broken and waited out.
func (v *Vault) knownBroken(rel string, id fileID) bool {
	data, err := v.ReadState(brokenNotesFile)
	if err != nil {
		return false
	}
	var known map[string]string
	return json.Unmarshal(data, &known) == nil && known[rel] == id.identity()
}

// rememberBroken records rel's identity id as broken (best effort: without
// the record, the next read waits again).
func (v *Vault) rememberBroken(rel string, id fileID) {
	known := map[string]string{}
	if data, err := v.ReadState(brokenNotesFile); err == nil {
		_ = json.Unmarshal(data, &known)
	}
	known[rel] = id.identity()
	if data, err := json.Marshal(known); err == nil {
		_ = v.WriteState(brokenNotesFile, data)
	}
}
