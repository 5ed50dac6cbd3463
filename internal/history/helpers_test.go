package history

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/testenv"
)

func TestMain(m *testing.M) {
	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL":   "/dev/null",
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     "Cli User",
		"GIT_AUTHOR_EMAIL":    "cli@example.com",
		"GIT_COMMITTER_NAME":  "Cli User",
		"GIT_COMMITTER_EMAIL": "cli@example.com",
		"GIT_OPTIONAL_LOCKS":  "0",
		// git verifies the cache-tree whenever it writes an index.
		"GIT_TEST_CHECK_CACHE_TREE": "1",
	} {
		os.Setenv(k, v)
	}
	code := testenv.Run(m)
	if benchVault.dir != "" {
		os.RemoveAll(benchVault.dir)
	}
	os.Exit(code)
}

// git runs the git CLI in dir and returns its stdout; it fails the test on a
// non-zero exit.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, errOut, err := gitRun(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func gitRun(dir string, args ...string) (string, string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

var agent = Signature{Name: "Agent Smith", Email: "agent@example.com"}

func newRepo(t testing.TB) (*Repo, string) {
	t.Helper()
	dir := t.TempDir()
	created, err := Init(dir)
	if err != nil || !created {
		t.Fatalf("Init: %v %v", created, err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

func mustCommit(t testing.TB, r *Repo, msg string, paths ...string) string {
	t.Helper()
	h, err := r.Commit(CommitRequest{Paths: paths, Message: msg, Author: agent})
	if err != nil {
		t.Fatalf("Commit(%v): %v", paths, err)
	}
	if len(h) != 40 {
		t.Fatalf("Commit returned %q", h)
	}
	return h
}

// checkConsistent asserts what git must see after one of our commits.
func checkConsistent(t testing.TB, dir string) {
	t.Helper()
	if out := git(t, dir, "status", "--porcelain"); out != "" {
		t.Errorf("git status --porcelain not empty:\n%s", out)
	}
	if out := git(t, dir, "diff-files", "--name-only"); out != "" {
		t.Errorf("git diff-files --name-only not empty:\n%s", out)
	}
	if out := git(t, dir, "diff-index", "--cached", "--name-only", "HEAD"); out != "" {
		t.Errorf("git diff-index --cached HEAD not empty:\n%s", out)
	}
	checkFsck(t, dir)
	checkCacheTree(t, dir)
	for _, l := range []string{"index.lock", "HEAD.lock", "refs/heads/main.lock"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", l)); err == nil {
			t.Errorf("%s left behind", l)
		}
	}
}

func checkFsck(t testing.TB, dir string) {
	t.Helper()
	out, errOut, err := gitRun(dir, "fsck", "--strict", "--no-dangling", "--no-progress")
	var problems []string
	for _, l := range strings.Split(out+errOut, "\n") {
		if l != "" && !strings.HasPrefix(l, "notice: HEAD points to an unborn branch") && !strings.HasPrefix(l, "notice: No default references") {
			problems = append(problems, l)
		}
	}
	if err != nil || len(problems) > 0 {
		t.Errorf("git fsck --strict: %v\n%s%s", err, out, errOut)
	}
}

func headHash(t testing.TB, dir string) string {
	return strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
}

// waitNextSecond sleeps until just after the next whole second.
func waitNextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 20*time.Millisecond).Sub(now))
}

// checkCacheTree compares every valid node of the index's TREE extension
// with the cache-tree git builds from HEAD (git read-tree primes all nodes).
func checkCacheTree(t testing.TB, dir string) {
	t.Helper()
	ours := readCacheTree(t, filepath.Join(dir, ".git", "index"))
	if ours == nil {
		return
	}
	cp := filepath.Join(t.TempDir(), "index")
	cmd := exec.Command("git", "-C", dir, "read-tree", "HEAD")
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+cp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git read-tree: %v\n%s", err, out)
	}
	theirs := readCacheTree(t, cp)
	if theirs == nil {
		t.Fatal("git read-tree wrote no TREE")
	}
	var cmp func(a, b *ctNode, path string)
	cmp = func(a, b *ctNode, path string) {
		if a.count < 0 {
			return
		}
		if b == nil || b.count != a.count || b.hash != a.hash || len(a.children) != len(b.children) {
			t.Errorf("cache-tree node %q: ours %d %s (%d children), git's %+v", path, a.count, a.hash, len(a.children), b)
			return
		}
		for _, c := range a.children {
			cmp(c, b.child(c.name), path+c.name+"/")
		}
	}
	cmp(ours, theirs, "")
}

func readCacheTree(t testing.TB, path string) *ctNode {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	x, err := parseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	if x.treeExt == nil {
		return nil
	}
	ct, err := parseCacheTree(x.treeExt)
	if err != nil {
		t.Fatal(err)
	}
	return ct
}
