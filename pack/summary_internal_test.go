package pack

import (
	"context"
	"errors"
	"github.com/ctxpack/ctxpack/lang"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ctxpack/ctxpack/policy"
)

// patternScanner flags every match of a regular expression. Like any
// SecretScanner it is called from several goroutines.
type patternScanner struct {
	re    *regexp.Regexp
	fail  bool
	mu    sync.Mutex
	paths []string
}

func (s *patternScanner) Scan(_ context.Context, path string, content []byte) ([]Finding, error) {
	s.mu.Lock()
	s.paths = append(s.paths, path)
	s.mu.Unlock()
	if s.fail {
		return nil, errors.New("scanner down")
	}
	var out []Finding
	for _, m := range s.re.FindAllIndex(content, -1) {
		out = append(out, Finding{RuleID: "test-rule", Start: m[0], End: m[1], StartLine: 1})
	}
	return out, nil
}

func TestScanDerivedRedactsEveryString(t *testing.T) {
	sc := &patternScanner{re: regexp.MustCompile(`tok_[a-z0-9]+`)}
	b := &builder{opts: Options{Scanner: sc}, pol: policy.Default()}
	a, c, d := "route /hook/tok_abc123 and tok_zz9", "clean text", "line 3: key := \"tok_q1\""
	err := b.scanDerived(context.Background(), []derivedText{{&a, "a.go"}, {&c, "c.go"}, {&d, "d.go"}})
	if err != nil {
		t.Fatal(err)
	}
	if a != "route /hook/[REDACTED:test-rule] and [REDACTED:test-rule]" || c != "clean text" || d != "line 3: key := \"[REDACTED:test-rule]\"" {
		t.Fatalf("redacted: %q %q %q", a, c, d)
	}
	if len(b.secrets) != 3 || b.secrets[0].Path != "a.go" || b.secrets[2].Path != "d.go" || b.secrets[0].Where != "content" {
		t.Fatalf("events = %+v", b.secrets)
	}
	for _, p := range sc.paths {
		if p != summaryScanPath {
			t.Fatalf("scanned as %q", p)
		}
	}
	// A scanner that cannot run is an error, never a pass.
	b = &builder{opts: Options{Scanner: &patternScanner{re: sc.re, fail: true}}, pol: policy.Default()}
	if err := b.scanDerived(context.Background(), []derivedText{{&c, "c.go"}}); err == nil {
		t.Fatal("scanner failure ignored")
	}
	// Text that stays dirty after redaction is an error.
	b = &builder{opts: Options{Scanner: &patternScanner{re: regexp.MustCompile(`REDACTED|tok`)}}, pol: policy.Default()}
	x := "tok"
	if err := b.scanDerived(context.Background(), []derivedText{{&x, "x.go"}}); err == nil {
		t.Fatal("dirty text accepted")
	}
}

func TestCondenseIndex(t *testing.T) {
	full := []IndexEntry{
		{Path: "README.md", Type: TypeText, Category: CatDocumentation, SizeBytes: new(int64(10)), Included: true},
		{Path: "go.mod", Type: TypeText, Category: CatConfig, SizeBytes: new(int64(5)), Included: true},
		{Path: "a/b/c/x.go", Type: TypeText, Category: CatSource, SizeBytes: new(int64(100)), Included: true},
		{Path: "a/b/c/y.go", Type: TypeText, Category: CatSource, SizeBytes: new(int64(200)), Included: true},
		{Path: "a/b/z.go", Type: TypeText, Category: CatSource, SizeBytes: new(int64(1)), Included: true},
		{Path: "a/b/logo.png", Type: TypeImage, Category: CatOther, SizeBytes: new(int64(7)), ExclusionReason: ReasonBinary},
		{Path: "a/b/icon.png", Type: TypeImage, Category: CatOther, SizeBytes: new(int64(8)), ExclusionReason: ReasonBinary},
		{Path: "d/only.ts", Type: TypeText, Category: CatSource, SizeBytes: new(int64(3)), Included: true},
	}
	got, st := condenseIndex(full, map[string]bool{"a/b/z.go": true}, 1)
	var paths []string
	for _, e := range got {
		paths = append(paths, e.Path+"|"+string(e.ExclusionReason)+"|"+e.Detail)
	}
	want := []string{
		"./||condensed: 2 files (.md 1, .mod 1)",
		"a/||condensed: 2 files (.go 2)",
		"a/|binary|condensed: 2 files (.png 2)",
		"a/b/z.go||",
		"d/only.ts||",
	}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("condensed = %q", paths)
	}
	if st.files != 6 || st.entries != 3 {
		t.Fatalf("stats = %+v", st)
	}
	if got[1].SizeBytes == nil || *got[1].SizeBytes != 300 || got[1].Type != TypeText || got[1].Category != CatSource || !got[1].Included {
		t.Fatalf("a/ = %+v", got[1])
	}
	if got[0].Category != CatOther || got[2].Included {
		t.Fatalf("mixed groups: %+v %+v", got[0], got[2])
	}
	var all []string
	for _, e := range full {
		if !IndexCovers(got, e.Path) {
			t.Errorf("%s not covered", e.Path)
		}
		all = append(all, e.Path)
	}
	if p := CheckIndex(got, all); len(p) != 0 {
		t.Errorf("check = %q", p)
	}
	// A file the index does not count, or one missing, is reported.
	if p := CheckIndex(got, append(all, "a/new.go")); !reflect.DeepEqual(p, []string{"directory entry a/ says 4 files, 5 are under it without an entry of their own"}) {
		t.Errorf("check with an extra file = %q", p)
	}
	if p := CheckIndex(got, all[1:]); len(p) != 1 {
		t.Errorf("check with a missing file = %q", p)
	}
}

func TestSplitHunks(t *testing.T) {
	d := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n@@ -10,1 +10,1 @@ func f\n-c\n+d\n@@ -20 +20 @@\n-e\n+f"
	got := splitHunks(d)
	want := []string{"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n", "@@ -10,1 +10,1 @@ func f\n-c\n+d\n", "@@ -20 +20 @@\n-e\n+f"}
	if !reflect.DeepEqual(got, want) || strings.Join(got, "") != d {
		t.Fatalf("hunks = %q", got)
	}
	if got := splitHunks("Binary files differ\n"); len(got) != 1 {
		t.Fatalf("no hunks = %q", got)
	}
	if splitHunks("") != nil {
		t.Fatal("empty diff has hunks")
	}
}

func TestPackStringsOrder(t *testing.T) {
	p := &Pack{Type: "summary", RepoSummary: &RepoSummary{Description: "d", KeyTechnologies: []string{"Go"}}}
	s := Strings(p)
	// Keys sorted at every level: budget, changes, file_index, manifest, metadata, pack_id, repo_summary, source, type.
	if len(s) == 0 || s[len(s)-1] != "summary" {
		t.Fatalf("strings = %q", s)
	}
}

// memSnapshot is a snapshot of in-memory files.
func memSnapshot(files map[string]string, changed ...string) *Snapshot {
	snap := &Snapshot{Source: Source{Repository: "mem", Kind: "plain", Trigger: "worktree"}}
	for _, p := range sortedKeys(files) {
		data := []byte(files[p])
		snap.Files = append(snap.Files, File{Path: p, Size: int64(len(data)), Read: func(context.Context) ([]byte, error) { return data, nil }})
	}
	for _, p := range changed {
		snap.Changes = append(snap.Changes, Change{Path: p, Status: "added", Added: lang.CountLines(files[p])})
	}
	return snap
}

// A secret the per-string scan cannot see — it spans two strings that are
// adjacent only in the order the audit reads the pack — is still found by
// the final check and redacted.
func TestSummaryFinalScanLikeTheAudit(t *testing.T) {
	files := map[string]string{
		"go.mod": "module example.com/z\n",
		"z.go":   "package z\n\nimport \"fmt\"\n\n// Zed prints.\nfunc Zed() { fmt.Println() }\n",
	}
	pol := policy.Default()
	pol.Pack.Type = policy.TypeSummary
	sc := &patternScanner{re: regexp.MustCompile(`fmt\nfunc Zed`)}
	res, err := Build(context.Background(), memSnapshot(files, "z.go"), Options{Policy: pol, Scanner: sc})
	if err != nil {
		t.Fatal(err)
	}
	data := string(res.JSON)
	if strings.Contains(data, `"fmt"`) || strings.Contains(data, `"func Zed"`) || !strings.Contains(data, "[REDACTED:test-rule]") {
		t.Fatalf("the spanning finding was not redacted:\n%s", data)
	}
	if strings.Count(strings.Join(Strings(res.Pack), "\n"), "fmt\nfunc Zed") != 0 {
		t.Fatal("the audit's reading still matches")
	}
	found := false
	for _, ev := range res.Secrets {
		if ev.Path == "z.go" && ev.RuleID == "test-rule" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no event for the redaction: %+v", res.Secrets)
	}
}

// Every string of a Summary pack derived from contents is scanned: with a
// scanner that flags a word everywhere, the word survives nowhere.
func TestSummaryScansAllDerivedText(t *testing.T) {
	files := map[string]string{
		"go.mod":     "module example.com/w\n",
		"main.go":    "// Package main runs Wombat.\npackage main\n\nimport \"net/http\"\n\nfunc main() { http.HandleFunc(\"/wombat\", nil) }\n\n// WombatCount counts.\nfunc WombatCount() int { return 1 }\n",
		"notes.txt":  "wombat notes\n",
		"README.md":  "# wombat\n\nWombat serves wombats.\n",
		"cfg.yaml":   "name: wombat\n",
		"lib/lib.py": "def wombat():\n    pass\n",
	}
	pol := policy.Default()
	pol.Pack.Type = policy.TypeSummary
	sc := &patternScanner{re: regexp.MustCompile(`(?i)wombat`)}
	res, err := Build(context.Background(), memSnapshot(files, "main.go", "notes.txt"), Options{Policy: pol, Scanner: sc})
	if err != nil {
		t.Fatal(err)
	}
	rest := *res.Pack
	rest.FileIndex, rest.Source = nil, Source{}
	for _, s := range Strings(&rest) {
		if regexp.MustCompile(`(?i)wombat`).MatchString(s) {
			t.Errorf("unscanned text left: %q", s)
		}
	}
}
