package vault

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
)

// roundFile is a note's new version in a round: the note and the temporary
// path it is written to (where the replaced file will be kept).
type roundFile struct {
	n    *noteWrite
	path string
}

// journalRound records in the journal what a round writes and where it
// keeps the files it replaces.
func (w *writer) journalRound(j *journal, files []roundFile) error {
	in := map[string]bool{}
	for _, f := range files {
		in[f.n.rel] = true
	}
	var keep []string
	for _, rel := range j.Swapped {
		if !in[rel] {
			keep = append(keep, rel)
		}
	}
	j.Swapped = keep
	for _, f := range files {
		j.Files[f.n.rel] = sum(f.n.data)
		j.Old[f.n.rel] = filepath.Base(f.path)
	}
	return w.v.writeJournal(j)
}

// journal is the intent record of an operation between its first note
// write and its commit (.sessionvault/state/journal.json): enough to finish
// it after a crash, merging what others wrote meanwhile.
//
// It names contents by their SHA-256, not by copies: the engine's new
// version of a note is in its temporary file until the swap and in the note
// after it, and the version it replaces the other way round. A small
// journal keeps each attempt of a write cheap on a long note.
type journal struct {
	Change  Change            `json:"change"`
	Order   []string          `json:"order"`
	Files   map[string]string `json:"files"`             // SHA-256 of what the engine writes
	Base    map[string]string `json:"base,omitempty"`    // SHA-256 of what it replaces, where that is not Head's version
	Head    string            `json:"head,omitempty"`    // the commit holding what it replaces otherwise
	Missing []string          `json:"missing,omitempty"` // notes it creates
	Old     map[string]string `json:"old,omitempty"`     // each note's temporary file (in state/tmp)
	Swapped []string          `json:"swapped,omitempty"` // notes whose new version is in place
}

// sum is the journal's name for content: SHA-256, hex.
func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

const journalName = "journal.json"

func (v *Vault) writeJournal(j *journal) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := v.writeStateInPlace(journalName, data); err != nil {
		return osError(err, ".sessionvault/state/"+journalName, "recording the operation's journal in")
	}
	return nil
}
