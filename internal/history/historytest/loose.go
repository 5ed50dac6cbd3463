package historytest

import (
	"crypto/sha1"
	"fmt"
)

// ContentsIn17 returns n distinct file contents ("<prefix> <i>\n") whose
// git blob ids start with 17: stored loose, they are in .git/objects/17,
// the one folder `git gc --auto` counts to estimate how many loose objects
// a repository holds.
func ContentsIn17(prefix string, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		c := fmt.Sprintf("%s %d\n", prefix, i)
		if sha1.Sum(fmt.Appendf(nil, "blob %d\x00%s", len(c), c))[0] == 0x17 {
			out = append(out, c)
		}
	}
	return out
}
