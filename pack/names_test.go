package pack

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"
)

func nameSnapshot(paths ...string) *Snapshot {
	snap := &Snapshot{}
	for _, p := range paths {
		snap.Files = append(snap.Files, File{Path: p})
	}
	sort.Slice(snap.Files, func(i, j int) bool { return snap.Files[i].Path < snap.Files[j].Path })
	return snap
}

// TestRedactNames: a token is found before an extension, as a directory,
// after a dash; every place a name appears is renamed; names the redaction
// makes alike stay apart; a second run finds nothing.
func TestRedactNames(t *testing.T) {
	// The rule wants its token to end at a line end, as gitleaks' do.
	sc := &patternScanner{re: regexp.MustCompile(`(?m)tok_[a-z0-9]{8}$`)}
	snap := nameSnapshot("a/tok_aaaaaaaa.json", "b/tok_bbbbbbbb/x.go", "c/id-tok_cccccccc", "d/tok_dddddddd.txt", "d/tok_eeeeeeee.txt", "plain.go")
	snap.Changes = []Change{{Path: "a/tok_aaaaaaaa.json", Status: "added", Diff: "diff --git a/a/tok_aaaaaaaa.json b/a/tok_aaaaaaaa.json\n--- /dev/null\n+++ b/a/tok_aaaaaaaa.json\n@@ -0,0 +1 @@\n+{}\n"}}
	snap.Commits = []CommitPatch{{Commit: "c1", Files: []AddedLines{{Path: "gone/tok_ffffffff.md"}, {Path: "plain.go"}}}}
	fs, err := RedactNames(context.Background(), snap, sc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range snap.Files {
		got = append(got, f.Path)
	}
	want := []string{"a/[REDACTED:test-rule].json", "b/[REDACTED:test-rule]/x.go", "c/id-[REDACTED:test-rule]",
		"d/[REDACTED:test-rule].txt", "d/[REDACTED:test-rule].txt~2", "plain.go"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files:\n got %v\nwant %v", got, want)
	}
	c := snap.Changes[0]
	if c.Path != want[0] || strings.Contains(c.Diff, "tok_") || !strings.Contains(c.Diff, "+{}") {
		t.Errorf("change: %+v", c)
	}
	if p := snap.Commits[0].Files[0].Path; p != "gone/[REDACTED:test-rule].md" {
		t.Errorf("commit file %q", p)
	}
	commits := 0
	for _, f := range fs {
		if strings.Contains(f.Path, "tok_") || f.Fingerprint != f.Path+":test-rule:0" && f.Fingerprint != f.Commit+":"+f.Path+":test-rule:0" {
			t.Errorf("finding %+v", f)
		}
		if f.Commit != "" {
			commits++
		}
	}
	if len(fs) != 6 || commits != 1 {
		t.Errorf("%d findings, %d of a commit: %+v", len(fs), commits, fs)
	}
	again, err := RedactNames(context.Background(), snap, sc)
	if err != nil || len(again) != 0 {
		t.Errorf("second run: %v %+v", err, again)
	}
	// A scanner that cannot run fails the names, never passes them.
	if _, err := RedactNames(context.Background(), nameSnapshot("x"), &patternScanner{re: sc.re, fail: true}); err == nil {
		t.Error("a failing scanner passed")
	}
}

func FuzzRedactNames(f *testing.F) {
	f.Add("a/tok_aaaaaaaa.json\nb/tok_bbbbbbbb/c\ntok_cccccccc~2\nx\ny.tok_dddddddd")
	f.Fuzz(func(t *testing.T, list string) {
		seen := map[string]bool{}
		var paths []string
		for _, p := range strings.Split(list, "\n") {
			if p != "" && !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
		sc := &patternScanner{re: regexp.MustCompile(`tok_[a-z0-9]{8}`)}
		snap := nameSnapshot(paths...)
		if _, err := RedactNames(context.Background(), snap, sc); err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, file := range snap.Files {
			if names[file.Path] {
				t.Fatalf("two files named %q", file.Path)
			}
			names[file.Path] = true
			if sc.re.MatchString(file.Path) {
				t.Fatalf("a secret is left in %q", file.Path)
			}
		}
		if len(names) != len(paths) {
			t.Fatalf("%d names for %d files", len(names), len(paths))
		}
	})
}
