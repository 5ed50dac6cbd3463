//go:build unix

package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The merge driver SetupMergeDriver registers is what git runs for the
// notes .gitattributes names, even from a folder whose name needs quoting:
// both machines' changes to one line are merged by it, not left as a
// conflict.
func TestMergeDriverMergesNotes(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "it's a bin", "sessionvault")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	// A stand-in driver: ours, then the lines of theirs ours lacks.
	script := "#!/bin/sh\n[ \"$1\" = merge-driver ] || exit 2\n{ cat \"$3\"; grep -vxF -f \"$3\" \"$4\"; } > \"$3.merged\" && mv \"$3.merged\" \"$3\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	a, bare := newRemoteVault(t)
	if err := a.SetupMergeDriver(bin); err != nil {
		t.Fatal(err)
	}
	want := "'" + strings.ReplaceAll(bin, "'", `'\''`) + "' merge-driver %O %A %B %P"
	if got := gitT(t, a.Root, "config", "merge."+MergeDriverName+".driver"); got != want {
		t.Fatalf("driver = %q, want %q", got, want)
	}
	mustTransact(t, a, writeOp(".gitattributes", GitAttributes))
	mustTransact(t, a, writeOp("n.md", "base\n"))
	mustSync(t, a)
	b := cloneVault(t, bare)
	if err := b.SetupMergeDriver(bin); err != nil {
		t.Fatal(err)
	}
	mustTransact(t, a, writeOp("n.md", "from a\n"))
	mustSync(t, a)
	mustTransact(t, b, writeOp("n.md", "from b\n"))
	res := mustSync(t, b)
	if len(res.Conflicts) != 0 || !res.Pushed {
		t.Fatalf("result %+v: want the driver's clean merge, pushed", res)
	}
	if got := readNote(t, b, "n.md"); got != "from b\nfrom a\n" {
		t.Errorf("n.md = %q, want the driver's merge", got)
	}
}

// A path of plain characters goes to the shell as it is; anything else is
// single-quoted.
func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/usr/local/bin/sessionvault": "/usr/local/bin/sessionvault",
		"/opt/my tools/sv":            "'/opt/my tools/sv'",
		"/it's":                       `'/it'\''s'`,
		"":                            "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}
