package guard

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/sessionvault/sessionvault/internal/integrity"
)

// Settings are the vault settings a hook reads on every tool call (of
// .sessionvault/config.yaml, package config): the format version, the
// default project, the tool policy's settings and the lock timeout.
type Settings struct {
	Version         int                 `json:"version"`
	DefaultProject  string              `json:"default_project,omitempty"`
	ReadOnlyTools   []string            `json:"read_only_tools,omitempty"`
	ModeBlocks      map[string][]string `json:"mode_blocks,omitempty"`
	UnknownMCPTools string              `json:"unknown_mcp_tools,omitempty"`
	LockTimeout     time.Duration       `json:"lock_timeout"` // ns
}

// settingsFile is the snapshot of a vault's Settings in its state folder
// (.sessionvault/state/hook-settings.json): the settings, the identity of
// config.yaml they were read from (SettingsIdentity) and an HMAC over both
// with the vault's key.
type settingsFile struct {
	Identity string   `json:"identity"`
	Settings Settings `json:"settings"`
	MAC      string   `json:"mac"`
}

const settingsName = "hook-settings.json"

// configFile is the vault's config file (package config: File).
const configFile = ".sessionvault/config.yaml"

func settingsMAC(key []byte, f settingsFile) (string, error) {
	f.MAC = ""
	return integrity.SignJSON(key, "sessionvault hook settings v1\n", f)
}

// SettingsIdentity is the stat identity of the config file of the vault at
// root (StatIdentity; "none" when there is none): take it before reading
// the settings that SaveSettings records.
func SettingsIdentity(root string) (string, error) {
	id, err := StatIdentity(filepath.Join(root, filepath.FromSlash(configFile)))
	if errors.Is(err, os.ErrNotExist) {
		return "none", nil
	}
	return id, err
}

// LoadSettings returns the Settings of the vault at root from their signed
// snapshot (SaveSettings), when config.yaml still has the identity they were
// read at; ok is false otherwise — no snapshot, a changed file, a snapshot
// that does not check, no key: the settings must then be read from the
// YAML (the full hook does, and saves them).
func LoadSettings(root string) (s Settings, ok bool) {
	key, err := integrity.ReadKey(root)
	if err != nil {
		return Settings{}, false
	}
	return LoadSettingsWith(root, key)
}

// LoadSettingsWith is LoadSettings with the vault's key already read
// (integrity.ReadKey): a hook call reads it once for this and LoadWith.
func LoadSettingsWith(root string, key []byte) (s Settings, ok bool) {
	id, err := SettingsIdentity(root)
	if err != nil {
		return Settings{}, false
	}
	data, err := os.ReadFile(integrity.Path(root, settingsName))
	if err != nil {
		return Settings{}, false
	}
	var f settingsFile
	if json.Unmarshal(data, &f) != nil || f.Identity != id {
		return Settings{}, false
	}
	if want, err := settingsMAC(key, f); err != nil || !integrity.Equal(want, f.MAC) {
		return Settings{}, false
	}
	return f.Settings, true
}

// SaveSettings records s as the settings read from the vault's config file
// while it had identity id (SettingsIdentity, taken before the reading),
// signed with the vault's key, unless the file changed since. It is a
// cache: without it the lean hook hands its calls to the full one.
func SaveSettings(root, id string, s Settings) error {
	if now, err := SettingsIdentity(root); err != nil || now != id {
		return err
	}
	key, err := integrity.ReadKey(root)
	if err != nil {
		return err
	}
	f := settingsFile{Identity: id, Settings: s}
	if f.MAC, err = settingsMAC(key, f); err != nil {
		return err
	}
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return writeState(root, settingsName, data)
}
