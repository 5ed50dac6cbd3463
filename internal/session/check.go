package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/note"
)

// CheckReport is the result of Check: how many notes were read and every
// problem found, each with its note and line.
type CheckReport struct {
	Notes    int       `json:"notes"`
	Problems []Problem `json:"problems"`
}

// Check parses every note of the vault (skipping .git, .sessionvault and
// other hidden folders) and reads back the entries of session notes. It
// changes nothing. progress, if non-nil, is called every 500 notes.
func (s *Service) Check(progress func(done int)) (CheckReport, error) {
	var rep CheckReport
	if _, err := config.Load(s.V.Root); err != nil {
		rep.Problems = append(rep.Problems, Problem{Note: config.File, Why: err.Error()})
	}
	err := filepath.WalkDir(s.V.Root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != s.V.Root && strings.HasPrefix(e.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(e.Name(), ".md") {
			return nil
		}
		rel, _ := filepath.Rel(s.V.Root, p)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(p)
		if err != nil {
			rep.Problems = append(rep.Problems, Problem{Note: rel, Why: err.Error()})
			return nil
		}
		rep.Notes++
		if progress != nil && rep.Notes%500 == 0 {
			progress(rep.Notes)
		}
		n, err := note.Parse(rel, data)
		if err != nil {
			var pe *note.ParseError
			line, why := 0, err.Error()
			if errors.As(err, &pe) {
				line, why = pe.Line, pe.Msg // (Error() would name the file and line again)
			}
			rep.Problems = append(rep.Problems, Problem{Note: rel, Line: line, Why: why})
			return nil
		}
		switch typ, _ := n.Get("type"); typ {
		case "session-state", "session":
			d, err := openDoc(s.MD, rel, data)
			if err != nil {
				return nil
			}
			d.Loc, _ = s.V.Config.Location()
			st := d.ReadState(strings.SplitN(rel, "/", 2)[0])
			rep.Problems = append(rep.Problems, st.Problems...)
		}
		return nil
	})
	return rep, err
}
