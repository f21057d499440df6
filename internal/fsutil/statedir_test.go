package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMkdirNoFollow: the state directories are made, or used when they
// are directories; a link or a file where one should be is refused and
// nothing is made where the link points. The parent is followed (git's
// own layout).
func TestMkdirNoFollow(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, git, outside string) // what the repository brings
		err   string                                  // "" for none
	}{
		{"absent", func(*testing.T, string, string) {}, ""},
		{"directories", func(t *testing.T, git, _ string) {
			if err := os.MkdirAll(filepath.Join(git, "ctxpack", "scan-cache"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"state directory a link", func(t *testing.T, git, outside string) {
			symlink(t, outside, filepath.Join(git, "ctxpack"))
		}, "ctxpack is a symbolic link, not a directory"},
		{"subdirectory a link", func(t *testing.T, git, outside string) {
			os.Mkdir(filepath.Join(git, "ctxpack"), 0o755)
			symlink(t, outside, filepath.Join(git, "ctxpack", "scan-cache"))
		}, "scan-cache is a symbolic link, not a directory"},
		{"dangling link", func(t *testing.T, git, outside string) {
			symlink(t, filepath.Join(outside, "absent"), filepath.Join(git, "ctxpack"))
		}, "ctxpack is a symbolic link"},
		{"a file", func(t *testing.T, git, _ string) {
			os.WriteFile(filepath.Join(git, "ctxpack"), nil, 0o644)
		}, "ctxpack is a regular file, not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			git := filepath.Join(root, "real.git")
			os.Mkdir(git, 0o755)
			linked := filepath.Join(root, "dot-git") // the parent through a link: followed
			symlink(t, git, linked)
			tt.plant(t, git, outside)
			dir, err := MkdirNoFollow(linked, 0o755, "ctxpack", "scan-cache")
			if tt.err == "" {
				if err != nil || dir != filepath.Join(linked, "ctxpack", "scan-cache") {
					t.Fatalf("%q, %v", dir, err)
				}
				if fi, err := os.Lstat(filepath.Join(git, "ctxpack", "scan-cache")); err != nil || !fi.IsDir() {
					t.Fatalf("not made: %v", err)
				}
				return
			}
			var nd *NotDirError
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "remove it") || !errors.As(err, &nd) {
				t.Fatalf("error %v, want one with %q", err, tt.err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Fatalf("made %s where the link points", entries[0].Name())
			}
		})
	}
	for _, name := range []string{"", ".", "..", "a/b"} {
		if _, err := MkdirNoFollow(t.TempDir(), 0o755, name); err == nil {
			t.Errorf("%q taken for one path component", name)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
}
