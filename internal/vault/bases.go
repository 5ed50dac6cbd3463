package vault

import (
	"encoding/json"
	"fmt"

	"github.com/sessionvault/sessionvault/internal/history"
)

// lastVersion returns what the engine last wrote to rel and committed (its
// base record), else HEAD's version, else nil.
// recorded is true when the version came from the base record.
func (v *Vault) lastVersion(repo *history.Repo, rel string) (data []byte, recorded bool) {
	if rec, ok := v.bases()[rel]; ok {
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
// per operation.
func (v *Vault) bases() map[string]baseRec {
	if v.basesRec != nil {
		return v.basesRec
	}
	v.basesRec = map[string]baseRec{}
	if data, err := v.readStateInPlace(basesName); err == nil && decodeState(data, &v.basesRec) != nil {
		v.basesRec = map[string]baseRec{} // unreadable: every note compared with HEAD
	}
	return v.basesRec
}

func (v *Vault) saveBases(recs map[string]baseRec) error {
	v.basesRec = recs
	data, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	return v.writeStateInPlace(basesName, data)
}

// MarshalJSON writes a fileID as an array of numbers.
func (id fileID) MarshalJSON() ([]byte, error) {
	return json.Marshal([]int64{int64(id.dev), int64(id.ino), id.size, id.mtime, id.ctime})
}

// UnmarshalJSON reads what MarshalJSON wrote.
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
