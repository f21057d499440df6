//go:build unix

package fsutil

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

func readPrivate(path string, max int64) ([]byte, error) {
	fd, err := retryEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|nonBlock|noFollow|syscall.O_CLOEXEC, 0)
	})
	if err == syscall.ELOOP {
		return nil, fmt.Errorf("%s is a symbolic link: it holds a secret, and is read only as a file of its own (remove the link)", path)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	data, st, err := readFD(fd, path, max, nil, nil)
	if err != nil {
		return nil, err
	}
	if uid := os.Geteuid(); int64(st.Uid) != int64(uid) {
		return nil, fmt.Errorf("%s belongs to user %d, not to this user (%d): it holds a secret of this user's (remove it)", path, st.Uid, uid)
	}
	if uint32(st.Mode)&0o077 != 0 {
		return nil, fmt.Errorf("%s can be read or written by others (mode %04o): it holds a secret of this user's (chmod 600 it, or remove it)", path, uint32(st.Mode)&0o7777)
	}
	return data, nil
}

func checkPrivateDir(dir string) error {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	if uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFDIR {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if uid := os.Geteuid(); int64(st.Uid) != int64(uid) {
		return fmt.Errorf("%s belongs to user %d, not to this user (%d): it holds a secret of this user's (remove it)", dir, st.Uid, uid)
	}
	if uint32(st.Mode)&0o022 != 0 {
		return fmt.Errorf("%s can be written by others (mode %04o): it holds a secret of this user's (chmod 700 it)", dir, uint32(st.Mode)&0o7777)
	}
	return nil
}
