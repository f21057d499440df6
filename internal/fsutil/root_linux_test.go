package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

// On Linux a root reads through openat2 (this kernel has it), so that
// TestReadInRootRefusesWhatLeavesOrIsNotAFile tests that path, not only
// the os.Root one.
func TestRootReadsThroughOpenat2(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, _, ok, err := r.sys.read(dir, "a", 10, nil, nil)
	if !ok {
		t.Skip("openat2 is refused here (kernel before 5.6, or a seccomp filter)")
	}
	if err != nil || string(data) != "x" {
		t.Fatalf("read a: %q %v", data, err)
	}
	if r.os != nil {
		t.Error("the os.Root was opened")
	}
}
