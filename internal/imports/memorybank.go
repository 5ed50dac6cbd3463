package imports

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
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
	rel := project + "/" + session.MemoryBankDir + "/" + f.Rel
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
