package source

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// The oracle for the unified diff: go-git's UnifiedEncoder, which ctxpack
// used before and whose output the packs keep.

type oracleFile struct{ s *side }

func (f oracleFile) Hash() plumbing.Hash     { return plumbing.NewHash(string(f.s.id)) }
func (f oracleFile) Mode() filemode.FileMode { return f.s.mode }
func (f oracleFile) Path() string            { return f.s.path }

type oraclePatch struct {
	from, to *side
	binary   bool
	chunks   []fdiff.Chunk
}

func (p *oraclePatch) IsBinary() bool { return p.binary }
func (p *oraclePatch) Files() (fdiff.File, fdiff.File) {
	var from, to fdiff.File
	if p.from != nil {
		from = oracleFile{p.from}
	}
	if p.to != nil {
		to = oracleFile{p.to}
	}
	return from, to
}
func (p *oraclePatch) Chunks() []fdiff.Chunk { return p.chunks }

type oracleChunk struct {
	content string
	op      fdiff.Operation
}

func (c oracleChunk) Content() string       { return c.content }
func (c oracleChunk) Type() fdiff.Operation { return c.op }

type oneOraclePatch struct{ fp fdiff.FilePatch }

func (p oneOraclePatch) FilePatches() []fdiff.FilePatch { return []fdiff.FilePatch{p.fp} }
func (p oneOraclePatch) Message() string                { return "" }

func goGitUnified(from, to *side, binary bool) string {
	fp := &oraclePatch{from: from, to: to, binary: binary}
	if !binary {
		var oldData, newData string
		if from != nil {
			oldData = from.text
		}
		if to != nil {
			newData = to.text
		}
		for _, d := range diff.Do(oldData, newData) {
			if d.Text == "" {
				continue
			}
			op := map[diffmatchpatch.Operation]fdiff.Operation{diffmatchpatch.DiffEqual: fdiff.Equal, diffmatchpatch.DiffInsert: fdiff.Add, diffmatchpatch.DiffDelete: fdiff.Delete}[d.Type]
			fp.chunks = append(fp.chunks, oracleChunk{d.Text, op})
		}
	}
	var buf bytes.Buffer
	if err := fdiff.NewUnifiedEncoder(&buf, fdiff.DefaultContextLines).Encode(oneOraclePatch{fp}); err != nil {
		return "error: " + err.Error()
	}
	return buf.String()
}

func sideFor(path, content string, mode filemode.FileMode) *side {
	return &side{path: path, mode: mode, text: content, loaded: true, id: ObjectID(plumbing.ComputeHash(plumbing.BlobObject, []byte(content)).String())}
}

// checkAgainstOracle compares fileDiff's unified diff with go-git's encoder.
func checkAgainstOracle(t testing.TB, from, to *side) {
	t.Helper()
	ch, _ := fileDiff(from, to, ObjectID(plumbing.ZeroHash.String()), false)
	if want := goGitUnified(from, to, ch.Binary); ch.Diff != want {
		t.Fatalf("diff\n%q\ngo-git's encoder\n%q", ch.Diff, want)
	}
}

func TestUnifiedDiffMatchesGoGit(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"a", "b", "c", "func x() {", "}", "", "return 1", "// note"}
	text := func() string {
		var b strings.Builder
		for range rng.Intn(40) {
			b.WriteString(words[rng.Intn(len(words))])
			b.WriteByte('\n')
		}
		if rng.Intn(3) == 0 {
			b.WriteString("no newline at the end")
		}
		return b.String()
	}
	for i := range 500 {
		a, b := text(), text()
		modes := []filemode.FileMode{filemode.Regular, filemode.Executable}
		from := sideFor("dir/f.txt", a, modes[rng.Intn(2)])
		to := sideFor("dir/f.txt", b, modes[rng.Intn(2)])
		if i%7 == 0 {
			to.path = "moved/f.txt"
		}
		checkAgainstOracle(t, from, to)
		checkAgainstOracle(t, nil, to)
		checkAgainstOracle(t, from, nil)
	}
	checkAgainstOracle(t, sideFor("bin", "a\x00b", filemode.Regular), sideFor("bin", "c\x00d", filemode.Regular))
	checkAgainstOracle(t, sideFor("same", "x\n", filemode.Regular), sideFor("same", "x\n", filemode.Executable))
	checkAgainstOracle(t, sideFor("empty", "", filemode.Regular), sideFor("empty", "x", filemode.Regular))
}

func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\nd")
	f.Add("", "x")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		checkAgainstOracle(t, sideFor("f", a, filemode.Regular), sideFor("f", b, filemode.Regular))
	})
}
