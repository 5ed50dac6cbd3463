// Package history versions the vault: it turns a set of changed notes into
// exactly one git commit, and reads history back (log, file at HEAD).
//
// It is the only package of the module that imports go-git, and it imports
// nothing else from the module.
//
// # How a commit is made
//
// The repository must stay consistent for the real git CLI and for Obsidian
// Git working on it at the same time, and a commit must be fast on a vault of
// 10,000 notes (see shared/research/commit-floor.md). So Commit never uses
// go-git's worktree (Add, Status, Commit and SetIndex scan the whole tree and
// write the index without git's lock). Instead it follows `git commit --only`:
//
//   - it takes .git/index.lock (O_CREATE|O_EXCL) for the whole operation,
//     retrying for up to two seconds while another git holds it, and reads
//     HEAD once no HEAD.lock or branch lock shows another commit between its
//     index and ref renames;
//   - it patches the binary index (versions 2 and 3) as bytes: the entries
//     of the committed paths get the blob id and the stat data `git add`
//     would write, new paths are inserted, deleted paths removed, and racily
//     clean entries smudged (size set to 0, as git does, comparing whole
//     seconds). The cache-tree (TREE) is kept: a directory node along a
//     changed path that matched HEAD gets the new tree id, any other touched
//     node is invalidated. Every other extension (UNTR, EOIE, IEOT, FSMN,
//     REUC) is dropped; git rebuilds them when it needs them;
//   - it rewrites only the trees along the changed paths, starting from HEAD's
//     tree, and writes blobs, trees and the commit as loose objects (zlib
//     level 1, temporary file and rename, like git);
//   - it takes HEAD.lock and <ref>.lock, compares the branch with the parent
//     it used (ErrConcurrentUpdate otherwise), writes the new value and
//     appends the reflogs of the branch and of HEAD;
//   - durability: one barrier makes the new objects, index.lock, the ref
//     lock and the reflog lines durable before anything becomes visible
//     (SetDurability). By default every new file and each directory that
//     got a new entry is fsynced, concurrently: the commit pays for its own
//     bytes only. With SyncFS (Linux) it is one syncfs(2) of the file system
//     holding .git, about 2 ms faster on a quiet machine, but it also waits
//     for every other program's pending writes to that file system, so a
//     large unrelated write in progress delays the commit. Then index.lock
//     is renamed over the index, the ref lock over the ref, HEAD.lock is
//     removed, and the directories holding the renamed files are fsynced.
//     When Commit returns nil the commit is on disk.
//
// On an error before the renames every lock it created is removed, reflog
// appends are undone, and the repository is as it was (apart from
// unreachable loose objects, which git gc prunes).
//
// # Concurrency
//
// A Repo guards itself with a mutex, so its methods may be called from many
// goroutines; they run one at a time. Other processes (git, Obsidian Git,
// another sessionvault) are excluded by git's lock files only, so a
// read-modify-commit cycle that must not interleave with other writers needs
// a lock of the caller's own around it.
//
// Objects are read with go-git from a storage that is reopened whenever
// .git/objects/pack changes (git gc, repack) and retried once with a fresh
// one on any read error, so an external gc never leaves a Repo stale; it is
// not reopened on every call because go-git loads a pack's whole .idx on the
// first read (8-28 ms for 40,000 objects). Decoded trees and commit->tree
// links are cached by hash, which never goes stale, as is the shared index
// of a split index (named by its checksum); the index last read or written
// is reused while the index file's inode, size and times are unchanged, and
// when it changed, the new one is read into the old one's buffers.
//
// # Limits
//
// The index must be version 2 or 3, whole or split (the link extension: see
// splitindex.go), without a sparse index (sdir), any other required
// extension or an all-zero checksum (index.skipHash): ErrUnsupportedIndex
// otherwise. Content filters
// (.gitattributes eol/text conversion, LFS, core.autocrlf) are not applied:
// files are committed byte for byte. core.fileMode=false and
// core.symlinks=false are not honoured (Linux semantics are assumed).
package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Errors returned by this package. Test them with errors.Is; the returned
// errors wrap them with the details (path, lock file, hashes).
var (
	// ErrNothingToCommit: the committed paths already match HEAD's tree, so
	// no commit was made and nothing was written.
	ErrNothingToCommit = errors.New("history: nothing to commit")
	// ErrConcurrentUpdate: the branch (or HEAD) moved between reading the
	// parent and locking the ref; nothing visible was changed.
	ErrConcurrentUpdate = errors.New("history: branch was updated concurrently")
	// ErrNotRepository: the directory has no .git directory.
	ErrNotRepository = errors.New("history: not a git repository")
	// ErrNoCommits: HEAD names a branch that has no commit yet.
	ErrNoCommits = errors.New("history: no commits yet")
	// ErrUnsupportedIndex: .git/index uses a format this package does not
	// patch (version 4, sparse index, another required extension, or an
	// all-zero trailing checksum).
	ErrUnsupportedIndex = errors.New("history: unsupported index format")
	// ErrLocked: a git lock file (index.lock, HEAD.lock, <ref>.lock) stayed
	// held by another process for the whole lock timeout (about 2 s). The
	// error text names the lock file. Nothing was changed.
	ErrLocked = errors.New("history: lock file is held by another process")
	// ErrInvalidPath: a path is empty, absolute, has an empty, "." or ".."
	// segment, a NUL byte, or a ".git" segment; or it cannot be committed
	// (a special file such as a socket, a conflicted index entry, a file where
	// the index or HEAD has a directory or the reverse). Nothing was written.
	ErrInvalidPath = errors.New("history: invalid path")
)

// DefaultLockTimeout is how long Commit waits for a git lock file held by
// another process before it fails with ErrLocked.
const DefaultLockTimeout = 2 * time.Second

// Signature identifies the author or committer of a commit. Name must not be
// empty; Name and Email must not contain '<', '>', NUL or a newline. When is
// the time recorded with its zone offset (seconds precision); the zero time
// means "now".
type Signature struct {
	Name, Email string
	When        time.Time
}

// Repo is a git repository with a work tree, opened by Open. It holds no
// open go-git Repository between calls (only a storage that is revalidated on
// every call, and caches keyed by object hash). A Repo's methods lock an
// internal mutex, so one Repo may be shared by goroutines; one Repo per
// repository per process is the intended use.
type Repo struct {
	mu     *sync.Mutex
	root   string // work tree, absolute
	gitdir string // root/.git

	lockTimeout time.Duration
	casRetries  int // how often IndexLock.Commit rebuilds on a moved branch

	// go-git storage, valid while objects/pack is unchanged.
	st      *filesystem.Storage
	stStamp fileStamp

	trees      map[plumbing.Hash][]object.TreeEntry
	treeCount  int // total entries cached in trees
	commitTree map[plumbing.Hash]plumbing.Hash

	// The index this Repo last read or wrote (the merged view of a split
	// index), and the stamp of its file; reused while the file is unchanged.
	idx      *index
	idxStamp fileStamp
	spare    []byte // a buffer for the next index rebuild

	// Work-tree files hashed because their entries were racily clean,
	// vouched for while their stat data stays the same.
	verified verifiedBlobs

	// The shared index of a split index last read (immutable: named by its
	// checksum), and the settings of .git/config this package follows.
	shared   *index
	sharedID plumbing.Hash
	cfg      repoConfig
	cfgStamp fileStamp
	cfgRead  bool
	freshID  plumbing.Hash // the shared index last freshened, and when
	freshAt  time.Time

	zw *zlibWriter

	// syncfs selects one syncfs(2) as the durability barrier, batch a
	// write-out of each new file and one journal commit, instead of
	// concurrent fsyncs of the new files and folders (SetDurability).
	syncfs bool
	batch  bool

	// freer holds the index and refs a commit replaces (SetFreer).
	freer Holder

	// Test hook: called after the objects and the new index are written,
	// before the ref locks are taken.
	beforeRefLock func()
}

// Init creates a git repository in dir (created if missing) unless dir/.git
// already exists: a .git directory with HEAD -> refs/heads/main, objects/,
// refs/heads, refs/tags and a config like `git init`'s. created reports
// whether it made one. It fails with ErrNotRepository if dir/.git exists but
// is not a directory.
func Init(dir string) (created bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	gitdir := filepath.Join(abs, ".git")
	if fi, err := os.Lstat(gitdir); err == nil {
		if !fi.IsDir() {
			return false, fmt.Errorf("%w: %s is not a directory", ErrNotRepository, gitdir)
		}
		return false, nil
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp(abs, ".git-init-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp) // no-op after a successful rename
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags", "info"} {
		if err := os.MkdirAll(filepath.Join(tmp, filepath.FromSlash(d)), 0o755); err != nil {
			return false, err
		}
	}
	files := map[string]string{
		"HEAD":        "ref: refs/heads/main\n",
		"config":      "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
		"description": "Unnamed repository; edit this file 'description' to name the repository.\n",
	}
	for name, content := range files {
		if err := writeFileSync(filepath.Join(tmp, name), []byte(content), 0o644); err != nil {
			return false, err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return false, err
	}
	if err := syncDir(tmp); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, gitdir); err != nil {
		if _, statErr := os.Lstat(gitdir); statErr == nil {
			return false, nil // someone else created it meanwhile
		}
		return false, err
	}
	if err := syncDir(abs); err != nil {
		return true, err
	}
	return true, nil
}

// Open opens the repository whose work tree is dir. dir/.git must be a
// directory holding a HEAD file; otherwise the error wraps ErrNotRepository.
// Open reads nothing else; every method reads the repository afresh.
func Open(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	gitdir := filepath.Join(abs, ".git")
	fi, err := os.Stat(gitdir)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s has no .git directory", ErrNotRepository, abs)
	}
	if _, err := os.Stat(filepath.Join(gitdir, "HEAD")); err != nil {
		return nil, fmt.Errorf("%w: %s has no HEAD", ErrNotRepository, gitdir)
	}
	return &Repo{
		mu:          new(sync.Mutex),
		root:        abs,
		gitdir:      gitdir,
		lockTimeout: DefaultLockTimeout,
		casRetries:  10,
		batch:       haveBatch(gitdir),
	}, nil
}

// Durability is how a commit is made durable before it becomes visible.
type Durability int

const (
	// FsyncOwn fsyncs exactly the files and directories the commit wrote,
	// concurrently: its cost is the commit's own bytes, but each fsync may
	// wait for a journal commit and a device flush of its own.
	FsyncOwn Durability = iota
	// SyncFS issues one syncfs(2) of the file system holding .git (Linux;
	// elsewhere it is FsyncOwn): cheaper alone, but it waits for every
	// other program's pending writes to that file system.
	SyncFS
	// Batch (the default) writes out exactly the files the commit wrote
	// (sync_file_range(2)) and then makes them, their folders' entries and
	// later the publishing renames durable with one journal commit each
	// (an fsync of a new file): two device flushes per commit, whatever
	// else writes to the disk. Linux on ext4, XFS and btrfs, whose journal
	// commits in order (git's core.fsyncMethod=batch); elsewhere FsyncOwn.
	Batch
)

// SetDurability chooses how commits are made durable (Batch by default).
func (r *Repo) SetDurability(d Durability) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncfs = d == SyncFS && haveSyncfs
	r.batch = d == Batch && haveBatch(r.gitdir)
}

// Holder holds a file about to be replaced open until done is called, so
// that the replacement does not free its blocks on the caller's path
// (sessionvault's lazyfree.Freer).
type Holder interface {
	Hold(path string) (done func())
}

// SetFreer makes commits hold the index and ref files they replace with f
// (nil: none), so that freeing their blocks stays off the commit's path.
func (r *Repo) SetFreer(f Holder) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.freer = f
}

// CoversWorkTree reports whether the durability barrier of a commit also
// makes the work tree's new files and renames that came before it durable
// (SyncFS, Batch): callers that wrote such files need then only write them
// out (WriteOut), not fsync them and their folders.
func (r *Repo) CoversWorkTree() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.syncfs || r.batch
}

// WriteOut writes a file's data to the device ahead of a covering barrier
// (see CoversWorkTree): sync_file_range(2) on Linux, fsync elsewhere.
func WriteOut(f *os.File) error { return writeout(f) }

// Root returns the absolute path of the work tree.
func (r *Repo) Root() string { return r.root }

// Head returns the hash (40 lowercase hex digits) of the commit HEAD points
// to. It returns an error wrapping ErrNoCommits when HEAD names a branch with
// no commit yet.
func (r *Repo) Head() (hash string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.readHead()
	if err != nil {
		return "", err
	}
	if h.hash.IsZero() {
		return "", fmt.Errorf("%w: %s", ErrNoCommits, h.refDisplay())
	}
	return h.hash.String(), nil
}

// validatePath checks a slash-separated work-tree-relative path.
func validatePath(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty path", ErrInvalidPath)
	}
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) {
		return fmt.Errorf("%w: %q is absolute", ErrInvalidPath, p)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("%w: %q contains NUL", ErrInvalidPath, p)
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("%w: %q has an empty segment", ErrInvalidPath, p)
		case seg == "." || seg == "..":
			return fmt.Errorf("%w: %q has a %q segment", ErrInvalidPath, p, seg)
		case strings.EqualFold(seg, ".git"):
			return fmt.Errorf("%w: %q is inside .git", ErrInvalidPath, p)
		}
	}
	return nil
}

// cleanPaths validates paths and returns them sorted byte-wise, without
// duplicates.
func cleanPaths(paths []string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if err := validatePath(p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	sortStrings(out)
	j := 0
	for i, p := range out {
		if i > 0 && p == out[j-1] {
			continue
		}
		out[j] = p
		j++
	}
	return out[:j], nil
}
