package integrity

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// TestKeyIsMadeOnceAndKept checks that the first use makes a 32-byte key
// file that only its owner can read, that later uses (and concurrent first
// uses) get the same key, and that ReadKey reads it back.
func TestKeyIsMadeOnceAndKept(t *testing.T) {
	t.Setenv("SESSIONVAULT_SECRET", "")
	root := t.TempDir()
	if _, err := ReadKey(root); err == nil {
		t.Fatal("ReadKey found a key in an empty vault")
	}
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := Key(root)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if len(k) != 32 || !bytes.Equal(k, keys[0]) {
			t.Fatalf("concurrent first uses got different keys: %x vs %x", k, keys[0])
		}
	}
	again, err := ReadKey(root)
	if err != nil || !bytes.Equal(again, keys[0]) {
		t.Fatalf("ReadKey = %x, %v; want the key made", again, err)
	}
	fi, err := os.Stat(Path(root, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestSecretFromTheEnvironmentWins checks that $SESSIONVAULT_SECRET is the
// key when set, whatever the key file holds, and that no file is made.
func TestSecretFromTheEnvironmentWins(t *testing.T) {
	root := t.TempDir()
	t.Setenv("SESSIONVAULT_SECRET", "a shared team secret")
	k, err := Key(root)
	if err != nil || string(k) != "a shared team secret" {
		t.Fatalf("Key = %q, %v", k, err)
	}
	if _, err := os.Stat(Path(root, KeyFile)); !os.IsNotExist(err) {
		t.Errorf("a key file was made although the secret is set: %v", err)
	}
}

// TestShortKeyFileRefused checks that a truncated key file is not taken as
// a key (a key that short would sign nothing worth trusting).
func TestShortKeyFileRefused(t *testing.T) {
	t.Setenv("SESSIONVAULT_SECRET", "")
	root := t.TempDir()
	p := Path(root, KeyFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKey(root); err == nil {
		t.Fatal("a 5-byte key file was accepted")
	}
}

// TestKeyErrorNamesTheFolder checks that a key that cannot be made (the
// state folder is a file) fails with an error, not a key.
func TestKeyErrorNamesTheFolder(t *testing.T) {
	t.Setenv("SESSIONVAULT_SECRET", "")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".sessionvault"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".sessionvault", "state"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if k, err := Key(root); err == nil {
		t.Fatalf("Key made %x where the state folder is a file", k)
	}
}

// TestSignIsHMACSHA256 checks Sign against RFC 4231's test case 2, and that
// SignJSON signs the prefix and the JSON encoding together.
func TestSignIsHMACSHA256(t *testing.T) {
	got := Sign([]byte("Jefe"), []byte("what do ya want "), []byte("for nothing?"))
	if want := "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"; got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	js, err := SignJSON([]byte("k"), "p\n", map[string]int{"b": 2, "a": 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := Sign([]byte("k"), []byte("p\n"), []byte(`{"a":1,"b":2}`)); js != want {
		t.Fatalf("SignJSON = %s, want %s", js, want)
	}
	if _, err := SignJSON([]byte("k"), "", make(chan int)); err == nil {
		t.Fatal("SignJSON signed a value JSON cannot encode")
	}
	if !Equal(got, got) || Equal(got, js) {
		t.Fatal("Equal does not compare signatures")
	}
}

// TestStateFileNames checks the names the guard and the session service
// share: a project's files differ by project, and all live in the state
// folder.
func TestStateFileNames(t *testing.T) {
	for _, f := range []func(string) string{SignatureFile, ToolsFile, ToolCallFile, GuardCacheFile, VerifiedCacheFile} {
		if f("a") == f("b") {
			t.Errorf("two projects share the state file %s", f("a"))
		}
	}
	if got, want := Path("/v", SignatureFile("demo")), filepath.Join("/v", ".sessionvault", "state", "signature-demo"); got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
}

// Without hard links, an exclusive create makes the key: concurrent first
// uses still all get the one key written, never a part of it.
func TestKeyByExclusiveCreate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := createKey(p, bytes.Repeat([]byte{byte('a' + i)}, 32))
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if len(k) != 32 || !bytes.Equal(k, keys[0]) {
			t.Fatalf("concurrent first uses got different keys: %q vs %q", k, keys[0])
		}
	}
}
