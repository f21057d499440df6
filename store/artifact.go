package store

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Artifact file names: the Action writes pack.json and pack.record.json;
// ctxpack pack -o FILE writes FILE and FILE.record.json.
const (
	ArtifactPack   = "pack.json"
	ArtifactRecord = "pack.record.json"
	// maxArtifactFile bounds one file read from an artifact.
	maxArtifactFile = 256 << 20
)

// ReadArtifact reads a pack and its record from path: a zip file (the
// Action's artifact as downloaded), a directory (the Action's
// .ctxpack-action, an unzipped artifact, or .git/ctxpack/prepush with
// --pack naming the file), or a pack file whose record is FILE.record.json
// or pack.record.json beside it.
func ReadArtifact(path string) (PutInput, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return PutInput{}, fmt.Errorf("import %s: %w", path, err)
	}
	if fi.IsDir() {
		return readPair(filepath.Join(path, ArtifactPack), filepath.Join(path, ArtifactRecord))
	}
	f, err := os.Open(path)
	if err != nil {
		return PutInput{}, fmt.Errorf("import %s: %w", path, err)
	}
	defer f.Close()
	var magic [4]byte
	if n, _ := io.ReadFull(f, magic[:]); n == 4 && string(magic[:]) == "PK\x03\x04" {
		in, err := ReadZip(f, fi.Size())
		if err != nil {
			return PutInput{}, fmt.Errorf("import %s: %w", path, err)
		}
		return in, nil
	}
	// pack -o FILE writes FILE.record.json; the pre-push hook keeps
	// <sha>.pack.json and <sha>.record.json; the Action pack.record.json.
	candidates := []string{path + ".record.json"}
	if base, ok := strings.CutSuffix(path, ".pack.json"); ok {
		candidates = append(candidates, base+".record.json")
	}
	candidates = append(candidates, filepath.Join(filepath.Dir(path), ArtifactRecord))
	rec := candidates[len(candidates)-1]
	for _, c := range candidates {
		if _, err := os.Stat(c); !errors.Is(err, fs.ErrNotExist) {
			rec = c
			break
		}
	}
	return readPair(path, rec)
}

func readPair(packPath, recordPath string) (PutInput, error) {
	p, err := readLimited(packPath)
	if err != nil {
		return PutInput{}, fmt.Errorf("import: %w", err)
	}
	r, err := readLimited(recordPath)
	if err != nil {
		return PutInput{}, fmt.Errorf("import: the pack's record: %w", err)
	}
	return PutInput{Pack: p, Record: r}, nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxArtifactFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxArtifactFile {
		return nil, fmt.Errorf("%s is over %d bytes", path, maxArtifactFile)
	}
	return data, nil
}

// ReadZip reads pack.json and pack.record.json from an artifact zip (at
// its top level or in one directory). Nothing is extracted to disk, and
// each file is read up to a bound whatever the zip claims.
func ReadZip(r io.ReaderAt, size int64) (PutInput, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return PutInput{}, fmt.Errorf("not a zip artifact: %w", err)
	}
	found := map[string]*zip.File{}
	for _, f := range zr.File {
		name := strings.TrimPrefix(f.Name, "./")
		base := name
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			if strings.Contains(name[:i], "/") {
				continue // deeper than one directory
			}
			base = name[i+1:]
		}
		if base != ArtifactPack && base != ArtifactRecord {
			continue
		}
		if prev, ok := found[base]; ok {
			return PutInput{}, fmt.Errorf("the zip holds two %s (%s and %s)", base, prev.Name, f.Name)
		}
		found[base] = f
	}
	read := func(base string) ([]byte, error) {
		f, ok := found[base]
		if !ok {
			return nil, fmt.Errorf("the zip has no %s", base)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("open %s in the zip: %w", f.Name, err)
		}
		defer rc.Close()
		var b bytes.Buffer
		if _, err := io.Copy(&b, io.LimitReader(rc, maxArtifactFile+1)); err != nil {
			return nil, fmt.Errorf("read %s in the zip: %w", f.Name, err)
		}
		if b.Len() > maxArtifactFile {
			return nil, fmt.Errorf("%s in the zip is over %d bytes", f.Name, maxArtifactFile)
		}
		return b.Bytes(), nil
	}
	p, err := read(ArtifactPack)
	if err != nil {
		return PutInput{}, err
	}
	rec, err := read(ArtifactRecord)
	if err != nil {
		return PutInput{}, err
	}
	return PutInput{Pack: p, Record: rec}, nil
}
