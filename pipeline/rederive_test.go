package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
)

func utf16le(s string) []byte {
	out := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

// rederiveRepo has what a pack cuts and rewrites: a long Go file changed
// in its middle (regions), an added file of 450 lines (200-line chunks), a
// file with a redacted secret, Latin-1 and UTF-16 files, and a file over
// max_file_bytes (head and tail around the marker in a work-tree pack).
func rederiveRepo(t *testing.T, password string) *gittest.Repo {
	g := gittest.New(t)
	var long strings.Builder
	long.WriteString("package store\n\n")
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&long, "// F%03d returns %d.\nfunc F%03d() int {\n\tx := 0\n\tfor i := 0; i < 3; i++ {\n\t\tx += i\n\t}\n\tif x > 100 {\n\t\tpanic(x)\n\t}\n\t_ = x\n\treturn %d\n}\n\n", i, i, i, i)
	}
	var big strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&big, "row %03d of the big file\n", i)
	}
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.Write("store/store.go", long.String())
	g.Write("settings.py", "DEBUG = False\nNAME = \"shop\"\n")
	g.WriteBytes("legacy/menu.txt", []byte("caf\xe9 cr\xe8me\nna\xefve\n"))
	g.WriteBytes("legacy/notes.txt", utf16le("zwölf Äpfel\nzweite Zeile\n"))
	g.Write("data/big.txt", big.String())
	g.Commit("base")
	g.Write("store/store.go", strings.Replace(long.String(), "return 60\n", "return 6000\n", 1))
	g.Write("settings.py", "DEBUG = False\nDB_PASSWORD = \""+password+"\"\nNAME = \"shop\"\n")
	g.WriteBytes("legacy/menu.txt", []byte("caf\xe9 cr\xe8me\nna\xefve\ndeuxi\xe8me\n"))
	var added strings.Builder
	for i := 1; i <= 450; i++ {
		fmt.Fprintf(&added, "line %03d of a new file\n", i)
	}
	g.Write("docs/new.txt", added.String())
	g.Commit("change")
	// A change whose diff is too large to send whole.
	var more strings.Builder
	for i := 0; i < 900; i++ {
		fmt.Fprintf(&more, "func G%03d() int {\n\tx := %d\n\treturn x\n}\n\n\n\n\n\n\n", i, i)
	}
	g.Write("store/more.go", "package store\n\n"+more.String())
	g.Commit("more")
	g.Write("store/more.go", "package store\n\n"+strings.ReplaceAll(more.String(), "return x", "return x + 1"))
	g.Commit("edit more")
	return g
}

// TestAuditRederivesContent (issue 13, class 8): with the repository at
// hand the audit re-derives every item and diff from the commit's blobs.
// Legitimate packs (regions, chunks, redactions, truncation, Latin-1,
// UTF-16) pass; an item or diff edited while keeping its blob id (sha256
// recomputed, so integrity holds) fails, in the pipeline's own audit and in
// `ctxpack audit --repo`, a withheld file's (no blob id) included.
func TestAuditRederivesContent(t *testing.T) {
	pw := secrettest.NewGen(808).Str(secrettest.Alnum, 14)
	g := rederiveRepo(t, pw)
	ctx := context.Background()
	builds := map[string]PackOptions{
		"change":  {Commit: "HEAD~2"},
		"summary": {Commit: "HEAD", Type: "summary", Tier: "cheap"}, // the diff cut: head and tail, then its first hunks
		"tree":    {MaxFileBytes: 2000},                             // a clean work tree: whole files
	}
	applies := map[string]map[string]bool{
		"change": {"region line changed": true, "lines shifted": true, "line dropped": true,
			"added line in a hunk changed": true, "context line in a hunk changed": true},
		"summary": {"head of a cut diff changed": true, "tail of a cut diff changed": true},
		"tree": {"line dropped": true, "latin-1 text changed": true, "withheld file edited": true, "text appended": true,
			"truncated middle changed": true, "marker added": true},
	}
	for name, opts := range builds {
		opts.Dir = g.Dir
		run, err := Execute(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		p := run.Result.Pack
		// The pack has what the test means to cover.
		var regions, chunks, truncated, redacted, latin1, utf16 bool
		for _, it := range append(append([]pack.Item{}, p.KeyFiles...), p.Contents...) {
			regions = regions || it.Path == "store/store.go" && it.StartLine > 1
			chunks = chunks || it.ID == "docs/new.txt:201:400"
			truncated = truncated || strings.Contains(it.Content, pack.TruncationMarker)
			redacted = redacted || len(it.Redactions) > 0 && it.Blob == "" && it.OriginalWithheld == pack.WithheldSecret
			latin1 = latin1 || it.Encoding == pack.EncLatin1
			utf16 = utf16 || it.Encoding == pack.EncUTF16LE
		}
		diffs := 0
		for _, c := range p.Changes {
			if c.Diff != "" {
				diffs++
			}
		}
		switch name {
		case "change":
			if !regions || !chunks || diffs == 0 {
				t.Fatalf("change pack: regions %v, chunks %v, diffs %d", regions, chunks, diffs)
			}
		case "summary":
			if c := p.Changes[0]; !strings.Contains(c.Diff, strings.TrimPrefix(pack.TruncationMarker, "\n")) {
				t.Fatalf("summary pack: the diff is not cut: %+v", c)
			}
		case "tree":
			if !truncated || !redacted || !latin1 || !utf16 {
				t.Fatalf("tree pack: truncated %v, redacted %v, latin-1 %v, utf-16 %v", truncated, redacted, latin1, utf16)
			}
		}
		auditBoth := func(data []byte) (*audit.Verdict, *audit.Verdict) {
			t.Helper()
			own, err := audit.Pack(ctx, data, audit.Input{Policy: run.Policy, Scanner: run.Scanner, Sensitive: audit.SensitiveFile, Snapshot: run.Snapshot})
			if err != nil {
				t.Fatal(err)
			}
			repo, err := Audit(ctx, AuditOptions{PackFile: writePack(t, data), RepoDir: g.Dir})
			if err != nil {
				t.Fatal(err)
			}
			return own, repo
		}
		own, repo := auditBoth(run.Result.JSON)
		for _, v := range []*audit.Verdict{run.Verdict, own, repo} {
			for _, c := range v.Failed {
				if c.Code == audit.CodeBlobMismatch || c.Code == audit.CodeInternal || c.Code == audit.CodeOriginalPublished {
					t.Fatalf("%s: a legitimate pack fails: %s", name, c.Message)
				}
			}
		}

		fresh := func() *pack.Pack {
			var q pack.Pack
			if err := json.Unmarshal(run.Result.JSON, &q); err != nil {
				t.Fatal(err)
			}
			return &q
		}
		// each forgery edits one item (keeping its blob id, fixing its
		// sha256) or one diff, then re-finalizes the pack.
		editItem := func(match func(pack.Item) bool, edit func(string) string) func() []byte {
			return func() []byte {
				q := fresh()
				for _, items := range [][]pack.Item{q.KeyFiles, q.Contents} {
					for i := range items {
						if match(items[i]) {
							items[i].Content = edit(items[i].Content)
							items[i].SHA256 = sha(items[i].Content)
							return refinalize(t, q)
						}
					}
				}
				return nil
			}
		}
		editDiff := func(path string, edit func(string) string) func() []byte {
			return func() []byte {
				q := fresh()
				for i := range q.Changes {
					if q.Changes[i].Path == path && q.Changes[i].Diff != "" {
						q.Changes[i].Diff = edit(q.Changes[i].Diff)
						return refinalize(t, q)
					}
				}
				return nil
			}
		}
		path := func(p string) func(pack.Item) bool { return func(it pack.Item) bool { return it.Path == p } }
		forgeries := map[string]func() []byte{
			"region line changed": editItem(func(it pack.Item) bool { return it.Path == "store/store.go" && it.StartLine > 1 },
				func(s string) string { return strings.Replace(s, "return", "return -1 +", 1) }),
			"line dropped":         editItem(path("main.go"), func(s string) string { return strings.Replace(s, "\n\n", "\n", 1) }),
			"latin-1 text changed": editItem(path("legacy/menu.txt"), func(s string) string { return strings.Replace(s, "café", "cafe", 1) }),
			"withheld file edited": editItem(path("settings.py"), func(s string) string { return strings.Replace(s, "False", "True", 1) }),
			"text appended":        editItem(path("legacy/notes.txt"), func(s string) string { return s + "drei\n" }),
			"lines shifted": func() []byte {
				q := fresh()
				for i := range q.Contents {
					if it := &q.Contents[i]; it.Path == "store/store.go" && it.StartLine > 1 {
						it.StartLine++
						it.EndLine++
						it.ID = fmt.Sprintf("%s:%d:%d", it.Path, it.StartLine, it.EndLine)
						return refinalize(t, q)
					}
				}
				return nil
			},
			"added line in a hunk changed":   editDiff("store/store.go", func(s string) string { return strings.Replace(s, "+\treturn 6000", "+\treturn 7000", 1) }),
			"context line in a hunk changed": editDiff("settings.py", func(s string) string { return strings.Replace(s, " NAME", " NOM", 1) }),
			"head of a cut diff changed":     editDiff("store/more.go", func(s string) string { return strings.Replace(s, "+\treturn x + 1", "+\treturn x + 2", 1) }),
			"tail of a cut diff changed": editDiff("store/more.go", func(s string) string {
				i := strings.LastIndex(s, "x := ")
				return s[:i] + "x := 1" + s[i+len("x := "):]
			}),
		}
		if name == "tree" {
			forgeries["truncated middle changed"] = editItem(path("data/big.txt"), func(s string) string { return strings.Replace(s, "row 002", "row 999", 1) })
			forgeries["marker added"] = editItem(path("store/store.go"), func(s string) string {
				lines := strings.SplitAfter(s, "\n")
				return strings.Join(lines[:20], "") + strings.TrimPrefix(pack.TruncationMarker, "\n") + strings.Join(lines[40:], "")
			})
		}
		for what, forge := range forgeries {
			data := forge()
			if data == nil {
				if !applies[name][what] {
					continue // that pack does not carry the item or diff
				}
				t.Fatalf("%s: %s: nothing to forge", name, what)
			}
			own, repo := auditBoth(data)
			for who, v := range map[string]*audit.Verdict{"own audit": own, "audit --repo": repo} {
				if !strings.Contains(codes(v.Failed), audit.CodeBlobMismatch) {
					t.Errorf("%s: %s: %s passes (failed: %s)", name, what, who, codes(v.Failed))
				}
				if strings.Contains(codes(v.Failed), audit.CodeContentMismatch) {
					t.Errorf("%s: %s: the forgery is not consistent (sha256)", name, what)
				}
				for _, c := range v.Failed {
					if strings.Contains(c.Message, pw) {
						t.Fatalf("a check message holds the secret: %s", c.Message)
					}
				}
			}
		}
	}
}

// TestAuditReadsOnlyTransformedFiles: an item whose content is its file's
// blob byte for byte (UTF-8, whole, nothing redacted) is re-derived from
// its own bytes, its blob id proven by their hash; every other item's file
// is read again. A forged item that claims to be a symlink's blob, its
// content the link's target, fails as before: a symlink is no file to
// re-derive from.
func TestAuditReadsOnlyTransformedFiles(t *testing.T) {
	pw := secrettest.NewGen(809).Str(secrettest.Alnum, 14)
	g := rederiveRepo(t, pw)
	g.Symlink("main.go", "link.go")
	g.Commit("a link")
	ctx := context.Background()
	run, err := Execute(ctx, PackOptions{Dir: g.Dir, MaxFileBytes: 2000})
	if err != nil {
		t.Fatal(err)
	}
	reads := map[string]int{}
	counted := *run.Snapshot
	counted.Files = append([]pack.File(nil), run.Snapshot.Files...)
	for i := range counted.Files {
		f := &counted.Files[i]
		if read := f.Read; read != nil {
			f.Read = func(ctx context.Context) ([]byte, error) {
				reads[f.Path]++
				return read(ctx)
			}
		}
	}
	in := audit.Input{Policy: run.Policy, Scanner: run.Scanner, Sensitive: audit.SensitiveFile, Snapshot: &counted}
	v, err := audit.Pack(ctx, run.Result.JSON, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Failed) > 0 {
		t.Fatalf("a legitimate pack fails: %s", codes(v.Failed))
	}
	want := map[string]int{
		"main.go":          0, // whole UTF-8 text: its own bytes
		"store/store.go":   1, // over max_file_bytes: head and tail
		"legacy/menu.txt":  1, // Latin-1
		"legacy/notes.txt": 1, // UTF-16
		"settings.py":      1, // a redacted secret
	}
	for path, n := range want {
		if reads[path] != n {
			t.Errorf("%s read %d times by the audit, want %d (all reads: %v)", path, reads[path], n, reads)
		}
	}

	var q pack.Pack
	if err := json.Unmarshal(run.Result.JSON, &q); err != nil {
		t.Fatal(err)
	}
	var link *pack.File
	for i := range counted.Files {
		if counted.Files[i].Path == "link.go" {
			link = &counted.Files[i]
		}
	}
	if link == nil || link.Blob == "" || link.Read != nil {
		t.Fatalf("the snapshot's link: %+v", link)
	}
	forged := q.Contents[0]
	forged.ID, forged.Path, forged.Content = "link.go:1:1", "link.go", "main.go"
	forged.SHA256, forged.Blob, forged.OriginalSizeBytes = sha(forged.Content), link.Blob, new(int64(len("main.go")))
	forged.Truncated, forged.Redactions = false, []pack.Redaction{}
	q.Contents = append(q.Contents, forged)
	v, err = audit.Pack(ctx, refinalize(t, &q), in)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range v.Failed {
		found = found || c.Code == audit.CodeBlobMismatch && strings.Contains(c.Message, "not a regular file")
	}
	if !found {
		t.Errorf("an item forged from a symlink's blob passes the repository check (failed: %s)", codes(v.Failed))
	}
}

// checkingScanner hands every scan to a scanner, and notes the digests it
// is handed.
type checkingScanner struct {
	*audit.Scanner
	digests secrettest.Digests
}

func (s *checkingScanner) ScanSum(ctx context.Context, path string, content []byte, sum [32]byte) ([]pack.Finding, error) {
	s.digests.Note(path, content, sum)
	return s.Scanner.ScanSum(ctx, path, content, sum)
}

// The audit hands its scanner the digest of each item's content, the one
// its integrity check takes: each item's own.
func TestAuditHandsTheScannerEachItemsDigest(t *testing.T) {
	g := rederiveRepo(t, secrettest.NewGen(810).Str(secrettest.Alnum, 14))
	ctx := context.Background()
	run, err := Execute(ctx, PackOptions{Dir: g.Dir})
	if err != nil {
		t.Fatal(err)
	}
	sc := &checkingScanner{Scanner: run.Scanner}
	v, err := audit.Pack(ctx, run.Result.JSON, audit.Input{Policy: run.Policy, Scanner: sc, Sensitive: audit.SensitiveFile, Snapshot: run.Snapshot})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Failed) > 0 {
		t.Fatalf("a legitimate pack fails: %s", codes(v.Failed))
	}
	items := 0
	for _, it := range append(append([]pack.Item{}, run.Result.Pack.KeyFiles...), run.Result.Pack.Contents...) {
		items++
		if !sc.digests.Summed[it.Path] {
			t.Errorf("%s: scanned without its digest", it.Path)
		}
	}
	if items < 5 || len(sc.digests.Wrong) > 0 {
		t.Errorf("%d items; digests that are not the content's: %v", items, sc.digests.Wrong)
	}
}
