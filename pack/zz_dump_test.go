package pack

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestZZDump(t *testing.T) {
	root := "testdata/summary_repo"
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		f := Extract(rel, string(data))
		if f.Lang == "" {
			return nil
		}
		out, _ := json.MarshalIndent(struct {
			*Facts
			Refs int
		}{f, len(f.refs)}, "", " ")
		fmt.Printf("=== %s\n%s\n", rel, out)
		return nil
	})
}
