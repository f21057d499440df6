package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// NoFollow is O_NOFOLLOW where the system has it (0 elsewhere), for a
// file opened by another package's code (a lock file).
const NoFollow = noFollow

// MkdirNoFollow makes the directories names (one path component each)
// under parent, each inside the one before, and returns the last one's
// path. A directory that exists is used as it is; a symlink or anything
// but a directory where one should be is refused, never followed. It is
// for ctxpack's state under a repository's git directory (.git/ctxpack and
// what is in it): a repository from elsewhere (a tarball, a restored CI
// cache, a shared workspace) brings what is there, and a link planted in
// it would make ctxpack write where the link points. parent itself is
// followed: it is git's own layout (a linked worktree's common directory,
// a .git file or link the user set up).
//
// Each directory is looked at once, before it is used: a process that can
// write there while ctxpack runs can swap it after the look.
func MkdirNoFollow(parent string, perm os.FileMode, names ...string) (string, error) {
	dir := parent
	for _, name := range names {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
			return "", fmt.Errorf("create %s: %q is not one path component", filepath.Join(dir, name), name)
		}
		dir = filepath.Join(dir, name)
		if err := os.Mkdir(dir, perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
		if !fi.IsDir() {
			return "", &NotDirError{Path: dir, Mode: fi.Mode()}
		}
	}
	return dir, nil
}

// NotDirError is MkdirNoFollow's error for a path that is not a directory.
type NotDirError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotDirError) Error() string {
	kind := "a regular file"
	if !e.Mode.IsRegular() {
		kind = kindOf(e.Mode)
	}
	return fmt.Sprintf("%s is %s, not a directory: ctxpack keeps its state there and follows no link in it (remove it, and ctxpack makes the directory again)", e.Path, kind)
}
