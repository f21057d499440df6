package fsutil

import (
	"os"
	"path/filepath"
	"strings"
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

// A read stops at the stat's size only when the file ends there: a file
// whose stat says 0 bytes and holds more (/proc's) is read to its end.
func TestReadNoFollowReadsPastTheStatSize(t *testing.T) {
	st, err := os.Stat("/proc/self/status")
	if err != nil || st.Size() != 0 {
		t.Skipf("no /proc/self/status of size 0 here (%v)", err)
	}
	data, err := ReadNoFollow("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "Name:") || !strings.Contains(string(data), "Pid:") {
		t.Errorf("read %q, want the whole status", data)
	}
}
