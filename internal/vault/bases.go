package vault

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/sessionvault/sessionvault/internal/history"
)

// lastVersion returns what the engine last wrote to rel and committed (its
// base record), else HEAD's version, else nil.
// recorded is true when the version came from the base record.
func (v *Vault) lastVersion(repo *history.Repo, rel string) (data []byte, recorded bool) {
	if rec, ok := v.bases().get(rel); ok {
		if b, err := repo.ReadFileAt(rec.Commit, rel); err == nil {
			return b, true
		}
	}
	b, _ := repo.ReadFile(rel)
	return b, false
}

// baseRec is what the engine last wrote to a note: the commit holding it and
// the identity of the file it wrote.
type baseRec struct {
	Commit string `json:"commit"`
	ID     fileID `json:"id"`
}

const basesName = "bases.json"

// bases returns the base records (.sessionvault/state/bases.json), read once
// per operation. A missing or unreadable file gives no records: every note
// is then compared with HEAD.
func (v *Vault) bases() *baseRecords {
	if v.basesRec != nil {
		return v.basesRec
	}
	v.basesRec = &baseRecords{}
	if data, err := v.readStateInPlace(basesName); err == nil {
		if b, err := readBaseRecords(data); err == nil {
			v.basesRec = b
		}
	}
	return v.basesRec
}

// saveBases writes the operation's base records (those of the file and
// those it set).
func (v *Vault) saveBases(b *baseRecords) error {
	v.basesRec = b
	return v.writeStateInPlace(basesName, b.encode())
}

// MarshalJSON writes a fileID as an array of five numbers: device, inode,
// size (bytes), modification and change time (ns since the Unix epoch),
// the first two as the int64 of the same bits.
func (id fileID) MarshalJSON() ([]byte, error) {
	return id.appendJSON(make([]byte, 0, 80)), nil
}

// appendJSON appends what MarshalJSON returns.
func (id fileID) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, n := range [5]int64{int64(id.dev), int64(id.ino), id.size, id.mtime, id.ctime} {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return append(b, ']')
}

// UnmarshalJSON reads what MarshalJSON wrote: an array of exactly five
// integers (JSON whitespace allowed between them; null reads as 0, as
// encoding/json reads it into an int64). Anything else is an error.
func (id *fileID) UnmarshalJSON(b []byte) error {
	var a [5]int64
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(b, jsonSpace), []byte("["))
	for i := 0; ok && i < len(a); i++ {
		rest = bytes.TrimLeft(rest, jsonSpace)
		if after, isNull := bytes.CutPrefix(rest, []byte("null")); isNull {
			sep := byte(',')
			if i == len(a)-1 {
				sep = ']'
			}
			rest, ok = bytes.CutPrefix(bytes.TrimLeft(after, jsonSpace), []byte{sep})
			continue
		}
		end := 0
		for end < len(rest) && (rest[end] == '-' || rest[end] >= '0' && rest[end] <= '9') {
			end++
		}
		n, err := strconv.ParseInt(string(rest[:end]), 10, 64)
		if err != nil {
			ok = false
			break
		}
		a[i] = n
		sep := byte(',')
		if i == len(a)-1 {
			sep = ']'
		}
		rest, ok = bytes.CutPrefix(bytes.TrimLeft(rest[end:], jsonSpace), []byte{sep})
	}
	if !ok || len(bytes.TrimLeft(rest, jsonSpace)) != 0 {
		return fmt.Errorf("file id %.80s: not an array of 5 integers", b)
	}
	*id = fileID{dev: uint64(a[0]), ino: uint64(a[1]), size: a[2], mtime: a[3], ctime: a[4]}
	return nil
}

// jsonSpace is the whitespace JSON allows between tokens.
const jsonSpace = " \t\r\n"
