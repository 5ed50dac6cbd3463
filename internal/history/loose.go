package history

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// looseReader reads loose objects with one inflater and one buffer, reused
// from read to read (go-git's storage makes an inflater, an object and a
// cache entry for each): after another process's commit, every tree along
// the committed paths and the commit are read this way.
type looseReader struct {
	br  *bufio.Reader
	zr  io.ReadCloser // a zlib.Resetter once made
	buf []byte
}

// readLoose reads the loose copy of object h (.git/objects/xx/yyyy...):
// its type and content, which stay valid until the next readLoose. ok is
// false when h has no loose copy (it is packed, or missing): the caller
// reads it from go-git's storage then. A loose copy that does not inflate,
// or whose header does not match its content, is an error.
func (r *Repo) readLoose(h plumbing.Hash) (typ plumbing.ObjectType, data []byte, ok bool, err error) {
	hex := h.String()
	path := filepath.Join(r.gitdir, "objects", hex[:2], hex[2:])
	f, err := os.Open(path)
	if err != nil {
		if isNotExist(err) {
			return plumbing.InvalidObject, nil, false, nil
		}
		return plumbing.InvalidObject, nil, false, fmt.Errorf("history: read object %s: %w", h, err)
	}
	defer f.Close()
	lr := &r.loose
	if lr.br == nil {
		lr.br = bufio.NewReaderSize(f, 16<<10)
	} else {
		lr.br.Reset(f)
	}
	if lr.zr == nil {
		lr.zr, err = zlib.NewReader(lr.br)
	} else {
		err = lr.zr.(zlib.Resetter).Reset(lr.br, nil)
	}
	if err != nil {
		lr.zr = nil
		return plumbing.InvalidObject, nil, false, fmt.Errorf("history: object %s (%s) is corrupt: %w", h, path, err)
	}
	buf := lr.buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, rerr := lr.zr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			lr.buf = buf
			return plumbing.InvalidObject, nil, false, fmt.Errorf("history: object %s (%s) is corrupt: %w", h, path, rerr)
		}
	}
	lr.buf = buf
	nul := bytes.IndexByte(buf, 0)
	sp := bytes.IndexByte(buf[:max(nul, 0)], ' ')
	if nul < 0 || sp < 0 {
		return plumbing.InvalidObject, nil, false, fmt.Errorf("history: object %s (%s) is corrupt: no header", h, path)
	}
	size, err := strconv.Atoi(string(buf[sp+1 : nul]))
	if err != nil || size != len(buf)-nul-1 {
		return plumbing.InvalidObject, nil, false, fmt.Errorf("history: object %s (%s) is corrupt: its header says %q bytes, it holds %d", h, path, buf[sp+1:nul], len(buf)-nul-1)
	}
	if typ, err = plumbing.ParseObjectType(string(buf[:sp])); err != nil {
		return plumbing.InvalidObject, nil, false, fmt.Errorf("history: object %s (%s) is corrupt: %w", h, path, err)
	}
	return typ, buf[nul+1:], true, nil
}

// parseTree decodes a tree object's content, as go-git's Tree.Decode does:
// "<mode> <name>\0<20-byte id>" per entry, in the order stored.
func parseTree(h plumbing.Hash, data []byte) ([]object.TreeEntry, error) {
	var es []object.TreeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("history: decode tree %s: an entry has no mode", h)
		}
		mode, err := filemode.New(string(data[:sp]))
		if err != nil {
			return nil, fmt.Errorf("history: decode tree %s: %w", h, err)
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+1+len(plumbing.ZeroHash) {
			return nil, fmt.Errorf("history: decode tree %s: an entry is cut short", h)
		}
		e := object.TreeEntry{Name: string(data[:nul]), Mode: mode}
		copy(e.Hash[:], data[nul+1:])
		es = append(es, e)
		data = data[nul+1+len(plumbing.ZeroHash):]
	}
	return es, nil
}

// commitTree reads the root tree of a commit's content: its first line,
// "tree <40 hex digits>".
func commitTree(h plumbing.Hash, data []byte) (plumbing.Hash, error) {
	const prefix = "tree "
	n := len(prefix) + 2*len(plumbing.ZeroHash)
	if len(data) <= n || string(data[:len(prefix)]) != prefix || data[n] != '\n' {
		return plumbing.ZeroHash, fmt.Errorf("history: decode commit %s: it does not start with its tree", h)
	}
	id := string(data[len(prefix):n])
	if !plumbing.IsHash(id) {
		return plumbing.ZeroHash, fmt.Errorf("history: decode commit %s: bad tree id %q", h, id)
	}
	return plumbing.NewHash(id), nil
}
