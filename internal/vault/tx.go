package vault

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// Tx is one operation's view of the vault: it reads notes from disk and
// collects the new content of the notes it changes. Nothing is written until
// the operation's function returns without error. An operation's function
// may run more than once (when a note it read changed before its write); it
// must compute its writes from what it reads, and decide nothing from what an
// earlier run saw.
type Tx struct {
	v      *Vault
	reads  map[string]*readRec
	writes map[string][]byte
	order  []string
}

// readRec is what one read of a path returned: the bytes and the identity
// of the file version they came from, or that the path was missing.
type readRec struct {
	data    []byte
	missing bool
	id      fileID
	fi      os.FileInfo
}

// Read returns a vault-relative note's content and marks the path as touched
// (checked for edits made outside the engine). The read is stable: a note
// another process is writing is read once it has finished.
// A missing file gives an error satisfying errors.Is(err, os.ErrNotExist); a
// symlink, folder, FIFO, socket or device gives errs.NoteNotAFile. A file
// written earlier in the same Tx reads back as written; a file read earlier
// reads back the same bytes.
func (tx *Tx) Read(rel string) ([]byte, error) {
	if data, ok := tx.writes[rel]; ok {
		return data, nil
	}
	r, err := tx.read(rel)
	if err != nil {
		return nil, err
	}
	if r.missing {
		return nil, &os.PathError{Op: "read", Path: rel, Err: os.ErrNotExist}
	}
	return r.data, nil
}

// ReadNote is Read for a note that must pass valid (e.g. parse): a note that
// fails it is read again, with a growing pause, until it passes, settleWait
// has passed — another process may be writing it in two steps — or its stat
// identity stayed the same for stillFor (a broken note, not a save in
// progress). The last error of valid is returned then. A missing note is not retried. As with
// Vault.ReadNote, a note found broken after the wait fails at once while
// its stat identity stays the same.
func (tx *Tx) ReadNote(rel string, valid func([]byte) error) ([]byte, error) {
	data, err := tx.Read(rel)
	if err != nil || valid(data) == nil {
		return data, err
	}
	if _, written := tx.writes[rel]; written {
		return data, valid(data)
	}
	if r := tx.reads[rel]; r != nil && tx.v.knownBroken(rel, r.id) {
		return data, valid(data)
	}
	data, err = tx.v.settle(func() ([]byte, fileID, error) {
		delete(tx.reads, rel)
		data, err := tx.Read(rel)
		if err != nil {
			return nil, fileID{}, err
		}
		var id fileID
		if r := tx.reads[rel]; r != nil {
			id = r.id
		}
		return data, id, valid(data)
	})
	if r := tx.reads[rel]; err != nil && r != nil && !r.missing {
		tx.v.rememberBroken(rel, r.id)
	}
	return data, err
}

func (tx *Tx) read(rel string) (*readRec, error) {
	if r, ok := tx.reads[rel]; ok {
		return r, nil
	}
	abs, err := tx.v.Abs(rel)
	if err != nil {
		return nil, err
	}
	if err := tx.v.checkParents(rel); err != nil {
		return nil, err
	}
	data, id, fi, err := readStableInfo(abs, rel)
	r := &readRec{data: data, id: id, fi: fi}
	switch {
	case errors.Is(err, os.ErrNotExist):
		r = &readRec{missing: true}
	case err != nil:
		return nil, err
	}
	tx.reads[rel] = r
	return r, nil
}

// Write records rel's new content, to be merged onto what is on disk,
// written and committed when the operation succeeds.
func (tx *Tx) Write(rel string, data []byte) error {
	if err := CheckPath(rel); err != nil {
		return err
	}
	if _, ok := tx.writes[rel]; !ok {
		if _, err := tx.read(rel); err != nil { // what the write replaces
			return err
		}
		tx.order = append(tx.order, rel)
	}
	tx.writes[rel] = data
	return nil
}

// Original returns rel as this Tx first read it, before its own writes
// (missing reports a file that did not exist then).
func (tx *Tx) Original(rel string) (data []byte, missing bool, err error) {
	r, err := tx.read(rel)
	if err != nil {
		return nil, false, err
	}
	return r.data, r.missing, nil
}

// Written returns what this Tx writes to rel, and whether it writes it.
func (tx *Tx) Written(rel string) ([]byte, bool) {
	b, ok := tx.writes[rel]
	return b, ok
}

// WrittenPaths returns the paths this Tx writes, in the order first written.
func (tx *Tx) WrittenPaths() []string { return append([]string(nil), tx.order...) }

// CheckText checks that text (a flag's or a field's value, or a note) is
// valid UTF-8 without NUL bytes, and returns errs.UpdateValidationFailed naming what
// otherwise: what is the flag or field, e.g. "--message".
func CheckText(what, text string) error {
	if i := strings.IndexByte(text, 0); i >= 0 {
		return errs.New(errs.UpdateValidationFailed, "%s contains a NUL byte (at byte %d); notes and their fields are text", what, i).With("field", what)
	}
	if !utf8.ValidString(text) {
		i := 0
		for i < len(text) {
			r, size := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			i += size
		}
		return errs.New(errs.UpdateValidationFailed, "%s is not valid UTF-8 (at byte %d); notes and their fields are UTF-8 text", what, i).With("field", what)
	}
	return nil
}

// Exists reports whether rel exists on disk or was written in this Tx.
func (tx *Tx) Exists(rel string) bool {
	if _, ok := tx.writes[rel]; ok {
		return true
	}
	if r, ok := tx.reads[rel]; ok {
		return !r.missing
	}
	p, err := tx.v.Abs(rel)
	if err != nil {
		return false
	}
	_, err = os.Lstat(p)
	return err == nil
}

// List returns the names of the entries of a vault-relative folder, sorted
// (nil when it does not exist), including files written in this Tx.
func (tx *Tx) List(relDir string) ([]string, error) {
	p, err := tx.v.Abs(relDir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	ents, err := os.ReadDir(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, osError(err, relDir, "listing")
	}
	for _, e := range ents {
		seen[e.Name()] = true
	}
	for rel := range tx.writes {
		if name, ok := strings.CutPrefix(rel, relDir+"/"); ok && !strings.Contains(name, "/") {
			seen[name] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// Vault returns the vault the Tx belongs to.
func (tx *Tx) Vault() *Vault { return tx.v }

// Base returns what the engine last wrote to rel and committed — the note as
// it was when the engine last left it, before anyone else's edits — with
// same true when the note read in this Tx is still exactly that version
// (then data is nil: it is what Read returned). ok is false when the engine
// has no record for rel (a new clone, or a note it never wrote); data is
// then HEAD's version, when there is one.
func (tx *Tx) Base(rel string) (data []byte, same, ok bool, err error) {
	r, err := tx.read(rel)
	if err != nil {
		return nil, false, false, err
	}
	rec, have := tx.v.bases().get(rel)
	if have && !r.missing && rec.ID.sameContent(r.id) {
		return nil, true, true, nil
	}
	repo, err := tx.v.repo()
	if err != nil {
		return nil, false, false, err
	}
	data, ok = tx.v.lastVersion(repo, rel)
	return data, false, ok, nil
}

// Change describes an operation's commit: its name (e.g. "update"), the
// session it belongs to (may be empty), a one-line summary, and trailers to
// add (e.g. "Entry": "u-12"), written in sorted key order; and how its
// notes merge.
type Change struct {
	Operation string
	Session   string
	Summary   string
	Trailers  map[string]string
	// Protect, when set, says which lines of the notes written are entries
	// of append-only sections: when the write is merged with another
	// writer's version (Merge3), that version never deletes them. nil
	// means IsEntryLine (a line ending in a block id).
	Protect func(line []byte) bool `json:"-"`
	// Committed, when set, runs once the operation's commit is made, while
	// the vault lock is still held (so no other operation sees the vault
	// between the two). It does not run for a no-op, a repeat, or a commit a
	// crash recovery finishes. An error it returns does not undo the
	// commit: it comes back in Result.Warnings, after "committed <hash>".
	Committed func(Result) error `json:"-"`
	// Finished, when set, runs after Committed once the operation is wholly
	// done — the notes in their final place, the engine's own records
	// written — still under the vault lock: what it reads of the vault is
	// what the next operation will find. Same cases as Committed.
	Finished func(Result) `json:"-"`
	// ByAgent, for an operation that only commits edits made outside the
	// engine, says they were made by the agent's tool call (Operation names
	// the tool): the commit is authored as the agent, not the person.
	ByAgent bool `json:"-"`
}

// Result is what an operation did to the history: the commit of the person's
// edits found first (empty if none), the operation's own commit (empty for a
// no-op), and the paths it wrote.
type Result struct {
	PersonCommit string   `json:"person_commit,omitempty"`
	Commit       string   `json:"commit,omitempty"`
	Paths        []string `json:"paths,omitempty"`
	// Warnings are what failed after the commit was made: the operation
	// stands, and each says what failed and what that costs.
	Warnings []string `json:"warnings,omitempty"`
}

// commitMessage builds "<operation>: <summary>" with the trailers Session,
// Operation and State-Checksum. State-Checksum is the SHA-256 over the
// committed notes, each as its path, a NUL, its content and a NUL, in path
// order.
func commitMessage(ch Change, files map[string][]byte, paths []string) string {
	sorted := append([]string(nil), paths...)
	sort.Strings(sorted)
	h := sha256.New()
	for _, p := range sorted {
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write(files[p])
		h.Write([]byte{0})
	}
	summary := strings.Join(strings.Fields(ch.Summary), " ")
	if r := []rune(summary); len(r) > 72 {
		summary = string(r[:71]) + "…"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\n", ch.Operation, summary)
	if ch.Session != "" {
		fmt.Fprintf(&b, "Session: %s\n", ch.Session)
	}
	fmt.Fprintf(&b, "Operation: %s\n", ch.Operation)
	keys := make([]string, 0, len(ch.Trailers))
	for k := range ch.Trailers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := strings.Join(strings.Fields(ch.Trailers[k]), " "); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	fmt.Fprintf(&b, "State-Checksum: sha256:%s\n", hex.EncodeToString(h.Sum(nil)))
	return b.String()
}

// personMessage is the message of the commit of edits made outside the
// engine.
func personMessage(changed []string) string {
	subject := strings.Join(changed, ", ")
	if len(changed) > 3 {
		subject = fmt.Sprintf("%d files", len(changed))
	}
	return fmt.Sprintf("edit: %s changed outside sessionvault\n\n%s\n\nOperation: external-edit\n", subject, strings.Join(changed, "\n"))
}

// agentMessage is the message of a commit of edits an agent's tool call
// made to notes outside sessionvault.
func agentMessage(changed []string, tool string) string {
	subject := strings.Join(changed, ", ")
	if len(changed) > 3 {
		subject = fmt.Sprintf("%d files", len(changed))
	}
	return fmt.Sprintf("agent-edit: %s changed by the agent's %s call\n\n%s\n\nOperation: agent-edit\nTool: %s\n", subject, tool, strings.Join(changed, "\n"), tool)
}

// equalRead reports whether data is what r read.
func equalRead(r *readRec, data []byte) bool { return !r.missing && bytes.Equal(r.data, data) }
