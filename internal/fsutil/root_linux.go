package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// sysRoot is the root's directory opened for openat2, which resolves a
// path beneath it in the kernel (RESOLVE_BENEATH: no "..", absolute path
// or symlink leads out) in one system call.
type sysRoot struct {
	fd int // -1: none
	// refused is set once openat2 is refused (ENOSYS before Linux 5.6, or
	// a seccomp filter's EPERM): the os.Root path reads from then on.
	refused atomic.Bool
}

// forceOSRoot makes every Root read through os.Root (tests of that path).
var forceOSRoot bool

func openSysRoot(dir string) sysRoot {
	if forceOSRoot {
		return sysRoot{fd: -1}
	}
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return sysRoot{fd: -1}
	}
	return sysRoot{fd: fd}
}

func (s *sysRoot) close() error {
	if s.fd < 0 {
		return nil
	}
	err := unix.Close(s.fd)
	s.fd = -1
	return err
}

// read reads name beneath the root; ok is false when the caller must read
// it another way (no handle, openat2 refused).
func (s *sysRoot) read(dir, name string, max int64) ([]byte, bool, error) {
	if s.fd < 0 || s.refused.Load() {
		return nil, false, nil
	}
	full := filepath.Join(dir, name)
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := retryEINTR(func() (int, error) { return unix.Openat2(s.fd, filepath.FromSlash(name), &how) })
	switch {
	case err == unix.ENOSYS || err == unix.EPERM:
		s.refused.Store(true)
		return nil, false, nil
	case err == unix.ENOENT:
		return nil, true, &fs.PathError{Op: "open", Path: full, Err: err}
	case err == unix.EXDEV || err == unix.ELOOP:
		return nil, true, leaves(dir, name, &fs.PathError{Op: "open", Path: full, Err: errors.New("path escapes from parent")})
	case err == unix.EAGAIN:
		// openat2 may ask for a retry when a rename raced its lookup.
		return nil, false, nil
	case err != nil:
		return nil, true, leaves(dir, name, &fs.PathError{Op: "open", Path: full, Err: err})
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, true, &fs.PathError{Op: "stat", Path: full, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, true, fmt.Errorf("%s is %s: ctxpack reads configuration only from regular files", full, kindOf(fileMode(st.Mode)))
	}
	if st.Size > max {
		return nil, true, fmt.Errorf("%s is %d bytes, over the %d-byte limit for this file", full, st.Size, max)
	}
	// One byte over its size to see the end at once; never past max+1.
	buf := make([]byte, 0, min(st.Size, max)+1)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > max {
				return nil, true, fmt.Errorf("%s grew over the %d-byte limit for this file while it was read", full, max)
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := retryEINTR(func() (int, error) { return unix.Read(fd, buf[len(buf):cap(buf)]) })
		if err != nil {
			return nil, true, &fs.PathError{Op: "read", Path: full, Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	if int64(len(buf)) > max {
		return nil, true, fmt.Errorf("%s grew over the %d-byte limit for this file while it was read", full, max)
	}
	return buf, true, nil
}
