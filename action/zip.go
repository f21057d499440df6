package action

import (
	"archive/zip"
	"bytes"
	"sort"
	"time"
)

// zipFile is one entry of the artifact.
type zipFile struct {
	Name string
	Data []byte
}

// zipFiles builds a deterministic zip: entries sorted by name, deflated,
// all stamped with mtime (the pack's commit time), mode 0644.
func zipFiles(files []zipFile, mtime time.Time) ([]byte, error) {
	fs := append([]zipFile(nil), files...)
	sort.Slice(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
	if mtime.IsZero() || mtime.Year() < 1980 {
		mtime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range fs {
		h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: mtime.UTC()}
		h.SetMode(0o644)
		fw, err := w.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
