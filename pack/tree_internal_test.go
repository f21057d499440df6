package pack

import (
	"encoding/json"
	"strings"
	"testing"
)

// treeDepth is the number of directory levels below the root.
func treeDepth(n *DirNode) int {
	d := 0
	for _, c := range n.Children {
		d = max(d, 1+treeDepth(c))
	}
	return d
}

// TestDirectoryTreeDepthCap: directory_tree shows at most maxTreeDepth
// levels; a deeper directory's files are counted at its ancestor on the
// cap, marked folded, and every directory is still counted in the totals.
func TestDirectoryTreeDepthCap(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("d/", n) + "f.go" }
	tests := []struct {
		name      string
		files     []File
		wantDepth int
		wantDirs  int
		folded    bool
	}{
		{"flat", []File{{Path: "a.go", Size: 1}, {Path: "b.go", Size: 2}}, 0, 0, false},
		{"at the cap", []File{{Path: deep(maxTreeDepth), Size: 5}}, maxTreeDepth, maxTreeDepth, false},
		{"one past the cap", []File{{Path: deep(maxTreeDepth + 1), Size: 5}}, maxTreeDepth, maxTreeDepth + 1, true},
		{"1,000 deep", []File{{Path: deep(1000), Size: 5}, {Path: deep(500), Size: 7}, {Path: "x/y.go", Size: 1}}, maxTreeDepth, 1001, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, dirs := directoryTree("repo", tt.files)
			if d := treeDepth(root); d != tt.wantDepth {
				t.Errorf("depth %d, want %d", d, tt.wantDepth)
			}
			if dirs != tt.wantDirs {
				t.Errorf("directories %d, want %d", dirs, tt.wantDirs)
			}
			// Every file is counted once, at its directory or the folded one.
			var files int
			var size int64
			var folded bool
			var walk func(n *DirNode)
			walk = func(n *DirNode) {
				files += n.Files
				size += n.SizeBytes
				folded = folded || n.Folded
				if n.Folded && strings.Count(n.Path, "/")+1 != maxTreeDepth {
					t.Errorf("folded node %q is not at the cap", n.Path)
				}
				for _, c := range n.Children {
					walk(c)
				}
			}
			walk(root)
			var wantSize int64
			for _, f := range tt.files {
				wantSize += f.Size
			}
			if files != len(tt.files) || size != wantSize || folded != tt.folded {
				t.Errorf("files %d size %d folded %v, want %d %d %v", files, size, folded, len(tt.files), wantSize, tt.folded)
			}
			data, err := json.Marshal(root)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) > 4096 {
				t.Errorf("the tree serializes to %d bytes", len(data))
			}
		})
	}
}
