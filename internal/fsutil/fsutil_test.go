package fsutil

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestWriteFileNeverWritesThroughASymlink: a file written whole or
// prepared ahead replaces a symlink at its target, never writes through
// it: the file the link named keeps its bytes.
func TestWriteFileNeverWritesThroughASymlink(t *testing.T) {
	writers := map[string]func(path string, data []byte) error{
		"WriteFile": func(path string, data []byte) error { return WriteFile(path, data, 0o644) },
		"Prepare": func(path string, data []byte) error {
			var b Batch
			b.AddPrepared(Prepare(path, data, 0o644))
			return b.Commit(context.Background())
		},
	}
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "target")
			os.WriteFile(target, []byte("keep"), 0o644)
			link := filepath.Join(dir, "out.json")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			if err := write(link, []byte("new")); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(target); string(b) != "keep" {
				t.Fatalf("wrote through the symlink: target = %q", b)
			}
			if fi, _ := os.Lstat(link); !fi.Mode().IsRegular() {
				t.Fatalf("the link was not replaced by a file: %v", fi.Mode())
			}
		})
	}
}

func TestWriteFileRefusesNonRegularTargets(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	for _, p := range []string{fifo, dir, "/dev/null"} {
		err := WriteFile(p, []byte("x"), 0o644)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: err = %v", p, err)
		}
	}
	if fi, err := os.Lstat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null was replaced: %v %v", fi, err)
	}
}

func TestBatchIsOneUnit(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("old a"), 0o644)
	os.WriteFile(b, []byte("old b"), 0o644)

	// A target that cannot be written stops the batch before any rename.
	var bad Batch
	bad.Add(a, []byte("new a"), 0o644)
	bad.Add(filepath.Join(dir, "missing", "c"), []byte("c"), 0o644)
	if err := bad.Commit(context.Background()); err == nil {
		t.Fatal("want an error")
	}
	// A cancelled run writes nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var cancelled Batch
	cancelled.Add(a, []byte("new a"), 0o644)
	cancelled.Add(b, []byte("new b"), 0o644)
	if err := cancelled.Commit(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	for p, want := range map[string]string{a: "old a", b: "old b"} {
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s = %q after a failed batch", p, got)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("temporary files left: %v", entries)
	}
	var ok Batch
	ok.Add(a, []byte("new a"), 0o644)
	ok.Add(b, []byte("new b"), 0o600)
	if err := ok.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(b); string(got) != "new b" {
		t.Fatal(string(got))
	}
	if fi, _ := os.Stat(b); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
}

func TestBatchWithAPreparedFile(t *testing.T) {
	dir := t.TempDir()
	rec, pk := filepath.Join(dir, "pack.json.record.json"), filepath.Join(dir, "pack.json")
	os.WriteFile(pk, []byte("old pack"), 0o644)
	// Until a batch commits it, a prepared file is a temporary file beside
	// its target, which stays as it was.
	p := Prepare(pk, []byte("new pack"), 0o640)
	if _, err := p.wait(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(pk); string(got) != "old pack" {
		t.Fatalf("the target changed before the commit: %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("want the target and one temporary file: %v", entries)
	}
	var ok Batch
	ok.Add(rec, []byte("record"), 0o644)
	ok.AddPrepared(p)
	if err := ok.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Discard() // after a commit: nothing to remove
	for path, want := range map[string]string{rec: "record", pk: "new pack"} {
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("%s = %q", path, got)
		}
	}
	if fi, _ := os.Stat(pk); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("temporary files left: %v", entries)
	}

	// A batch that fails (a target it may not replace) renames nothing and
	// removes the prepared file's temporary file as well as its own.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	var bad Batch
	bad.Add(rec, []byte("second record"), 0o644)
	bad.AddPrepared(Prepare(pk, []byte("second pack"), 0o644))
	bad.Add(fifo, []byte("x"), 0o644)
	if err := bad.Commit(context.Background()); err == nil || !strings.Contains(err.Error(), "fifo") {
		t.Fatalf("err = %v", err)
	}
	// A prepared file discarded (the run failed) leaves nothing behind.
	Prepare(pk, []byte("third pack"), 0o644).Discard()
	for path, want := range map[string]string{rec: "record", pk: "new pack"} {
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("%s = %q after a failed batch", path, got)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// A prepared file whose directory is missing fails the batch it is in,
// naming the file.
func TestBatchWithAPreparedFileThatCannotBeWritten(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	var b Batch
	b.Add(a, []byte("a"), 0o644)
	b.AddPrepared(Prepare(filepath.Join(dir, "missing", "pack.json"), []byte("x"), 0o644))
	err := b.Commit(context.Background())
	if err == nil || !strings.Contains(err.Error(), filepath.Join("missing", "pack.json")) {
		t.Fatalf("err = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestStaleTempsOfDeadProcessesAreRemoved(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pack.json")
	dead := filepath.Join(dir, ".pack.json"+tempMarker+"999999999-abc")
	live := filepath.Join(dir, ".pack.json"+tempMarker+strconv.Itoa(os.Getppid())+"-abc")
	other := filepath.Join(dir, ".other.json"+tempMarker+"999999999-abc")
	for _, f := range []string{dead, live, other} {
		os.WriteFile(f, nil, 0o600)
	}
	if err := WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a dead process's temp file is still there")
	}
	for _, f := range []string{live, other} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s removed: %v", f, err)
		}
	}
}

func TestFreshDirReplacesASymlink(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "keep"), []byte("k"), 0o644)
	out := filepath.Join(ws, ".ctxpack-action")
	if err := os.Symlink(outside, out); err != nil {
		t.Fatal(err)
	}
	if err := FreshDir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(out); !fi.IsDir() {
		t.Fatal("not a directory")
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Fatal("the symlink's target was touched")
	}
	os.WriteFile(filepath.Join(out, "old"), nil, 0o644)
	if err := FreshDir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("not fresh: %v", entries)
	}
}

// Both ways a root reads: openat2 where the kernel has it, and os.Root.
func TestReadInRootRefusesWhatLeavesOrIsNotAFile(t *testing.T) {
	eachRoot(t, func(t *testing.T, _ bool) { testReadInRoot(t) })
}

func testReadInRoot(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.yml"), []byte("version: 1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "big.yml"), make([]byte, 2048), 0o644)
	os.Symlink("/dev/zero", filepath.Join(dir, "zero.yml"))
	os.Symlink("/etc/hostname", filepath.Join(dir, "out.yml"))
	os.Symlink("ok.yml", filepath.Join(dir, "in.yml"))
	syscall.Mkfifo(filepath.Join(dir, "fifo.yml"), 0o644)
	os.Mkdir(filepath.Join(dir, "dir.yml"), 0o755)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "ok.yml"), []byte("version: 1\n"), 0o644)
	os.Symlink("sub", filepath.Join(dir, "insub"))
	os.Symlink("/etc", filepath.Join(dir, "etc"))
	os.Symlink("..", filepath.Join(dir, "sub", "up"))
	for name, want := range map[string]string{
		"ok.yml":        "",
		"in.yml":        "",
		"sub/ok.yml":    "",
		"insub/ok.yml":  "",
		"sub/up/ok.yml": "",
		"sub/up/sub/up/../" + filepath.Base(dir) + "/ok.yml": "escapes",
		"../" + filepath.Base(dir) + "/ok.yml":               "escapes",
		"etc/hostname":                                       "escapes",
		"big.yml":                                            "over the 1024-byte limit",
		"zero.yml":                                           "escapes",
		"out.yml":                                            "escapes",
		"fifo.yml":                                           "named pipe",
		"dir.yml":                                            "directory",
		"ok.yml/x":                                           "not a directory",
	} {
		data, err := ReadInRoot(dir, name, 1024)
		switch {
		case want == "" && (err != nil || string(data) != "version: 1\n"):
			t.Errorf("%s: %q %v", name, data, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: err = %v, want %q", name, err, want)
		}
	}
	if _, err := ReadInRoot(dir, "absent.yml", 1024); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
	if _, err := ReadInRoot(filepath.Join(dir, "absent"), "ok.yml", 1024); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent root: %v", err)
	}
	// One root, many reads, from several goroutines.
	root, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if data, err := root.ReadFile("sub/ok.yml", 1024); err != nil || string(data) != "version: 1\n" {
					t.Errorf("sub/ok.yml: %q %v", data, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := root.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile("/dev/zero", 1024); err == nil || !strings.Contains(err.Error(), "character device") {
		t.Errorf("/dev/zero: %v", err)
	}
	if data, err := ReadFile(filepath.Join(dir, "in.yml"), 1024); err != nil || len(data) == 0 {
		t.Errorf("an operator's symlink is followed: %v", err)
	}
}

// ReadFileBuf reads into the buffer it is given when that has room, and
// into a new one otherwise; both ways a root reads.
func TestRootReadFileBuf(t *testing.T) {
	eachRoot(t, func(t *testing.T, osRoot bool) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "short"), []byte("abc"), 0o644)
		os.WriteFile(filepath.Join(dir, "long"), []byte(strings.Repeat("x", 100)), 0o644)
		r, err := OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		buf := make([]byte, 10, 64)
		data, err := r.ReadFileBuf("short", 1024, buf)
		if err != nil || string(data) != "abc" {
			t.Fatalf("short: %q %v", data, err)
		}
		if !osRoot && r.os == nil && &data[0] != &buf[:1][0] { // r.os: openat2 refused here
			t.Error("short: not read into the buffer that had room")
		}
		data, err = r.ReadFileBuf("long", 1024, buf)
		if err != nil || string(data) != strings.Repeat("x", 100) {
			t.Fatalf("long: %q %v", data, err)
		}
		if &data[0] == &buf[:1][0] {
			t.Error("long: read into a buffer without room for it")
		}
		if _, err := r.ReadFileBuf("long", 50, buf); err == nil || !strings.Contains(err.Error(), "over the 50-byte limit") {
			t.Errorf("long over its limit: %v", err)
		}
	})
}

// ReadRegular reads a regular file whose size its caller accepts, and
// refuses a symlink in its place (even one to a file inside the root), a
// file of a size not accepted, and what is not a file; both ways a root
// reads.
func TestRootReadRegular(t *testing.T) {
	eachRoot(t, func(t *testing.T, osRoot bool) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "ok"), []byte("abc"), 0o644)
		os.WriteFile(filepath.Join(dir, "big"), make([]byte, 100), 0o644)
		os.Symlink("ok", filepath.Join(dir, "link"))
		os.Symlink("/etc/hostname", filepath.Join(dir, "out"))
		os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		os.WriteFile(filepath.Join(dir, "sub", "ok"), []byte("abc"), 0o644)
		os.Symlink("sub", filepath.Join(dir, "insub"))
		syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644)
		r, err := OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var asked []int64
		under := func(n int64) func(int64) bool {
			return func(size int64) bool { asked = append(asked, size); return size < n }
		}
		for _, tc := range []struct {
			name string
			want string // the contents, or a part of the error
		}{
			{"ok", "abc"},
			{"sub/ok", "abc"},
			{"insub/ok", "abc"}, // a directory symlink inside the root, as ReadFile
			{"big", "file size not accepted"},
			{"link", "a symlink, not followed"},
			{"out", "a symlink, not followed"},
			{"sub", "directory"},
			{"fifo", "named pipe"},
			{"absent", "no such file"},
		} {
			data, _, err := r.ReadRegular(tc.name, nil, under(50))
			got := string(data)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) || err == nil && got != tc.want {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			}
		}
		if _, _, err := r.ReadRegular("big", nil, under(50)); !errors.Is(err, ErrSizeRefused) {
			t.Errorf("big: %v, want ErrSizeRefused", err)
		}
		if want := []int64{3, 3, 3, 100, 100}; !slices.Equal(asked, want) {
			t.Errorf("sizes asked about: %v, want %v (regular files only)", asked, want)
		}
		// Without a size test, any size; a symlink is refused all the same.
		data, st, err := r.ReadRegular("big", nil, nil)
		if err != nil || len(data) != 100 {
			t.Errorf("big, any size: %d bytes, %v", len(data), err)
		}
		// The open file's stat comes with its bytes (both ways of reading).
		if s, ok := st.(*syscall.Stat_t); !ok || s.Size != 100 {
			t.Errorf("big: stat %#v, want a *syscall.Stat_t of 100 bytes", st)
		}
		if _, _, err := r.ReadRegular("link", nil, nil); err == nil || !strings.Contains(err.Error(), "a symlink, not followed") {
			t.Errorf("link, any size: %v, want it refused", err)
		}
	})
}

// eachRoot runs test under t both ways a Root reads: openat2 where the
// kernel has it, and os.Root (osRoot).
func eachRoot(t *testing.T, test func(t *testing.T, osRoot bool)) {
	for _, osRoot := range []bool{false, true} {
		t.Run(fmt.Sprintf("os.Root=%v", osRoot), func(t *testing.T) {
			defer func(was bool) { forceOSRoot = was }(forceOSRoot)
			forceOSRoot = osRoot
			test(t, osRoot)
		})
	}
}
