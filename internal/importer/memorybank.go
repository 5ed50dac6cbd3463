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
	"unicode/utf8"

	"github.com/sessionvault/sessionvault/internal/note"
)

// Memory banks (Cline, Roo Code, Kilo Code): a folder of plain Markdown
// notes an agent reads at the start of every task. Cline's documentation
// (docs.cline.bot, "Memory Bank") names six core files in memory-bank/ —
// projectbrief.md, productContext.md, activeContext.md, systemPatterns.md,
// techContext.md, progress.md — and lets a project add files and folders
// beside them (feature notes, API docs, tasks.md). Roo Code's memory bank
// (GreatScottyMac/roo-code-memory-bank) uses the same folder with
// projectBrief.md and decisionLog.md. Kilo Code keeps its memory bank in
// .kilocode/rules/memory-bank/ (brief.md, product.md, context.md,
// architecture.md, tech.md, tasks.md); newer Kilo releases read
// .kilo/rules/memory-bank/. Cline's first version used cline_docs/. No file
// has a required structure: the importer copies bytes and reads none.

// MemoryBankDirs are the memory bank folders looked for in a repository, in
// this order; every one present is imported.
var MemoryBankDirs = []string{"memory-bank", ".kilocode/rules/memory-bank", ".kilo/rules/memory-bank", "cline_docs"}

// Names of the memory bank notes the resume prompt shows an excerpt of:
// the active context (Cline and Roo: activeContext.md; Kilo: context.md)
// and the progress (progress.md).
var (
	ActiveContextNotes = []string{"activeContext.md", "context.md"}
	ProgressNotes      = []string{"progress.md"}
)

// coreMemoryNotes are the core file names of the three tools: a folder
// holding one of them is a memory bank whatever its name.
var coreMemoryNotes = map[string]bool{
	"projectbrief.md": true, "projectBrief.md": true, "productContext.md": true, "activeContext.md": true,
	"systemPatterns.md": true, "techContext.md": true, "progress.md": true, "decisionLog.md": true,
	"brief.md": true, "product.md": true, "context.md": true, "architecture.md": true, "tech.md": true,
}

// ErrNoMemoryBank is returned (wrapped) by [ScanMemoryBank] when the folder
// is not a memory bank and holds none of MemoryBankDirs.
var ErrNoMemoryBank = errors.New("no memory bank")

// MemoryBankFile is one note of a memory bank, read byte for byte.
type MemoryBankFile struct {
	// Rel is the note's path inside the memory bank folder, slash-separated
	// ("activeContext.md", "features/auth.md"): its path under the
	// project's memory-bank/ folder in the vault.
	Rel string
	// Source is its path relative to the folder given to ScanMemoryBank
	// (".kilocode/rules/memory-bank/context.md"), for the report.
	Source string
	// Data is the file's content, unchanged.
	Data []byte
}

// MemoryBank is what ScanMemoryBank found: the notes to import and the
// files left out, with the reason.
type MemoryBank struct {
	// Roots are the memory bank folders read, relative to the folder given
	// ("." when it is one itself), slash-separated.
	Roots []string
	// Files are the notes, sorted by Rel (a note present in two roots comes
	// once per root, the first root's first).
	Files []MemoryBankFile
	// Skipped are the files (and hidden folders) left out, by Source.
	Skipped []Skipped
}

// ScanMemoryBank reads the memory bank in dir: dir itself when it is named
// memory-bank or cline_docs or holds one of the core notes, else every
// folder of MemoryBankDirs under dir. It reads the .md files of each root and
// its sub-folders; it never writes. Left out, with the reason: files that
// are not .md, hidden files and folders, notes over note.MaxSize, notes that
// are not UTF-8 text, and notes whose front matter does not parse (a broken
// note in Obsidian). The error wraps ErrNoMemoryBank when there is no
// memory bank, or is the error reading dir.
func ScanMemoryBank(dir string) (MemoryBank, error) {
	var mb MemoryBank
	fi, err := os.Stat(dir)
	if err != nil {
		return mb, err
	}
	if !fi.IsDir() {
		return mb, fmt.Errorf("%s is not a folder: %w", dir, ErrNoMemoryBank)
	}
	roots, err := memoryBankRoots(dir)
	if err != nil {
		return mb, err
	}
	if len(roots) == 0 {
		return mb, fmt.Errorf("%s is not a memory bank and holds none of %s: %w", dir, strings.Join(MemoryBankDirs, ", "), ErrNoMemoryBank)
	}
	for _, root := range roots {
		mb.Roots = append(mb.Roots, root)
		if err := mb.scanRoot(dir, root); err != nil {
			return mb, err
		}
	}
	sort.SliceStable(mb.Files, func(i, j int) bool { return mb.Files[i].Rel < mb.Files[j].Rel })
	sort.SliceStable(mb.Skipped, func(i, j int) bool { return mb.Skipped[i].Path < mb.Skipped[j].Path })
	return mb, nil
}

// memoryBankRoots returns the memory bank folders of dir, relative to it.
func memoryBankRoots(dir string) ([]string, error) {
	base := filepath.Base(filepath.Clean(dir))
	if abs, err := filepath.Abs(dir); err == nil {
		base = filepath.Base(abs)
	}
	if base == "memory-bank" || base == "cline_docs" {
		return []string{"."}, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !e.IsDir() && coreMemoryNotes[e.Name()] {
			return []string{"."}, nil
		}
	}
	var roots []string
	for _, d := range MemoryBankDirs {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(d)))
		if err != nil || !fi.IsDir() {
			continue
		}
		if d == "cline_docs" && !holdsCoreNote(filepath.Join(dir, d)) {
			continue // a docs folder of another kind
		}
		roots = append(roots, d)
	}
	return roots, nil
}

func holdsCoreNote(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if coreMemoryNotes[e.Name()] {
			return true
		}
	}
	return false
}

func (mb *MemoryBank) scanRoot(dir, root string) error {
	rootAbs := filepath.Join(dir, filepath.FromSlash(root))
	return filepath.WalkDir(rootAbs, func(p string, e fs.DirEntry, err error) error {
		rel := relSlash(rootAbs, p)
		source := path.Join(root, rel)
		if err != nil {
			if p == rootAbs {
				return err
			}
			mb.Skipped = append(mb.Skipped, Skipped{Path: source, Reason: "unreadable: " + err.Error()})
			if e != nil && e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == rootAbs {
			return nil
		}
		hidden := strings.HasPrefix(e.Name(), ".")
		if e.IsDir() {
			if hidden {
				mb.Skipped = append(mb.Skipped, Skipped{Path: source + "/", Reason: "a hidden folder: not part of the memory bank"})
				return fs.SkipDir
			}
			return nil
		}
		if hidden {
			mb.Skipped = append(mb.Skipped, Skipped{Path: source, Reason: "a hidden file: not part of the memory bank"})
			return nil
		}
		if !strings.HasSuffix(e.Name(), ".md") {
			mb.Skipped = append(mb.Skipped, Skipped{Path: source, Reason: "not a .md file: memory bank notes are markdown"})
			return nil
		}
		info, err := os.Stat(p) // follows a symlink to a file
		if err != nil {
			mb.Skipped = append(mb.Skipped, Skipped{Path: source, Reason: "unreadable: " + err.Error()})
			return nil
		}
		if !info.Mode().IsRegular() {
			mb.Skipped = append(mb.Skipped, Skipped{Path: source, Reason: "not a regular file"})
			return nil
		}
		if info.Size() > note.MaxSize {
			mb.Skipped = append(mb.Skipped, Skipped{Path: source, Reason: fmt.Sprintf("%d bytes: larger than the 10 MB a vault note may have", info.Size())})
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			mb.Skipped = append(mb.Skipped, Skipped{Path: source, Reason: "unreadable: " + err.Error()})
			return nil
		}
		if why := notText(data); why != "" {
			mb.Skipped = append(mb.Skipped, Skipped{Path: source, Reason: why + "; convert it to UTF-8 (e.g. iconv -t UTF-8) to import it"})
			return nil
		}
		if _, err := note.Parse(rel, data); err != nil {
			var pe *note.ParseError
			why := err.Error()
			if errors.As(err, &pe) {
				why = pe.Msg
				if pe.Line > 0 {
					why = fmt.Sprintf("line %d: %s", pe.Line, pe.Msg)
				}
			}
			mb.Skipped = append(mb.Skipped, Skipped{Path: source, Reason: "not a note the vault can read (" + why + "); fix it and import again"})
			return nil
		}
		mb.Files = append(mb.Files, MemoryBankFile{Rel: rel, Source: source, Data: data})
		return nil
	})
}

// notText says why data is not UTF-8 text ("" when it is): a NUL byte or
// an invalid UTF-8 sequence, with its byte offset.
func notText(data []byte) string {
	for i := 0; i < len(data); {
		if data[i] == 0 {
			return fmt.Sprintf("holds a NUL byte (at byte %d): not text", i)
		}
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Sprintf("not UTF-8 text (invalid byte at %d)", i)
		}
		i += n
	}
	return ""
}
