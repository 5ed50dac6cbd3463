package history

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// rawObject is an in-memory git object. It implements
// plumbing.EncodedObject so go-git's Tree and Commit encoders can write into
// it; its hash uses crypto/sha1 (hardware accelerated) instead of go-git's
// collision-detecting hasher.
type rawObject struct {
	typ  plumbing.ObjectType
	data []byte
	hash plumbing.Hash
	done bool
}

func newBlob(content []byte) *rawObject {
	o := &rawObject{typ: plumbing.BlobObject, data: content}
	o.seal()
	return o
}

// seal computes the hash; the object must not change afterwards.
func (o *rawObject) seal() plumbing.Hash {
	if !o.done {
		o.hash = hashObject(o.typ, o.data)
		o.done = true
	}
	return o.hash
}

func hashObject(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	var hdr [32]byte
	b := append(hdr[:0], t.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(data)), 10)
	b = append(b, 0)
	h.Write(b)
	h.Write(data)
	var out plumbing.Hash
	h.Sum(out[:0])
	return out
}

func (o *rawObject) Hash() plumbing.Hash           { return o.seal() }
func (o *rawObject) Type() plumbing.ObjectType     { return o.typ }
func (o *rawObject) SetType(t plumbing.ObjectType) { o.typ = t }
func (o *rawObject) Size() int64                   { return int64(len(o.data)) }
func (o *rawObject) SetSize(int64)                 {}
func (o *rawObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}
func (o *rawObject) Writer() (io.WriteCloser, error) { return o, nil }
func (o *rawObject) Write(p []byte) (int, error) {
	o.data = append(o.data, p...)
	o.done = false
	return len(p), nil
}
func (o *rawObject) Close() error { return nil }

var _ plumbing.EncodedObject = (*rawObject)(nil)

// zlibWriter is a reusable zlib compressor at git's core.looseCompression
// default (level 1, best speed).
type zlibWriter struct {
	buf bytes.Buffer
	zw  *zlib.Writer
}

func (z *zlibWriter) compress(o *rawObject) []byte {
	z.buf.Reset()
	if z.zw == nil {
		z.zw, _ = zlib.NewWriterLevel(&z.buf, zlib.BestSpeed)
	} else {
		z.zw.Reset(&z.buf)
	}
	var hdr [32]byte
	b := append(hdr[:0], o.typ.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(o.data)), 10)
	b = append(b, 0)
	// Into a bytes.Buffer: these do not fail.
	_, _ = z.zw.Write(b)
	_, _ = z.zw.Write(o.data)
	_ = z.zw.Close()
	return z.buf.Bytes()
}

// writeLoose writes o as a loose object unless a loose copy exists: a
// temporary file with mode 0444 in the fan-out directory, renamed into place
// (not fsynced). A loose copy that exists is freshened instead (its mtime
// set to now, as git's freshen_loose_object does), so that a `git gc` or
// `git prune` beside this commit does not take it for an unreachable
// object older than its expiry; one this process may not touch (another
// user's) is used as it is. It returns the object's path when it wrote it,
// and whether it created the fan-out directory.
func (r *Repo) writeLoose(o *rawObject) (written string, createdDir bool, err error) {
	h := o.seal()
	hx := h.String()
	dir := filepath.Join(r.gitdir, "objects", hx[:2])
	final := filepath.Join(dir, hx[2:])
	now := time.Now()
	if err := os.Chtimes(final, now, now); err == nil {
		return "", false, nil
	} else if !isNotExist(err) {
		if _, err := os.Lstat(final); err == nil {
			return "", false, nil // there, but not ours to touch
		}
	}
	if r.zw == nil {
		r.zw = new(zlibWriter)
	}
	data := r.zw.compress(o)
	err = writeRenamed(dir, "tmp_obj_", 0o444, final, data)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", false, fmt.Errorf("history: create %s: %w", dir, err)
		}
		createdDir = err == nil
		err = writeRenamed(dir, "tmp_obj_", 0o444, final, data)
	}
	if err != nil {
		return "", createdDir, fmt.Errorf("history: write object %s: %w", hx, err)
	}
	return final, createdDir, nil
}

// writeRenamed writes data to a new temporary file prefix+random in dir
// (mode perm, before the umask), then renames it over final (not fsynced).
// On an error the temporary file is removed; a missing dir gives an error
// wrapping fs.ErrNotExist.
func writeRenamed(dir, prefix string, perm os.FileMode, final string, data []byte) error {
	var tmp string
	var f *os.File
	for {
		var rnd [6]byte
		rand.Read(rnd[:])
		tmp = filepath.Join(dir, prefix+hex.EncodeToString(rnd[:]))
		var err error
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	_, err := f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
