package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// CommitRequest says what Commit commits: files as they are on disk.
type CommitRequest struct {
	// Paths are slash-separated paths relative to the work tree. Each file's
	// current content on disk is committed (a regular file as mode 100644,
	// or 100755 when its owner-executable bit is set; a symlink as 120000
	// with its target as content); a path absent on disk, or a directory on
	// disk, means the file is gone: a deletion. Other file types (sockets,
	// devices) are an error.
	// Duplicates are ignored; order does not matter.
	Paths []string
	// Message is the full commit message; its first line is the subject.
	// Trailing spaces, leading and trailing blank lines and repeated blank
	// lines are removed and a final newline added, as `git commit -m` does.
	Message string
	// Author of the change.
	Author Signature
	// Committer; the zero value means the same as Author.
	Committer Signature
}

// File is one path of a CommitSpec, with its content taken from memory, not
// from the work tree.
type File struct {
	// Path is slash-separated, relative to the work tree.
	Path string
	// Content is the blob committed (ignored when Deleted).
	Content []byte
	// Deleted removes the path from the tree and the index.
	Deleted bool
	// Mode is the git mode: 0 means 0100644; 0100755 and 0120000 (a
	// symlink, whose Content is its target) are the others allowed.
	Mode uint32
	// Stat, when not nil, is the work-tree file's stat taken while its
	// content was known to be Content (e.g. fstat of a file the caller
	// wrote, before anyone else could write it); it becomes the index
	// entry's stat data. When nil, Commit reads the work-tree file: the
	// stat data is recorded only if the file holds Content, otherwise the
	// entry gets zeroed stat data, so git compares the content and sees the
	// difference.
	Stat os.FileInfo

	sd *statData // set by diskFile: the stat taken around the read
}

// CommitSpec is one commit of a chain made by IndexLock.Commit.
type CommitSpec struct {
	// Files are the paths this commit sets or deletes; the rest of the tree
	// is its parent's.
	Files []File
	// Message is cleaned as CommitRequest.Message.
	Message string
	// Author and Committer as in CommitRequest.
	Author, Committer Signature
	// AllowEmpty makes the commit even when its tree equals its parent's
	// (`git commit --allow-empty`): a record of an operation whose changes
	// another commit already holds.
	AllowEmpty bool
}

// Commit commits exactly req.Paths, like `git commit --only -- paths`: the
// new commit's tree is HEAD's tree with those paths set to their content on
// disk (or removed), and other entries of the index, staged or not, are left
// alone. It updates the index entries of the paths as `git add` would, the
// branch HEAD points to (or a detached HEAD) and both reflogs, all under
// git's lock files. The first commit of an unborn branch has no parent.
//
// It returns the new commit's hash (40 lowercase hex digits). Errors:
// ErrNothingToCommit when the resulting tree equals HEAD's (no commit is
// made, nothing is written), ErrInvalidPath for a bad path (nothing
// written), ErrLocked when another process holds index.lock, HEAD.lock or
// the branch's lock for longer than the lock timeout, ErrConcurrentUpdate
// when the branch kept moving (another process committing) through every
// retry, ErrUnsupportedIndex for an index format it cannot patch. On any
// error the index, refs and reflogs are as they were, with one exception:
// when the commit became visible but fsyncing the directories afterwards
// failed, Commit returns both the hash and the error.
func (r *Repo) Commit(req CommitRequest) (string, error) {
	paths, err := cleanPaths(req.Paths)
	if err != nil {
		return "", err
	}
	if len(paths) == 0 {
		return "", fmt.Errorf("%w: no paths given", ErrNothingToCommit)
	}
	l, err := r.LockIndex()
	if err != nil {
		return "", err
	}
	defer l.Release()
	files := make([]File, 0, len(paths))
	for _, p := range paths {
		f, err := r.diskFile(p)
		if err != nil {
			return "", err
		}
		files = append(files, f)
	}
	hashes, err := l.Commit([]CommitSpec{{Files: files, Message: req.Message, Author: req.Author, Committer: req.Committer}})
	if len(hashes) == 1 && hashes[0] != "" {
		return hashes[0], err
	}
	if err == nil {
		err = ErrNothingToCommit
	}
	return "", err
}

// diskFile reads a work-tree path as Commit commits it: a regular file or a
// symlink's target, or a deletion when the path is absent or a directory.
func (r *Repo) diskFile(p string) (File, error) {
	full := filepath.Join(r.root, filepath.FromSlash(p))
	sd, err := lstat(full)
	switch {
	case err == nil && sd.mode&sIFMT == sIFDIR:
		return File{Path: p, Deleted: true}, nil
	case err == nil:
		mode := gitMode(sd.mode)
		if mode == 0 {
			return File{}, fmt.Errorf("%w: %s is not a regular file or symlink", ErrInvalidPath, p)
		}
		_, content, err := hashWorktreeFile(full, sd)
		if err != nil {
			return File{}, fmt.Errorf("history: read %s: %w", p, err)
		}
		f := File{Path: p, Content: content, Mode: mode}
		if after, err := lstat(full); err == nil && after == sd {
			f.sd = &after // unchanged while it was read: the stat is the content's
		}
		return f, nil
	case isNotExist(err):
		return File{Path: p, Deleted: true}, nil
	default:
		return File{}, fmt.Errorf("history: %w", err)
	}
}

// cleanSpec is a validated CommitSpec: files sorted by path, one per path.
type cleanSpec struct {
	files      []File
	msg        string
	author     Signature
	committer  Signature
	allowEmpty bool
}

func cleanCommitSpec(s CommitSpec) (cleanSpec, error) {
	msg, err := cleanMessage(s.Message)
	if err != nil {
		return cleanSpec{}, err
	}
	author, committer, err := signatures(s.Author, s.Committer)
	if err != nil {
		return cleanSpec{}, err
	}
	byPath := make(map[string]File, len(s.Files))
	for _, f := range s.Files {
		if err := validatePath(f.Path); err != nil {
			return cleanSpec{}, err
		}
		switch f.Mode {
		case 0:
			f.Mode = 0o100644
		case 0o100644, 0o100755, 0o120000:
		default:
			return cleanSpec{}, fmt.Errorf("%w: %s: mode %o is not a file mode git stores", ErrInvalidPath, f.Path, f.Mode)
		}
		byPath[f.Path] = f
	}
	files := make([]File, 0, len(byPath))
	for _, f := range byPath {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return cleanSpec{files: files, msg: msg, author: author, committer: committer, allowEmpty: s.AllowEmpty}, nil
}

func signatures(author, committer Signature) (Signature, Signature, error) {
	if author.When.IsZero() {
		author.When = time.Now()
	}
	if committer == (Signature{}) {
		committer = author
	} else if committer.When.IsZero() {
		committer.When = author.When
	}
	for _, s := range []*Signature{&author, &committer} {
		s.Name = strings.TrimSpace(s.Name)
		s.Email = strings.TrimSpace(s.Email)
		if s.Name == "" {
			return author, committer, errors.New("history: empty signature name")
		}
		if strings.ContainsAny(s.Name+s.Email, "<>\n\r\x00") {
			return author, committer, fmt.Errorf("history: signature %q <%s> contains '<', '>', NUL or a newline", s.Name, s.Email)
		}
		s.When = s.When.Truncate(time.Second)
	}
	return author, committer, nil
}

// cleanMessage does `git commit -m`'s whitespace cleanup.
func cleanMessage(msg string) (string, error) {
	lines := strings.Split(strings.ReplaceAll(msg, "\r\n", "\n"), "\n")
	var b strings.Builder
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			blank = b.Len() > 0
			continue
		}
		if blank {
			b.WriteByte('\n')
			blank = false
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		return "", errors.New("history: empty commit message")
	}
	return b.String(), nil
}
