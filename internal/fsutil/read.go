package fsutil

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Size limits of configuration files: far above any real one, low enough
// that a hostile file cannot exhaust memory.
const (
	MaxPolicyBytes = 1 << 20 // .ctxpack.yml
	MaxConfigBytes = 4 << 20 // .gitleaks.toml, .ctxpackignore
	MaxIgnoreBytes = 8 << 20 // .gitleaksignore (a fingerprint a line)
)

// ReadFile reads an operator-named file (a command-line path; symlinks are
// followed): it must be a regular file of at most max bytes. A missing file
// is an error wrapping fs.ErrNotExist.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, path, max)
}

func readBounded(f *os.File, name string, max int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", name, kindOf(fi.Mode()))
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit for this file", name, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s grew over the %d-byte limit for this file while it was read", name, max)
	}
	return data, nil
}

// ReadNoFollow reads a file of a work tree that was listed as a regular
// file: if it has since become a symlink or anything but a regular file, the
// read fails instead of following it (or blocking on a FIFO).
func ReadNoFollow(path string) ([]byte, error) { return readNoFollow(path) }

// readNoFollowFile is ReadNoFollow through an *os.File.
func readNoFollowFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock|noFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, kindOf(fi.Mode()))
	}
	// Sized as os.ReadFile sizes it: io.ReadAll would grow its buffer
	// from 512 bytes, allocating about twice the file.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	_, err = buf.ReadFrom(f)
	return buf.Bytes(), err
}
