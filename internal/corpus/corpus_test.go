package corpus

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := Generate(a, 200, 42); err != nil {
		t.Fatal(err)
	}
	if err := Generate(b, 200, 42); err != nil {
		t.Fatal(err)
	}
	count := 0
	filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		count++
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between runs", rel)
		}
		return nil
	})
	if count != 200 {
		t.Fatalf("generated %d files, want 200", count)
	}
}
