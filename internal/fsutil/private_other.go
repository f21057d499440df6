//go:build !unix

package fsutil

import (
	"fmt"
	"io/fs"
	"os"
)

// readPrivate, without Unix owners and modes, refuses a symlink and reads
// a regular file; who may read it is the user's profile's business.
func readPrivate(path string, max int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link: it holds a secret, and is read only as a file of its own (remove the link)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, path, max)
}

func checkPrivateDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}
