package shellquote

import (
	"os/exec"
	"testing"
)

// TestQuoteReadsBackInAShell checks that every quoted word, pasted into a
// real shell, is the original value, and that plain words stay as written.
func TestQuoteReadsBackInAShell(t *testing.T) {
	for _, v := range []string{"demo", "/tmp/my vault", "it's", "", "$HOME", "a\"b", "--vault", "line\nbreak", "tab\there", "ünï", "`x`", "a;b&&c"} {
		q := Quote(v)
		for _, sh := range []string{"sh", "bash"} {
			if sh == "sh" && q != "" && q[0] == '$' {
				continue // $'…' is bash's (and zsh's), by design
			}
			path, err := exec.LookPath(sh)
			if err != nil {
				continue
			}
			out, err := exec.Command(path, "-c", `printf %s `+q).Output()
			if err != nil || string(out) != v {
				t.Errorf("%s: printf %%s %s = %q, %v; want %q", sh, q, out, err, v)
			}
		}
	}
	if Quote("demo") != "demo" || Quote("a/b-c_d.e") != "a/b-c_d.e" {
		t.Error("a word that needs no quoting was quoted")
	}
}
