package pack_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pipeline"
)

func lines(n int, prefix string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

func TestEncodingsTruncationAndSizeCap(t *testing.T) {
	g := gittest.New(t)
	// "héllo\n" in UTF-16LE with a BOM.
	g.WriteBytes("utf16.txt", []byte{0xFF, 0xFE, 'h', 0, 0xE9, 0, 'l', 0, 'l', 0, 'o', 0, '\n', 0})
	g.WriteBytes("latin1.txt", []byte("caf\xe9\n"))
	g.Write("big.txt", lines(1000, "row"))
	g.Write("huge.txt", strings.Repeat("x", 11<<20))
	g.Write("dir with space/naïve file.txt", "ok\n")
	g.Commit("files")
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Type: "full", MaxFileBytes: 4000, MaxContentBytes: 2 << 20})

	u, ok := item(p, "utf16.txt")
	if !ok || u.Content != "héllo\n" || u.Encoding != pack.EncUTF16LE {
		t.Errorf("utf16 item = %+v", u)
	}
	l, ok := item(p, "latin1.txt")
	if !ok || l.Content != "café\n" || l.Encoding != pack.EncLatin1 {
		t.Errorf("latin1 item = %+v", l)
	}
	if len(p.Metadata.Encodings) != 2 {
		t.Errorf("encodings = %+v", p.Metadata.Encodings)
	}
	big, ok := item(p, "big.txt")
	if !ok || !big.Truncated || !strings.Contains(big.Content, pack.TruncationMarker) || big.ID != "big.txt:1:1000" ||
		big.OriginalSizeBytes == nil || *big.OriginalSizeBytes != int64(len(lines(1000, "row"))) || len(big.Content) > 4000 {
		t.Errorf("big item: truncated=%v id=%s len=%d", big.Truncated, big.ID, len(big.Content))
	}
	if !strings.HasPrefix(big.Content, "row 1\n") || !strings.HasSuffix(big.Content, "row 1000\n") {
		t.Errorf("big item lost head or tail")
	}
	if e := index(p)["huge.txt"]; e.Included || e.ExclusionReason != pack.ReasonSizeLimit {
		t.Errorf("huge.txt = %+v", e)
	}
	if _, ok := item(p, "dir with space/naïve file.txt"); !ok {
		t.Error("path with spaces and non-ASCII missing")
	}
	if p.Metadata.TruncatedFiles != 1 || !p.Metadata.TruncationApplied {
		t.Errorf("metadata = %+v", p.Metadata)
	}
}

func TestBudgetPrefersChangedThenKeyFiles(t *testing.T) {
	g := gittest.New(t)
	g.Write("package.json", `{"name":"web","version":"1.0.0"}`+"\n")
	for i := 0; i < 10; i++ {
		g.Write(fmt.Sprintf("lib/mod%02d.js", i), lines(100, "filler"))
	}
	g.Commit("base")
	g.Write("lib/changed.js", lines(50, "new"))
	g.Commit("change")
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD", Scope: "tree", Type: "full", MaxContentBytes: 4000})
	if it, ok := item(p, "lib/changed.js"); !ok || it.Role != pack.RolePrimary {
		t.Fatalf("changed file not first: %+v", it)
	}
	if _, ok := item(p, "package.json"); !ok {
		t.Fatal("key file dropped before the rest")
	}
	if p.Budget.DroppedItems == 0 || !p.Budget.Truncated || p.Budget.ContentBytes > 4000 {
		t.Fatalf("budget = %+v", p.Budget)
	}
	dropped := 0
	for _, e := range p.FileIndex {
		if e.ExclusionReason == pack.ReasonSizeLimit {
			dropped += max(e.Files, 1) // a condensed entry counts its files
		}
	}
	if dropped != p.Budget.DroppedItems {
		t.Fatalf("dropped %d in the index, %d in the budget", dropped, p.Budget.DroppedItems)
	}
}

func TestTierCeiling(t *testing.T) {
	g := gittest.New(t)
	for i := 0; i < 40; i++ {
		g.Write(fmt.Sprintf("src/f%02d.py", i), lines(60, "print('line')"))
	}
	g.Commit("many")
	out, p := build(t, pipeline.PackOptions{Dir: g.Dir, Type: "full", Tier: "cheap"})
	if n := utf8.RuneCount(out.Result.JSON); n > 25000 || p.Budget.UsedChars != n || p.Budget.MaxChars != 25000 {
		t.Fatalf("used %d chars, budget %+v", n, p.Budget)
	}
	if p.Budget.DroppedItems == 0 {
		t.Fatal("nothing dropped to fit the tier")
	}
}

func TestIncludeExcludeGlobs(t *testing.T) {
	g := gittest.New(t)
	g.Write("src/a.go", "package src\n")
	g.Write("src/a_gen.go", "package src\n")
	g.Write("tools/t.go", "package tools\n")
	g.Commit("x")
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Include: []string{"src/**"}, Exclude: []string{"**/*_gen.go"}})
	idx := index(p)
	if !idx["src/a.go"].Included || idx["src/a_gen.go"].Included || idx["tools/t.go"].Included {
		t.Fatalf("index = %+v", p.FileIndex)
	}
	if !strings.Contains(idx["tools/t.go"].Detail, "include") || !strings.Contains(idx["src/a_gen.go"].Detail, "*_gen.go") {
		t.Fatalf("details = %q %q", idx["tools/t.go"].Detail, idx["src/a_gen.go"].Detail)
	}
}

func TestEmptyAndPlainSources(t *testing.T) {
	g := gittest.New(t)
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir})
	if len(p.FileIndex) != 0 || p.Source.Head != "" {
		t.Fatalf("empty repo pack = %+v", p.Source)
	}
	if _, err := pipeline.Pack(t.Context(), pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"}); err == nil || !strings.Contains(err.Error(), "no commits") {
		t.Fatalf("commit in empty repo: %v", err)
	}
	g.Commit("an empty commit: a repository with history but no files")
	for _, opts := range []pipeline.PackOptions{{Dir: g.Dir, Commit: "HEAD"}, {Dir: g.Dir}} {
		_, p = build(t, opts)
		if len(p.FileIndex) != 0 || len(p.Changes) != 0 || p.Source.Head == "" {
			t.Fatalf("%+v: empty commit pack = %+v %+v", opts, p.Source, p.FileIndex)
		}
	}
	plain := filepath.Join(t.TempDir(), "plain")
	pg := gittest.New(t)
	pg.Dir = plain
	pg.Write("a.txt", "hello\n")
	_, p = build(t, pipeline.PackOptions{Dir: plain})
	if p.Source.Kind != "plain" || len(p.Contents)+len(p.KeyFiles) != 1 {
		t.Fatalf("plain pack = %+v", p.Source)
	}
}

func TestDiffsStayWithinTheContentBudget(t *testing.T) {
	g := gittest.New(t)
	for i := 0; i < 30; i++ {
		g.Write(fmt.Sprintf("src/f%02d.txt", i), lines(40, "payload"))
	}
	g.Commit("root commit adds everything")
	out, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD", Scope: "tree", Type: "full", MaxContentBytes: 5000})
	withheld := 0
	for _, c := range p.Changes {
		_, inPack := item(p, c.Path)
		switch {
		case c.DiffInContent && inPack:
		case c.DiffWithheld == pack.ReasonSizeLimit && !inPack:
			withheld++
		default:
			t.Errorf("%s: diff_in_content %v, withheld %q, content in pack %v", c.Path, c.DiffInContent, c.DiffWithheld, inPack)
		}
	}
	if withheld == 0 || p.Budget.ContentBytes > 5000 {
		t.Fatalf("withheld %d diffs, content %d bytes", withheld, p.Budget.ContentBytes)
	}
	if len(out.Result.Secrets) != 0 {
		t.Fatalf("secrets = %+v", out.Result.Secrets)
	}
}

// A whole-tree pack at a tier keeps every file the room left can hold: a
// small file is not dropped with the large ones.
func TestTierKeepsWhatFits(t *testing.T) {
	g := gittest.New(t)
	g.Write("big.txt", lines(3000, "a long line of filler text"))
	g.Write("small.txt", "tiny\n")
	g.Commit("files")
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Type: "full", Tier: "cheap", MaxFileBytes: 200000, MaxContentBytes: 1 << 20})
	if _, ok := item(p, "small.txt"); !ok {
		t.Fatalf("small.txt dropped; index %+v", index(p)["small.txt"])
	}
	if _, ok := item(p, "big.txt"); ok {
		t.Fatal("big.txt cannot fit tier cheap")
	}
}
