package source

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
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

// evilMergeHistory builds a merge of side into pr that resolves a
// conflict to a line neither side has and adds lines of its own (to a
// merged file, to a file side renamed and pr changed, a new file), a
// clean merge after it, and a commit that removes the new file.
func evilMergeHistory(t *testing.T, g *gittest.Repo) (base, evil, clean string) {
	t.Helper()
	g.Write("shared.txt", numberedLines("line", 10))
	g.Write("old.txt", numberedLines("rename me", 20))
	g.Write("conflict.txt", "a\nb\nc\n")
	base = g.Commit("base")
	g.Git("checkout", "-q", "-b", "side")
	g.Write("shared.txt", strings.Replace(numberedLines("line", 10), "line 2\n", "line 2 (side)\n", 1))
	g.Git("mv", "old.txt", "new.txt")
	g.Write("new.txt", strings.Replace(numberedLines("rename me", 20), "rename me 20\n", "rename me 20 (side)\n", 1))
	g.Write("conflict.txt", "a\nb side\nc\n")
	g.Write("side.txt", "a file of the side\n")
	g.Commit("side")
	g.Git("checkout", "-q", "-b", "other", base)
	g.Write("other.txt", "a file of the other branch\n")
	g.Commit("other")
	g.Git("checkout", "-q", "-b", "pr", base)
	g.Write("shared.txt", strings.Replace(numberedLines("line", 10), "line 9\n", "line 9 (pr)\n", 1))
	g.Write("old.txt", strings.Replace(numberedLines("rename me", 20), "rename me 1\n", "rename me 1 (pr)\n", 1))
	g.Write("conflict.txt", "a\nb pr\nc\n")
	g.Commit("pr")
	if _, err := g.TryGit(nil, "merge", "-q", "--no-ff", "--no-commit", "side"); err == nil {
		t.Fatal("the merge did not conflict: the test tests less than it says")
	}
	// The resolution: the conflict resolved to a line neither side has,
	// and lines of the merge's own.
	g.Write("conflict.txt", "a\nb resolved\nc\n")
	merged := strings.NewReplacer("line 2\n", "line 2 (side)\n", "line 9\n", "line 9 (pr)\n", "line 5\n", "line 5\nevil in shared\n").Replace(numberedLines("line", 10))
	g.Write("shared.txt", merged)
	renamed := strings.NewReplacer("rename me 1\n", "rename me 1 (pr)\n", "rename me 20\n", "rename me 20 (side)\nevil in renamed\n").Replace(numberedLines("rename me", 20))
	if got := g.Git("show", ":new.txt"); got+"\n" != strings.TrimSuffix(renamed, "evil in renamed\n") {
		t.Fatalf("git did not merge the renamed file as the test expects:\n%s", got)
	}
	g.Write("new.txt", renamed)
	g.Write("cfg.go", "package cfg\n\nvar tok = \"merge's own\"\n")
	g.Git("add", "-A")
	evil = g.Commit("merge side")
	g.Git("merge", "-q", "--no-ff", "--no-edit", "other")
	clean = g.Git("rev-parse", "HEAD")
	g.Remove("cfg.go")
	g.Commit("remove cfg.go")
	return base, evil, clean
}

// evilMergeLines is the patch of evilMergeHistory's evil merge.
var evilMergeLines = strings.Join([]string{
	"cfg.go:1:package cfg", "cfg.go:2:", "cfg.go:3:var tok = \"merge's own\"",
	"conflict.txt:2:b resolved",
	"new.txt:21:evil in renamed",
	"shared.txt:6:evil in shared",
}, "\n")

// TestMergePatchIsWhatNoParentHas: a merge's patch is the lines of its
// version of each file that neither parent's version has — a conflict's
// resolution, lines an "evil" merge adds to a merged file, to a file one
// side renamed (diffed against its old name on the other), and a file of
// its own — and none of the lines either side brought. A clean merge adds
// nothing. Both backends, in a range and as a single commit.
func TestMergePatchIsWhatNoParentHas(t *testing.T) {
	g := gittest.New(t)
	base, evil, clean := evilMergeHistory(t, g)
	want := evilMergeLines
	ctx := context.Background()
	for name, r := range openEach(t, g.Dir) {
		snap, err := r.Range(ctx, base, "HEAD", policy.ScopeChange)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(patchLines(patchOf(t, snap, evil)), "\n"); got != want {
			t.Errorf("%s: range: the merge's patch is\n%s\nwant\n%s", name, got, want)
		}
		if got := patchLines(patchOf(t, snap, clean)); len(got) != 0 {
			t.Errorf("%s: a clean merge's patch is %q", name, got)
		}
		snap, err = r.Commit(ctx, evil, policy.ScopeChange)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(patchLines(patchOf(t, snap, evil)), "\n"); got != want {
			t.Errorf("%s: --commit: the merge's patch is\n%s\nwant\n%s", name, got, want)
		}
	}
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

// TestMergePatchOfAPartialClone: a partial clone prefetches what a merge's
// patch reads (MissingBlobs), the other parent's versions included when
// that parent is not in the range, and gives the same patch.
func TestMergePatchOfAPartialClone(t *testing.T) {
	o := gittest.New(t)
	_, evil, _ := evilMergeHistory(t, o)
	sideVersion := ObjectID(o.Git("rev-parse", "side:conflict.txt"))
	// side moves on and is merged again: the merge base of side and pr is
	// no longer the evil merge's second parent.
	o.Git("checkout", "-q", "side")
	o.Write("conflict.txt", "a\nb side again\nc\n")
	o.Commit("side again")
	o.Git("checkout", "-q", "pr")
	o.TryGit(nil, "merge", "-q", "--no-ff", "--no-commit", "side")
	o.Write("conflict.txt", "a\nb side again\nc\n")
	o.Commit("merge side again")
	o.Git("config", "uploadpack.allowFilter", "true")
	dir := filepath.Join(t.TempDir(), "partial")
	o.Git("clone", "-q", "--filter=blob:none", "--no-checkout", "file://"+o.Dir, dir)
	r := open(t, dir)
	if !r.Promisor() {
		t.Fatal("not a partial clone")
	}
	ctx := context.Background()
	// From side: the evil merge's second parent is neither in the range
	// nor its merge base.
	bh, _ := r.Resolve("origin/side")
	hh, _ := r.Resolve("origin/pr")
	head, _ := r.commit(ctx, hh)
	mb, err := r.mergeBase(ctx, bh, hh)
	if err != nil {
		t.Fatal(err)
	}
	commits, err := r.commitsBetween(ctx, bh, hh)
	if err != nil {
		t.Fatal(err)
	}
	missing, err := r.MissingBlobs(ctx, mb, head, commits)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(missing, sideVersion) {
		t.Fatalf("the side's version of conflict.txt, which the merge's patch reads, is not prefetched: %v", missing)
	}
	if err := r.FetchBlobs(ctx, missing); err != nil {
		t.Fatal(err)
	}
	snap, err := r.Range(ctx, "origin/side", "origin/pr", policy.ScopeChange)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(patchLines(patchOf(t, snap, evil)), "\n"); got != evilMergeLines {
		t.Errorf("the merge's patch is\n%s\nwant\n%s", got, evilMergeLines)
	}
}
