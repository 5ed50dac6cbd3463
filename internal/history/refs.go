package history

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// headState is where HEAD points: a branch (symbolic) or a commit (detached).
type headState struct {
	symbolic bool
	ref      string        // "refs/heads/main"; "HEAD" when detached
	hash     plumbing.Hash // zero: the branch has no commit yet
}

func (h headState) refDisplay() string {
	if h.symbolic {
		return "HEAD -> " + h.ref
	}
	return "HEAD"
}

// readHead resolves HEAD through one level of symbolic ref, loose or packed.
func (r *Repo) readHead() (headState, error) {
	b, err := os.ReadFile(filepath.Join(r.gitdir, "HEAD"))
	if err != nil {
		return headState{}, fmt.Errorf("history: read HEAD: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if name, ok := strings.CutPrefix(s, "ref:"); ok {
		name = strings.TrimSpace(name)
		if !validRefName(name) {
			return headState{}, fmt.Errorf("history: HEAD points to an invalid ref %q", name)
		}
		h, err := r.readRef(name)
		if err != nil {
			return headState{}, err
		}
		return headState{symbolic: true, ref: name, hash: h}, nil
	}
	if !plumbing.IsHash(s) {
		return headState{}, fmt.Errorf("history: HEAD is neither a symbolic ref nor a commit: %q", s)
	}
	return headState{ref: "HEAD", hash: plumbing.NewHash(s)}, nil
}

func validRefName(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".lock") {
		return false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
			return false
		}
	}
	return !strings.ContainsAny(name, " ~^:?*[\\\x00\x7f") && !strings.Contains(name, "..") && !strings.Contains(name, "@{")
}

// readRef returns the value of a ref from its loose file or, when there is
// none, from packed-refs; the zero hash when it exists in neither.
func (r *Repo) readRef(name string) (plumbing.Hash, error) {
	b, err := os.ReadFile(filepath.Join(r.gitdir, filepath.FromSlash(name)))
	if err == nil {
		s := strings.TrimSpace(string(b))
		if strings.HasPrefix(s, "ref:") {
			return plumbing.ZeroHash, fmt.Errorf("history: %s is a symbolic ref; not supported", name)
		}
		if !plumbing.IsHash(s) {
			return plumbing.ZeroHash, fmt.Errorf("history: ref %s is corrupt: %q", name, s)
		}
		return plumbing.NewHash(s), nil
	}
	if !isNotExist(err) {
		return plumbing.ZeroHash, fmt.Errorf("history: read ref %s: %w", name, err)
	}
	packed, err := os.ReadFile(filepath.Join(r.gitdir, "packed-refs"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return plumbing.ZeroHash, nil
		}
		return plumbing.ZeroHash, fmt.Errorf("history: read packed-refs: %w", err)
	}
	for len(packed) > 0 {
		line := packed
		if i := bytes.IndexByte(packed, '\n'); i >= 0 {
			line, packed = packed[:i], packed[i+1:]
		} else {
			packed = nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(line) < 42 || line[0] == '#' || line[0] == '^' || line[40] != ' ' {
			continue
		}
		if string(line[41:]) == name {
			if !plumbing.IsHash(string(line[:40])) {
				return plumbing.ZeroHash, fmt.Errorf("history: packed-refs entry for %s is corrupt", name)
			}
			return plumbing.NewHash(string(line[:40])), nil
		}
	}
	return plumbing.ZeroHash, nil
}

// reflogEntry formats one reflog line.
func reflogEntry(old, new plumbing.Hash, who Signature, msg string) []byte {
	msg = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, msg)
	return fmt.Appendf(nil, "%s %s %s <%s> %d %s\t%s\n", old, new, who.Name, who.Email,
		who.When.Unix(), who.When.Format("-0700"), msg)
}

// reflogAppend is a reflog line appended by this commit, undoable until the
// commit becomes visible.
type reflogAppend struct {
	path     string
	origSize int64
	created  bool
}

// appendReflog appends line to the reflog file at path, creating it and its
// directories if missing (without fsync: the commit's barrier does that).
func appendReflog(path string, line []byte) (*reflogAppend, error) {
	ra := &reflogAppend{path: path}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if isNotExist(err) {
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("history: create reflog directory: %w", err)
		}
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o666)
		ra.created = err == nil
		if errors.Is(err, fs.ErrExist) {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("history: open reflog %s: %w", path, err)
	}
	if !ra.created {
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("history: stat reflog %s: %w", path, err)
		}
		ra.origSize = fi.Size()
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		ra.undo()
		return nil, fmt.Errorf("history: append reflog %s: %w", path, err)
	}
	return ra, nil
}

// undo removes the appended line again.
func (ra *reflogAppend) undo() {
	if ra == nil {
		return
	}
	if ra.created {
		os.Remove(ra.path)
		return
	}
	_ = os.Truncate(ra.path, ra.origSize) // best effort on a failing commit: a reflog line too many names a commit HEAD never had
}
