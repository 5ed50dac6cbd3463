package importer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Scan walks dir and parses every session log in it. dir is an
// ".agents/sessions" folder, or a folder (such as ".agents") holding a
// "sessions" subfolder, which is then scanned instead. Sub-folders (e.g.
// "handoffs/") are walked too; folders whose name starts with '.' are not.
//
// Every regular file found is either returned as a Session or listed in the
// skipped files with a reason:
//   - "*.md" files go to [ParseMarkdown], "*.json" files to [ParseJSON];
//     other files are skipped as "not a .md or .json file";
//   - files the parser rejects are skipped with the parser's reason (not a
//     session log, empty file, invalid JSON at line N, …);
//   - when two files give the same Session.ID (e.g. "x.md" and "x.json" of
//     one session), the richer one is kept, its empty fields are filled from
//     the other, and the other is skipped as a duplicate.
//
// Sessions are sorted by (Date, ID); skipped files by Path. Both use paths
// relative to dir, slash-separated. progress, if non-nil, is called after
// each file with (files done, total files). The error is non-nil only when
// dir cannot be read; unreadable files and sub-folders are reported as
// skipped.
func Scan(dir string, progress func(done, total int)) ([]Session, []Skipped, error) {
	root, err := sessionsRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	files, skipped, err := listFiles(dir, root)
	if err != nil {
		return nil, nil, err
	}
	var parsed []parsedFile
	for i, rel := range files {
		p, sk := parseFile(dir, rel)
		if sk != nil {
			skipped = append(skipped, *sk)
		} else {
			parsed = append(parsed, p)
		}
		if progress != nil {
			progress(i+1, len(files))
		}
	}
	sessions, dups := dedupe(parsed)
	skipped = append(skipped, dups...)
	sortSessions(sessions)
	sort.SliceStable(skipped, func(a, b int) bool { return skipped[a].Path < skipped[b].Path })
	return sessions, skipped, nil
}

// sessionsRoot returns the folder to walk: dir, or dir/sessions when dir is
// not itself named "sessions" and has such a subfolder.
func sessionsRoot(dir string) (string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("import sessions: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("import sessions: %s is not a directory", dir)
	}
	if filepath.Base(filepath.Clean(dir)) != "sessions" {
		sub := filepath.Join(dir, "sessions")
		if st, err := os.Stat(sub); err == nil && st.IsDir() {
			return sub, nil
		}
	}
	return dir, nil
}

// listFiles returns the regular files under root as paths relative to dir
// (slash-separated, sorted), plus unreadable sub-folders as skipped.
func listFiles(dir, root string) ([]string, []Skipped, error) {
	var files []string
	var skipped []Skipped
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		rel := relSlash(dir, p)
		if err != nil {
			if p == root {
				return fmt.Errorf("import sessions: %w", err)
			}
			skipped = append(skipped, Skipped{Path: rel, Reason: "unreadable: " + err.Error()})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		files = append(files, rel)
		return nil
	})
	sort.Strings(files)
	return files, skipped, err
}

func relSlash(dir, p string) string {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		rel = p
	}
	return filepath.ToSlash(rel)
}

// parsedFile is a parsed session with what dedupe needs to know.
type parsedFile struct {
	s         Session
	objSource objSource // where Objective came from
}

// parseFile reads and parses one file; it returns a Skipped when the file
// is not imported.
func parseFile(dir, rel string) (parsedFile, *Skipped) {
	ext := strings.ToLower(path.Ext(rel))
	if ext != ".md" && ext != ".json" {
		return parsedFile{}, &Skipped{Path: rel, Reason: "not a .md or .json file"}
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return parsedFile{}, &Skipped{Path: rel, Reason: "unreadable: " + err.Error()}
	}
	var p parsedFile
	if ext == ".md" {
		p.s, p.objSource, err = parseMarkdown(rel, data)
	} else {
		p.s, p.objSource, err = parseJSON(rel, data)
	}
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return parsedFile{}, &Skipped{Path: rel, Reason: pe.reason()}
		}
		return parsedFile{}, &Skipped{Path: rel, Reason: err.Error()}
	}
	return p, nil
}

// dedupe keeps one session per ID: the richest (ties: the first in path
// order), with its empty fields filled from the others, which are reported
// as skipped.
func dedupe(parsed []parsedFile) ([]Session, []Skipped) {
	byID := map[string][]int{}
	var order []string
	for i, p := range parsed {
		if _, ok := byID[p.s.ID]; !ok {
			order = append(order, p.s.ID)
		}
		byID[p.s.ID] = append(byID[p.s.ID], i)
	}
	var out []Session
	var skipped []Skipped
	for _, id := range order {
		idx := byID[id]
		keep := idx[0]
		for _, i := range idx[1:] {
			if richness(parsed[i]) > richness(parsed[keep]) {
				keep = i
			}
		}
		k := parsed[keep]
		for _, i := range idx {
			if i == keep {
				continue
			}
			merge(&k, parsed[i])
			skipped = append(skipped, Skipped{
				Path:   parsed[i].s.SourcePath,
				Reason: fmt.Sprintf("duplicate of session ID %q: kept %s (its empty fields filled from this file)", id, k.s.SourcePath),
			})
		}
		out = append(out, k.s)
	}
	return out, skipped
}

// richness scores how much content a parsed session holds.
func richness(p parsedFile) int {
	s := p.s
	n := len(s.Checklist) + 3*len(s.Decisions) + len(s.Updates) + len(s.Outcomes) + len(s.NextSteps)
	for _, f := range []string{s.Status, s.Branch, s.StartCommit, s.EndCommit} {
		if f != "" {
			n += 2
		}
	}
	if p.objSource == objFromContent {
		n += 5
	}
	return n
}

// merge fills the empty fields of k from o, and takes o's objective when
// it has a better source (content over title over file name).
func merge(k *parsedFile, o parsedFile) {
	ks, os := &k.s, o.s
	if o.objSource < k.objSource {
		ks.Objective, k.objSource = os.Objective, o.objSource
	}
	if ks.Date.IsZero() {
		ks.Date = os.Date
	}
	if ks.Ended.IsZero() {
		ks.Ended = os.Ended
	}
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&ks.Status, os.Status}, {&ks.Branch, os.Branch},
		{&ks.StartCommit, os.StartCommit}, {&ks.EndCommit, os.EndCommit},
	} {
		if *f.dst == "" {
			*f.dst = f.src
		}
	}
	if len(ks.Checklist) == 0 {
		ks.Checklist = os.Checklist
	}
	if len(ks.Decisions) == 0 {
		ks.Decisions = os.Decisions
	}
	fill := func(dst *[]string, src []string) {
		if len(*dst) == 0 {
			*dst = src
		}
	}
	fill(&ks.Updates, os.Updates)
	fill(&ks.Outcomes, os.Outcomes)
	fill(&ks.NextSteps, os.NextSteps)
	ks.Issues = unionStrings(ks.Issues, os.Issues)
}

// unionStrings appends the elements of b missing from a, keeping order.
// "PR #N" in b replaces "#N" in a.
func unionStrings(a, b []string) []string {
	seen := map[string]int{}
	out := append([]string(nil), a...)
	for i, s := range out {
		seen[strings.TrimPrefix(s, "PR ")] = i
	}
	for _, s := range b {
		key := strings.TrimPrefix(s, "PR ")
		if i, ok := seen[key]; ok {
			if strings.HasPrefix(s, "PR ") {
				out[i] = s
			}
			continue
		}
		seen[key] = len(out)
		out = append(out, s)
	}
	return out
}

// sortSessions orders sessions by (Date, ID).
func sortSessions(ss []Session) {
	sort.SliceStable(ss, func(a, b int) bool {
		if !ss[a].Date.Equal(ss[b].Date) {
			return ss[a].Date.Before(ss[b].Date)
		}
		return ss[a].ID < ss[b].ID
	})
}
