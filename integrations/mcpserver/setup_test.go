package mcpserver

// The one place these tests touch sessionvault's Go API: making a vault on
// disk the way `sessionvault init` does, the service on it with a test
// clock, the server wired the way `sessionvault mcp` wires it, and a real
// MCP client connected over the SDK's in-memory transports. Every test
// drives the server through that client only (tools/list, tools/call,
// resources/read) and looks at the vault with the git CLI and the files.
// When the session package's API changes, this file is the one to change.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/policy"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/testenv"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// t0 is when every test's clock starts.
var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// testClock is the service's clock: it stands still until a test moves it.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// vaultSpec says what vault newEnv makes and how the server is started.
type vaultSpec struct {
	// protocol, when set, is the vault's SESSION-PROTOCOL.md, accepted
	// before the server starts.
	protocol string
	// projects are the vault's projects (default: demo), all made by init;
	// the first is the default project unless noDefault.
	projects  []string
	noDefault bool
	// serverProject is the project the server is started with (mcp
	// --project), "" for the vault's default.
	serverProject string
	// toolsets are the toolsets served (mcp --toolsets); nil serves every
	// one, which the tests of each tool need.
	toolsets []string
	// defaultToolsets serves what `sessionvault mcp` serves with no
	// --toolsets and no mcp.toolsets setting (toolsets is ignored).
	defaultToolsets bool
}

// testEnv is one vault on disk, the MCP server on it and a client session.
type testEnv struct {
	t     *testing.T
	root  string // the vault
	code  string // the code repository, the server's current folder
	head  string // the code repository's only commit
	cs    *mcp.ClientSession
	clock *testClock
}

// newEnv makes a vault with project demo and connects a client to its
// server.
func newEnv(t *testing.T) *testEnv { return newEnvWith(t, vaultSpec{}) }

// newEnvWith makes the vault spec says, in a fresh HOME with a fixed git
// identity, a code repository on branch work (with one commit) as the
// current folder, and connects a client to the server.
func newEnvWith(t *testing.T, spec vaultSpec) *testEnv {
	t.Helper()
	tmp := t.TempDir()
	testenv.Home(t, tmp)

	e := &testEnv{t: t, root: filepath.Join(tmp, "vault"), code: filepath.Join(tmp, "code"), clock: &testClock{now: t0}}

	// The code repository the session works on: evidence commands run and
	// commits resolve in the server's current folder.
	if err := os.MkdirAll(e.code, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, e.code, "init", "-q", "-b", "work")
	gitIn(t, e.code, "commit", "-q", "--allow-empty", "-m", "first")
	e.head = strings.TrimSpace(gitIn(t, e.code, "rev-parse", "HEAD"))
	t.Chdir(e.code)

	projects := spec.projects
	if len(projects) == 0 {
		projects = []string{"demo"}
	}
	def := projects[0]
	if spec.noDefault {
		def = ""
	}
	svc := makeVault(t, e.root, def, projects, e.clock)
	if spec.protocol != "" {
		if err := os.WriteFile(filepath.Join(e.root, "SESSION-PROTOCOL.md"), []byte(spec.protocol), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range projects {
			if _, _, err := svc.Accept(p); err != nil {
				t.Fatal(err)
			}
		}
	}

	h := claudecode.Handler{Open: func() (*session.Service, error) { return svc, nil }, Project: spec.serverProject,
		Policy: claudecode.PolicyFrom(svc.V.Config), PolicyConfig: policy.Config{UnknownMCP: svc.V.Config.UnknownMCPTools}}
	toolsets := spec.toolsets
	switch {
	case spec.defaultToolsets:
		toolsets = nil
	case toolsets == nil:
		toolsets = []string{AllToolsets}
	}
	srv, err := New(svc, Options{
		Project: spec.serverProject,
		Version: "test",
		ResumePrompt: func(st session.State, proto *protocol.Protocol, limit int) string {
			return claudecode.ResumePrompt(svc, st, proto, "", "", limit)
		},
		Decide:   func(tool string, input json.RawMessage) (bool, string) { return h.Decide(tool, input, "") },
		Toolsets: toolsets,
	})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	e.cs = cs
	return e
}

// makeVault creates the vault in root as `sessionvault init --project P`
// does for each project (the git repository, the settings commit, the
// project's notes) with def as the default project, and returns its
// service on clock.
func makeVault(t *testing.T, root, def string, projects []string, clock *testClock) *session.Service {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, config.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := history.Init(root); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Render(def)
	if def == "" {
		cfg = []byte(strings.Replace(string(cfg), "default_project: \n", "", 1))
	}
	if _, err := v.Transact(func(tx *vault.Tx) (vault.Change, error) {
		if err := tx.Write(config.File, cfg); err != nil {
			return vault.Change{}, err
		}
		if err := tx.Write(".gitignore", []byte(".sessionvault/state/\n.obsidian/workspace*.json\n.trash/\n")); err != nil {
			return vault.Change{}, err
		}
		return vault.Change{Operation: "init", Summary: "vault settings"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if v, err = vault.Open(root); err != nil {
		t.Fatal(err)
	}
	if err := v.ClaimPrimary(); err != nil {
		t.Fatal(err)
	}
	svc := session.New(v)
	svc.Now = clock.Now
	for _, p := range projects {
		if _, err := svc.InitProject(p); err != nil {
			t.Fatal(err)
		}
	}
	return svc
}

// advance moves the service's clock on by d.
func (e *testEnv) advance(d time.Duration) {
	e.clock.mu.Lock()
	defer e.clock.mu.Unlock()
	e.clock.now = e.clock.now.Add(d)
}

// toolResult is what an agent sees of a tool call.
type toolResult struct {
	out   map[string]any // the structured content
	isErr bool
	text  string // the text content
}

// call calls tool with args; a protocol error (not a tool error) fails the
// test.
func (e *testEnv) call(tool string, args map[string]any) toolResult {
	e.t.Helper()
	res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s: protocol error %v", tool, err)
	}
	var r toolResult
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			r.text += tc.Text
		}
	}
	r.out, _ = res.StructuredContent.(map[string]any)
	r.isErr = res.IsError
	return r
}

// ok calls tool and fails the test if it returns a tool error; it returns
// the structured content, which must be the same JSON as the text content.
func (e *testEnv) ok(tool string, args map[string]any) map[string]any {
	e.t.Helper()
	r := e.call(tool, args)
	if r.isErr {
		e.t.Fatalf("%s %v: tool error %s", tool, args, r.text)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(r.text), &fromText); err != nil {
		e.t.Fatalf("%s: the text content is not the result as JSON: %v\n%s", tool, err, r.text)
	}
	a, _ := json.Marshal(fromText)
	b, _ := json.Marshal(r.out)
	if string(a) != string(b) {
		e.t.Fatalf("%s: the text content and the structured content differ:\n%s\n%s", tool, a, b)
	}
	return r.out
}

// errCodeRe is how a tool error starts: the stable code and its name.
var errCodeRe = regexp.MustCompile(`^(E\d{4}) ([A-Z_]+): `)

// fail calls tool, requires a tool error whose text starts with code (e.g.
// "E1602 NO_ACTIVE_SESSION"), and returns the error's text.
func (e *testEnv) fail(tool string, args map[string]any, code string) string {
	e.t.Helper()
	r := e.call(tool, args)
	if !r.isErr {
		e.t.Fatalf("%s %v: want error %s, got %v", tool, args, code, r.out)
	}
	m := errCodeRe.FindStringSubmatch(r.text)
	if m == nil || m[1]+" "+m[2] != code {
		e.t.Fatalf("%s %v: want error %s, got %s", tool, args, code, r.text)
	}
	return r.text
}

// read reads the resource at uri as text.
func (e *testEnv) read(uri string) (string, error) {
	res, err := e.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	if len(res.Contents) != 1 {
		e.t.Fatalf("%s: %d contents", uri, len(res.Contents))
	}
	return res.Contents[0].Text, nil
}

// note returns the vault file at rel ("" when it does not exist).
func (e *testEnv) note(rel string) string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(rel)))
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	return string(data)
}

// edit writes text to the vault file at rel, as a person editing it by
// hand (or a tool outside sessionvault) would; "" removes the file.
func (e *testEnv) edit(rel, text string) {
	e.t.Helper()
	path := filepath.Join(e.root, filepath.FromSlash(rel))
	var err error
	if text == "" {
		err = os.Remove(path)
	} else {
		err = os.WriteFile(path, []byte(text), 0o644)
	}
	if err != nil {
		e.t.Fatal(err)
	}
}

// git runs a read-only git command in the vault.
func (e *testEnv) git(args ...string) string {
	e.t.Helper()
	return gitIn(e.t, e.root, args...)
}

// commits is the number of commits in the vault.
func (e *testEnv) commits() int {
	e.t.Helper()
	return strings.Count(e.git("log", "--format=%H"), "\n")
}

// subjects are the vault's commit subjects since commit from, oldest first.
func (e *testEnv) subjects(from string) []string {
	e.t.Helper()
	out := strings.TrimSpace(e.git("log", "--reverse", "--format=%s", from+"..HEAD"))
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// headCommit is the vault's HEAD.
func (e *testEnv) headCommit() string {
	e.t.Helper()
	return strings.TrimSpace(e.git("rev-parse", "HEAD"))
}

// clean fails the test unless every change in the vault is committed and
// the repository is sound.
func (e *testEnv) clean() {
	e.t.Helper()
	if s := e.git("status", "--porcelain"); s != "" {
		e.t.Fatalf("the vault has uncommitted changes:\n%s", s)
	}
	e.git("fsck", "--strict")
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
