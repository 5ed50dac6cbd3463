package vault

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/history"
)

// Tx is one operation's view of the vault: it reads notes from disk and
// collects the new content of the notes it changes. Nothing is written until
// the operation's function returns without error.
type Tx struct {
	v      *Vault
	read   map[string]readMark // what each read returned, to detect a change before writing
	writes map[string][]byte
	order  []string
}

// Read returns a vault-relative file's current content and marks the path as
// touched (checked for edits made outside the engine). A missing file gives
// an error satisfying errors.Is(err, os.ErrNotExist). A file written earlier
// in the same Tx reads back as written.
func (tx *Tx) Read(rel string) ([]byte, error) {
	if data, ok := tx.writes[rel]; ok {
		return data, nil
	}
	p, err := tx.v.Abs(rel)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if _, seen := tx.read[rel]; !seen {
		tx.read[rel] = markOf(data, err)
	}
	return data, err
}

// readMark identifies what a read returned: the content's hash, or that the
// file was missing.
type readMark struct {
	missing bool
	sum     [32]byte
}

func markOf(data []byte, err error) readMark {
	if err != nil {
		return readMark{missing: true}
	}
	return readMark{sum: sha256.Sum256(data)}
}

// changedSinceRead returns a path read by the Tx whose content changed since
// (a person saving in Obsidian mid-operation), or "".
func (tx *Tx) changedSinceRead() string {
	for rel, m := range tx.read {
		p, err := tx.v.Abs(rel)
		if err != nil {
			continue
		}
		data, err := os.ReadFile(p)
		if markOf(data, err) != m {
			return rel
		}
	}
	return ""
}

// Write records rel's new content, to be written atomically and committed
// when the operation succeeds.
func (tx *Tx) Write(rel string, data []byte) error {
	if err := CheckPath(rel); err != nil {
		return err
	}
	if _, ok := tx.writes[rel]; !ok {
		tx.order = append(tx.order, rel)
	}
	tx.writes[rel] = data
	return nil
}

// Exists reports whether rel exists on disk or was written in this Tx.
func (tx *Tx) Exists(rel string) bool {
	if _, ok := tx.writes[rel]; ok {
		return true
	}
	p, err := tx.v.Abs(rel)
	if err != nil {
		return false
	}
	_, err = os.Stat(p)
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
		return nil, err
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

// Change describes an operation's commit: its name (e.g. "update"), the
// session it belongs to (may be empty) and a one-line summary.
type Change struct {
	Operation string
	Session   string
	Summary   string
}

// Result is what an operation did to the history: the commit of the person's
// edits found first (empty if none), the operation's own commit (empty for a
// no-op), and the paths it wrote.
type Result struct {
	PersonCommit string   `json:"person_commit,omitempty"`
	Commit       string   `json:"commit,omitempty"`
	Paths        []string `json:"paths,omitempty"`
}

// journal is the intent record of an operation between its first note write
// and its commit (.sessionvault/state/journal.json).
type journal struct {
	Message string            `json:"message"`
	Files   map[string][]byte `json:"files"`
	Order   []string          `json:"order"`
}

const journalName = "journal.json"

// Update runs one operation: it takes the locks, rolls forward an operation a
// crash interrupted, runs fn, commits edits made outside the engine to the
// touched notes (as the configured person), writes fn's notes atomically and
// commits them as one commit (as the agent). If fn fails nothing is written.
// If fn's writes change nothing, no commit is made.
func (v *Vault) Update(fn func(tx *Tx) (Change, error)) (Result, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	l, err := v.lock()
	if err != nil {
		return Result{}, err
	}
	defer l.unlock()
	repo, err := v.repo()
	if err != nil {
		return Result{}, err
	}
	if err := v.clearKilledCommit(repo); err != nil {
		return Result{}, err
	}
	if err := v.rollForward(repo); err != nil {
		return Result{}, errs.Wrap(errs.GitWrite, err, "finishing an earlier operation that was interrupted")
	}
	// Optimistic concurrency: if a note the operation read changes before
	// its writes (a person saving in Obsidian), the operation runs again on
	// the new content; after a few tries it fails with a conflict rather
	// than overwrite the edit.
	var tx *Tx
	var ch Change
	for attempt := 1; ; attempt++ {
		tx = &Tx{v: v, read: map[string]readMark{}, writes: map[string][]byte{}}
		if ch, err = fn(tx); err != nil {
			return Result{}, err
		}
		changed := tx.changedSinceRead()
		if changed == "" {
			break
		}
		if attempt == 3 {
			return Result{}, errs.New(errs.Conflict, "%s kept changing while the operation ran (3 tries); nothing was written, try again", changed).With("note", changed)
		}
	}
	var res Result
	touched := tx.touched()
	if res.PersonCommit, err = v.commitOutsideEdits(repo, touched); err != nil {
		return res, err
	}
	var paths []string
	for _, rel := range tx.order {
		cur, err := v.ReadFile(rel)
		if err == nil && bytes.Equal(cur, tx.writes[rel]) {
			continue
		}
		paths = append(paths, rel)
	}
	if len(paths) == 0 {
		return res, nil
	}
	j := journal{Message: commitMessage(ch, tx.writes, paths), Files: map[string][]byte{}, Order: paths}
	for _, p := range paths {
		j.Files[p] = tx.writes[p]
	}
	hash, err := v.applyJournal(repo, j)
	if err != nil {
		return res, err
	}
	res.Commit, res.Paths = hash, paths
	return res, nil
}

func (tx *Tx) touched() []string {
	set := map[string]bool{}
	for p := range tx.read {
		set[p] = true
	}
	for p := range tx.writes {
		set[p] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// applyJournal records j, writes its files and commits them, then removes
// the record.
func (v *Vault) applyJournal(repo *history.Repo, j journal) (string, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return "", err
	}
	if err := v.WriteState(journalName, data); err != nil {
		return "", fmt.Errorf("recording the operation's journal: %w", err)
	}
	tmp, err := v.stateDir("tmp")
	if err != nil {
		return "", err
	}
	for _, p := range j.Order {
		abs, err := v.Abs(p)
		if err != nil {
			return "", err
		}
		if err := AtomicWrite(tmp, abs, j.Files[p], DurableFile); err != nil {
			return "", err
		}
	}
	now := time.Now()
	sig := history.Signature{Name: v.Config.Agent.Name, Email: v.Config.Agent.Email, When: now}
	hash, err := v.commit(repo, history.CommitRequest{Paths: j.Order, Message: j.Message, Author: sig})
	if err != nil && !errors.Is(err, history.ErrNothingToCommit) {
		return "", errs.Wrap(errs.GitWrite, err, "committing the operation (its notes are written; the next operation will commit them)")
	}
	if err := os.Remove(filepath.Join(v.Root, ".sessionvault", "state", journalName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return hash, err
	}
	return hash, nil
}

// rollForward finishes an operation that a crash interrupted between its
// journal and its commit. The notes it names are rewritten from the journal
// and committed with the operation's message, unless one of them was edited
// since (content neither the journal's nor HEAD's): then the journal is
// dropped and those edits are committed as the person's when next touched.
func (v *Vault) rollForward(repo *history.Repo) error {
	data, err := v.ReadState(journalName)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil || len(j.Order) == 0 {
		return os.Remove(filepath.Join(v.Root, ".sessionvault", "state", journalName))
	}
	for _, p := range j.Order {
		cur, cerr := v.ReadFile(p)
		head, herr := repo.ReadFile(p)
		same := cerr == nil && bytes.Equal(cur, j.Files[p])
		untouched := (cerr == nil && herr == nil && bytes.Equal(cur, head)) || (errors.Is(cerr, os.ErrNotExist) && herr != nil)
		if !same && !untouched {
			return os.Remove(filepath.Join(v.Root, ".sessionvault", "state", journalName))
		}
	}
	if !strings.Contains(j.Message, "\nRecovered: ") {
		j.Message = strings.TrimRight(j.Message, "\n") + "\nRecovered: true\n"
	}
	_, err = v.applyJournal(repo, j)
	return err
}

// commitOutsideEdits commits, as the configured person, the touched paths
// whose content differs from HEAD.
func (v *Vault) commitOutsideEdits(repo *history.Repo, touched []string) (string, error) {
	changed, err := repo.Changed(touched)
	if err != nil {
		return "", errs.Wrap(errs.GitWrite, err, "checking the notes for edits made outside sessionvault")
	}
	if len(changed) == 0 {
		return "", nil
	}
	sig := history.Signature{Name: v.Config.Person.Name, Email: v.Config.Person.Email, When: time.Now()}
	subject := strings.Join(changed, ", ")
	if len(changed) > 3 {
		subject = fmt.Sprintf("%d files", len(changed))
	}
	msg := fmt.Sprintf("edit: %s changed outside sessionvault\n\n%s\n\nOperation: external-edit\n", subject, strings.Join(changed, "\n"))
	hash, err := v.commit(repo, history.CommitRequest{Paths: changed, Message: msg, Author: sig})
	if errors.Is(err, history.ErrNothingToCommit) {
		return "", nil
	}
	if err != nil {
		return "", errs.Wrap(errs.GitWrite, err, "committing edits made outside sessionvault")
	}
	return hash, nil
}

// CommitOutsideEdits commits, as the configured person, any of paths whose
// content differs from HEAD (used by `init` on an existing vault and by the
// daemon's watcher). It returns the commit, or "" when nothing differed.
func (v *Vault) CommitOutsideEdits(paths []string) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	l, err := v.lock()
	if err != nil {
		return "", err
	}
	defer l.unlock()
	repo, err := v.repo()
	if err != nil {
		return "", err
	}
	return v.commitOutsideEdits(repo, paths)
}

// commitMessage builds "<operation>: <summary>" with the trailers of DESIGN
// §6. State-Checksum is the SHA-256 over the committed notes, each as its
// path, a NUL, its content and a NUL, in path order.
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
	fmt.Fprintf(&b, "Operation: %s\nState-Checksum: sha256:%s\n", ch.Operation, hex.EncodeToString(h.Sum(nil)))
	return b.String()
}

// commitMarker is the state file that says a commit is under way: written
// before history takes git's lock files and removed after, so that the next
// operation can tell locks left by a killed commit from locks another git
// process holds.
const commitMarker = "committing"

// commit runs repo.Commit between the writing and the removal of the
// commit marker.
func (v *Vault) commit(repo *history.Repo, req history.CommitRequest) (string, error) {
	if err := v.WriteState(commitMarker, []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n")); err != nil {
		return "", err
	}
	hash, err := repo.Commit(req)
	if rerr := os.Remove(filepath.Join(v.Root, ".sessionvault", "state", commitMarker)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return hash, err
}

// clearKilledCommit handles a commit marker left by a process killed while
// committing. The caller holds the vault lock, so that process is gone; the
// git lock files it may have left (made within seconds of its marker) are
// removed, and locks of other git processes are left alone.
func (v *Vault) clearKilledCommit(repo *history.Repo) error {
	data, err := v.ReadState(commitMarker)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	at, perr := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
	if perr == nil {
		// A commit waits for git's locks for at most a few seconds.
		if _, err := repo.RemoveStaleLocks(at.Add(-time.Second), at.Add(30*time.Second)); err != nil {
			return err
		}
	}
	return os.Remove(filepath.Join(v.Root, ".sessionvault", "state", commitMarker))
}
