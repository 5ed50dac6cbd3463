package vault

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sessionvault/sessionvault/internal/history"

	"golang.org/x/sync/errgroup"
)

// noteWrite is one note of an operation's write.
type noteWrite struct {
	rel, abs string
	orig     *readRec // what the operation's function read (its base, R)
	first    []byte   // what the operation made of it (W)
	base     *readRec // what the next round's write replaces
	data     []byte   // what the next (or last) round writes

	// Set by a write round.
	old     *heldFile   // the replaced file, held (nil for a new file)
	oldAt   string      // where the replaced file now is (.sessionvault/state/tmp)
	pending bool        // a writer was waiting on the replaced file's lease
	newID   fileID      // our file right after the rename
	newFI   os.FileInfo // its stat, for the index
	written bool
	wrote   []byte    // what the last round put in place: what the commit holds
	spent   []string  // replaced files already merged, removed when done
	watch   []watched // replaced files still open, checked after the commit
	keptAnc []byte    // oldAt's content when it was replaced (the round's base): the ancestor it is merged against
}

// watched is a replaced file no one had written when the write was
// checked: it stays open (and kept aside) until after the commit, when a
// late writer's bytes in it are merged into the note.
type watched struct {
	h        *heldFile
	at       string // where it is kept (.sessionvault/state/tmp)
	ancestor []byte // its content when it was replaced
}

var tmpSeq atomic.Int64

// tempPath returns a new path in .sessionvault/state/tmp for rel.
func (v *Vault) tempPath(rel string) (string, error) {
	dir, err := v.stateDir("tmp")
	if err != nil {
		return "", osError(err, ".sessionvault/state/tmp", "creating")
	}
	name := strings.ReplaceAll(rel, "/", "_") + "." + strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(time.Now().UnixNano(), 36) + "." + strconv.FormatInt(tmpSeq.Add(1), 10)
	return filepath.Join(dir, name), nil
}

// writeRound writes notes[i].data over what is on disk, if what is on disk
// is still notes[i].base; otherwise it writes nothing and returns the
// changed note — or, with adapt, merges notes[i].data onto what is there
// (Merge3 against base) and writes that. On success every note's new
// version is in place (wrote), the replaced versions are kept aside
// (oldAt), and the journal names them.
//
// Each new version is written and made durable first; then, for as short a
// time as possible, each note is held under a read lease (no one else can
// open it for writing), checked, and swapped with its new version
// (RENAME_EXCHANGE). A writer that opened the note just before the swap is
// left waiting on the lease with the replaced file, where its bytes would
// be lost to the note: then the swap is undone, the writer let through onto
// the note itself, and the round starts again.
func (w *writer) writeRound(notes []*noteWrite, j *journal, adapt bool) (changed string, err error) {
	for attempt := 1; ; attempt++ {
		changed, retry, err := w.tryRound(notes, j, adapt, attempt < swapBacks)
		if err != nil || changed != "" || !retry {
			return changed, err
		}
		// A round undone was in place a moment: someone may have read the
		// engine's version and saved it back with their edit. From now on
		// what is there is merged with (not run again over: the engine's
		// entry would then be made twice).
		adapt = true
		time.Sleep(time.Duration(attempt) * 200 * time.Microsecond) // the writer goes first
	}
}

// afterPlace, when set (tests only), runs in a round once its new versions
// are in place, before their stat is taken and the others are let in.
var afterPlace func(v *Vault)

// swapBacks bounds how often a round undoes its swap for a writer that was
// waiting; past it the writer's bytes are taken from the replaced file
// (settle).
const swapBacks = 20

// tryRound is one attempt of writeRound; retry asks for another (a swap
// undone, or adapted content to write).
func (w *writer) tryRound(notes []*noteWrite, j *journal, adapt, mayUndo bool) (changed string, retry bool, err error) {
	r := &round{w: w, notes: notes, j: j, adapt: adapt}
	defer r.cleanup()
	// 1. The new versions, durable, each held by a lease until it is in
	// place and its stat is taken; then the journal.
	if err := r.writeNewVersions(); err != nil {
		return "", false, err
	}
	// 2. Each note is still the version the new content was made from, or
	// the new content is adapted to what is there now.
	changed, retry, merged, err := r.checkBases(mayUndo)
	if err != nil || changed != "" || retry {
		return changed, retry, err
	}
	// 3. The journal again, if step 2 merged anything into the new versions.
	if merged {
		if err := w.journalRound(j, r.files()); err != nil {
			return "", false, err
		}
	}
	// 4. In place.
	if changed, retry, err := r.place(); err != nil || changed != "" || retry {
		return changed, retry, err
	}
	if afterPlace != nil {
		afterPlace(w.v)
	}
	// 5. A writer waiting on a replaced note goes first.
	if mayUndo && r.writerWaiting() {
		r.undo()
		for _, n := range notes {
			if n.old != nil {
				n.old.close()
				n.old = nil
			}
		}
		return "", true, nil
	}
	// 6. The stat of each new version, then the others are let in.
	if err := r.release(); err != nil {
		if r.done { // in place, the journal not written: cleanup closes nothing
			r.closeTemps(0)
		}
		return "", false, err
	}
	// 7. Durable before the commit: each new version, and the folders whose
	// entries the swaps changed. A commit barrier that covers the work tree
	// (batch, syncfs) carries both: the new versions are only written out.
	// Otherwise they are fsynced, concurrently: within an operation's
	// window (w.syncs) the commit waits for them before it is visible;
	// elsewhere the round does.
	if w.repo.CoversWorkTree() {
		for i, t := range r.temps {
			err := history.WriteOut(t.f)
			t.f.Close()
			if err != nil {
				r.closeTemps(i + 1)
				return "", false, osError(err, t.n.rel, "writing")
			}
		}
		return "", false, nil
	}
	if w.syncs != nil {
		syncNotes(w.syncs, r.temps, w.v.syncNote)
		return "", false, nil
	}
	syncs := new(errgroup.Group)
	syncNotes(syncs, r.temps, w.v.syncNote)
	return "", false, syncs.Wait()
}

// syncNotes starts the fsyncs of each new version of temps (closing its
// file; sync stands for (*os.File).Sync when not nil) and of each folder
// holding one, once.
func syncNotes(syncs *errgroup.Group, temps []roundTemp, sync func(*os.File) error) {
	if sync == nil {
		sync = (*os.File).Sync
	}
	seen := map[string]string{}
	for _, t := range temps {
		f, rel := t.f, t.n.rel
		syncs.Go(func() error {
			err := sync(f)
			f.Close()
			if err != nil {
				return osError(err, rel, "writing")
			}
			return nil
		})
		seen[filepath.Dir(t.n.abs)] = rel
	}
	for dir, rel := range seen {
		syncFolder(syncs, dir, rel)
	}
}

// syncFolder starts the fsync of dir, the folder of note rel.
func syncFolder(syncs *errgroup.Group, dir, rel string) {
	syncs.Go(func() error {
		if err := syncDir(dir); err != nil {
			return osError(err, rel, "writing the folder of")
		}
		return nil
	})
}

// closeTemps closes the files of the new versions from temps[from] on, once
// they are in place (cleanup no longer does).
func (r *round) closeTemps(from int) {
	for _, t := range r.temps[from:] {
		t.f.Close()
	}
}

// syncNotePath starts the fsyncs of the note at abs and of its folder (a
// note written by an earlier process, which a recovery commits); sync
// stands for (*os.File).Sync when not nil.
func syncNotePath(syncs *errgroup.Group, abs, rel string, sync func(*os.File) error) {
	if sync == nil {
		sync = (*os.File).Sync
	}
	syncs.Go(func() error {
		f, err := os.Open(abs)
		if err == nil {
			err = sync(f)
			f.Close()
		}
		if err != nil && !os.IsNotExist(err) {
			return osError(err, rel, "writing")
		}
		return nil
	})
	syncFolder(syncs, filepath.Dir(abs), rel)
}

// round is one attempt of tryRound: the new versions written so far, the
// notes held under a lease, the versions placed.
type round struct {
	w     *writer
	notes []*noteWrite
	j     *journal
	adapt bool

	temps  []roundTemp
	held   []*heldFile
	placed []roundTemp
	done   bool // the swaps stand: nothing to clean up
}

// roundTemp is a note's new version in a round: the temporary path it is
// written at, and the file, read-only and leased. Where it could not be
// leased (the portable path), its stat as written is kept: no one can write
// it before its rename into the note, but after it anyone can, before the
// round takes its stat (release).
type roundTemp struct {
	n      *noteWrite
	path   string
	f      *os.File
	leased bool
	id     fileID      // unleased: the stat as written
	fi     os.FileInfo // unleased: the same, for the index
}

// setTemp sets t's file, and, unleased, its stat as written.
func (t *roundTemp) setTemp(f *os.File, leased bool) error {
	t.f, t.leased, t.id, t.fi = f, leased, fileID{}, nil
	if leased {
		return nil
	}
	id, err := statID(f)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	t.id, t.fi = id, fi
	return nil
}

// cleanup closes what a round that did not finish holds, and removes its
// new versions.
func (r *round) cleanup() {
	if r.done {
		return
	}
	for _, h := range r.held {
		h.close()
	}
	for _, t := range r.temps {
		if t.f != nil {
			t.f.Close()
		}
		os.Remove(t.path)
	}
}

func (r *round) files() []roundFile {
	out := make([]roundFile, len(r.temps))
	for i, t := range r.temps {
		out[i] = roundFile{n: t.n, path: t.path}
	}
	return out
}

// writeNewVersions writes each note's new version, durable, at a temporary
// path and holds it by a lease; then the journal (what a crash from here on
// must finish), before the notes' leases, so that those are held for as
// short a time as possible.
func (r *round) writeNewVersions() error {
	for _, n := range r.notes {
		if n.base.missing {
			if err := os.MkdirAll(filepath.Dir(n.abs), 0o755); err != nil {
				return osError(err, n.rel, "creating the folder of")
			}
		}
		p, err := r.w.v.tempPath(n.rel)
		if err != nil {
			return err
		}
		f, leased, err := writeTemp(p, n.data)
		if err != nil {
			return osError(err, n.rel, "writing")
		}
		t := roundTemp{n: n, path: p}
		if err := t.setTemp(f, leased); err != nil {
			f.Close()
			os.Remove(p)
			return osError(err, n.rel, "writing")
		}
		r.temps = append(r.temps, t)
	}
	return r.w.journalRound(r.j, r.files())
}

// writeLeased writes data as a new file at p and opens it under a lease;
// on failure nothing is left at p.
func writeLeased(p string, data []byte) (*os.File, error) {
	f, _, err := writeTemp(p, data)
	return f, err
}

// writeTemp is writeLeased that reports whether the lease was taken.
func writeTemp(p string, data []byte) (f *os.File, leased bool, err error) {
	if err := writeNew(p, data); err != nil {
		os.Remove(p)
		return nil, false, err
	}
	f, err = openNoFollow(p)
	if err != nil {
		os.Remove(p)
		return nil, false, err
	}
	leased, _ = tryLease(f)
	return f, leased, nil
}

// writeNew creates path with data. It is made durable once in place (see
// tryRound), so a round that must start again costs no fsync.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
