//go:build unix

package fsutil

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestReadPrivate: a secret's file is read when it is the user's alone, a
// regular file in a directory nobody else writes to; else it is refused,
// never read through a link.
func TestReadPrivate(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir, path string)
		err   string
	}{
		{"private", func(*testing.T, string, string) {}, ""},
		{"readable by others", func(t *testing.T, _, path string) { os.Chmod(path, 0o644) }, "can be read or written by others (mode 0644)"},
		{"writable by the group", func(t *testing.T, _, path string) { os.Chmod(path, 0o620) }, "by others (mode 0620)"},
		{"a link", func(t *testing.T, dir, path string) {
			other := filepath.Join(dir, "other")
			os.Rename(path, other)
			symlink(t, other, path)
		}, "is a symbolic link"},
		{"a directory others write to", func(t *testing.T, dir, _ string) { os.Chmod(dir, 0o777) }, "can be written by others"},
		{"over the size", func(t *testing.T, _, path string) { os.WriteFile(path, make([]byte, 33), 0o600) }, "over the 32-byte limit"},
		{"a FIFO", func(t *testing.T, _, path string) {
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skip(err)
			}
		}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ctxpack")
			if err := PrivateDir(dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "key")
			secret := bytes.Repeat([]byte{7}, 32)
			if err := CreatePrivate(path, secret); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, dir, path)
			got, err := ReadPrivate(path, 32)
			if tt.err == "" {
				if err != nil || !bytes.Equal(got, secret) {
					t.Fatalf("%x, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want one with %q", err, tt.err)
			}
		})
	}
	if _, err := ReadPrivate(filepath.Join(t.TempDir(), "absent"), 32); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestCreatePrivate: the file is made 0600, whole; of writers at once one
// wins, and the others are told it exists and leave it as it is.
func TestCreatePrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	var wg sync.WaitGroup
	won := make(chan []byte, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := bytes.Repeat([]byte{byte('a' + i)}, 32)
			err := CreatePrivate(path, data)
			switch {
			case err == nil:
				won <- data
			case !errors.Is(err, fs.ErrExist):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(won)
	if len(won) != 1 {
		t.Fatalf("%d writers made the file, want 1", len(won))
	}
	got, err := ReadPrivate(path, 32)
	if err != nil || !bytes.Equal(got, <-won) {
		t.Fatalf("%q, %v: not the winner's", got, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}
