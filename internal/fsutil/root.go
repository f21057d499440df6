package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Root reads files beneath one directory whose contents the repository
// controls, as ReadInRoot does, through one handle kept open: a work tree
// read file by file (the search of a change's tree, the files of a range)
// reopened its root and walked each path's directories at every read
// (hugo's 907 Go files: ~20 ms of a range's CPU). On Linux a read is one
// openat2 confined beneath the root by the kernel; elsewhere, or where
// openat2 is refused, an os.Root.
type Root struct {
	dir string
	sys sysRoot

	once   sync.Once
	os     *os.Root
	osErr  error
	closed bool
}

// OpenRoot opens the directory dir for ReadFile.
func OpenRoot(dir string) (*Root, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: errors.New("not a directory")}
	}
	r := &Root{dir: dir}
	r.sys = openSysRoot(dir)
	return r, nil
}

// ReadInRoot reads name, relative to dir, where the repository controls
// what is on disk: no symlink may lead out of dir, and the file must be
// regular (not a device, FIFO or socket; FIFOs are opened without
// blocking) and at most max bytes. A missing file is an error wrapping
// fs.ErrNotExist.
func ReadInRoot(dir, name string, max int64) ([]byte, error) {
	r, err := OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(name, max)
}

// ReadFile reads name (slash-separated, relative to the root) as
// ReadInRoot does. It is safe for concurrent use.
func (r *Root) ReadFile(name string, max int64) ([]byte, error) {
	return r.ReadFileBuf(name, max, nil)
}

// ReadFileBuf is ReadFile that may read into buf when it has room (the
// openat2 path does), for a reader that looks at one file at a time and
// keeps none: a search of hugo's tree read its 6 MB into 900 fresh
// buffers, each page a fault. The contents are returned either way.
func (r *Root) ReadFileBuf(name string, max int64, buf []byte) ([]byte, error) {
	if data, ok, err := r.sys.read(r.dir, name, max, buf); ok {
		return data, err
	}
	r.once.Do(func() { r.os, r.osErr = os.OpenRoot(r.dir) })
	if r.osErr != nil {
		return nil, r.osErr
	}
	f, err := r.os.OpenFile(filepath.FromSlash(name), os.O_RDONLY|nonBlock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, leaves(r.dir, name, err)
	}
	defer f.Close()
	return readBounded(f, filepath.Join(r.dir, name), max)
}

// leaves is the error of a path that cannot be opened inside the root.
func leaves(dir, name string, err error) error {
	return fmt.Errorf("%s: %w (ctxpack reads it only inside the repository, through no symlink that leaves it)", filepath.Join(dir, name), err)
}

// Close releases the root's handles. Not safe beside ReadFile.
func (r *Root) Close() error {
	if r == nil || r.closed {
		return nil
	}
	r.closed = true
	err := r.sys.close()
	if r.os != nil {
		err = errors.Join(err, r.os.Close())
	}
	return err
}
