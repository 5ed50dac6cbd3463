package history

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// repoConfig is what the repository's .git/config says about the settings
// this package follows.
type repoConfig struct {
	splitMode       int // core.splitIndex: -1 unset, 0 false, 1 true
	splitMaxPercent int // splitIndex.maxPercentChange, 0..100
	gcAuto          int // gc.auto (0 when maintenance.auto is false): the loose objects git lets stand; 0 or less: never packed
}

// gcAutoDefault is git's gc.auto default.
const gcAutoDefault = 6700

// config reads core.splitIndex, splitIndex.maxPercentChange, gc.auto and
// maintenance.auto from .git/config (not the user's or the system's config, nor included
// files), cached while the file is unchanged. A value git would reject
// counts as unset.
func (r *Repo) config() repoConfig {
	path := filepath.Join(r.gitdir, "config")
	st, _, err := lstatStamp(path)
	if err == nil && st == r.cfgStamp && r.cfgRead {
		return r.cfg
	}
	s := repoConfig{splitMode: -1, splitMaxPercent: defaultMaxPercentChange, gcAuto: gcAutoDefault}
	r.cfg, r.cfgStamp, r.cfgRead = s, st, err == nil
	data, err := os.ReadFile(path)
	if err != nil {
		return s
	}
	c := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(c); err != nil {
		return s
	}
	core := c.Section("core").Options
	if core.Has("splitIndex") {
		switch strings.ToLower(core.Get("splitIndex")) {
		case "", "true", "yes", "on", "1": // a bare key is true
			s.splitMode = 1
		case "false", "no", "off", "0":
			s.splitMode = 0
		}
	}
	if v := c.Section("splitIndex").Options.Get("maxPercentChange"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n <= 100 {
			s.splitMaxPercent = n
		}
	}
	if v := c.Section("gc").Options.Get("auto"); v != "" {
		if n, ok := gitInt(v); ok {
			s.gcAuto = n
		}
	}
	if m := c.Section("maintenance").Options; m.Has("auto") {
		switch strings.ToLower(m.Get("auto")) {
		case "false", "no", "off", "0":
			s.gcAuto = 0 // as for git's own commands: no automatic packing
		}
	}
	r.cfg = s
	return s
}

// gitInt parses an integer setting as git does (git_parse_int): decimal,
// 0x hexadecimal or 0 octal, with an optional unit k, m or g (times 1024,
// 1024², 1024³). ok is false for what git refuses.
func gitInt(v string) (int, bool) {
	v = strings.TrimSpace(v)
	unit := int64(1)
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'k', 'K':
			unit = 1 << 10
		case 'm', 'M':
			unit = 1 << 20
		case 'g', 'G':
			unit = 1 << 30
		}
		if unit > 1 {
			v = v[:n-1]
		}
	}
	n, err := strconv.ParseInt(v, 0, 32)
	if err != nil || n*unit > 1<<31-1 || n*unit < -(1<<31) {
		return 0, false
	}
	return int(n * unit), true
}

// TooManyLooseObjects reports whether the repository holds more loose
// objects than gc.auto lets stand, estimated as `git gc --auto` does
// (builtin/gc.c, too_many_loose_objects): more objects in .git/objects/17
// than gc.auto/256, rounded up. gc.auto is read from .git/config (git's
// default, 6,700, when unset); 0 or less, or maintenance.auto false, turns
// it off. It reads one
// folder: about 30 entries on a repository at the limit.
//
// Commits made by git's own CLI run `git gc --auto` after themselves;
// those this package writes do not, so a vault written only by the engine
// keeps every object loose (about 36 objects, 150 KB, per session).
func (r *Repo) TooManyLooseObjects() bool {
	r.mu.Lock()
	limit := r.config().gcAuto
	r.mu.Unlock()
	if limit <= 0 {
		return false
	}
	perDir := (limit + 255) / 256
	ents, err := os.ReadDir(filepath.Join(r.gitdir, "objects", "17"))
	if err != nil {
		return false
	}
	n := 0
	for _, e := range ents {
		if len(e.Name()) == 38 && isHex(e.Name()) {
			if n++; n > perDir {
				return true
			}
		}
	}
	return false
}

// isHex reports whether s is lower-case hexadecimal, as git names objects.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
