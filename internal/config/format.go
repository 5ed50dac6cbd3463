package config

import (
	"bytes"
	"fmt"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sessionvault/sessionvault/internal/vaultloc"
)

// The vault's format version: the `version:` of .sessionvault/config.yaml
// (Config.Version). A format is what every binary writing the vault must
// understand; a binary reads a vault of any format, and writes one of a
// format from OldestFormat to FormatVersion in that format — it never
// upgrades a vault silently (`sessionvault migrate` does, in one commit).
//
//   - Format 1: task locks are kept in the task notes only.
//   - Format 2: task claims are also taken through the vault's git remote,
//     as the refs refs/sessionvault/claims/<task>, leased for claim_lease
//     (Config.ClaimLease): a binary that does not take them would work on a
//     task another machine holds.
const (
	// FormatVersion is the format this binary writes: what `sessionvault
	// init` records and `sessionvault migrate` upgrades an older vault to.
	FormatVersion = vaultloc.FormatVersion
	// OldestFormat is the oldest format this binary writes (in that format);
	// a config without a version line is in it.
	OldestFormat = vaultloc.OldestFormat
)

// CheckWritable returns nil when this binary may write a vault in format
// version, else a *NewerFormatError (vaultloc.CheckWritable).
func CheckWritable(version int) error { return vaultloc.CheckWritable(version) }

// NewerFormatError is a vault in a format newer than FormatVersion
// (vaultloc.NewerFormatError).
type NewerFormatError = vaultloc.NewerFormatError

// VersionOf returns the format version a config file's bytes declare:
// OldestFormat when they have no version (or one below it). Only the
// version is read, so a config of a newer format whose other settings this
// binary does not know still gives its version; YAML that does not parse,
// or a version that is not a whole number, is an error.
func VersionOf(data []byte) (int, error) {
	var c struct {
		Version *int `yaml:"version"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return 0, fmt.Errorf("reading the format version: %w", err)
	}
	if c.Version == nil || *c.Version < OldestFormat {
		return OldestFormat, nil
	}
	return *c.Version, nil
}

// topKey reports whether line (without its newline) sets the top-level
// key: it starts, at its first column, with key, then blanks and ':'.
// With commented, a leading '#' and blanks are allowed first (a setting
// commented out). The value starts at the returned offset.
func topKey(line []byte, key string, commented bool) (value int, ok bool) {
	i := 0
	if commented && i < len(line) && line[i] == '#' {
		i++
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
	}
	if !bytes.HasPrefix(line[i:], []byte(key)) {
		return 0, false
	}
	i += len(key)
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i >= len(line) || line[i] != ':' {
		return 0, false
	}
	return i + 1, true
}

// lines splits data into its lines, each with its line ending.
func lines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n') + 1
		if n == 0 {
			n = len(data)
		}
		out = append(out, data[:n])
		data = data[n:]
	}
	return out
}

// versionNumber finds the number of a top-level `version:` line: the
// offsets of its digits in data, ok false when there is no such line.
func versionNumber(data []byte) (start, end int, ok bool) {
	at := 0
	for _, l := range lines(data) {
		if v, isVersion := topKey(l, "version", false); isVersion {
			i := v
			for i < len(l) && (l[i] == ' ' || l[i] == '\t' || l[i] == '"' || l[i] == '\'') {
				i++
			}
			j := i
			if j < len(l) && l[j] == '-' {
				j++
			}
			for j < len(l) && l[j] >= '0' && l[j] <= '9' {
				j++
			}
			if j > i {
				return at + i, at + j, true
			}
		}
		at += len(l)
	}
	return 0, 0, false
}

// claimLeaseSetting is the claim_lease setting with the comment
// `sessionvault init` writes (Render).
const claimLeaseSetting = `# How long a task claim taken through the git remote holds unless its holder
# renews it (task lock, heartbeat and remote sync renew it while its session works).
claim_lease: 30m
`

// Upgraded is a config file upgraded by Upgrade: its new bytes, the format
// it was in, and what changed, one line each (e.g. "version: 1 → 2").
type Upgraded struct {
	Data    []byte
	From    int
	Changes []string
}

// FormatNews says what format v (2 up to FormatVersion) changes for the
// team working in the vault, or "" for a format this binary does not know.
func FormatNews(v int) string {
	switch v {
	case 2:
		return "task claims are taken through the vault's git remote (refs/sessionvault/claims/<task>), leased for claim_lease"
	}
	return ""
}

// Upgrade returns data, a config file's bytes (nil: no file), upgraded to
// FormatVersion: its `version:` line edited in place (every other byte
// kept: a person's comments, settings and line endings; a file without one
// gets one after its leading comments), plus what each format between
// adds (format 2: the commented claim_lease setting, when the file has
// none, after heartbeat_timeout). A file already in FormatVersion comes
// back unchanged with no Changes; one in a newer format is a
// *NewerFormatError; one whose YAML does not parse, or that cannot be
// edited so that it reads as FormatVersion, is an error.
func Upgrade(data []byte) (Upgraded, error) {
	from, err := VersionOf(data)
	if err != nil {
		return Upgraded{}, err
	}
	up := Upgraded{Data: data, From: from}
	if err := CheckWritable(from); err != nil {
		return up, err
	}
	if from == FormatVersion {
		return up, nil
	}
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	out := append([]byte(nil), data...)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, nl...)
	}
	want := strconv.Itoa(FormatVersion)
	if i, j, ok := versionNumber(out); ok {
		up.Changes = append(up.Changes, "version: "+string(out[i:j])+" → "+want)
		out = append(out[:i:i], append([]byte(want), out[j:]...)...)
	} else {
		up.Changes = append(up.Changes, "version: "+want+" added (the file had no version: format "+strconv.Itoa(from)+")")
		out = insertVersion(out, "version: "+want+nl)
	}
	for v := from; v < FormatVersion; v++ {
		if v == 1 && !hasKey(out, "claim_lease", true) {
			block := bytes.ReplaceAll([]byte(claimLeaseSetting), []byte("\n"), []byte(nl))
			at := len(out)
			pos := 0
			for _, l := range lines(out) {
				pos += len(l)
				if _, ok := topKey(l, "heartbeat_timeout", false); ok {
					at = pos
					break
				}
			}
			out = append(out[:at:at], append(block, out[at:]...)...)
			up.Changes = append(up.Changes, "claim_lease: 30m added, with its comment")
		}
	}
	if got, err := VersionOf(out); err != nil || got != FormatVersion {
		return up, fmt.Errorf("the version line could not be set to %d (the edited file reads as format %d, %v); set `version: %d` by hand", FormatVersion, got, err, FormatVersion)
	}
	up.Data = out
	return up, nil
}

// hasKey reports whether data has a top-level line setting key (commented:
// or one commented out).
func hasKey(data []byte, key string, commented bool) bool {
	for _, l := range lines(data) {
		if _, ok := topKey(l, key, commented); ok {
			return true
		}
	}
	return false
}

// insertVersion puts line (a `version:` line) after data's leading
// comments, blank lines and document marker.
func insertVersion(data []byte, line string) []byte {
	at := 0
	for at < len(data) {
		end := bytes.IndexByte(data[at:], '\n')
		if end < 0 {
			break
		}
		l := bytes.TrimSpace(data[at : at+end])
		if len(l) > 0 && l[0] != '#' && !bytes.Equal(l, []byte("---")) {
			break
		}
		at += end + 1
	}
	return append(data[:at:at], append([]byte(line), data[at:]...)...)
}
