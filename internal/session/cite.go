package session

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// Citations: what a decision rests on in the code — a file, a range of its
// lines, or a commit — recorded with what the code was then, so that the
// resume prompt and `status` can say when the code changed since and the
// decision needs a second look.
//
// A citation is kept in the decision's entry line (and its note's cites
// property) as text the engine reads back:
//
//	auth.go#L10-L20 at 1a2b3c4d5e6f sha256:0123456789abcdef
//	commit 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b
//
// "at" is the code repository's HEAD when it was cited, the SHA-256 (first
// 16 hex digits) that of the cited lines (the whole file without a range).

// Citation is one parsed citation of a decision.
type Citation struct {
	Path     string `json:"path,omitempty"` // relative to the code repository, with / separators
	From, To int    `json:"-"`              // the line range, 1-based, inclusive; 0 = the whole file
	At       string `json:"-"`              // HEAD of the code repository when cited ("" unknown)
	Sum      string `json:"-"`              // SHA-256 prefix of the cited text
	Commit   string `json:"commit,omitempty"`
}

var citeRangeRe = lazyregexp.New(`^(.+)#L(\d+)(?:-L?(\d+))?$`)

// String is the citation as kept in a decision.
func (c Citation) String() string {
	if c.Commit != "" {
		return "commit " + c.Commit
	}
	s := c.Path
	if c.From > 0 {
		s += fmt.Sprintf("#L%d-L%d", c.From, c.To)
	}
	if c.At != "" {
		s += " at " + shortSHA(c.At)
	}
	return s + " sha256:" + c.Sum
}

// parseCitation reads a citation as String writes it.
func parseCitation(s string) (Citation, bool) {
	s = strings.TrimSpace(s)
	if sha, ok := strings.CutPrefix(s, "commit "); ok {
		return Citation{Commit: strings.TrimSpace(sha)}, true
	}
	i := strings.LastIndex(s, " sha256:")
	if i < 0 {
		return Citation{}, false
	}
	c := Citation{Sum: strings.TrimSpace(s[i+len(" sha256:"):])}
	s = s[:i]
	if j := strings.LastIndex(s, " at "); j >= 0 {
		c.At, s = strings.TrimSpace(s[j+len(" at "):]), s[:j]
	}
	c.Path = s
	if m := citeRangeRe().FindStringSubmatch(s); m != nil {
		c.Path = m[1]
		c.From, _ = strconv.Atoi(m[2])
		c.To = c.From
		if m[3] != "" {
			c.To, _ = strconv.Atoi(m[3])
		}
	}
	return c, c.Path != "" && c.Sum != ""
}

// Cite resolves what a decision cites (decide --cite, MCP cite) in the
// project's code repository: "PATH", "PATH#L10-L20" (or #L10-20, #L10) or
// a commit. A path is taken relative to s.CodeDir (the working folder) and
// must lie in the code repository. Errors: errs.UpdateValidationFailed
// naming the --cite value (no code repository, no such file or commit, a
// range outside the file).
func (s *Service) Cite(project string, args []string) ([]Citation, error) {
	if len(args) == 0 {
		return nil, nil
	}
	repo := s.CodeRepo(project)
	bad := func(arg, format string, a ...any) error {
		return errs.New(errs.UpdateValidationFailed, "--cite %s: "+format, append([]any{arg}, a...)...).With("flag", "cite")
	}
	if repo == "" {
		return nil, bad(args[0], "no code repository was found: run the command in it")
	}
	head, _ := git(repo, "rev-parse", "HEAD")
	var out []Citation
	for _, arg := range args {
		if err := CheckFields("cite", arg); err != nil {
			return nil, err
		}
		c := Citation{Path: arg}
		if m := citeRangeRe().FindStringSubmatch(arg); m != nil {
			c.Path = m[1]
			c.From, _ = strconv.Atoi(m[2])
			c.To = c.From
			if m[3] != "" {
				c.To, _ = strconv.Atoi(m[3])
			}
			if c.From < 1 || c.To < c.From {
				return nil, bad(arg, "the range must be #Lx-Ly with 1 <= x <= y")
			}
		}
		path := s.citedPath(repo, c.Path)
		if path == "" {
			if c.From == 0 {
				if full, err := resolveCommit(repo, arg); err == nil {
					out = append(out, Citation{Commit: full})
					continue
				}
			}
			return nil, bad(arg, "no such file in the code repository %s, and no such commit", repo)
		}
		rel, _ := filepath.Rel(repo, path)
		c.Path, c.At = filepath.ToSlash(rel), head
		sum, err := citedSum(path, c.From, c.To)
		if err != nil {
			return nil, bad(arg, "%v", err)
		}
		c.Sum = sum
		out = append(out, c)
	}
	return out, nil
}

// citedPath returns the absolute path of a cited file: relative to the
// working folder, else to the code repository; "" when it is no file there
// or lies outside the repository.
func (s *Service) citedPath(repo, name string) string {
	p := filepath.FromSlash(name)
	var tries []string
	if filepath.IsAbs(p) {
		tries = []string{p}
	} else {
		dir := s.CodeDir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		tries = []string{filepath.Join(dir, p), filepath.Join(repo, p)}
	}
	for _, t := range tries {
		fi, err := os.Stat(t)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if rel, err := filepath.Rel(repo, t); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return t
		}
	}
	return ""
}

// citedSum is the SHA-256 prefix (16 hex digits) of lines from..to of the
// file at path (the whole file when from is 0).
func citedSum(path string, from, to int) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if from > 0 {
		lines := strings.SplitAfter(string(data), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if to > len(lines) {
			return "", fmt.Errorf("the file has %d lines, fewer than %d", len(lines), to)
		}
		data = []byte(strings.Join(lines[from-1:to], ""))
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:8]), nil
}

// CheckCitations marks the decisions of st whose cited code changed since
// they were recorded (Decision.Stale says how), checked in the project's
// code repository. Decisions without citations cost nothing.
func (s *Service) CheckCitations(st *State) {
	repo := ""
	looked := false
	for i := range st.Decisions {
		d := &st.Decisions[i]
		if len(d.Cites) == 0 {
			continue
		}
		if !looked {
			repo, looked = s.CodeRepo(st.Project), true
		}
		if repo == "" {
			return
		}
		var why []string
		for _, raw := range d.Cites {
			if w := citationStale(repo, raw); w != "" {
				why = append(why, w)
			}
		}
		d.Stale = strings.Join(why, "; ")
	}
}

// citationStale says how the code a citation names changed since, or "".
func citationStale(repo, raw string) string {
	c, ok := parseCitation(raw)
	if !ok {
		return ""
	}
	if c.Commit != "" {
		if on, err := onBranch(repo, c.Commit); err == nil && !on {
			return "commit " + shortSHA(c.Commit) + " is no longer on the branch"
		}
		return ""
	}
	path := filepath.Join(repo, filepath.FromSlash(c.Path))
	sum, err := citedSum(path, c.From, c.To)
	if os.IsNotExist(err) {
		return c.Path + " no longer exists"
	}
	if err == nil && strings.HasPrefix(sum, c.Sum) {
		return ""
	}
	if c.At != "" {
		if n, err := git(repo, "rev-list", "--count", c.At+"..HEAD", "--", c.Path); err == nil && n != "0" {
			if n == "1" {
				return "1 commit touched " + c.Path + " since"
			}
			return n + " commits touched " + c.Path + " since"
		}
	}
	return c.Path + " changed since"
}
