package vault

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/integrity"
)

// Machine is this clone of the vault: the name its sessions and entries are
// told apart by when several machines share the vault through a git remote
// (so ids stay unique across machines). It is kept per machine, in
// .sessionvault/state/machine, never committed.
//
// The first clone (where `init` ran) is the primary: its ids keep the plain
// shapes (2026-11-23-session-01, u-12). Every other clone (`remote setup`
// on a fresh clone, or a clone the engine finds without per-machine state)
// is secondary: its session ids and entry ids end in "-<name>"
// (2026-11-23-session-01-laptop, u-12-laptop), so two machines that write
// before they sync never make the same id.
type Machine struct {
	// Name is lowercase letters and digits, starting with a letter, at most
	// 16 characters (a block id's tail must stay one word).
	Name string `json:"name"`
	// Primary is true on the clone where the vault was created.
	Primary bool `json:"primary"`
	// Clone is 16 random hex digits told apart from every other clone's,
	// even one of the same name (two hosts of one name, a copied folder):
	// what a task claim's holder is bound to. Given on first use to a
	// record made before clones had it.
	Clone string `json:"clone,omitempty"`
}

// IDSuffix is what this machine appends to the ids it makes: "" on the
// primary, "-<name>" elsewhere.
func (m Machine) IDSuffix() string {
	if m.Primary {
		return ""
	}
	return "-" + m.Name
}

// MachineFile is the machine record's name in the state folder
// (.sessionvault/state/machine).
const MachineFile = "machine"

const machineName = MachineFile

// MachineName turns s (a host name, or a name a person gave) into a machine
// name: lowercase letters and digits, starting with a letter, at most 16
// characters; "" when nothing of s is left.
func MachineName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r == '.' {
			break // host.example.com: the host's own name
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' && b.Len() > 0 {
			b.WriteRune(r)
		}
		if b.Len() == 16 {
			break
		}
	}
	return b.String()
}

// Machine returns this clone's identity (read once per Vault), recording it
// on first use: a vault whose per-machine state already holds the signing
// key (made here by `init`, or before machines were named) is the primary;
// a vault without per-machine state is a clone made elsewhere, and
// secondary, named after the host with a random tail (two clones on one
// host stay apart). A record that is there but cannot be read, or is not a
// machine record, is an errs.MachineRecordInvalid error (see CheckMachine):
// guessing again could make this clone take another machine's ids.
func (v *Vault) Machine() (Machine, error) {
	if v.machine != nil {
		return *v.machine, nil
	}
	m, found, err := v.readMachine()
	if err != nil {
		return Machine{}, err
	}
	if found {
		if m.Clone == "" {
			m.Clone = newCloneID()
			if err := v.SetMachine(m); err != nil {
				return Machine{}, err
			}
		}
		v.machine = &m
		return m, nil
	}
	_, kerr := v.ReadState(integrity.KeyFile)
	m = Machine{Name: hostMachineName(), Primary: kerr == nil, Clone: newCloneID()}
	if !m.Primary {
		m.Name = withRandomTail(m.Name)
	}
	return m, v.SetMachine(m)
}

// CheckMachine returns the error Machine returns for a machine record that
// is there but unreadable or malformed (errs.MachineRecordInvalid), and nil
// otherwise: no record yet is not an error here (Machine makes one), and
// nothing is written. Operations that make ids call it before they write.
func (v *Vault) CheckMachine() error {
	if v.machine != nil {
		return nil
	}
	_, _, err := v.readMachine()
	return err
}

// readMachine reads the machine record: found is false when there is none;
// a record that cannot be read or is not a machine record is an
// errs.MachineRecordInvalid error naming the file, what is wrong with it,
// and the command that records the machine again.
// MachineRecord reads the machine record as it is on disk now (Machine
// remembers what it read for the Vault's life); found is false when there
// is none. A record that does not read is E1697 MACHINE_RECORD_INVALID.
func (v *Vault) MachineRecord() (m Machine, found bool, err error) { return v.readMachine() }

func (v *Vault) readMachine() (m Machine, found bool, err error) {
	data, err := v.ReadState(machineName)
	if errors.Is(err, os.ErrNotExist) {
		return Machine{}, false, nil
	}
	var what string
	switch {
	case err != nil:
		what = "cannot be read (" + err.Error() + ")"
	default:
		if jerr := json.Unmarshal(data, &m); jerr != nil {
			what = fmt.Sprintf("is not a machine record (%s: %s)", jerr, clip(string(data)))
		} else if m.Name == "" || MachineName(m.Name) != m.Name {
			what = fmt.Sprintf("is not a machine record (name %q: lowercase letters and digits, starting with a letter, at most 16)", m.Name)
		} else {
			return m, true, nil
		}
	}
	p := filepath.Join(v.Root, filepath.FromSlash(config.StateDir), machineName)
	return Machine{}, true, errs.New(errs.MachineRecordInvalid,
		"%s %s: the ids made here could collide with another machine's, so nothing was written; record this machine again under a name of its own, which the ids made here then end with: `sessionvault --vault %s remote setup --machine %s`",
		p, what, shellQuote(v.Root), NewSecondaryMachine("").Name)
}

// clip is s on one line, at most 60 characters, for an error message.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "..."
	}
	if s == "" {
		return "empty"
	}
	return s
}

// SetMachine records m as this clone's identity (with a new Clone id when
// m has none).
func (v *Vault) SetMachine(m Machine) error {
	if MachineName(m.Name) != m.Name || m.Name == "" {
		return errs.New(errs.InvalidCommand, "machine name %q: use lowercase letters and digits, starting with a letter, at most 16", m.Name).With("flag", "--machine")
	}
	if m.Clone == "" {
		m.Clone = newCloneID()
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	// An empty folder in the record's place (a broken record) gives way.
	p := filepath.Join(v.Root, filepath.FromSlash(config.StateDir), machineName)
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		_ = os.Remove(p)
	}
	if err := v.WriteStateDurable(machineName, data); err != nil {
		return err
	}
	v.machine = &m
	return nil
}

// hostMachineName is the host's name as a machine name ("machine" when the
// host has none usable).
func hostMachineName() string {
	h, _ := os.Hostname()
	if n := MachineName(h); n != "" {
		return n
	}
	return "machine"
}

// newCloneID is a Machine.Clone: 16 random hex digits.
func newCloneID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// withRandomTail appends four random hex digits to name (keeping it within
// 16 characters).
func withRandomTail(name string) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	if len(name) > 12 {
		name = name[:12]
	}
	return name + hex.EncodeToString(b[:])
}

// ClaimPrimary records this clone, where the vault was just created, as
// the primary (named after the host), unless it already has a record.
func (v *Vault) ClaimPrimary() error {
	if _, err := v.ReadState(machineName); err == nil {
		return nil
	}
	return v.SetMachine(Machine{Name: hostMachineName(), Primary: true})
}

// NewSecondaryMachine returns a secondary identity named name, or after the
// host (with a random tail) when name is "".
func NewSecondaryMachine(name string) Machine {
	if name == "" {
		return Machine{Name: withRandomTail(hostMachineName())}
	}
	return Machine{Name: name}
}
