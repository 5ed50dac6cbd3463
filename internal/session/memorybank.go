package session

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// MemoryBankDir is the folder of a project that holds its imported memory
// bank (Cline, Roo Code, Kilo Code): <project>/memory-bank/<name>.md, each
// note byte for byte under its own name and sub-folder. One folder, named
// as Cline and Roo name theirs, whatever tool wrote it: the notes stay
// apart from the canonical notes and from Serena's memories at the
// project's top, Serena lists them as "memory-bank/<name>", and Obsidian
// shows the memory bank as the folder its owners know.
const MemoryBankDir = "memory-bank"

// Bounds of the memory bank excerpt in the resume prompt: per note, its
// first memoryExcerptLines lines, at most memoryExcerptBytes bytes.
const (
	memoryExcerptLines = 20
	memoryExcerptBytes = 1200
)

// MemoryBankReport summarises an import of a memory bank.
type MemoryBankReport struct {
	Roots     []string           `json:"roots"`     // the memory bank folders read, relative to the folder given
	Found     int                `json:"found"`     // files (and hidden folders) found in them
	Imported  int                `json:"imported"`  // notes written into the vault
	Unchanged int                `json:"unchanged"` // notes already in the vault with the same bytes
	Skipped   []importer.Skipped `json:"skipped"`   // files not imported, and why
	DryRun    bool               `json:"dry_run,omitempty"`
}

// ImportMemoryBank copies a memory bank's notes into the project's
// memory-bank/ folder (MemoryBankDir), byte for byte, in one commit. A note
// already there with the same bytes is unchanged; one there with other bytes
// is kept and the source's skipped with the reason (the vault's copy wins,
// nothing is overwritten); so is a name a vault path cannot hold. Running it
// twice changes nothing the second time. With dryRun nothing is written.
func (s *Service) ImportMemoryBank(project string, mb importer.MemoryBank, dryRun bool, progress func(done, total int)) (MemoryBankReport, vault.Result, error) {
	rep := MemoryBankReport{Roots: mb.Roots, DryRun: dryRun}
	project, err := s.Project(project)
	if err != nil {
		return rep, vault.Result{}, err
	}
	res, err := s.V.Transact(func(tx *vault.Tx) (vault.Change, error) {
		rep = MemoryBankReport{Roots: mb.Roots, Found: len(mb.Files) + len(mb.Skipped), Skipped: append([]importer.Skipped(nil), mb.Skipped...), DryRun: dryRun}
		from := map[string]string{} // vault path → the source written to it in this import
		for i, f := range mb.Files {
			if err := s.importMemoryNote(tx, project, f, from, &rep); err != nil {
				return vault.Change{}, fmt.Errorf("importing %s: %w", f.Source, err)
			}
			if progress != nil {
				progress(i+1, len(mb.Files))
			}
		}
		if dryRun {
			return vault.Change{}, errDryRun
		}
		return vault.Change{Operation: "import", Summary: fmt.Sprintf("%d memory bank notes from %s", rep.Imported, strings.Join(mb.Roots, ", "))}, nil
	})
	if errors.Is(err, errDryRun) {
		return rep, vault.Result{}, nil
	}
	return rep, res, err
}

func (s *Service) importMemoryNote(tx *vault.Tx, project string, f importer.MemoryBankFile, from map[string]string, rep *MemoryBankReport) error {
	rel := project + "/" + MemoryBankDir + "/" + f.Rel
	skip := func(reason string) {
		rep.Skipped = append(rep.Skipped, importer.Skipped{Path: f.Source, Reason: reason})
	}
	if err := vault.CheckPath(rel); err != nil {
		skip("its name has characters a vault path cannot hold (letters, digits, '-', '_', '.' and '/' only): rename it in the memory bank to import it")
		return nil
	}
	cur, err := tx.Read(rel)
	switch {
	case err == nil && bytes.Equal(cur, f.Data):
		rep.Unchanged++
	case err == nil && from[rel] != "":
		skip(fmt.Sprintf("same name as %s, imported to %s just before; kept that one", from[rel], rel))
	case err == nil:
		skip("the vault already has a different " + rel + "; kept the vault's copy (to take this one, move that note out of the vault and import again)")
	case errors.Is(err, os.ErrNotExist):
		if err := tx.Write(rel, f.Data); err != nil {
			return err
		}
		from[rel] = f.Source
		rep.Imported++
	default:
		return err
	}
	return nil
}

// MemoryBankExcerpt returns the resume prompt's part about the project's
// memory bank: a heading of the given level ("## Memory bank" at 2), then,
// for the active context (memory-bank/activeContext.md, else Kilo Code's
// memory-bank/context.md) and the progress (memory-bank/progress.md) that
// exist, the note's absolute path and its first lines as a quote — at most
// memoryExcerptLines lines and memoryExcerptBytes bytes, past its front
// matter. "" when neither note exists. It reads only the
// first bytes of each note.
func (s *Service) MemoryBankExcerpt(project string, level int) string {
	h := strings.Repeat("#", level)
	var b strings.Builder
	for _, part := range []struct {
		title string
		names []string
	}{{"Active context", importer.ActiveContextNotes}, {"Progress", importer.ProgressNotes}} {
		for _, name := range part.names {
			rel := project + "/" + MemoryBankDir + "/" + name
			lines, cut, ok := s.noteHead(rel)
			if !ok {
				continue
			}
			if b.Len() == 0 {
				fmt.Fprintf(&b, "%s Memory bank\n\nThe start of the project's memory bank notes; read the whole note for the rest.\n", h)
			}
			what := "the whole of"
			if cut {
				what = fmt.Sprintf("the first %d lines of", len(lines))
			}
			fmt.Fprintf(&b, "\n%s# %s: %s %s\n\n", h, part.title, what, filepath.Join(s.V.Root, filepath.FromSlash(rel)))
			for _, l := range lines {
				if l == "" {
					b.WriteString(">\n")
				} else {
					b.WriteString("> " + l + "\n")
				}
			}
			if cut {
				b.WriteString("> …\n")
			}
			break
		}
	}
	return b.String()
}

// noteHead reads the first lines of a vault note, past its front matter:
// at most memoryExcerptLines lines and memoryExcerptBytes bytes, cut at a
// line; cut reports that the note goes on. ok is false when the note cannot
// be read.
func (s *Service) noteHead(rel string) (lines []string, cut, ok bool) {
	abs, err := s.V.Abs(rel)
	if err != nil {
		return nil, false, false
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, false, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false, false
	}
	head, err := io.ReadAll(io.LimitReader(f, 8*memoryExcerptBytes))
	if err != nil {
		return nil, false, false
	}
	sc := bufio.NewScanner(bytes.NewReader(head))
	sc.Buffer(make([]byte, 0, 1024), len(head)+1)
	var all []string
	for sc.Scan() {
		all = append(all, strings.ToValidUTF8(strings.TrimRight(sc.Text(), "\r"), "�"))
	}
	whole := len(head) < 8*memoryExcerptBytes
	if !whole && len(all) > 0 {
		all = all[:len(all)-1] // the last line read may be cut short
	}
	// Past a front matter block ("---" on line 1 to the next "---").
	if len(all) > 0 && all[0] == "---" {
		for i := 1; i < len(all); i++ {
			if all[i] == "---" || all[i] == "..." {
				all = all[i+1:]
				break
			}
		}
	}
	for len(all) > 0 && strings.TrimSpace(all[0]) == "" {
		all = all[1:]
	}
	for len(all) > 0 && strings.TrimSpace(all[len(all)-1]) == "" {
		all = all[:len(all)-1]
	}
	size := 0
	for i, l := range all {
		if i == memoryExcerptLines || size+len(l)+1 > memoryExcerptBytes {
			if i == 0 { // one very long first line: its start
				cutAt := memoryExcerptBytes
				if cutAt >= len(l) {
					return all[:1], len(all) > 1 || !whole, true
				}
				for cutAt > 0 && !utf8.RuneStart(l[cutAt]) {
					cutAt--
				}
				return []string{l[:cutAt]}, true, true
			}
			return all[:i], true, true
		}
		size += len(l) + 1
	}
	return all, !whole, true
}
