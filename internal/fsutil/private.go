package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadPrivate reads a file that holds a secret of the user's (a key):
// it must be a regular file (a symlink in its place is not followed) of
// at most max bytes and, where the system has owners and modes, the
// user's, readable and writable by nobody else, in a directory of the
// user's that nobody else can write to (who can replace the file knows
// the secret). A missing file is an error wrapping fs.ErrNotExist.
func ReadPrivate(path string, max int64) ([]byte, error) {
	if err := checkPrivateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return readPrivate(path, max)
}

// PrivateDir makes dir, and its parents, when absent (mode 0700), and
// checks it as ReadPrivate checks a secret's directory.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return checkPrivateDir(dir)
}

// CreatePrivate writes data as the new file path, readable and writable by
// the user alone (0600), whole or not at all: it is written and synced
// beside path first (writeTemp, as every atomic write), then linked into
// place, so a reader never sees part of it. When path already exists it is
// left as it is and the error wraps fs.ErrExist: of processes creating it
// at once, one wins and the others read its file.
func CreatePrivate(path string, data []byte) error {
	tmp, err := writeTemp(path, data, 0o600)
	if tmp != "" {
		defer os.Remove(tmp)
	}
	if err != nil {
		return err
	}
	err = os.Link(tmp, path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: renamed instead, which
		// replaces a file another process made meanwhile (whose
		// readers then only see their secret go stale).
		if _, statErr := os.Lstat(path); errors.Is(statErr, fs.ErrNotExist) {
			err = os.Rename(tmp, path)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
