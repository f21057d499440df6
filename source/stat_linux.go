//go:build linux

package source

import (
	"io/fs"
	"syscall"
	"time"
)

// inodeUnchanged reports whether the file fi describes has the inode number and
// change time an index entry recorded (inode, ctime), which git compares
// besides the size and modification time: an edit that keeps a file's
// size and puts its time back (cp -p, rsync -t, touch -r) changes its
// ctime. A change time the index holds without nanoseconds (a git built
// without them) is compared to the second.
func inodeUnchanged(fi fs.FileInfo, inode uint32, ctime time.Time) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && sameInode(st, inode, ctime)
}

// sameInode is inodeUnchanged of the stat st.
func sameInode(st *syscall.Stat_t, inode uint32, ctime time.Time) bool {
	if uint32(st.Ino) != inode {
		return false
	}
	if ctime.Nanosecond() == 0 {
		return int64(st.Ctim.Sec) == ctime.Unix()
	}
	return int64(st.Ctim.Sec) == ctime.Unix() && int64(st.Ctim.Nsec) == int64(ctime.Nanosecond())
}

// statClean reports whether the open file whose stat is sys (a
// *syscall.Stat_t, from fsutil.Root.ReadRegular) is as the index
// recorded it in e, as gogitBackend.worktree decides an entry clean: the
// size, modification time, inode and change time git compares. Its
// content is then e's blob.
func statClean(sys any, e indexStat) bool {
	st, ok := sys.(*syscall.Stat_t)
	return ok && uint32(st.Size) == e.size && time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)).Equal(e.mtime) &&
		sameInode(st, e.inode, e.ctime)
}
