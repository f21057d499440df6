package store

import (
	"archive/zip"
	"bytes"
	"os"
	"sort"
	"testing"
)

func zipBytes(t testing.TB, files map[string][]byte) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(files[n])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeZip(t *testing.T, path string, files map[string][]byte) {
	if err := os.WriteFile(path, zipBytes(t, files), 0o644); err != nil {
		t.Fatal(err)
	}
}
