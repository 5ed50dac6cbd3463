package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/sessionvault/sessionvault/internal/vaultloc"
)

// RepoLink says which vault (and project) serves a code repository on this
// machine. Links live in a per-user file (RepoLinksPath), never in a file a
// repository commits, so a clone on another machine or at another path gets
// its own with `sessionvault hooks install`.
type RepoLink = vaultloc.Link

// RepoLinksPath returns the per-user file of repository links
// (vaultloc.RepoLinksPath).
func RepoLinksPath() (string, error) { return vaultloc.RepoLinksPath() }

// LoadRepoLinks reads the repository links (absolute repository path →
// link); a missing file is no links.
func LoadRepoLinks() (map[string]RepoLink, error) {
	p, err := RepoLinksPath()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]RepoLink{}, nil
	}
	if err != nil {
		return nil, err
	}
	links := map[string]RepoLink{}
	if err := yaml.Unmarshal(data, &links); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	_ = vaultloc.WriteMirror(p, data, links) // the lean hook's copy (a cache)
	return links, nil
}

// SaveRepoLink records that repo (a folder; made absolute, symlinks
// resolved) is served by link, keeping the other links. It returns the
// file written and whether anything changed.
func SaveRepoLink(repo string, link RepoLink) (string, bool, error) {
	p, err := RepoLinksPath()
	if err != nil {
		return "", false, err
	}
	links, err := LoadRepoLinks()
	if err != nil {
		return p, false, err
	}
	key := vaultloc.CanonicalDir(repo)
	if links[key] == link {
		return p, false, nil
	}
	links[key] = link
	keys := make([]string, 0, len(links))
	for k := range links {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var doc yaml.Node
	doc.Kind = yaml.MappingNode
	for _, k := range keys {
		var v yaml.Node
		if err := v.Encode(links[k]); err != nil {
			return p, false, err
		}
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &v)
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return p, false, err
	}
	out = append([]byte("# Which sessionvault vault serves each code repository on this machine\n# (written by `sessionvault hooks install`; edit freely).\n"), out...)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return p, false, err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return p, false, err
	}
	if err := os.Rename(tmp, p); err != nil {
		return p, false, err
	}
	_ = vaultloc.WriteMirror(p, out, links) // the lean hook's copy (a cache)
	return p, true, nil
}

// LinkFor returns the link of the repository holding dir (dir itself or
// its nearest linked parent), when there is one.
func LinkFor(dir string) (RepoLink, bool) {
	links, err := LoadRepoLinks()
	if err != nil {
		return RepoLink{}, false
	}
	return vaultloc.LinkIn(links, dir)
}
