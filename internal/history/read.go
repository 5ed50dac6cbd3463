package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitInfo describes one commit.
type CommitInfo struct {
	// Hash is the commit id, 40 lowercase hex digits.
	Hash string
	// Author and Committer as recorded, When in the recorded zone offset.
	Author    Signature
	Committer Signature
	// Subject is the first line of the message; Body is the rest after the
	// blank line that follows it (trailers included), without trailing
	// newlines.
	Subject, Body string
	// Trailers are the "Key: value" lines of the message's last paragraph
	// (when it is not the subject and every line of it is such a line, or a
	// continuation line starting with a space), e.g. "Session",
	// "Operation", "State-Checksum". A key that occurs more than once keeps
	// its last value. Nil when there are none.
	Trailers map[string]string
	// Paths are the slash-separated paths of the files that differ from the
	// first parent (all files for a root commit), sorted; only filled by
	// LogWithPaths.
	Paths []string
}

// Log walks first-parent history from HEAD, newest first, and returns at
// most limit commits (limit <= 0: all). Paths is left nil. An unborn branch
// gives an empty list and no error.
func (r *Repo) Log(limit int) ([]CommitInfo, error) {
	return r.log(limit, false)
}

// LogWithPaths is Log with CommitInfo.Paths filled: the files each commit
// changed relative to its first parent. It reads two trees per changed
// directory per commit, so it is slower than Log.
func (r *Repo) LogWithPaths(limit int) ([]CommitInfo, error) {
	return r.log(limit, true)
}

func (r *Repo) log(limit int, withPaths bool) ([]CommitInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	head, err := r.readHead()
	if err != nil {
		return nil, err
	}
	var out []CommitInfo
	for h := head.hash; !h.IsZero() && (limit <= 0 || len(out) < limit); {
		c, err := r.commit(h)
		if err != nil {
			return out, err
		}
		info := commitInfo(c)
		info.Hash = h.String()
		var parent plumbing.Hash
		if len(c.ParentHashes) > 0 {
			parent = c.ParentHashes[0]
		}
		if withPaths {
			var parentTree plumbing.Hash
			if !parent.IsZero() {
				pc, err := r.commit(parent)
				if err != nil {
					return out, err
				}
				parentTree = pc.TreeHash
			}
			if info.Paths, err = r.diffTrees(parentTree, c.TreeHash, "", nil); err != nil {
				return out, err
			}
		}
		out = append(out, info)
		h = parent
	}
	return out, nil
}

func commitInfo(c *object.Commit) CommitInfo {
	info := CommitInfo{
		Author:    Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When},
		Committer: Signature{Name: c.Committer.Name, Email: c.Committer.Email, When: c.Committer.When},
	}
	msg := strings.ReplaceAll(c.Message, "\r\n", "\n")
	subject, body, _ := strings.Cut(msg, "\n")
	info.Subject = strings.TrimSpace(subject)
	info.Body = strings.Trim(body, "\n")
	info.Trailers = parseTrailers(info.Body)
	return info
}

// parseTrailers parses the last paragraph of body as "Key: value" lines.
func parseTrailers(body string) map[string]string {
	body = strings.TrimRight(body, " \t\n")
	if body == "" {
		return nil
	}
	para := body
	if i := strings.LastIndex(body, "\n\n"); i >= 0 {
		para = body[i+2:]
	}
	var t map[string]string
	last := ""
	for _, line := range strings.Split(para, "\n") {
		if (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) && last != "" {
			t[last] += " " + strings.TrimSpace(line)
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok || !isTrailerKey(key) {
			return nil
		}
		if t == nil {
			t = make(map[string]string)
		}
		t[key] = strings.TrimSpace(val)
		last = key
	}
	return t
}

func isTrailerKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// diffTrees appends to out the paths of blobs that differ between trees a
// and b (either may be zero), skipping identical subtrees.
func (r *Repo) diffTrees(a, b plumbing.Hash, prefix string, out []string) ([]string, error) {
	if a == b {
		return out, nil
	}
	ea, err := r.tree(a)
	if err != nil {
		return out, err
	}
	eb, err := r.tree(b)
	if err != nil {
		return out, err
	}
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		var x, y *object.TreeEntry
		switch {
		case j >= len(eb):
			x = &ea[i]
		case i >= len(ea):
			y = &eb[j]
		default:
			ka, kb := sortName(&ea[i]), sortName(&eb[j])
			switch {
			case ka < kb:
				x = &ea[i]
			case ka > kb:
				y = &eb[j]
			default:
				x, y = &ea[i], &eb[j]
			}
		}
		if x != nil {
			i++
		}
		if y != nil {
			j++
		}
		if x != nil && y != nil && x.Hash == y.Hash && x.Mode == y.Mode {
			continue
		}
		var ha, hb plumbing.Hash
		name := ""
		if x != nil {
			name = x.Name
			if x.Mode == filemode.Dir {
				ha = x.Hash
			} else {
				out = append(out, prefix+x.Name)
			}
		}
		if y != nil {
			name = y.Name
			if y.Mode == filemode.Dir {
				hb = y.Hash
			} else if x == nil || x.Mode == filemode.Dir {
				out = append(out, prefix+y.Name)
			}
		}
		if !ha.IsZero() || !hb.IsZero() {
			if out, err = r.diffTrees(ha, hb, prefix+name+"/", out); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// ReadFile returns the content of the file at path (slash-separated,
// relative to the work tree) in HEAD's tree; for a symlink, its target. The
// error wraps os.ErrNotExist (fs.ErrNotExist) when HEAD has no such file or
// there is no commit yet, ErrInvalidPath for a bad path or a directory.
func (r *Repo) ReadFile(path string) ([]byte, error) {
	return r.ReadFileAt("", path)
}

// ReadFileAt is ReadFile in the tree of commit (40 hex digits; "" means
// HEAD). An unknown commit is an error wrapping os.ErrNotExist.
func (r *Repo) ReadFileAt(commit, path string) ([]byte, error) {
	if err := validatePath(path); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var at plumbing.Hash
	if commit == "" {
		head, err := r.readHead()
		if err != nil {
			return nil, err
		}
		if head.hash.IsZero() {
			return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%w)", fs.ErrNotExist, ErrNoCommits)}
		}
		at = head.hash
	} else {
		if !plumbing.IsHash(commit) {
			return nil, fmt.Errorf("history: %q is not a commit hash", commit)
		}
		at = plumbing.NewHash(commit)
	}
	root, err := r.commitTreeHash(at)
	if err != nil {
		if commit != "" {
			return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: commit %s: %v", fs.ErrNotExist, commit, err)}
		}
		return nil, err
	}
	e, ok, err := r.lookup(root, path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fs.ErrNotExist}
	}
	if e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
		return nil, fmt.Errorf("%w: %s is a directory in %s", ErrInvalidPath, path, at)
	}
	return r.readBlob(e.Hash)
}

// Parent returns the first parent of commit (40 hex digits), or "" for a
// root commit.
func (r *Repo) Parent(commit string) (string, error) {
	if !plumbing.IsHash(commit) {
		return "", fmt.Errorf("history: %q is not a commit hash", commit)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.commit(plumbing.NewHash(commit))
	if err != nil {
		return "", err
	}
	if len(c.ParentHashes) == 0 {
		return "", nil
	}
	return c.ParentHashes[0].String(), nil
}

// SameAtHead reports whether path has the same entry (blob and mode, or
// absence) in commit's tree as in HEAD's. It reads trees only.
func (r *Repo) SameAtHead(commit, path string) (bool, error) {
	if err := validatePath(path); err != nil {
		return false, err
	}
	if !plumbing.IsHash(commit) {
		return false, fmt.Errorf("history: %q is not a commit hash", commit)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	head, err := r.readHead()
	if err != nil || head.hash.IsZero() {
		return false, err
	}
	c := plumbing.NewHash(commit)
	if c == head.hash {
		return true, nil
	}
	var entries [2]object.TreeEntry
	var found [2]bool
	for i, h := range []plumbing.Hash{c, head.hash} {
		root, err := r.commitTreeHash(h)
		if err != nil {
			return false, err
		}
		if entries[i], found[i], err = r.lookup(root, path); err != nil {
			return false, err
		}
	}
	return found[0] == found[1] && entries[0].Hash == entries[1].Hash && entries[0].Mode == entries[1].Mode, nil
}

// MatchesHead reports whether a work-tree file whose stat is fi holds HEAD's
// content for path, proven from the index alone: fi's stat data equals the
// path's stage-0 index entry in every field git compares, the entry is not
// racily clean, and its blob is the one HEAD's tree has. false means "not
// proven" — the caller compares content. It reads no file content.
func (r *Repo) MatchesHead(path string, fi os.FileInfo) (bool, error) {
	if err := validatePath(path); err != nil {
		return false, err
	}
	sd, ok := statFromInfo(fi)
	if !ok {
		return false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	head, err := r.readHead()
	if err != nil || head.hash.IsZero() {
		return false, err
	}
	root, err := r.commitTreeHash(head.hash)
	if err != nil {
		return false, err
	}
	x, err := r.loadIndex(filepath.Join(r.gitdir, "index"), plumbing.ZeroHash, false)
	if err != nil {
		return false, err
	}
	pos, cnt := x.search(path)
	if cnt != 1 || x.stage(pos) != 0 || x.racy(pos) || x.flags(pos)&flagValid != 0 || !statMatches(x.statAt(pos), sd) {
		return false, nil
	}
	e, ok, err := r.lookup(root, path)
	if err != nil || !ok {
		return false, err
	}
	return e.Hash == x.hash(pos) && uint32(e.Mode) == x.mode(pos), nil
}

// Changed reports which of paths (slash-separated, relative to the work
// tree) differ between the work tree and HEAD's tree, in the order given.
// For each path it compares the file's stat data with its index entry
// first: when they match exactly and the entry is not racily clean (its
// mtime second is older than the index file's), the file is taken to hold
// the entry's blob; otherwise the file is read and hashed. A path absent from
// both the work tree and HEAD is unchanged (a directory on disk counts as
// absent); present on one side only, it is changed; a mode change (executable bit, symlink) is a change. It reads
// only the given paths, their index entries and HEAD's trees along them,
// takes no lock and writes nothing. Errors: ErrInvalidPath for a bad path
// or a special file (socket, device), ErrUnsupportedIndex.
func (r *Repo) Changed(paths []string) ([]string, error) {
	for _, p := range paths {
		if err := validatePath(p); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	head, err := r.readHead()
	if err != nil {
		return nil, err
	}
	var root plumbing.Hash
	if !head.hash.IsZero() {
		if root, err = r.commitTreeHash(head.hash); err != nil {
			return nil, err
		}
	}
	x, err := r.loadIndex(filepath.Join(r.gitdir, "index"), plumbing.ZeroHash, false)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		var inHead object.TreeEntry
		headOK := false
		if !root.IsZero() {
			if inHead, headOK, err = r.lookup(root, p); err != nil {
				return nil, err
			}
			if headOK && (inHead.Mode == filemode.Dir || inHead.Mode == filemode.Submodule) {
				headOK = false
			}
		}
		full := filepath.Join(r.root, filepath.FromSlash(p))
		sd, err := lstat(full)
		if err == nil && sd.mode&sIFMT == sIFDIR {
			err = fs.ErrNotExist // a directory where the file was: the file is gone
		}
		if err != nil {
			if !isNotExist(err) {
				return nil, fmt.Errorf("history: %w", err)
			}
			if headOK {
				out = append(out, p)
			}
			continue
		}
		mode := gitMode(sd.mode)
		if mode == 0 {
			return nil, fmt.Errorf("%w: %s is not a regular file or symlink", ErrInvalidPath, p)
		}
		if !headOK {
			out = append(out, p)
			continue
		}
		if uint32(inHead.Mode) != mode {
			out = append(out, p)
			continue
		}
		var blob plumbing.Hash
		if pos, cnt := x.search(p); cnt == 1 && x.stage(pos) == 0 && !x.racy(pos) &&
			x.flags(pos)&flagValid == 0 && statMatches(x.statAt(pos), sd) {
			blob = x.hash(pos)
		} else {
			h, _, err := hashWorktreeFile(full, sd)
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					out = append(out, p)
					continue
				}
				return nil, fmt.Errorf("history: read %s: %w", p, err)
			}
			blob = h
		}
		if blob != inHead.Hash {
			out = append(out, p)
		}
	}
	return out, nil
}

// PathChangesSince counts the commits that changed path (its blob, mode or
// presence) on the first-parent chain from HEAD back to since (40 hex
// digits, not counted), and returns HEAD. ok is false when since is not on
// that chain within limit commits, or a merge is met on the way (a merge's
// other parents may hold changes the chain does not show): count them
// another way then. It reads commits and trees only.
func (r *Repo) PathChangesSince(since, path string, limit int) (n int, head string, ok bool, err error) {
	if err := validatePath(path); err != nil {
		return 0, "", false, err
	}
	if !plumbing.IsHash(since) {
		return 0, "", false, fmt.Errorf("history: %q is not a commit hash", since)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	hs, err := r.readHead()
	if err != nil || hs.hash.IsZero() {
		return 0, "", false, err
	}
	stop := plumbing.NewHash(since)
	entry := func(c plumbing.Hash) (object.TreeEntry, bool, error) {
		root, err := r.commitTreeHash(c)
		if err != nil {
			return object.TreeEntry{}, false, err
		}
		return r.lookup(root, path)
	}
	h := hs.hash
	cur, found, err := entry(h)
	if err != nil {
		return 0, "", false, err
	}
	for i := 0; h != stop; i++ {
		if i >= limit {
			return 0, hs.hash.String(), false, nil
		}
		c, err := r.commit(h)
		if err != nil {
			return 0, "", false, err
		}
		if len(c.ParentHashes) != 1 {
			return 0, hs.hash.String(), false, nil
		}
		p := c.ParentHashes[0]
		pe, pfound, err := entry(p)
		if err != nil {
			return 0, "", false, err
		}
		if pfound != found || pe.Hash != cur.Hash || pe.Mode != cur.Mode {
			n++
		}
		h, cur, found = p, pe, pfound
	}
	return n, hs.hash.String(), true, nil
}
