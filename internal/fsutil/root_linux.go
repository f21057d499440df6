package fsutil

import (
	"errors"
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

// read reads name beneath the root (see Root.ReadFileBuf; with accept
// set, Root.ReadRegular), with the open file's stat (a *syscall.Stat_t);
// ok is false when the caller must read it another way (no handle,
// openat2 refused).
func (s *sysRoot) read(dir, name string, max int64, buf []byte, accept func(int64) bool) ([]byte, any, bool, error) {
	if s.fd < 0 || s.refused.Load() {
		return nil, nil, false, nil
	}
	full := filepath.Join(dir, name)
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	if accept != nil {
		how.Flags |= unix.O_NOFOLLOW
	}
	fd, err := retryEINTR(func() (int, error) { return unix.Openat2(s.fd, filepath.FromSlash(name), &how) })
	switch {
	case err == unix.ENOSYS || err == unix.EPERM:
		s.refused.Store(true)
		return nil, nil, false, nil
	case err == unix.ENOENT:
		return nil, nil, true, &fs.PathError{Op: "open", Path: full, Err: err}
	case err == unix.ELOOP && accept != nil:
		return nil, nil, true, leaves(dir, name, &fs.PathError{Op: "open", Path: full, Err: errNotFollowed})
	case err == unix.EXDEV || err == unix.ELOOP:
		return nil, nil, true, leaves(dir, name, &fs.PathError{Op: "open", Path: full, Err: errors.New("path escapes from parent")})
	case err == unix.EAGAIN:
		// openat2 may ask for a retry when a rename raced its lookup.
		return nil, nil, false, nil
	case err != nil:
		return nil, nil, true, leaves(dir, name, &fs.PathError{Op: "open", Path: full, Err: err})
	}
	defer unix.Close(fd)
	data, st, err := readFD(fd, full, max, buf, accept)
	if err != nil {
		return nil, nil, true, err
	}
	return data, st, true, nil
}
