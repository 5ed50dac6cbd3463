// Package vaultloc is where a vault is and whether this binary writes its
// format: the parts of package config that the lean hook binary links,
// which parses no YAML (package config re-exports them). The repository
// links (config's repos.yaml) reach it as a LinkSource: config's reads the
// YAML and keeps a JSON mirror of it beside it, which the lean hook reads
// (MirroredLink).
package vaultloc

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"
)

// Dir is the engine's folder inside a vault; File is its config file and
// StateDir its git-ignored, rebuildable state (locks, heartbeats, journal).
const (
	Dir      = ".sessionvault"
	File     = ".sessionvault/config.yaml"
	StateDir = ".sessionvault/state"
)

// ErrNoVault is wrapped by FindVault's and Locate's error when no folder at
// or above the start holds a vault.
var ErrNoVault = errors.New("no vault")

// IsVault reports whether dir holds a vault (a .sessionvault folder).
func IsVault(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, Dir))
	return err == nil && fi.IsDir()
}

// FindVault returns the nearest folder at or above start that is a vault.
// When there is none the error wraps ErrNoVault and says, naming start, how
// to make or name one.
func FindVault(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for {
		if IsVault(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w at or above %s (no .sessionvault folder); run `sessionvault init` or pass --vault", ErrNoVault, start)
		}
		dir = parent
	}
}

// Link says which vault (and project) serves a code repository on this
// machine.
type Link struct {
	Vault   string `yaml:"vault" json:"vault"`                         // absolute path of the vault
	Project string `yaml:"project,omitempty" json:"project,omitempty"` // "" = the vault's default project
}

// LinkSource returns the link of the code repository holding dir, when
// there is one; an error says the links cannot be known (then no vault is
// located).
type LinkSource func(dir string) (Link, bool, error)

// Locate says which vault folder serves a command run for the folder cwd
// ("" = the working directory), and for which project. It is the one place
// the CLI, the MCP server and the hooks (the lean hook binary too) find the
// vault. The sources, first one that gives a folder wins:
//
//  1. flagDir (the --vault flag), when not empty;
//  2. $SESSIONVAULT_VAULT, when not empty;
//  3. this machine's link for the code repository holding cwd (links: the
//     per-user repos.yaml that `sessionvault hooks install` writes); the
//     link's project replaces an empty project;
//  4. the nearest folder at or above cwd holding .sessionvault/ (FindVault).
//
// project is returned as given unless a link fills it in ("" still means the
// vault's default project). The working directory is read, and the links
// and the folders above cwd are looked at, only when flagDir and
// $SESSIONVAULT_VAULT are both empty. The folder is not checked to be a
// vault. When no source gives a folder, the error is FindVault's (wrapping
// ErrNoVault), the links' or the working directory's when they cannot be
// read; the folder returned is then "".
func Locate(flagDir, project, cwd string, links LinkSource) (string, string, error) {
	if flagDir != "" {
		return flagDir, project, nil
	}
	if dir := os.Getenv("SESSIONVAULT_VAULT"); dir != "" {
		return dir, project, nil
	}
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", project, err
		}
		cwd = wd
	}
	l, ok, err := links(cwd)
	if err != nil {
		return "", project, err
	}
	if ok {
		if project == "" {
			project = l.Project
		}
		return l.Vault, project, nil
	}
	dir, err := FindVault(cwd)
	if err != nil {
		return "", project, err
	}
	return dir, project, nil
}

// RepoLinksPath returns the per-user file of repository links:
// $SESSIONVAULT_CONFIG_DIR/repos.yaml, else <user config dir>/sessionvault/
// repos.yaml (e.g. ~/.config/sessionvault/repos.yaml on Linux).
func RepoLinksPath() (string, error) {
	dir := os.Getenv("SESSIONVAULT_CONFIG_DIR")
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("finding the user's config folder: %w", err)
		}
		dir = filepath.Join(base, "sessionvault")
	}
	return filepath.Join(dir, "repos.yaml"), nil
}

// MirroredLink is the LinkSource of the lean hook: the link of the code
// repository holding dir from the mirror of this machine's links file
// (MirroredLinks); ErrMirrorStale when the mirror is not that of the file
// as it is now.
func MirroredLink(dir string) (Link, bool, error) {
	p, err := RepoLinksPath()
	if err != nil {
		return Link{}, false, err
	}
	links, err := MirroredLinks(p)
	if err != nil {
		return Link{}, false, err
	}
	l, ok := LinkIn(links, dir)
	return l, ok, nil
}

// LinkIn returns the link of the repository holding dir (dir itself or its
// nearest linked parent) among links (absolute repository folder, symlinks
// resolved → link), when there is one.
func LinkIn(links map[string]Link, dir string) (Link, bool) {
	if len(links) == 0 {
		return Link{}, false
	}
	d := CanonicalDir(dir)
	for {
		if l, ok := links[d]; ok && l.Vault != "" {
			return l, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return Link{}, false
		}
		d = parent
	}
}

// CanonicalDir makes dir absolute with its symlinks resolved (as far as it
// exists).
func CanonicalDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// mirror is the JSON mirror of a links file: the links, and the SHA-256
// of the file's bytes they were read from.
type mirror struct {
	Sum   string          `json:"sha256"`
	Links map[string]Link `json:"links"`
}

// MirrorPath is the JSON mirror of the links file at yamlPath: beside it,
// named .json.
func MirrorPath(yamlPath string) string {
	return yamlPath[:len(yamlPath)-len(filepath.Ext(yamlPath))] + ".json"
}

// sum names content: SHA-256, hex.
func sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// WriteMirror records links as those read from data, the bytes of the
// links file at yamlPath. It is a cache: a failure to write it only costs
// the lean hook a hand-over.
func WriteMirror(yamlPath string, data []byte, links map[string]Link) error {
	p := MirrorPath(yamlPath)
	var was mirror
	if old, err := os.ReadFile(p); err == nil && json.Unmarshal(old, &was) == nil && was.Sum == sum(data) {
		return nil // the mirror of these bytes already
	}
	out, err := json.Marshal(mirror{Sum: sum(data), Links: links})
	if err != nil {
		return err
	}
	tmp := p + "." + strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(time.Now().UnixNano(), 36) + ".tmp"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// ErrMirrorStale is MirroredLinks' error when the mirror is missing or not
// that of the links file as it is now: the links must be read from the
// file (package config) first.
var ErrMirrorStale = errors.New("the repository links' mirror is missing or older than the links file")

// MirroredLinks returns the links of the file at yamlPath from its mirror
// (WriteMirror) when the mirror is of the file's bytes as they are now
// (none, without a file), else ErrMirrorStale.
func MirroredLinks(yamlPath string) (map[string]Link, error) {
	data, err := os.ReadFile(yamlPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // no file: no links
	}
	if err != nil {
		return nil, err
	}
	out, err := os.ReadFile(MirrorPath(yamlPath))
	if err != nil {
		return nil, ErrMirrorStale
	}
	var m mirror
	if json.Unmarshal(out, &m) != nil || m.Sum != sum(data) {
		return nil, ErrMirrorStale
	}
	return m.Links, nil
}

// The vault's format version: the `version:` of .sessionvault/config.yaml
// (package config documents the formats).
const (
	// FormatVersion is the format this binary writes: what `sessionvault
	// init` records and `sessionvault migrate` upgrades an older vault to.
	FormatVersion = 2
	// OldestFormat is the oldest format this binary writes (in that format);
	// a config without a version line is in it.
	OldestFormat = 1
)

// CheckWritable returns nil when this binary may write a vault in format
// version (at most FormatVersion), else a *NewerFormatError naming the
// vault's format, this binary's version (BinaryVersion) and the newest
// format it writes (vault.CheckWritable gives it its error code). It
// compares two ints: cheap enough for every hook call.
func CheckWritable(version int) error {
	if version <= FormatVersion {
		return nil
	}
	return &NewerFormatError{What: "this vault", Version: version}
}

// NewerFormatError is a vault in a format newer than FormatVersion: What
// names the vault ("this vault", "the vault on the remote origin"),
// Version is its format.
type NewerFormatError struct {
	What    string
	Version int
}

// Error says the vault's format, this binary's version and the newest
// format it writes, and what to do.
func (e *NewerFormatError) Error() string {
	return fmt.Sprintf("%s is in format %d; this sessionvault (version %s) writes formats up to %d: install a newer sessionvault release (`go install github.com/sessionvault/sessionvault/cmd/sessionvault@latest github.com/sessionvault/sessionvault/cmd/sessionvault-hook@latest github.com/sessionvault/sessionvault/cmd/sessionvault-daemon@latest`)",
		e.What, e.Version, BinaryVersion(), FormatVersion)
}

// BinaryVersion is this binary's version as the Go toolchain stamped it: a
// release's module version ("v1.4.0"), else "(devel)" followed by the
// commit it was built from when known, else "unknown".
func BinaryVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	if v != "" && v != "(devel)" {
		return v
	}
	v = "(devel)"
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			v += " commit " + s.Value[:min(12, len(s.Value))]
		}
	}
	return v
}
