package guard

import (
	"os"
	"strconv"
)

// StatIdentity is a file's stat identity: its size and modification time
// (ns) and, where the platform has them, its inode and change time (ns),
// which a rewrite in place cannot keep. Two reads with the same identity see
// the same version of the file.
func StatIdentity(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	b := make([]byte, 0, 80)
	b = strconv.AppendInt(b, fi.Size(), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, fi.ModTime().UnixNano(), 10)
	return string(statExtra(b, fi)), nil
}

// appendInts appends " n" for each of ns to b.
func appendInts(b []byte, ns ...int64) []byte {
	for _, n := range ns {
		b = append(b, ' ')
		b = strconv.AppendInt(b, n, 10)
	}
	return b
}
