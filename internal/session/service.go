// Package session is the session service: the session model, the lifecycle
// state machine, the operations (start, update, decide, block, resolve, end,
// heartbeat, recover), gates, phases and evidence, the seal and the verified
// reading, compaction, and how notes are rendered, read and edited. Every
// operation runs through Transact (on vault.TransactOnce), so it is one
// commit or, when it fails, no change at all. The capabilities — tasks,
// features, workflow, reconcile, imports, recovery — are packages of their
// own on top of it: they use this state API (Transact, Doc, the note
// layout) and are never imported here.
package session

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/shellquote"
	"github.com/sessionvault/sessionvault/internal/vault"
	"github.com/sessionvault/sessionvault/templates"
)

// Service runs session operations on one vault.
type Service struct {
	V   *vault.Vault
	MD  *markdown.Parser
	Now func() time.Time // the clock; time.Now when nil
	// CodeDir is the folder the agent works in (a hook input's cwd): its git
	// work tree is the code repository commit and run evidence is checked
	// in (CodeRepo). "" means the process's working folder.
	CodeDir string
	// StateAfter makes the entry operations (update, decide, block,
	// resolve, ...) read the state after their commit into Outcome.State,
	// as start and end return it (the CLI's --json); without it,
	// Outcome.State holds the session id only, and the operation costs no
	// second reading.
	StateAfter bool

	opID string        // see WithOp
	memo *protocolMemo // see parseProtocol; shared by WithOp's copies
	// parsed keeps the notes parsed last (ParseDoc); shared by WithOp's
	// copies; nil keeps none.
	parsed *parsedNotes
}

// WithOp returns a copy of s whose next operations carry the operation id
// opID (--op-id on the CLI, a tool call's op_id over MCP): an operation
// that already took effect under that id is not done again, and returns its
// first result (vault.TransactOnce). "" means no id.
func (s *Service) WithOp(opID string) *Service {
	c := *s
	c.opID = opID
	return &c
}

// Transact runs fn as one operation with s's operation id, sealed (the
// state's signature follows the change) and committed. fn's Outcome (out,
// when not nil) id goes into the commit as the trailer "Entry"; on a repeat
// of an operation that already took effect, fn does not run and out gets the
// first run's id and session, with Repeat set. A broken machine record
// (vault.CheckMachine) refuses the operation before anything is written.
func (s *Service) Transact(out *Outcome, fn func(tx *vault.Tx) (vault.Change, error)) (vault.Result, error) {
	// The ids fn makes (IdSuffix) would otherwise take the primary's shape.
	if err := s.V.CheckMachine(); err != nil {
		return vault.Result{}, err
	}
	res, rec, err := s.V.TransactOnce(s.opID, func(tx *vault.Tx) (vault.Change, error) {
		ch, err := fn(tx)
		ch.Protect = isEntryLine
		if err == nil {
			err = s.sealChange(tx, &ch)
		}
		if err == nil && out != nil && out.ID != "" {
			if ch.Trailers == nil {
				ch.Trailers = map[string]string{}
			}
			ch.Trailers["Entry"] = out.ID
		}
		return ch, err
	})
	if err == nil && rec.Repeat && out != nil {
		out.ID = rec.Trailers["Entry"]
		out.State.Session = rec.Session
		out.Repeat = true
	}
	return res, err
}

// New returns a Service for v using the system clock.
func New(v *vault.Vault) *Service {
	return &Service{V: v, MD: markdown.New(), memo: &protocolMemo{}, parsed: &parsedNotes{}}
}

// NowUTC returns the service clock's time in UTC, to the second.
func (s *Service) NowUTC() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Second)
	}
	return time.Now().UTC().Truncate(time.Second)
}

// Project resolves the project to use: name if given, else the vault's
// default_project, else the only project folder. It checks the name is safe
// and that the project exists.
func (s *Service) Project(name string) (string, error) {
	// A sync killed while git wrote the notes left them for this command
	// to put back first.
	if err := s.V.RecoverKilledSync(); err != nil {
		return "", err
	}
	if name == "" {
		name = s.V.Config.DefaultProject
	}
	if name == "" {
		found, _ := s.ProjectNames()
		switch len(found) {
		case 0:
			return "", errs.New(errs.ProjectNotFound, "the vault has no project yet; make one with `%s`", s.Command("", "init --project NAME"))
		case 1:
		default:
			return "", errs.New(errs.InvalidCommand, "no --project given and the vault has %d projects (%s); pass --project", len(found), strings.Join(found, ", ")).With("flag", "project").With("projects", found)
		}
		name = found[0]
	}
	if err := vault.CheckName("project", name); err != nil {
		return "", err
	}
	if _, err := os.Stat(path.Join(s.V.Root, name, CurrentStateNote)); err != nil {
		rel := name + "/" + CurrentStateNote
		if _, cerr := s.V.Committed(rel); cerr == nil {
			// Deleted, not never made: init would put an idle note in the
			// place of the session.
			return "", errs.New(errs.ProjectNotFound, "%s is missing from the vault (it was deleted); restore it with `%s`, then a person runs `%s`", rel, s.GitCommand("checkout -- "+shellquote.Quote(rel)), s.Command(name, "accept")).With("project", name)
		}
		return "", errs.New(errs.ProjectNotFound, "project %q has no %s in the vault; run `%s`", name, CurrentStateNote, s.Command("", "init --project "+shellquote.Quote(name))).With("project", name)
	}
	return name, nil
}

// Projects lists the vault's projects: its top-level folders (not hidden)
// that hold a current-state note, sorted by name. A vault with none gives an
// empty list.
func (s *Service) Projects() ([]string, error) {
	return s.ProjectNames()
}

// ReadDoc reads and parses a note through tx. The read is stable: a note
// that does not parse, or a canonical note that is empty or has no front
// matter — a save caught half-way — is read again until it settles,
// and only then is an errs.StateParseError error naming the note and line (over 10
// MB: errs.NoteTooLarge). A canonical note gets back the entries of its
// append-only sections that a save dropped (restoreDropped).
func (s *Service) ReadDoc(tx *vault.Tx, rel string) (*Doc, error) {
	var d *Doc
	_, err := tx.ReadNote(rel, func(data []byte) error {
		var err error
		d, err = s.parseNote(rel, data)
		return err
	})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errs.New(errs.StateParseError, "%s is missing from the vault", rel).With("note", rel)
		}
		return nil, err
	}
	return s.restoreDropped(tx, d, path.Base(rel))
}

// isCanonical reports whether rel is one of a project's four canonical notes.
func isCanonical(rel string) bool {
	dir, name := path.Split(rel)
	if strings.Count(dir, "/") != 1 {
		return false
	}
	for _, c := range CanonicalNotes {
		if name == c {
			return true
		}
	}
	return false
}

// Command returns the sessionvault command line for args (e.g. "evidence
// record c-1 --run") as it works when pasted into a shell anywhere — in the
// code repository too, where no vault is found by walking up: it names the
// vault, and the project unless it is the vault's default.
func (s *Service) Command(project, args string) string {
	return s.Place(project).Command(args)
}

// Place is where a decision on a tool call is made for project (see guard).
func (s *Service) Place(project string) guard.Place {
	return guard.Place{Root: s.V.Root, Project: project, DefaultProject: s.V.Config.DefaultProject}
}

// Runnable rewrites every `sessionvault ...` command quoted in text as
// Command does, so that it works pasted into a shell in any folder. An
// evidence record whose check runs in the code repository (--run, --sha)
// also gets --dir codeDir (the folder the agent works in, e.g. the hook
// input's cwd; "" leaves it to the folder the command is run from).
func (s *Service) Runnable(project, text, codeDir string) string {
	return s.Place(project).Runnable(text, codeDir)
}

// GitCommand returns the git command line for args run in the vault (e.g.
// "diff"), quoted for a POSIX shell.
func (s *Service) GitCommand(args string) string {
	return "git -C " + shellquote.Quote(s.V.Root) + " " + args
}

// ReviewCommand returns the git command lines that show a person how
// project's current-state note was changed outside sessionvault: what is not
// committed yet, then its last commits (an edit `serve` or the next
// operation already committed as the person's is there).
func (s *Service) ReviewCommand(project string) string {
	rel := shellquote.Quote(project + "/" + CurrentStateNote)
	return s.GitCommand("diff -- "+rel) + "; " + s.GitCommand("log -p -3 -- "+rel)
}

// restoreHint is the command that puts rel back as last committed, quoted
// for a POSIX shell.
func (s *Service) restoreHint(rel string) string {
	return "`git -C " + shellquote.Quote(s.V.Root) + " checkout -- " + shellquote.Quote(rel) + "`"
}

// parseNote is parseDoc that also refuses a canonical note that is empty or
// has no front matter: the engine wrote it with one, so such a note is a
// save caught half-way or a broken note — never "no session".
func (s *Service) parseNote(rel string, data []byte) (*Doc, error) {
	if isCanonical(rel) {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, errs.New(errs.StateParseError, "%s is empty (the note is left as it is; restore it with git: %s)", rel, s.restoreHint(rel)).With("note", rel)
		}
		if !bytes.HasPrefix(data, []byte("---")) {
			return nil, errs.New(errs.StateParseError, "%s:1: has no front matter (the note is left as it is; restore it with git: %s)", rel, s.restoreHint(rel)).With("note", rel).With("line", 1)
		}
	}
	d, err := s.ParseDoc(rel, data)
	if err != nil {
		return nil, err
	}
	if isCanonical(rel) && !d.Note.HasFrontMatter() {
		return nil, errs.New(errs.StateParseError, "%s:1: front matter has no closing --- (the note is left as it is; fix it, or restore it with git: %s)", rel, s.restoreHint(rel)).With("note", rel).With("line", 1)
	}
	return d, nil
}

// ParseDoc opens the note rel (its bytes data) for reading its sections and
// queueing edits; the error names the file and line that does not parse.
func (s *Service) ParseDoc(rel string, data []byte) (*Doc, error) {
	keep := s.parsed.keeps(rel)
	var p parsedNote
	ok := false
	if keep {
		p, ok = s.parsed.get(rel, data)
	}
	if !ok {
		src := data
		if keep {
			src = slices.Clip(bytes.Clone(data)) // the memo's own copy, with no room to append into
		}
		var err error
		if p, err = parseNoteDoc(rel, src); err != nil {
			return nil, NoteParseError(rel, err, "the note is left as it is; fix it, or restore it with git")
		}
		if keep {
			s.parsed.put(p)
		}
	}
	d := p.doc()
	d.Loc, _ = s.V.Config.Location()
	d.parsed = s.parsed
	return d, nil
}

// NoteParseError is the error a reader shows for err, a note.Parse error of
// the note rel: errs.StateParseError (errs.NoteTooLarge for a note over the
// size limit) naming the note and the line, with remedy in parentheses after
// the parser's message. Other errors are returned as they are.
func NoteParseError(rel string, err error, remedy string) error {
	var pe *note.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	code := errs.StateParseError
	if errors.Is(err, note.ErrTooLarge) {
		code = errs.NoteTooLarge
	}
	return (&errs.Error{Code: code, Message: err.Error() + " (" + remedy + ")", Err: err}).With("note", rel).With("line", pe.Line)
}

// Render executes a template: the vault's .sessionvault/templates/<name>
// if present, else the embedded default.
func (s *Service) Render(name string, data any) ([]byte, error) {
	src, err := os.ReadFile(path.Join(s.V.Root, ".sessionvault", "templates", name))
	if errors.Is(err, fs.ErrNotExist) {
		src, err = fs.ReadFile(templates.FS, name)
	}
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	t, err := template.New(name).Option("missingkey=error").Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// Protocol returns the protocol a project follows: <project>/SESSION-PROTOCOL.md
// if present, else the vault's SESSION-PROTOCOL.md, else the embedded default.
func (s *Service) Protocol(project string) (*protocol.Protocol, error) {
	name, data, err := s.protocolSource(nil, project)
	if err != nil {
		return nil, err
	}
	return s.parseProtocol(project, name, data), nil
}

// Init writes the four canonical notes of a project from the templates,
// keeping any that exist. It returns the paths it created.
func (s *Service) InitProject(project string) (vault.Result, error) {
	if err := vault.CheckName("project", project); err != nil {
		return vault.Result{}, err
	}
	res, err := s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		data := map[string]string{"Project": project, "Now": note.FormatTime(s.NowUTC())}
		var created []string
		for _, name := range CanonicalNotes {
			rel := project + "/" + name
			if tx.Exists(rel) {
				continue
			}
			b, err := s.Render(name, data)
			if err != nil {
				return vault.Change{}, err
			}
			if err := tx.Write(rel, b); err != nil {
				return vault.Change{}, err
			}
			created = append(created, name)
		}
		if !tx.Exists("SESSION-PROTOCOL.md") {
			b, err := fs.ReadFile(templates.FS, "SESSION-PROTOCOL.md")
			if err != nil {
				return vault.Change{}, err
			}
			if err := tx.Write("SESSION-PROTOCOL.md", b); err != nil {
				return vault.Change{}, err
			}
			created = append(created, "SESSION-PROTOCOL.md")
		}
		obs, err := s.writeObsidianFiles(tx, project)
		if err != nil {
			return vault.Change{}, err
		}
		created = append(created, obs...)
		return vault.Change{Operation: "init", Summary: fmt.Sprintf("project %s (%s)", project, strings.Join(created, ", "))}, nil
	})
	if _, serr := s.loadSeal(project); err == nil && errors.Is(serr, errNoSeal) {
		// A project adopted by init (a new one was sealed by its commit):
		// sign its state as it is. An existing seal is left alone, so init
		// never accepts a change silently.
		if d, derr := s.currentDoc(project); derr == nil {
			if proto, perr := s.protocolSum(project); perr == nil {
				err = s.writeSeal(project, sealOf(d, proto))
			}
		}
	}
	return res, err
}

// Paths returns a project's canonical notes, vault-relative: the current
// state, the history and the decisions log.
func Paths(project string) (current, hist, decisions string) {
	return project + "/" + CurrentStateNote, project + "/" + HistoryNote, project + "/" + DecisionsNote
}

// IdSuffix is what this machine appends to the session and entry ids it
// makes (vault.Machine.IDSuffix): "" on the vault's primary clone.
func (s *Service) IdSuffix() string {
	m, err := s.V.Machine()
	if err != nil {
		return "" // a broken machine record: Transact refused before fn ran
	}
	return m.IDSuffix()
}

// ParseTime reads a time given on a flag or as an MCP argument (update --at,
// feature plan --started-at and --completed-at, history record --at, their
// MCP twins) the way the vault's time properties are read (note.ParseTime):
// RFC 3339 with a zone, or 2026-11-25T09:30[:00], "2026-11-25 09:30" or a
// bare date in the vault's time_zone (the machine's when it has none). The
// error says which forms it reads.
func (s *Service) ParseTime(v string) (time.Time, error) {
	loc, err := s.V.Config.Location()
	if err != nil {
		return time.Time{}, fmt.Errorf(".sessionvault/config.yaml: time_zone: %w", err)
	}
	return note.ParseTime(v, loc)
}

// ProjectNames lists the vault's projects: its top-level folders holding a
// current-state note.
func (s *Service) ProjectNames() ([]string, error) {
	ents, err := os.ReadDir(s.V.Root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if _, err := os.Stat(s.V.Root + "/" + e.Name() + "/" + CurrentStateNote); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	return out, nil
}
