//go:build linux

package source

import (
	"syscall"
	"time"
)

// statClean reports whether the file whose stat is sys (a
// *syscall.Stat_t: an os.Lstat's Sys, or fsutil.Root.ReadRegular's) is
// as the index recorded it in e, git's own test of a clean entry: the
// size, the modification time, and the inode number and change time,
// which an edit that keeps a file's size and puts its time back (cp -p,
// rsync -t, touch -r) changes. A change time the index holds without
// nanoseconds (a git built without them) is compared to the second.
// Whether e is racily clean is the caller's (beforeIndex).
func statClean(sys any, e indexStat) bool {
	st, ok := sys.(*syscall.Stat_t)
	if !ok || uint32(st.Size) != e.size || uint32(st.Ino) != e.inode ||
		!time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)).Equal(e.mtime) || int64(st.Ctim.Sec) != e.ctime.Unix() {
		return false
	}
	return e.ctime.Nanosecond() == 0 || int64(st.Ctim.Nsec) == int64(e.ctime.Nanosecond())
}
