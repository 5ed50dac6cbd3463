package vault

import (
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// PathCommit is one commit that changed a file: its hash (40 hex digits),
// commit time, subject and trailers.
type PathCommit struct {
	Hash     string
	Time     time.Time
	Subject  string
	Trailers map[string]string
}

// PathLog lists the commits reachable from HEAD that changed rel, oldest
// first (git log --reverse -- rel): the file's versions, version N being
// the Nth. An unborn branch or a file never committed gives none.
func (v *Vault) PathLog(rel string) ([]PathCommit, error) {
	if err := CheckPath(rel); err != nil {
		return nil, err
	}
	out, err := v.gitRaw("log", "--reverse", "--no-renames", "--format=%H%x1f%cI%x1f%s%x1f%(trailers:only,unfold)%x1e", "--", rel)
	if err != nil {
		if h, _ := v.Head(); h == "" {
			return nil, nil
		}
		return nil, errs.Wrap(errs.GitWriteFailed, err, "reading the history of "+rel)
	}
	var log []PathCommit
	for _, rec := range strings.Split(string(out), "\x1e") {
		rec = strings.TrimLeft(rec, "\n")
		f := strings.Split(rec, "\x1f")
		if len(f) < 4 {
			continue
		}
		c := PathCommit{Hash: f[0], Subject: f[2], Trailers: map[string]string{}}
		c.Time, _ = time.Parse(time.RFC3339, f[1])
		for _, l := range strings.Split(f[3], "\n") {
			if k, val, ok := strings.Cut(l, ": "); ok {
				c.Trailers[k] = strings.TrimSpace(val)
			}
		}
		log = append(log, c)
	}
	return log, nil
}

// PathCommitCount is len(PathLog(rel)) at commit (a hash, or "HEAD")
// without reading the messages.
func (v *Vault) PathCommitCount(commit, rel string) (int, error) {
	if err := CheckPath(rel); err != nil {
		return 0, err
	}
	out, err := v.git("rev-list", "--count", commit, "--", rel)
	if err != nil {
		return 0, errs.Wrap(errs.GitWriteFailed, err, "counting the versions of "+rel)
	}
	n, err := strconv.Atoi(out)
	if err != nil {
		return 0, errs.Wrap(errs.GitWriteFailed, err, "counting the versions of "+rel)
	}
	return n, nil
}

// Tag is an annotated tag: its name without refs/tags/, the commit it
// names, when it was made, and its message.
type Tag struct {
	Name    string
	Commit  string
	Time    time.Time
	Message string
}

// CreateTag makes the annotated tag name on commit with message, tagged by
// the vault's agent identity (a tag that exists is an error).
func (v *Vault) CreateTag(name, commit, message string) error {
	cmd := []string{"-c", "user.name=" + v.Config.Agent.Name, "-c", "user.email=" + v.Config.Agent.Email,
		"tag", "-a", "-F", "-", name, commit}
	if _, err := v.gitIn(message, cmd...); err != nil {
		return errs.Wrap(errs.GitWriteFailed, err, "tagging "+shortHash(commit)+" as "+name)
	}
	return nil
}

// Tags lists the annotated tags whose names start with prefix, oldest
// first.
func (v *Vault) Tags(prefix string) ([]Tag, error) {
	out, err := v.gitRaw("for-each-ref", "--sort=creatordate", "--format=%(refname:strip=2)%1f%(*objectname)%1f%(creatordate:iso-strict)%1f%(contents)%1e", "refs/tags/"+prefix)
	if err != nil {
		return nil, errs.Wrap(errs.GitWriteFailed, err, "listing tags "+prefix+"*")
	}
	var tags []Tag
	for _, rec := range strings.Split(string(out), "\x1e") {
		rec = strings.TrimLeft(rec, "\n")
		f := strings.SplitN(rec, "\x1f", 4)
		if len(f) < 4 || f[1] == "" {
			continue
		}
		t := Tag{Name: f[0], Commit: f[1], Message: f[3]}
		t.Time, _ = time.Parse(time.RFC3339, f[2])
		tags = append(tags, t)
	}
	return tags, nil
}

// gitIn is git with stdin.
func (v *Vault) gitIn(stdin string, args ...string) (string, error) {
	cmd := gitCmd(v.Root, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := runGit(cmd, args)
	return strings.TrimSpace(string(out)), err
}

// ChangedSinceHead reports which of rels differ on disk from HEAD (missing
// on one side counts as a difference): history.Repo.Changed, which trusts
// the index's stat data where it can and reads only the files it must.
func (v *Vault) ChangedSinceHead(rels []string) ([]string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.repo()
	if err != nil {
		return nil, err
	}
	return r.Changed(rels)
}

// MergeBase returns the best common ancestor of commits a and b ("" when
// they have none).
func (v *Vault) MergeBase(a, b string) (string, error) {
	out, err := v.git("merge-base", a, b)
	if err != nil {
		if out == "" {
			return "", nil
		}
		return "", errs.Wrap(errs.GitWriteFailed, err, "finding the merge base of "+shortHash(a)+" and "+shortHash(b))
	}
	return out, nil
}

// ListAt lists the files directly in folder dir at commit (paths from the
// vault root); none when commit has no such folder.
func (v *Vault) ListAt(commit, dir string) ([]string, error) {
	if err := CheckPath(dir); err != nil {
		return nil, err
	}
	out, err := v.gitRaw("ls-tree", "-z", "--name-only", commit+":"+dir)
	if err != nil {
		return nil, nil
	}
	var files []string
	for _, n := range strings.Split(string(out), "\x00") {
		if n != "" {
			files = append(files, dir+"/"+n)
		}
	}
	return files, nil
}

// FindCommit returns the newest commit reachable from HEAD whose message
// has the trailer "key: value" ("" when none has). key and value are
// matched as a basic regular expression over a whole line: keep them to
// letters, digits and dashes.
func (v *Vault) FindCommit(key, value string) (string, error) {
	out, err := v.git("log", "-1", "--format=%H", "--grep=^"+key+": "+value+"$")
	if err != nil {
		if h, _ := v.Head(); h == "" {
			return "", nil
		}
		return "", errs.Wrap(errs.GitWriteFailed, err, "searching the history for "+key+": "+value)
	}
	return out, nil
}

// PendingFile is a file of the vault that differs from HEAD.
type PendingFile struct {
	Kind string // modified, added, deleted
	Path string // from the vault root
}

// Uncommitted lists the files under dir (a folder from the vault root, ""
// for all) that differ from HEAD, as git status sees them (untracked files
// included, ignored ones not).
func (v *Vault) Uncommitted(dir string) ([]PendingFile, error) {
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"}
	if dir != "" {
		if err := CheckPath(dir); err != nil {
			return nil, err
		}
		args = append(args, "--", dir)
	}
	out, err := v.gitRaw(args...)
	if err != nil {
		return nil, errs.Wrap(errs.GitWriteFailed, err, "reading the vault's status")
	}
	var files []PendingFile
	for _, rec := range strings.Split(string(out), "\x00") {
		if len(rec) < 4 {
			continue
		}
		kind := "modified"
		switch {
		case strings.Contains(rec[:2], "?"), strings.Contains(rec[:2], "A"):
			kind = "added"
		case strings.Contains(rec[:2], "D"):
			kind = "deleted"
		}
		files = append(files, PendingFile{Kind: kind, Path: rec[3:]})
	}
	return files, nil
}

// PathChangesSince is history.Repo.PathChangesSince on the vault's
// repository: the commits that changed rel on the first-parent chain from
// HEAD back to since, HEAD, and ok false when that cannot be told that way.
func (v *Vault) PathChangesSince(since, rel string, limit int) (n int, head string, ok bool, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.repo()
	if err != nil {
		return 0, "", false, err
	}
	return r.PathChangesSince(since, rel, limit)
}
