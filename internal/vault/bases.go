package vault

import (
	"encoding/json"
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

// UnmarshalJSON reads what MarshalJSON wrote: an array of five integers.
// (bases.json in the form the engine writes is read without it: see
// readBaseRecords.)
func (id *fileID) UnmarshalJSON(b []byte) error {
	var a []int64
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	if len(a) != 5 {
		return fmt.Errorf("file id: %d numbers, want 5", len(a))
	}
	*id = fileID{dev: uint64(a[0]), ino: uint64(a[1]), size: a[2], mtime: a[3], ctime: a[4]}
	return nil
}
