// Package vault is the vault on disk: finding it, its layout, safe paths,
// atomic writes, the cross-process lock, and the write path that turns every
// operation into exactly one git commit. Edits made outside
// the engine are found on the notes an operation touches and committed first,
// as the person's own commit. A journal makes multi-note operations atomic
// across a crash: a killed operation is rolled forward by the next one.
package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/lazyfree"
	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// Vault is an opened vault. It is safe for concurrent use by several
// goroutines: operations serialise on an in-process mutex and, across
// processes, on a lock file.
type Vault struct {
	// Root is the absolute path of the vault folder.
	Root string
	// Config is the vault's settings.
	Config config.Config

	mu       sync.Mutex    // one operation at a time within this process (go-git is not thread-safe)
	format   formatStamp   // the config file as Config.Version was read from it (FormatVersion)
	hist     *history.Repo // opened on first use; it revalidates its storage on every call
	basesRec *baseRecords  // the engine's last writes, read once per operation

	// afterSwap, when set (tests only), runs once an operation's new
	// versions are in place and journalled, before its commit.
	afterSwap func()
	machine   *Machine // this clone's identity, once read (Machine)

	// beforeSwap, when set (tests only), runs in a round between the check
	// of a note and its swap.
	beforeSwap func()
	// beforeSwapBack, when set (tests only), runs in a round's undo between
	// the check that the note is still ours and the swap back.
	beforeSwapBack func()
	// syncNote, when set (tests only), stands for the fsync of a note's new
	// version (durability fsync).
	syncNote func(f *os.File) error

	// freer keeps the freeing of replaced state and git files' blocks off
	// an operation's path (Freer).
	freer lazyfree.Freer
}

// Freer returns the vault's holder of files about to be replaced or
// removed (lazyfree): state files written beside the vault's operations
// (the hook's caches) hold their old versions with it.
func (v *Vault) Freer() *lazyfree.Freer { return &v.freer }

// initRemedy is the command that makes the folder abs a vault, as it can be
// pasted anywhere: the folder's absolute path quoted for the shell, and
// --project (which init requires) named after the current folder, or
// "main" where that name is not a project name or is the vault's own.
func initRemedy(abs string) string {
	project := "main"
	if wd, err := os.Getwd(); err == nil && wd != abs {
		if name := filepath.Base(wd); CheckName("project", name) == nil {
			project = name
		}
	}
	return "sessionvault init " + shellQuote(abs) + " --project " + project
}

// Open opens the vault at dir: dir must hold .sessionvault/ and be a git
// repository. Errors carry errs.VaultNotFound or errs.ConfigInvalid.
func Open(dir string) (*Vault, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if !IsVault(abs) {
		return nil, errs.New(errs.VaultNotFound, "%s is not a vault (no .sessionvault folder); run `%s` first", dir, initRemedy(abs))
	}
	if fi, err := os.Stat(filepath.Join(abs, ".git")); err != nil || !fi.IsDir() {
		return nil, errs.New(errs.VaultNotFound, "%s is not a git repository; a vault must be one (run `%s`)", dir, initRemedy(abs))
	}
	stamp := statConfig(abs) // before the reading: a change meanwhile is read again
	cfg, err := config.Load(abs)
	if err != nil {
		return nil, errs.Wrap(errs.ConfigInvalid, err, "reading the vault's settings")
	}
	v := &Vault{Root: abs, Config: cfg}
	v.format.fi = stamp
	return v, nil
}

// safeName matches a vault-relative path the engine may write: segments of
// letters, digits, '-', '_' and '.', no segment starting with '.', joined by '/'.
var safeName = lazyregexp.New(`^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$`)

// CheckPath validates a vault-relative, slash-separated path: it must not be
// absolute, contain "..", empty or hidden segments, or characters outside
// letters, digits, '-', '_', '.' and '/'. Errors carry errs.PathOutsideVault.
func CheckPath(rel string) error {
	if rel == ".gitignore" || rel == ".gitattributes" || rel == ".sessionvault/config.yaml" || rel == ".obsidian/types.json" || strings.HasPrefix(rel, ".sessionvault/templates/") && safeName().MatchString(strings.TrimPrefix(rel, ".sessionvault/templates/")) {
		return nil
	}
	if !safeName().MatchString(rel) || strings.Contains(rel, "..") {
		return errs.New(errs.PathOutsideVault, "%q is not a safe vault path (letters, digits, '-', '_', '.', '/' only; no '..', no leading '/' or '.')", rel)
	}
	return nil
}

var simpleName = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// CheckName validates one name used to build a path (a project, a session id):
// letters, digits, '-' and '_' only.
func CheckName(kind, name string) error {
	if !simpleName().MatchString(name) {
		return errs.New(errs.PathOutsideVault, "%s %q must be letters, digits, '-' and '_' (starting with a letter or digit)", kind, name)
	}
	return nil
}

// Abs returns the absolute path of a vault-relative path after CheckPath.
func (v *Vault) Abs(rel string) (string, error) {
	if err := CheckPath(rel); err != nil {
		return "", err
	}
	return filepath.Join(v.Root, filepath.FromSlash(rel)), nil
}

// checkParents refuses a path whose folders lead outside the vault through a
// symbolic link (a project's decisions/ linked to elsewhere): the engine
// writes only inside the vault. Errors carry errs.PathOutsideVault.
func (v *Vault) checkParents(rel string) error {
	dir := v.Root
	segs := strings.Split(rel, "/")
	for _, seg := range segs[:len(segs)-1] {
		dir = filepath.Join(dir, seg)
		fi, err := os.Lstat(dir)
		if err != nil {
			return nil // created as a real folder when written
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			if !fi.IsDir() {
				return errs.New(errs.NoteNotAFile, "%s: %s is a file where a folder should be", rel, strings.TrimPrefix(dir, v.Root+string(filepath.Separator))).With("note", rel)
			}
			continue
		}
		real, err := filepath.EvalSymlinks(dir)
		root, rerr := filepath.EvalSymlinks(v.Root)
		if err != nil || rerr != nil || (real != root && !strings.HasPrefix(real, root+string(filepath.Separator))) {
			return errs.New(errs.PathOutsideVault, "%s: the folder %s is a symbolic link leading outside the vault (to %s); sessionvault writes only inside the vault — replace the link by a folder", rel, strings.TrimPrefix(dir, v.Root+string(filepath.Separator)), real).With("note", rel)
		}
	}
	return nil
}

// ReadFile reads a vault-relative note, as a stable read: a note another
// process is writing is read once it has finished. A missing
// file gives an error satisfying errors.Is(err, os.ErrNotExist); a symlink,
// folder, FIFO, socket or device gives errs.NoteNotAFile.
func (v *Vault) ReadFile(rel string) ([]byte, error) {
	p, err := v.Abs(rel)
	if err != nil {
		return nil, err
	}
	data, _, err := readStable(p, rel)
	return data, err
}

// ReadNote is ReadFile for a note that must pass valid (e.g. parse): one that
// fails it is read again, with a growing pause, until it passes, a couple of
// seconds have passed (another process may be writing it in two steps), or
// its stat identity stayed the same for a quarter of a second (nobody is
// writing it: a broken note); then valid's last error is returned. A missing note is not retried. A note
// still failing after that wait is remembered by its stat identity
// (brokenNotesFile): read again unchanged, it fails at once, with the same
// error.
func (v *Vault) ReadNote(rel string, valid func([]byte) error) ([]byte, error) {
	p, err := v.Abs(rel)
	if err != nil {
		return nil, err
	}
	data, id, err := readStable(p, rel)
	if err != nil || valid(data) == nil {
		return data, err
	}
	if v.knownBroken(rel, id) {
		return data, valid(data)
	}
	broken := false
	data, err = v.settle(func() ([]byte, fileID, error) {
		data, again, err := readStable(p, rel)
		if err != nil {
			broken = false
			return nil, fileID{}, err
		}
		id, broken = again, true
		return data, again, valid(data)
	})
	if err != nil && broken {
		v.rememberBroken(rel, id)
	}
	return data, err
}

// stateDir returns the absolute path of the state folder, creating it.
func (v *Vault) stateDir(sub string) (string, error) {
	d := filepath.Join(v.Root, filepath.FromSlash(config.StateDir), sub)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", d, err)
	}
	return d, nil
}

// WriteState writes a file under .sessionvault/state (not committed)
// atomically but without fsync: heartbeats and other rebuildable state. A
// killed process never loses it; a power cut may lose the last write. The
// name is one file name (letters, digits, '_', '-', '.'), else an error.
func (v *Vault) WriteState(name string, data []byte) error {
	return v.writeState(name, data, Volatile)
}

// WriteStateDurable is WriteState with fsync of the file and its folder: for
// state whose loss would cost more than a rebuild (the sync ledger).
func (v *Vault) WriteStateDurable(name string, data []byte) error {
	return v.writeState(name, data, Durable)
}

func (v *Vault) writeState(name string, data []byte, durability int) error {
	if err := CheckName("state file", strings.ReplaceAll(name, ".", "_")); err != nil {
		return err
	}
	d, err := v.stateDir("")
	if err != nil {
		return err
	}
	tmp, err := v.stateDir("tmp")
	if err != nil {
		return err
	}
	path := filepath.Join(d, name)
	defer v.freer.Hold(path)()
	return AtomicWrite(tmp, path, data, durability)
}

// writeStateInPlace overwrites a file under .sessionvault/state in place
// (created once, then rewritten: no new file per write, which costs about
// half a millisecond on ext4). A process killed between the write and the
// truncation leaves the new content followed by the tail of a longer old
// one: JSON readers decode the first value only (decodeState). A file torn
// inside the write itself (a kill inside one write of more than a page)
// does not decode, and its reader (under the vault lock only) treats it as
// absent.
func (v *Vault) writeStateInPlace(name string, data []byte) error {
	d, err := v.stateDir("")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(d, name), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// clearState empties a file kept by writeStateInPlace; readStateInPlace then
// reports it absent.
//
// Best effort: a journal or marker left full is one the next operation
// finds already done (its commit made, its locks gone) and clears again.
//
// Where the vault's Freer is active, an empty file is renamed over it
// instead, the old one held: truncating frees its blocks on the
// operation's path (lazyfree).
func (v *Vault) clearState(name string) {
	p := filepath.Join(v.Root, filepath.FromSlash(config.StateDir), name)
	if v.freer.Active() {
		fi, err := os.Lstat(p)
		if err != nil || fi.Size() == 0 {
			return
		}
		if tmp, err := v.stateDir("tmp"); err == nil && fi.Mode().IsRegular() {
			done := v.freer.Hold(p)
			err = AtomicWrite(tmp, p, nil, Volatile)
			done()
			if err == nil {
				return
			}
		}
	}
	_ = os.Truncate(p, 0)
}

// removeLater removes the file at p, holding it (lazyfree) so that its
// blocks are freed beside the operation.
func (v *Vault) removeLater(p string) {
	done := v.freer.Hold(p)
	os.Remove(p)
	done()
}

// decodeState decodes the first JSON value of data, a file kept by
// writeStateInPlace, into x: what follows it is the tail of a longer
// earlier content that a kill before the truncation left.
func decodeState(data []byte, x any) error {
	return json.NewDecoder(bytes.NewReader(data)).Decode(x)
}

// readStateInPlace reads a file kept by writeStateInPlace: an empty or
// missing one gives an error satisfying errors.Is(err, os.ErrNotExist).
func (v *Vault) readStateInPlace(name string) ([]byte, error) {
	data, err := v.ReadState(name)
	if err == nil && len(data) == 0 {
		return nil, os.ErrNotExist
	}
	return data, err
}

// StatePath returns the absolute path of the state file name under
// .sessionvault/state, creating the folder: for a state file written in a
// way WriteState does not (appended to, created exclusively with its own
// permissions). The one place besides WriteState and ReadState that names
// the state folder.
func (v *Vault) StatePath(name string) (string, error) {
	if err := CheckName("state file", strings.ReplaceAll(name, ".", "_")); err != nil {
		return "", err
	}
	d, err := v.stateDir("")
	if err != nil {
		return "", err
	}
	return filepath.Join(d, name), nil
}

// ReadState reads a file under .sessionvault/state.
func (v *Vault) ReadState(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(v.Root, filepath.FromSlash(config.StateDir), name))
}

// repo returns the vault's repository, opening it on first use. The
// history.Repo re-reads refs and the index on every call and reopens its
// object storage when the packs change (an external git gc), so keeping it
// across operations is safe and saves the pack index load.
// Callers hold v.mu.
func (v *Vault) repo() (*history.Repo, error) {
	if v.hist != nil {
		return v.hist, nil
	}
	r, err := history.Open(v.Root)
	if err != nil {
		return nil, errs.Wrap(errs.VaultNotFound, err, "opening the vault's git repository")
	}
	r.SetFreer(&v.freer)
	switch v.Config.Durability {
	case "syncfs":
		r.SetDurability(history.SyncFS)
	case "fsync":
		r.SetDurability(history.FsyncOwn)
	}
	v.hist = r
	return r, nil
}

// Committed returns rel as HEAD holds it (os.ErrNotExist-like error when
// HEAD has no such file, or there is no commit yet).
func (v *Vault) Committed(rel string) ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.repo()
	if err != nil {
		return nil, err
	}
	return r.ReadFile(rel)
}

// Head returns the commit HEAD names (40 hex digits; "" before the first
// commit).
func (v *Vault) Head() (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.repo()
	if err != nil {
		return "", err
	}
	return r.Head()
}

// Log returns the vault's history, newest first, at most limit commits.
func (v *Vault) Log(limit int) ([]history.CommitInfo, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.repo()
	if err != nil {
		return nil, err
	}
	log, err := r.Log(limit)
	if errors.Is(err, history.ErrNoCommits) {
		return nil, nil
	}
	return log, err
}
