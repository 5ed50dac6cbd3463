package vault

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// A host name or a name a person gives becomes a machine name: lowercase
// letters and digits, starting with a letter, at most 16, the domain cut.
func TestMachineName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Laptop":                    "laptop",
		"dev-box.example.com":       "devbox",
		"42host":                    "host",
		"a1b2":                      "a1b2",
		"averyveryverylonghostname": "averyveryverylon",
		"--":                        "",
		".local":                    "",
	} {
		if got := MachineName(in); got != want {
			t.Errorf("MachineName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The clone where the vault was made (its signing key is there) is the
// primary, whose ids get no suffix; it is recorded and read back the same.
func TestMachinePrimary(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	if err := v.WriteState("key", []byte("a key")); err != nil {
		t.Fatal(err)
	}
	m, err := v.Machine()
	if err != nil || !m.Primary || m.Name == "" || m.IDSuffix() != "" {
		t.Fatalf("Machine = %+v, %v; want the primary", m, err)
	}
	again, err := Open(v.Root)
	if err != nil {
		t.Fatal(err)
	}
	if m2, err := again.Machine(); err != nil || m2 != m {
		t.Errorf("read back %+v, %v; want %+v", m2, err, m)
	}
	if err := again.ClaimPrimary(); err != nil {
		t.Fatal(err)
	}
	if m3, _ := again.Machine(); m3 != m {
		t.Errorf("ClaimPrimary replaced the record: %+v", m3)
	}
}

// A clone made elsewhere is secondary: named after the host with a random
// tail (two clones on one host stay apart), and its ids end in "-<name>".
func TestMachineSecondary(t *testing.T) {
	t.Parallel()
	host := hostMachineName()
	host = host[:min(12, len(host))]
	// named after the host, then four random hex digits
	named := func(m Machine) bool {
		tail, ok := strings.CutPrefix(m.Name, host)
		return ok && len(tail) == 4 && strings.Trim(tail, "0123456789abcdef") == ""
	}
	ma, err := newVault(t).Machine()
	if err != nil {
		t.Fatal(err)
	}
	if ma.Primary || !named(ma) || ma.IDSuffix() != "-"+ma.Name {
		t.Errorf("secondary %+v (suffix %q)", ma, ma.IDSuffix())
	}
	if n := NewSecondaryMachine(""); n.Primary || !named(n) {
		t.Errorf("NewSecondaryMachine(\"\") = %+v", n)
	}
	if n := NewSecondaryMachine("laptop"); n != (Machine{Name: "laptop"}) {
		t.Errorf("NewSecondaryMachine(laptop) = %+v", n)
	}
}

// A name that is not a machine name is refused, and a record that is not a
// machine record is an error saying how to name the machine again.
func TestMachineRecordChecked(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	if err := v.SetMachine(Machine{Name: "Bad Name"}); errs.CodeOf(err) != errs.InvalidCommand {
		t.Errorf("SetMachine with a bad name: %v", err)
	}
	if err := v.WriteState(machineName, []byte(`{"name":"Bad Name"}`)); err != nil {
		t.Fatal(err)
	}
	_, err := v.Machine()
	wantCode(t, err, errs.MachineRecordInvalid)
	if !strings.Contains(err.Error(), "remote setup --machine ") {
		t.Errorf("the error does not say how to fix it: %v", err)
	}
	if err := v.SetMachine(Machine{Name: "laptop"}); err != nil {
		t.Fatal(err)
	}
	if m, err := v.Machine(); err != nil || !sameMachine(m, Machine{Name: "laptop"}) || len(m.Clone) != 16 {
		t.Errorf("after SetMachine: %+v, %v", m, err)
	}
	fresh := newVault(t)
	if err := fresh.ClaimPrimary(); err != nil {
		t.Fatal(err)
	}
	if m, err := fresh.Machine(); err != nil || !m.Primary {
		t.Errorf("after ClaimPrimary: %+v, %v", m, err)
	}
}

// A machine record that is there but broken (not JSON, a name that is not
// a machine name, an empty file, a folder in its place) is an error naming
// the file, what is wrong and the command that records the machine again;
// nothing is written over it, and CheckMachine says the same without
// reading anything else. No record at all is not an error.
func TestMachineRecordInvalid(t *testing.T) {
	t.Parallel()
	for name, put := range map[string]func(v *Vault, p string) error{
		"not json":   func(v *Vault, p string) error { return v.WriteState(machineName, []byte("{\"name\":")) },
		"bad name":   func(v *Vault, p string) error { return v.WriteState(machineName, []byte(`{"name":"Laptop 2"}`)) },
		"no name":    func(v *Vault, p string) error { return v.WriteState(machineName, []byte(`{"primary":true}`)) },
		"empty":      func(v *Vault, p string) error { return v.WriteState(machineName, nil) },
		"a folder":   func(v *Vault, p string) error { return os.Mkdir(p, 0o755) },
		"json array": func(v *Vault, p string) error { return v.WriteState(machineName, []byte(`["laptop"]`)) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := newVault(t)
			if err := v.WriteState("key", []byte("a key")); err != nil {
				t.Fatal(err)
			}
			p, err := v.StatePath(machineName)
			if err != nil {
				t.Fatal(err)
			}
			if err := put(v, p); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(p)
			for _, get := range []func() error{
				func() error { _, err := v.Machine(); return err },
				v.CheckMachine,
			} {
				err := get()
				wantCode(t, err, errs.MachineRecordInvalid)
				msg := err.Error()
				for _, want := range []string{p, "sessionvault --vault ", " remote setup --machine "} {
					if !strings.Contains(msg, want) {
						t.Errorf("the error does not name %q: %s", want, msg)
					}
				}
				// The command the message names works when pasted: its
				// machine name is one.
				_, rest, _ := strings.Cut(msg, "--machine ")
				if n, _, _ := strings.Cut(rest, "`"); MachineName(n) != n || n == "" {
					t.Errorf("the message names %q as the machine: %s", n, msg)
				}
			}
			if after, _ := os.ReadFile(p); string(after) != string(before) {
				t.Errorf("the broken record was rewritten: %q", after)
			}
			// Recording the machine again mends it.
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
			if err := v.SetMachine(Machine{Name: "laptop"}); err != nil {
				t.Fatal(err)
			}
			if m, err := v.Machine(); err != nil || !sameMachine(m, Machine{Name: "laptop"}) || len(m.Clone) != 16 {
				t.Errorf("after SetMachine: %+v, %v", m, err)
			}
			if err := v.CheckMachine(); err != nil {
				t.Errorf("CheckMachine after SetMachine: %v", err)
			}
		})
	}
	// No record: not an error, and nothing recorded by the check.
	v := newVault(t)
	if err := v.CheckMachine(); err != nil {
		t.Errorf("CheckMachine without a record: %v", err)
	}
	if _, err := v.ReadState(machineName); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CheckMachine recorded the machine: %v", err)
	}
}

// sameMachine says whether a and b are one identity, whatever their Clone.
func sameMachine(a, b Machine) bool { return a.Name == b.Name && a.Primary == b.Primary }

// A record made before clones had an id gets one on first use, kept from
// then on; two clones of one name get different ones.
func TestMachineCloneID(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	if err := v.WriteState(machineName, []byte(`{"name":"laptop","primary":false}`)); err != nil {
		t.Fatal(err)
	}
	m, err := v.Machine()
	if err != nil || m.Name != "laptop" || len(m.Clone) != 16 {
		t.Fatalf("Machine = %+v, %v", m, err)
	}
	again, err := Open(v.Root)
	if err != nil {
		t.Fatal(err)
	}
	if m2, err := again.Machine(); err != nil || m2 != m {
		t.Errorf("read back %+v, %v; want %+v", m2, err, m)
	}
	w := newVault(t)
	if err := w.SetMachine(Machine{Name: "laptop"}); err != nil {
		t.Fatal(err)
	}
	if m3, _ := w.Machine(); m3.Clone == m.Clone || len(m3.Clone) != 16 {
		t.Errorf("two clones named laptop: %q and %q", m.Clone, m3.Clone)
	}
}
