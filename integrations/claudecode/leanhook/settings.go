package leanhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/guard"
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

// settingsFile is the snapshot of a vault's Settings in its state folder:
// the settings, the stat identity of config.yaml they were read from
// ("none": no such file) and an HMAC over both with the vault's key.
type settingsFile struct {
	Identity string   `json:"identity"`
	Settings Settings `json:"settings"`
	MAC      string   `json:"mac"`
}

const settingsName = "hook-settings.json"

func readState(root, name string) ([]byte, error) { return os.ReadFile(integrity.Path(root, name)) }

func settingsMAC(key []byte, f settingsFile) (string, error) {
	f.MAC = ""
	return integrity.SignJSON(key, "sessionvault hook settings v1\n", f)
}

// loadSettings returns the Settings of the vault at root: from their signed
// snapshot while config.yaml has the stat identity it was taken from
// (parsing its YAML costs a hook more than the rest of its work), else read
// by config.Load — whose error it returns — and snapshotted (when the file
// did not change during the reading, and the vault has its key).
func loadSettings(root string) (Settings, error) {
	cfgPath := filepath.Join(root, filepath.FromSlash(config.File))
	id, err := guard.StatIdentity(cfgPath)
	if err != nil {
		id = "none"
	}
	key, kerr := integrity.ReadKey(root)
	if kerr == nil {
		if data, err := readState(root, settingsName); err == nil {
			var f settingsFile
			if json.Unmarshal(data, &f) == nil && f.Identity == id {
				if want, err := settingsMAC(key, f); err == nil && integrity.Equal(want, f.MAC) {
					return f.Settings, nil
				}
			}
		}
	}
	cfg, err := config.Load(root)
	if err != nil {
		return Settings{}, err
	}
	s := Settings{Version: cfg.Version, DefaultProject: cfg.DefaultProject, ReadOnlyTools: cfg.ReadOnlyTools, ModeBlocks: cfg.ModeBlocks,
		UnknownMCPTools: cfg.UnknownMCPTools, LockTimeout: cfg.LockTimeout.Duration}
	if kerr != nil {
		return s, nil
	}
	if id2, err := guard.StatIdentity(cfgPath); (err == nil && id2 == id) || (err != nil && id == "none") {
		f := settingsFile{Identity: id, Settings: s}
		if f.MAC, err = settingsMAC(key, f); err == nil {
			if data, err := json.Marshal(f); err == nil {
				_ = guard.WriteState(root, settingsName, data) // a cache: without it the next call reads the YAML
			}
		}
	}
	return s, nil
}
