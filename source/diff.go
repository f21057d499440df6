package source

import (
	"bytes"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/utils/binary"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// side is one side of a file change; a zero side (no path) is absent.
type side struct {
	path string
	// disk is the file's real path under the work tree when it differs
	// from path (a name that is not valid UTF-8).
	disk string
	mode filemode.FileMode
	hash plumbing.Hash
	data []byte
}

func (s *side) Hash() plumbing.Hash     { return s.hash }
func (s *side) Mode() filemode.FileMode { return s.mode }
func (s *side) Path() string            { return s.path }

// filePatch adapts a line diff to go-git's diff.FilePatch so that go-git's
// UnifiedEncoder writes the unified diff.
type filePatch struct {
	from, to *side
	binary   bool
	chunks   []fdiff.Chunk
}

func (p *filePatch) IsBinary() bool { return p.binary }
func (p *filePatch) Files() (fdiff.File, fdiff.File) {
	var from, to fdiff.File
	if p.from != nil {
		from = p.from
	}
	if p.to != nil {
		to = p.to
	}
	return from, to
}
func (p *filePatch) Chunks() []fdiff.Chunk { return p.chunks }

type chunk struct {
	content string
	op      fdiff.Operation
}

func (c chunk) Content() string                    { return c.content }
func (c chunk) Type() fdiff.Operation              { return c.op }
func (p *onePatch) FilePatches() []fdiff.FilePatch { return []fdiff.FilePatch{p.fp} }
func (p *onePatch) Message() string                { return "" }

type onePatch struct{ fp fdiff.FilePatch }

// fileDiff computes the change between two sides: status, line counts, the
// unified diff, and the lines the new side added (numbered in the new side).
// A nil from is an addition, a nil to a deletion.
func fileDiff(from, to *side) (pack.Change, []pack.Line) {
	ch := pack.Change{}
	switch {
	case from == nil:
		ch.Path, ch.Status = to.path, "added"
	case to == nil:
		ch.Path, ch.Status = from.path, "deleted"
	default:
		ch.Path, ch.Status = to.path, "modified"
		if from.path != to.path {
			ch.Status, ch.OldPath = "renamed", from.path
		}
		if isLink(from.mode) != isLink(to.mode) || (from.mode == filemode.Submodule) != (to.mode == filemode.Submodule) {
			ch.Status = "type-changed"
		}
	}
	fp := &filePatch{from: from, to: to}
	var oldData, newData []byte
	if from != nil {
		oldData = from.data
	}
	if to != nil {
		newData = to.data
	}
	if isBinary(oldData) || isBinary(newData) {
		ch.Binary = true
		fp.binary = true
	}
	var added []pack.Line
	if !fp.binary {
		diffs := diff.Do(string(oldData), string(newData))
		newLine := 1
		for _, d := range diffs {
			if d.Text == "" {
				continue
			}
			n := strings.Count(d.Text, "\n")
			if !strings.HasSuffix(d.Text, "\n") {
				n++
			}
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				fp.chunks = append(fp.chunks, chunk{d.Text, fdiff.Equal})
				newLine += n
			case diffmatchpatch.DiffInsert:
				fp.chunks = append(fp.chunks, chunk{d.Text, fdiff.Add})
				ch.Added += n
				for i, l := range splitLines(d.Text) {
					added = append(added, pack.Line{Number: newLine + i, Text: l})
				}
				newLine += n
			case diffmatchpatch.DiffDelete:
				fp.chunks = append(fp.chunks, chunk{d.Text, fdiff.Delete})
				ch.Deleted += n
			}
		}
	}
	var buf bytes.Buffer
	if err := fdiff.NewUnifiedEncoder(&buf, fdiff.DefaultContextLines).Encode(&onePatch{fp}); err == nil {
		ch.Diff = buf.String()
	}
	return ch, added
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

func isLink(m filemode.FileMode) bool { return m == filemode.Symlink }

// isBinary uses git's own heuristic (a NUL in the first 8000 bytes).
func isBinary(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	ok, _ := binary.IsBinary(bytes.NewReader(data))
	return ok
}
