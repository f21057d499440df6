package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// userCacheDir points the user's cache directory at a new directory.
func userCacheDir(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("LocalAppData", filepath.Join(home, "cache"))
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "ctxpack")
}

// TestUserCacheKey: the key is made on first use, private to the user,
// outside every repository, and the same for every process after; of
// processes making it at once, all end with one key.
func TestUserCacheKey(t *testing.T) {
	dir := userCacheDir(t)
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if keys[i], err = UserCacheKey(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if len(k) != CacheKeySize || !bytes.Equal(k, keys[0]) {
			t.Fatalf("keys differ: %x, %x", k, keys[0])
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, cacheKeyFile))
	if err != nil || !bytes.Equal(data, keys[0]) {
		t.Fatalf("key file %x, %v", data, err)
	}
	if runtime.GOOS != "windows" {
		if fi, _ := os.Stat(filepath.Join(dir, cacheKeyFile)); fi.Mode().Perm() != 0o600 {
			t.Errorf("key file mode %v", fi.Mode())
		}
		if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
			t.Errorf("key directory mode %v", fi.Mode())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files beside the key: %v", entries)
	}
}

// A key file that is not the user's alone is refused, not used and not
// replaced: the caller goes without the cache.
func TestUserCacheKeyRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	tests := []struct {
		name  string
		plant func(t *testing.T, path string)
		err   string
	}{
		{"readable by others", func(t *testing.T, path string) {
			os.WriteFile(path, bytes.Repeat([]byte{1}, CacheKeySize), 0o644)
			os.Chmod(path, 0o644)
		}, "chmod 600"},
		{"a link", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "key")
			os.WriteFile(target, bytes.Repeat([]byte{1}, CacheKeySize), 0o600)
			if err := os.Symlink(target, path); err != nil {
				t.Skip(err)
			}
		}, "symbolic link"},
		{"short", func(t *testing.T, path string) { os.WriteFile(path, []byte("short"), 0o600) }, "5 bytes, not 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := userCacheDir(t)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, cacheKeyFile)
			tt.plant(t, path)
			before, _ := os.Lstat(path)
			if key, err := UserCacheKey(); err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("key %x, error %v; want one with %q", key, err, tt.err)
			}
			if after, _ := os.Lstat(path); !os.SameFile(before, after) {
				t.Error("the refused key file was replaced")
			}
		})
	}
}
