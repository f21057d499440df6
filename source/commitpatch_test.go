package source

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// patchLines renders a commit's patch as "path:line:text" rows, with its
// skipped ("skip path size") and unread ("unread path") files.
func patchLines(p pack.CommitPatch) []string {
	var out []string
	for _, f := range p.Files {
		for _, l := range f.Lines {
			out = append(out, fmt.Sprintf("%s:%d:%s", f.Path, l.Number, l.Text))
		}
	}
	for _, f := range p.Skipped {
		out = append(out, fmt.Sprintf("skip %s %d", f.Path, f.Size))
	}
	for _, p := range p.Unread {
		out = append(out, "unread "+p)
	}
	return out
}

// patchOf is commit id's patch in a range's snapshot.
func patchOf(t *testing.T, snap *pack.Snapshot, id string) pack.CommitPatch {
	t.Helper()
	if err := snap.AwaitCommits(); err != nil {
		t.Fatal(err)
	}
	for _, c := range snap.Commits {
		if c.Commit == id {
			return c
		}
	}
	t.Fatalf("no patch of commit %s in %+v", id, snap.Commits)
	return pack.CommitPatch{}
}

func numberedLines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

// utf16File is text in UTF-16 with a byte-order mark, as Windows tools write it.
func utf16File(text string, bigEndian bool) []byte {
	out := []byte{0xFF, 0xFE}
	if bigEndian {
		out = []byte{0xFE, 0xFF}
	}
	for _, u := range utf16.Encode([]rune(text)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// TestCommitPatchReadsTextAsThePackDoes: a commit's added lines are those
// of the text a pack would send of the file: UTF-16 with a BOM decoded
// (lines numbered as the pack numbers them), text with control bytes
// read as git reads it, a binary file's none, and every line of a text
// that replaces a binary file.
func TestCommitPatchReadsTextAsThePackDoes(t *testing.T) {
	g := gittest.New(t)
	g.WriteBytes("swap.dat", []byte("binary\x00for now\n"))
	base := g.Commit("base")
	g.WriteBytes("notes.txt", utf16File("first\nsecond é\n", false))
	g.WriteBytes("be.txt", utf16File("big end\n", true))
	g.WriteBytes("bin.dat", []byte("nul\x00in it\n"))
	g.WriteBytes("ctl.txt", []byte("\x01\x02\x03\x04 key\n"))
	add := g.Commit("add")
	g.WriteBytes("notes.txt", utf16File("first\nsecond é\nthird\n", false))
	g.Write("swap.dat", "text now\n")
	edit := g.Commit("edit")
	for name, r := range openEach(t, g.Dir) {
		snap, err := r.Range(context.Background(), base, "HEAD", policy.ScopeChange)
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{
			add:  "be.txt:1:big end\nctl.txt:1:\x01\x02\x03\x04 key\nnotes.txt:1:first\nnotes.txt:2:second é",
			edit: "notes.txt:3:third\nswap.dat:1:text now",
		} {
			if got := strings.Join(patchLines(patchOf(t, snap, id)), "\n"); got != want {
				t.Errorf("%s: commit %s's patch is\n%q\nwant\n%q", name, id[:7], got, want)
			}
		}
	}
}

// TestCommitPatchSkipsOnlyWhatItCannotRead: under the per-commit scan's
// blob limit, a file whose new version is over it is skipped, with that
// version's size; one whose old version is over it is read whole (every
// line added); deleting a file over it adds nothing and skips nothing.
func TestCommitPatchSkipsOnlyWhatItCannotRead(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.txt", "a\n")
	base := g.Commit("base")
	big := numberedLines("big", 20)
	g.Write("shrinks.txt", big)
	g.Write("goes.txt", big)
	g.Write("small.txt", "small\n")
	add := g.Commit("add")
	g.Write("shrinks.txt", "big 1\nsmall now\n")
	g.Remove("goes.txt")
	shrink := g.Commit("shrink")
	for name, r := range openEach(t, g.Dir) {
		r.HistoryBlobLimit = 100
		snap, err := r.Range(context.Background(), base, "HEAD", policy.ScopeChange)
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{
			add:    fmt.Sprintf("small.txt:1:small\nskip goes.txt %d\nskip shrinks.txt %[1]d", len(big)),
			shrink: "shrinks.txt:1:big 1\nshrinks.txt:2:small now",
		} {
			if got := strings.Join(patchLines(patchOf(t, snap, id)), "\n"); got != want {
				t.Errorf("%s: commit %s's patch is\n%q\nwant\n%q", name, id[:7], got, want)
			}
		}
	}
}
