package guard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/integrity"
	"github.com/sessionvault/sessionvault/templates"

	"github.com/sessionvault/sessionvault/internal/lazyfree"
)

// testKey is a vault key of the length the engine makes.
const testKey = "0123456789abcdef0123456789abcdef-test-key"

func stateFile(f fixture, name string) string {
	return filepath.Join(f.root, filepath.FromSlash(integrity.StateDir), name)
}

// cachedFacts are facts a PreToolUse decision reads, with open start items:
// what a forged cache would like to drop.
var cachedFacts = Cached{
	Facts: Facts{Session: "s-1", Active: true, Mode: "coding", StartMissing: startItems},
	Watch: []string{"demo/session-current-state.md", "demo/decisions.md"},
}

// saveFacts writes the vault's key and caches cachedFacts for project demo
// as the facts of its files as they are now.
func saveFacts(t *testing.T, f fixture) {
	t.Helper()
	t.Setenv("SESSIONVAULT_SECRET", "")
	writeFile(t, stateFile(f, "key"), testKey)
	id, err := Identity(f.root, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := Save(f.root, "demo", []byte(testKey), id, cachedFacts, new(lazyfree.Freer)); err != nil {
		t.Fatal(err)
	}
}

// The vault's key is $SESSIONVAULT_SECRET when set, else the key file in the
// state folder; a key file shorter than 32 bytes is refused, and a vault
// without one has no key yet.
func TestReadKey(t *testing.T) {
	tests := []struct {
		name    string
		env     string
		file    string // "" = no key file
		want    string
		errHas  string
		noError bool
	}{
		{name: "key file", file: testKey, want: testKey, noError: true},
		{name: "secret over the key file", env: "from-the-environment", file: testKey, want: "from-the-environment", noError: true},
		{name: "secret without a key file", env: "s", want: "s", noError: true},
		{name: "short key file", file: "0123456789", errHas: "shorter than 32 bytes"},
		{name: "no key", errHas: "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			t.Setenv("SESSIONVAULT_SECRET", tc.env)
			if tc.file != "" {
				writeFile(t, stateFile(f, "key"), tc.file)
			}
			k, err := integrity.ReadKey(f.root)
			if tc.noError != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.errHas) {
				t.Fatalf("error %v, want one containing %q: %v", err, tc.errHas, tc.noError)
			}
			if string(k) != tc.want {
				t.Errorf("key %q, want %q", k, tc.want)
			}
		})
	}
}

// The facts cached for a project are returned, exactly, while every file
// they were read from is as it was and the cache checks with the vault's
// key; any change to one of those files, to the cache, or to the key makes
// the state be read and verified again (ok false) — a forged or stale cache
// never decides. Changes to other files leave the cache in use.
func TestCachedFactsOnlyWhileTheirFilesAreUnchanged(t *testing.T) {
	tests := []struct {
		name   string
		before func(t *testing.T, f fixture) // before the facts are saved
		change func(t *testing.T, f fixture)
		ok     bool
	}{
		{name: "unchanged", change: func(*testing.T, fixture) {}, ok: true},
		{name: "another note of the project", change: func(t *testing.T, f fixture) {
			writeFile(t, filepath.Join(f.root, "demo", "decisions.md"), "# Decisions\n")
		}, ok: true},
		{name: "another project's state", change: func(t *testing.T, f fixture) {
			writeFile(t, filepath.Join(f.root, "other", "session-current-state.md"), "x")
			writeFile(t, stateFile(f, "signature-other"), "x")
		}, ok: true},
		{name: "a tool call start record", change: func(t *testing.T, f fixture) {
			if err := NoteCallStart(f.root, "Bash", "toolu_1"); err != nil {
				t.Fatal(err)
			}
		}, ok: true},
		{name: "the note is edited", change: func(t *testing.T, f fixture) {
			appendFile(t, filepath.Join(f.root, "demo", "session-current-state.md"), "- [x] c-2 ticked by hand\n")
		}},
		{name: "the note is deleted", change: func(t *testing.T, f fixture) {
			remove(t, filepath.Join(f.root, "demo", "session-current-state.md"))
		}},
		{name: "the seal is made", change: func(t *testing.T, f fixture) {
			writeFile(t, stateFile(f, "signature-demo"), "seal")
		}},
		{name: "the seal changes", before: func(t *testing.T, f fixture) {
			writeFile(t, stateFile(f, "signature-demo"), "seal")
		}, change: func(t *testing.T, f fixture) {
			writeFile(t, stateFile(f, "signature-demo"), "another seal")
		}},
		{name: "the seal is removed", before: func(t *testing.T, f fixture) {
			writeFile(t, stateFile(f, "signature-demo"), "seal")
		}, change: func(t *testing.T, f fixture) {
			remove(t, stateFile(f, "signature-demo"))
		}},
		{name: "a tool call is recorded as evidence", change: func(t *testing.T, f fixture) {
			writeFile(t, stateFile(f, "tools-demo"), "Read\n")
		}},
		{name: "the vault's protocol is written", change: func(t *testing.T, f fixture) {
			writeFile(t, filepath.Join(f.root, "SESSION-PROTOCOL.md"), "# Protocol\n")
		}},
		{name: "the vault's protocol changes", before: func(t *testing.T, f fixture) {
			writeFile(t, filepath.Join(f.root, "SESSION-PROTOCOL.md"), "# Protocol\n")
		}, change: func(t *testing.T, f fixture) {
			appendFile(t, filepath.Join(f.root, "SESSION-PROTOCOL.md"), "- [ ] MUST c-9 new item\n")
		}},
		{name: "the project gets its own protocol", before: func(t *testing.T, f fixture) {
			writeFile(t, filepath.Join(f.root, "SESSION-PROTOCOL.md"), "# Protocol\n")
		}, change: func(t *testing.T, f fixture) {
			writeFile(t, filepath.Join(f.root, "demo", "SESSION-PROTOCOL.md"), "# Protocol\n")
		}},
		{name: "the cached facts are edited", change: func(t *testing.T, f fixture) {
			var c map[string]any
			data, err := os.ReadFile(stateFile(f, "guard-demo.json"))
			if err != nil || json.Unmarshal(data, &c) != nil {
				t.Fatalf("the cache is not JSON: %v %s", err, data)
			}
			delete(c["facts"].(map[string]any), "start_missing") // "the gate passed"
			data, _ = json.Marshal(c)
			writeFile(t, stateFile(f, "guard-demo.json"), string(data))
		}},
		{name: "the cache is signed with another key", change: func(t *testing.T, f fixture) {
			id, _ := Identity(f.root, "demo")
			c := cachedFacts
			c.Facts.StartMissing = nil
			if err := Save(f.root, "demo", []byte("another key, 32 bytes or longer...."), id, c, nil); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "the cache is not JSON", change: func(t *testing.T, f fixture) {
			writeFile(t, stateFile(f, "guard-demo.json"), "{not json")
		}},
		{name: "the cache is removed", change: func(t *testing.T, f fixture) {
			remove(t, stateFile(f, "guard-demo.json"))
		}},
		{name: "the vault's key changes", change: func(t *testing.T, f fixture) {
			writeFile(t, stateFile(f, "key"), strings.ToUpper(testKey))
		}},
		{name: "the vault's key is removed", change: func(t *testing.T, f fixture) {
			remove(t, stateFile(f, "key"))
		}},
		{name: "a secret is set over the key file", change: func(t *testing.T, f fixture) {
			t.Setenv("SESSIONVAULT_SECRET", "a secret the cache was not signed with")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.before != nil {
				tc.before(t, f)
			}
			saveFacts(t, f)
			tc.change(t, f)
			c, ok := Load(f.root, "demo")
			if ok != tc.ok {
				t.Fatalf("cache used: %v, want %v (facts %+v)", ok, tc.ok, c.Facts)
			}
			if ok && !reflect.DeepEqual(c, cachedFacts) {
				t.Errorf("cached %+v, want %+v", c, cachedFacts)
			}
			if !ok && !reflect.DeepEqual(c, Cached{}) {
				t.Errorf("facts %+v returned with a cache not used", c)
			}
		})
	}
}

// A cache signed with $SESSIONVAULT_SECRET is used while the secret is set.
func TestCacheUnderTheEnvironmentSecret(t *testing.T) {
	f := newFixture(t)
	t.Setenv("SESSIONVAULT_SECRET", "the machine's secret")
	id, err := Identity(f.root, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := Save(f.root, "demo", []byte("the machine's secret"), id, cachedFacts, nil); err != nil {
		t.Fatal(err)
	}
	if c, ok := Load(f.root, "demo"); !ok || !reflect.DeepEqual(c, cachedFacts) {
		t.Errorf("cache not used (%v): %+v", ok, c)
	}
}

// Identity fails for a project without its current-state note (there is
// nothing to decide from), and is the same for two readings of unchanged
// files.
func TestIdentityOfTheStateFiles(t *testing.T) {
	f := newFixture(t)
	if _, err := Identity(f.root, "nosuch"); err == nil {
		t.Error("identity of a project without a note")
	}
	a, err := Identity(f.root, "demo")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Identity(f.root, "demo")
	if a != b || a == "" {
		t.Errorf("identity of unchanged files: %q then %q", a, b)
	}
}

// Without a protocol document in the vault, the identity names the
// protocol built into the binary by its content: facts a binary with
// another built-in protocol saved (an older version, say) are not trusted.
func TestIdentityNamesTheBuiltInProtocol(t *testing.T) {
	f := newFixture(t)
	id, err := Identity(f.root, "demo")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := fs.ReadFile(templates.FS, "SESSION-PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(doc)
	want := "\nprotocol built in " + hex.EncodeToString(sum[:8])
	if !strings.HasSuffix(id, want) {
		t.Fatalf("identity %q; want it to end with %q", id, want)
	}
	saveFacts(t, f)
	if _, ok := Load(f.root, "demo"); !ok {
		t.Fatal("facts saved with this binary's protocol were not trusted")
	}
	older := strings.TrimSuffix(id, want) + "\nprotocol built in" // as a binary before this one wrote it
	if err := Save(f.root, "demo", []byte(testKey), older, cachedFacts, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := Load(f.root, "demo"); ok {
		t.Error("facts saved with another built-in protocol were trusted")
	}
}

// Saving the cache replaces it whole through the state folder's tmp
// folder, leaving no temporary file behind; a state folder that cannot be
// written is an error naming the file.
func TestSaveReplacesTheCacheWhole(t *testing.T) {
	f := newFixture(t)
	saveFacts(t, f)
	saveFacts(t, f)
	ents, err := os.ReadDir(stateFile(f, "tmp"))
	if err != nil || len(ents) != 0 {
		t.Errorf("tmp folder after saving: %v %v", ents, err)
	}

	blocked := newFixture(t)
	writeFile(t, filepath.Join(blocked.root, ".sessionvault", "state"), "a file where the folder should be")
	err = Save(blocked.root, "demo", []byte(testKey), "id", cachedFacts, nil)
	if err == nil || !strings.Contains(err.Error(), "writing guard-demo.json") {
		t.Errorf("saving into a state path that is a file: %v", err)
	}

	taken := newFixture(t)
	if err := os.MkdirAll(stateFile(taken, "guard-demo.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(stateFile(taken, "guard-demo.json"), "x"), "x")
	err = Save(taken.root, "demo", []byte(testKey), "id", cachedFacts, nil)
	if err == nil || !strings.Contains(err.Error(), "writing guard-demo.json") {
		t.Errorf("saving over a folder: %v", err)
	}
	if ents, _ := os.ReadDir(stateFile(taken, "tmp")); len(ents) != 0 {
		t.Errorf("a failed save left %d temporary file(s)", len(ents))
	}
}

// Facts that cannot be encoded are not cached.
func TestSignJSONErrors(t *testing.T) {
	if _, err := integrity.SignJSON([]byte(testKey), "p", map[string]any{"c": make(chan int)}); err == nil {
		t.Error("a channel was signed")
	}
}

// integrity.Sign is HMAC-SHA256 over its parts concatenated, in lowercase hex (RFC
// 4231 test case 2), so that records signed by one sessionvault binary
// check with another; integrity.SignJSON signs a prefix and the JSON encoding with
// map keys sorted, whatever the order the map was built in.
func TestSignIsHMACSHA256(t *testing.T) {
	const want = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	if got := integrity.Sign([]byte("Jefe"), []byte("what do ya want for nothing?")); got != want {
		t.Errorf("integrity.Sign = %s, want %s", got, want)
	}
	if got := integrity.Sign([]byte("Jefe"), []byte("what do ya "), nil, []byte("want for nothing?")); got != want {
		t.Errorf("integrity.Sign over parts = %s, want %s", got, want)
	}
	if integrity.Sign([]byte("Jeff"), []byte("what do ya want for nothing?")) == want {
		t.Error("the signature does not depend on the key")
	}
	a, err := integrity.SignJSON([]byte("k"), "p\n", map[string]int{"b": 1, "a": 2})
	if err != nil {
		t.Fatal(err)
	}
	if b := integrity.Sign([]byte("k"), []byte(`p`+"\n"+`{"a":2,"b":1}`)); a != b {
		t.Errorf("integrity.SignJSON = %s, want the signature of the sorted encoding %s", a, b)
	}
}

// A writing tool call the hook lets through is noted with the identity of
// each note PostToolUse must watch (a note not made yet has none), so that a
// note changed by the call is seen afterwards; without a tool_use_id, in the
// project's one slot, a new note replaces the last.
func TestNoteToolCallRecordsWatchedNotes(t *testing.T) {
	f := newFixture(t)
	note := filepath.Join(f.root, "demo", "session-current-state.md")
	watch := []string{"demo/session-current-state.md", "demo/decisions.md"}
	if err := NoteToolCall(f.root, "demo", "Bash", "", watch); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(stateFile(f, "toolcall-demo"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	id, _ := StatIdentity(note)
	want := []string{"Bash", "demo/session-current-state.md\t" + id, "demo/decisions.md\t"}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("record %q, want %q", lines, want)
	}
	appendFile(t, note, "edited by the call\n")
	if now, _ := StatIdentity(note); now == id {
		t.Error("the note's identity did not change with the call's edit")
	}

	if err := NoteToolCall(f.root, "demo", "mcp__github__push", "", nil); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(stateFile(f, "toolcall-demo")); string(data) != "mcp__github__push\n" {
		t.Errorf("second record %q, want it to replace the first", data)
	}

	broken := newFixture(t)
	writeFile(t, filepath.Join(broken.root, ".sessionvault"), "not a folder")
	if err := NoteToolCall(broken.root, "demo", "Bash", "", watch); err == nil || !strings.Contains(err.Error(), "toolcall-demo") {
		t.Errorf("noting into an unwritable state folder: %v", err)
	}
}

// StatIdentity fails for a missing file.
func TestStatIdentityOfAMissingFile(t *testing.T) {
	if id, err := StatIdentity(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Errorf("identity %q of a missing file", id)
	}
}

func appendFile(t *testing.T, path, data string) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// Facts read from files outside the state (a recorded file, the code
// repository's HEAD) hold while each keeps the stat identity it had before it
// was read; a file that appears, changes or goes away drops them. The
// identities are signed with the facts: a cache whose deps were edited does
// not check.
func TestCachedFactsDependOnTheirFiles(t *testing.T) {
	f := newFixture(t)
	saveFacts(t, f)
	plan, head, later := filepath.Join(f.code, "plan.md"), filepath.Join(f.code, "HEAD"), filepath.Join(f.code, "later")
	writeFile(t, plan, "# Plan\n")
	writeFile(t, head, "ref: refs/heads/topic\n")
	save := func() {
		t.Helper()
		id, err := Identity(f.root, "demo")
		if err != nil {
			t.Fatal(err)
		}
		deps := map[string]string{}
		for _, p := range []string{plan, head, later} {
			s, err := StatIdentity(p)
			if err != nil {
				s = "none"
			}
			deps[p] = s
		}
		c := cachedFacts
		c.Deps = deps
		if err := Save(f.root, "demo", []byte(testKey), id, c, nil); err != nil {
			t.Fatal(err)
		}
	}
	save()
	if c, ok := Load(f.root, "demo"); !ok || len(c.Deps) != 3 {
		t.Fatalf("the saved facts do not load: %+v, %v", c, ok)
	}
	for _, tc := range []struct {
		name   string
		change func()
	}{
		{"a recorded file changes", func() { appendFile(t, plan, "Step 3\n") }},
		{"HEAD moves", func() { writeFile(t, head, "ref: refs/heads/main\n") }},
		{"a file that was missing appears", func() { writeFile(t, later, "x") }},
		{"a recorded file goes away", func() { remove(t, plan) }},
	} {
		save()
		tc.change()
		if _, ok := Load(f.root, "demo"); ok {
			t.Errorf("%s: the facts still load", tc.name)
		}
		if tc.name == "a recorded file goes away" {
			writeFile(t, plan, "# Plan\n")
		}
	}
	save()
	data, err := os.ReadFile(cachePath(f.root, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(data), `"deps":{`, `"deps":{"/elsewhere":"none",`, 1)
	if forged == string(data) {
		t.Fatalf("no deps in the cache:\n%s", data)
	}
	writeFile(t, cachePath(f.root, "demo"), forged)
	if _, ok := Load(f.root, "demo"); ok {
		t.Error("a cache with deps added by hand loads")
	}
}
