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
	if data, _, ok, err := r.sys.read(r.dir, name, max, buf, nil); ok {
		return data, err
	}
	f, err := r.openOS(name, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, filepath.Join(r.dir, name), max)
}

// ErrSizeRefused is ReadRegular's error for a file of a size its caller
// did not accept.
var ErrSizeRefused = errors.New("file size not accepted")

// errNotFollowed is ReadRegular's error for a symlink.
var errNotFollowed = errors.New("a symlink, not followed")

// ReadRegular is ReadFileBuf of a file that is itself regular (a symlink
// in its place is not followed) and whose size accept allows, else
// ErrSizeRefused; the file may not grow while it is read. Size and type
// come from the open file: a reader that looked them up by path first
// (os.Lstat) walked the path twice (hugo's 1-file range: 907 files, ~2 ms
// of CPU). A nil accept accepts any size. st is the open file's stat,
// taken before it was read: a *syscall.Stat_t on Unix systems, nil where
// there is none.
func (r *Root) ReadRegular(name string, buf []byte, accept func(size int64) bool) (data []byte, st any, err error) {
	if accept == nil {
		// sys.read follows no last symlink only when given one.
		accept = func(int64) bool { return true }
	}
	if data, st, ok, err := r.sys.read(r.dir, name, -1, buf, accept); ok {
		return data, st, err
	}
	// os.Root follows a last symlink that stays inside it, O_NOFOLLOW or
	// not: the name's own entry is looked at first.
	root, err := r.osRoot()
	if err != nil {
		return nil, nil, err
	}
	if fi, err := root.Lstat(filepath.FromSlash(name)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		return nil, nil, leaves(r.dir, name, err)
	} else if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, nil, leaves(r.dir, name, &fs.PathError{Op: "open", Path: filepath.Join(r.dir, name), Err: errNotFollowed})
	}
	f, err := r.openOS(name, noFollow)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.Mode().IsRegular() && !accept(fi.Size()) {
		return nil, nil, ErrSizeRefused
	}
	if data, err = readBounded(f, filepath.Join(r.dir, name), fi.Size()); err != nil {
		return nil, nil, err
	}
	return data, fi.Sys(), nil
}

// osRoot is the root's os.Root, opened at its first use.
func (r *Root) osRoot() (*os.Root, error) {
	r.once.Do(func() { r.os, r.osErr = os.OpenRoot(r.dir) })
	return r.os, r.osErr
}

// openOS opens name for reading through the os.Root (flag: more flags).
func (r *Root) openOS(name string, flag int) (*os.File, error) {
	root, err := r.osRoot()
	if err != nil {
		return nil, err
	}
	f, err := root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|nonBlock|flag, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, leaves(r.dir, name, err)
	}
	return f, nil
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
