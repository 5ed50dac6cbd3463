package vault

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// Task claims through the vault's git remote: one ref per task,
// refs/sessionvault/claims/<project>/<task>, pointing at a commit (with the
// empty tree) whose message names the holder and the lease's end. Git's
// push is the arbiter: every change of a claim ref is a push with
// --force-with-lease naming the value the claimer saw (nothing, for a new
// claim), which the remote applies only if the ref still has it — a
// compare-and-swap under the remote's ref lock. No server of our own.

// ClaimRefs is the ref namespace of task claims on the remote.
const ClaimRefs = "refs/sessionvault/claims/"

// claimSeen is where a claim read from the remote is kept locally (fetched
// over), so that its commit is at hand as the parent of a renewal.
const claimSeen = "refs/sessionvault/remote-claims/"

// Claim is a task claim as its ref's commit states it.
type Claim struct {
	Project string    `json:"project"`
	Task    string    `json:"task"`
	Holder  string    `json:"holder"`  // a session id, or "machine:<name>"
	Machine string    `json:"machine"` // the holder's machine name
	Clone   string    `json:"clone"`   // the holder's clone (Machine.Clone): the claim is bound to it
	Taken   time.Time `json:"taken"`   // when the holder first took it (UTC)
	Expires time.Time `json:"expires"` // the end of the lease (UTC, by the holder's clock)
	Commit  string    `json:"commit"`  // the claim's commit on the remote (40 hex digits)
}

// Expired says whether the lease ended before now.
func (c Claim) Expired(now time.Time) bool { return !c.Expires.After(now) }

// Mine says whether c is held by holder on clone.
func (c Claim) Mine(holder, clone string) bool { return c.Holder == holder && c.Clone == clone }

// ClaimGrace is how long past its lease's end a claim still refuses
// another holder: lease ends are the holder's clock, and a taker whose
// clock runs ahead by less than this does not take a live claim. A tenth
// of the lease, at most a minute.
func ClaimGrace(lease time.Duration) time.Duration { return min(lease/10, time.Minute) }

// Claim take outcomes (TakeClaim).
const (
	ClaimCreated  = "created"   // there was none
	ClaimRenewed  = "renewed"   // the holder's own, its lease moved
	ClaimTakeover = "took over" // another holder's, whose lease had ended
)

// ClaimRef is the ref of task's claim in project. Task ids and project
// names are file names (CheckName), which a ref name takes as they are,
// except those git refuses in a ref name (holding "..", ending in ".lock",
// ...) or holding '%': those are "%" and their bytes in hex.
func ClaimRef(project, task string) string {
	return ClaimRefs + refPart(project) + "/" + refPart(task)
}

func refPart(s string) string {
	if s == "" || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".lock") || strings.HasSuffix(s, ".") ||
		strings.Contains(s, "..") || strings.ContainsAny(s, " ~^:?*[\\@{%") {
		return "%" + hex.EncodeToString([]byte(s))
	}
	return s
}

// ErrClaimHeld is the error of TakeClaim and ReleaseClaim when another
// holder's unexpired claim is on the remote; errors.As gives *ClaimHeldError.
var ErrClaimHeld = errors.New("the task is claimed by another holder")

// ClaimHeldError names the claim that refused a take or a release.
type ClaimHeldError struct{ Claim Claim }

func (e *ClaimHeldError) Error() string {
	return fmt.Sprintf("%s is claimed by %s (machine %s) until %s", e.Claim.Task, e.Claim.Holder, e.Claim.Machine, e.Claim.Expires.Format(time.RFC3339))
}

// Unwrap makes errors.Is(err, ErrClaimHeld) hold.
func (e *ClaimHeldError) Unwrap() error { return ErrClaimHeld }

// claimTries bounds the compare-and-swap rounds of one take: each lost
// round means another machine changed the claim in between.
const claimTries = 5

// TakeClaim takes (or renews, for its holder on the same clone: one
// session working on two machines holds a claim on one; or takes over,
// once expired and ClaimGrace past) c.Task's claim on remote for lease
// from now, and returns the claim as pushed and how it was taken
// (ClaimCreated, ClaimRenewed, ClaimTakeover). Another holder's claim is a
// *ClaimHeldError (wrapping ErrClaimHeld) naming it; a remote that cannot
// be reached is errs.NetworkUnavailable — nothing changed there. c gives
// Project, Task, Holder, Machine and Clone; Taken is kept across
// renewals.
func (v *Vault) TakeClaim(remote string, c Claim, lease time.Duration, now time.Time) (Claim, string, error) {
	ref := ClaimRef(c.Project, c.Task)
	now = now.UTC().Truncate(time.Second)
	// Most claims are new: try to create the ref before reading anything.
	cur, known, stuck := Claim{}, false, 0
	for try := 0; try < claimTries; try++ {
		next := c
		next.Taken, next.Expires = now, now.Add(lease)
		parent, how := "", ClaimCreated
		if known {
			switch {
			case cur.Mine(c.Holder, c.Clone):
				next.Taken, how = cur.Taken, ClaimRenewed
			case now.Before(cur.Expires.Add(ClaimGrace(lease))):
				return cur, "", &ClaimHeldError{Claim: cur}
			default:
				how = ClaimTakeover
			}
			parent = cur.Commit
		}
		commit, err := v.claimCommit(next, parent)
		if err != nil {
			return Claim{}, "", err
		}
		ok, refused, err := v.pushClaim(remote, ref, commit, parent)
		if err != nil {
			return Claim{}, "", err
		}
		if ok {
			next.Commit = commit
			return next, how, nil
		}
		was := parent
		if cur, known, err = v.ReadClaim(remote, c.Project, c.Task); err != nil {
			return Claim{}, "", err
		}
		if (known && cur.Commit == was) || (!known && was == "") {
			stuck++ // nothing moved (twice: the remote refuses the ref itself)
		}
		if stuck >= 2 {
			return Claim{}, "", errs.New(errs.RemoteSyncFailed, "claiming %s: %s refused the ref %s (%s); ask whoever runs the remote to allow refs/sessionvault/*, or remove the remote's name from this vault's config to keep task locks in the notes only", c.Task, remote, ref, refused)
		}
	}
	return Claim{}, "", errs.New(errs.RemoteSyncFailed, "claiming %s on %s: the claim changed %d times while this machine tried to take it; try again", c.Task, remote, claimTries)
}

// ReleaseClaim deletes task's claim on remote when holder on clone holds
// it (or, with force, whoever does) and says whether it deleted one. A
// claim that is not there is released already; another holder's (without
// force) is a *ClaimHeldError, expired or not: it is theirs to release, or
// to be taken over.
func (v *Vault) ReleaseClaim(remote, project, task, holder, clone string, force bool) (bool, error) {
	ref := ClaimRef(project, task)
	for try := 0; try < claimTries; try++ {
		cur, ok, err := v.ReadClaim(remote, project, task)
		if err != nil || !ok {
			return false, err
		}
		if !cur.Mine(holder, clone) && !force {
			return false, &ClaimHeldError{Claim: cur}
		}
		done, _, err := v.pushClaim(remote, ref, "", cur.Commit)
		if err != nil || done {
			return done, err
		}
	}
	return false, errs.New(errs.RemoteSyncFailed, "releasing the claim of %s on %s: it changed %d times meanwhile; try again", task, remote, claimTries)
}

// ReadClaim fetches task's claim from remote; ok is false when there is
// none. The claim's commit is kept under refs/sessionvault/remote-claims/.
func (v *Vault) ReadClaim(remote, project, task string) (Claim, bool, error) {
	ref := ClaimRef(project, task)
	seen := claimSeen + strings.TrimPrefix(ref, ClaimRefs)
	out, err := v.git(append(v.authArgs(remote), "ls-remote", "--refs", remote, ref)...)
	if err != nil {
		return Claim{}, false, v.claimGitError(err, remote, "reading the claim of "+task+" from")
	}
	oid, _, _ := strings.Cut(out, "\t")
	if oid == "" {
		_, _ = v.git("update-ref", "-d", seen)
		return Claim{}, false, nil
	}
	if _, err := v.git("cat-file", "-e", oid+"^{commit}"); err != nil {
		if _, err := v.git(append(v.authArgs(remote), "fetch", "--quiet", "--no-tags", remote, "+"+ref+":"+seen)...); err != nil {
			if strings.Contains(err.Error(), "couldn't find remote ref") {
				return Claim{}, false, nil // released between the two calls
			}
			return Claim{}, false, v.claimGitError(err, remote, "reading the claim of "+task+" from")
		}
		if oid, err = v.git("rev-parse", "--verify", "--quiet", seen); err != nil {
			return Claim{}, false, errs.Wrap(errs.GitWriteFailed, err, "reading the claim of "+task)
		}
	} else if _, err := v.git("update-ref", seen, oid); err != nil {
		return Claim{}, false, errs.Wrap(errs.GitWriteFailed, err, "keeping the claim of "+task)
	}
	msg, err := v.git("log", "-1", "--format=%B", oid)
	if err != nil {
		return Claim{}, false, errs.Wrap(errs.GitWriteFailed, err, "reading the claim of "+task)
	}
	c := parseClaim(msg)
	c.Project, c.Task, c.Commit = project, task, oid
	return c, true, nil
}

// claimCommit writes c's commit (the empty tree; parent, when not "", the
// claim it replaces) and returns its hash.
func (v *Vault) claimCommit(c Claim, parent string) (string, error) {
	tree, err := v.git("hash-object", "-t", "tree", "-w", "--stdin")
	if err != nil {
		return "", errs.Wrap(errs.GitWriteFailed, err, "writing the claim of "+c.Task)
	}
	args := append(v.asAgent(), "commit-tree", tree)
	if parent != "" {
		args = append(args, "-p", parent)
	}
	args = append(args, "-m", renderClaim(c))
	commit, err := v.git(args...)
	if err != nil {
		return "", errs.Wrap(errs.GitWriteFailed, err, "writing the claim of "+c.Task)
	}
	return commit, nil
}

// pushClaim sets ref on remote to commit ("" deletes it) if it is still
// was ("" = absent): ok when the remote took it; else refused is git's
// line for the ref (the ref had moved — another machine got there first —
// or the remote refuses it).
func (v *Vault) pushClaim(remote, ref, commit, was string) (ok bool, refused string, err error) {
	args := append(v.authArgs(remote), "push", "--porcelain", "--no-verify", "--force-with-lease="+ref+":"+was, remote, commit+":"+ref)
	out, err := v.git(args...)
	if err == nil {
		return true, "", nil
	}
	// Lost the race: the lease did not hold ("[rejected] (stale info)"), or
	// another push changed the ref under the remote's lock meanwhile
	// ("[remote rejected]": git's "cannot lock ref", a hosting service's
	// "incorrect old value provided"); or the remote refuses the ref. The
	// caller reads the claim again and tells which.
	msg := out + "\n" + err.Error()
	if strings.Contains(msg, "[rejected]") || strings.Contains(msg, "[remote rejected]") || strings.Contains(msg, "stale info") || strings.Contains(msg, "cannot lock ref") {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "!") {
				return false, strings.TrimSpace(strings.TrimPrefix(l, "!")), nil
			}
		}
		return false, "rejected", nil
	}
	return false, "", v.claimGitError(err, remote, "claiming on")
}

// claimGitError is errs.NetworkUnavailable for a remote that cannot be
// reached, else errs.RemoteSyncFailed with git's message.
func (v *Vault) claimGitError(err error, remote, what string) error {
	if unreachable(err) {
		return errs.Wrap(errs.NetworkUnavailable, err, what+" "+remote+": the remote cannot be reached")
	}
	return errs.Wrap(errs.RemoteSyncFailed, err, what+" "+remote)
}

// renderClaim is a claim commit's message: a subject and trailers.
func renderClaim(c Claim) string {
	return fmt.Sprintf("sessionvault claim: %s/%s\n\nTask: %s\nProject: %s\nHolder: %s\nMachine: %s\nClone: %s\nTaken: %s\nExpires: %s\n",
		c.Project, c.Task, c.Task, c.Project, c.Holder, c.Machine, c.Clone, c.Taken.UTC().Format(time.RFC3339), c.Expires.UTC().Format(time.RFC3339))
}

// parseClaim reads renderClaim's trailers; a claim commit made by hand
// without Expires is expired.
func parseClaim(msg string) Claim {
	var c Claim
	for _, l := range strings.Split(msg, "\n") {
		k, val, ok := strings.Cut(l, ": ")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch k {
		case "Holder":
			c.Holder = val
		case "Machine":
			c.Machine = val
		case "Clone":
			c.Clone = val
		case "Taken":
			c.Taken, _ = time.Parse(time.RFC3339, val)
		case "Expires":
			c.Expires, _ = time.Parse(time.RFC3339, val)
		}
	}
	return c
}
