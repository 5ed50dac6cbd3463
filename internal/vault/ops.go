package vault

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// OpRecord is what an operation with an id did, as TransactOnce returns it for
// the first run and for every repeat.
type OpRecord struct {
	Result Result `json:"result"`
	// Session is the session the operation belongs to (may be empty).
	Session string `json:"session,omitempty"`
	// Trailers are the operation's commit trailers (e.g. "Entry": "u-12").
	Trailers map[string]string `json:"trailers,omitempty"`
	// Repeat is true when the operation had already taken effect and this
	// call changed nothing.
	Repeat bool `json:"-"`
}

var opIDRe = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,127}$`)

// checkOpID validates an operation id: 1-128 characters, letters, digits
// and . _ : @ / + = - (a UUID, a ULID, "claude-1234/7").
func checkOpID(id string) error {
	if !opIDRe().MatchString(id) {
		return errs.New(errs.UpdateValidationFailed, "--op-id %q must be 1-128 letters, digits and . _ : @ / + = - (e.g. a UUID), starting with a letter or digit", id).With("flag", "op-id")
	}
	return nil
}

// opFile is where the record of operation id lives:
// .sessionvault/state/ops/<sha256 of the id>.json.
func (v *Vault) opFile(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(v.Root, ".sessionvault", "state", "ops", hex.EncodeToString(sum[:16])+".json")
}

func (v *Vault) findOp(id string) (OpRecord, bool) {
	data, err := os.ReadFile(v.opFile(id))
	if err != nil {
		return OpRecord{}, false
	}
	var rec OpRecord
	if json.Unmarshal(data, &rec) != nil || rec.Trailers["Op-Id"] != id {
		return OpRecord{}, false
	}
	return rec, true
}

func (v *Vault) recordOp(id string, rec OpRecord) error {
	if _, err := v.stateDir("ops"); err != nil {
		return osError(err, ".sessionvault/state/ops", "creating")
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp, err := v.stateDir("tmp")
	if err != nil {
		return osError(err, ".sessionvault/state/tmp", "creating")
	}
	if err := AtomicWrite(tmp, v.opFile(id), data, Volatile); err != nil {
		return osError(err, ".sessionvault/state/ops", "recording the operation in")
	}
	return nil
}
