//go:build unix

package fsutil

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadNoFollow: the system-call read and the *os.File read give the
// same bytes for regular files (empty, small, over a read's first
// buffer), and both refuse, without blocking or following, a symlink, a
// FIFO and a directory; a missing file is fs.ErrNotExist.
func TestReadNoFollow(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 40000) // 640,000 bytes
	regular := map[string][]byte{
		write("empty", nil):               {},
		write("small", []byte("hello\n")): []byte("hello\n"),
		write("big", big):                 big,
	}
	for p, want := range regular {
		for name, read := range map[string]func(string) ([]byte, error){"syscalls": readNoFollow, "os.File": readNoFollowFile} {
			got, err := read(p)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s(%s) = %d bytes, %v; want %d bytes", name, filepath.Base(p), len(got), err, len(want))
			}
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "small"), link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{link, "too many levels of symbolic links"},
		{fifo, "is a named pipe, not a regular file"},
		{dir, "is a directory, not a regular file"},
	} {
		for name, read := range map[string]func(string) ([]byte, error){"syscalls": readNoFollow, "os.File": readNoFollowFile} {
			if _, err := read(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s(%s): %v, want an error saying %q", name, filepath.Base(c.path), err, c.want)
			}
		}
	}
	if _, err := readNoFollow(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}
