//go:build unix

package fsutil

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// readNoFollow is ReadNoFollow in system calls: opened through os, a file
// opened without blocking (O_NONBLOCK, so that a FIFO cannot block the
// read) is offered to Go's poller, which refuses a regular file — an
// epoll_ctl and two fcntl calls a file, three of eight (a full-tree pack
// reads thousands).
func readNoFollow(path string) ([]byte, error) {
	fd, err := retryEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|nonBlock|noFollow|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	data, _, err := readFD(fd, path, -1, nil, nil)
	return data, err
}

// readFD reads the open file fd (named path in errors), which must be a
// regular file of at most max bytes (max < 0: any size), in system calls;
// into buf when it has room for it (its contents are then overwritten).
// With accept set, the file's size must be one it accepts (else
// ErrSizeRefused), and the file may not grow while it is read. st is the
// open file's stat, taken before the read.
func readFD(fd int, path string, max int64, buf []byte, accept func(size int64) bool) (data []byte, st *syscall.Stat_t, err error) {
	st = new(syscall.Stat_t)
	if err := syscall.Fstat(fd, st); err != nil {
		return nil, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if mode := uint32(st.Mode); mode&syscall.S_IFMT != syscall.S_IFREG { // uint16 on some systems
		return nil, nil, fmt.Errorf("%s is %s, not a regular file", path, kindOf(fileMode(mode)))
	}
	if max >= 0 && st.Size > max {
		return nil, nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit for this file", path, st.Size, max)
	}
	if accept != nil {
		if !accept(st.Size) {
			return nil, nil, ErrSizeRefused
		}
		max = st.Size
	}
	// Sized as os.ReadFile sizes it, one byte over to see the end at once:
	// a read that gives the stat's size and less than it was asked for
	// reached the end (a regular file's read stops short only there), so
	// no read is made to be told so (one system call of five a file).
	if int64(cap(buf)) > st.Size {
		buf = buf[:0]
	} else {
		buf = make([]byte, 0, st.Size+1)
	}
	for {
		if max >= 0 && int64(len(buf)) > max {
			return nil, nil, fmt.Errorf("%s grew over the %d-byte limit for this file while it was read", path, max)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := cap(buf) - len(buf)
		n, err := retryEINTR(func() (int, error) { return syscall.Read(fd, buf[len(buf):cap(buf)]) })
		if err != nil {
			return nil, nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		buf = buf[:len(buf)+n]
		if n == 0 || n < room && int64(len(buf)) == st.Size {
			return buf, st, nil
		}
	}
}

func retryEINTR(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// fileMode is the fs.FileMode of a stat's mode bits (the type bits kindOf
// reads).
func fileMode(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	}
	return os.ModeIrregular
}
