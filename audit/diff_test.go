package audit

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/secrettest"
)

func TestDiffFileLines(t *testing.T) {
	diff := strings.Join([]string{
		"diff --git a/app.py b/app.py", // 1: header → first line of the hunk (8)
		"index 1111111..2222222 100644",
		"--- a/app.py",
		"+++ b/app.py",
		"@@ -8,4 +8,5 @@ def main():", // 5: the hunk header itself → 8
		" ctx = 1",                    // new 8
		"-old = 2",                    // old 9
		"+new = 2",                    // new 9
		"+added = 3",                  // new 10
		" tail = 4",                   // new 11
		" end = 5",                    // new 12
		"@@ -30 +31,2 @@",             // 12 → 31
		" x",                          // new 31
		"+y",                          // new 32
		`\ No newline at end of file`, // the line before it: 32
	}, "\n") + "\n"
	want := []int{8, 8, 8, 8, 8, 8, 9, 9, 10, 11, 12, 31, 31, 32, 32}
	if got := DiffFileLines(diff); !reflect.DeepEqual(got, want) {
		t.Errorf("DiffFileLines:\n got %v\nwant %v", got, want)
	}
	// A deleted file: its removed lines are old-file lines.
	del := "diff --git a/x b/x\ndeleted file mode 100644\n--- a/x\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"
	if got, want := DiffFileLines(del), []int{1, 1, 1, 1, 1, 1, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("deletion: got %v want %v", got, want)
	}
	// An added file.
	add := "diff --git a/y b/y\nnew file mode 100644\n--- /dev/null\n+++ b/y\n@@ -0,0 +1,2 @@\n+a\n+b\n"
	if got, want := DiffFileLines(add), []int{1, 1, 1, 1, 1, 1, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("addition: got %v want %v", got, want)
	}
	// No hunk: headers only (a mode change), lines 0.
	if got, want := DiffFileLines("diff --git a/z b/z\nold mode 100644\nnew mode 100755\n"), []int{0, 0, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("no hunk: got %v want %v", got, want)
	}
}

// TestScanDiffFileLines: findings of a diff carry the file's line and its
// fingerprint; a .gitleaksignore entry for the file's line ignores it.
func TestScanDiffFileLines(t *testing.T) {
	f := secrettest.Make(88)
	diff := "diff --git a/cfg/app.py b/cfg/app.py\nindex 1..2 100644\n--- a/cfg/app.py\n+++ b/cfg/app.py\n" +
		"@@ -40,3 +44,4 @@ import os\n context = 1\n-OLD_TOKEN = \"" + f.Stripe + "\"\n+TOKEN = \"" + f.GitHub + "\"\n+other = 2\n tail = 3\n"
	s := newDefaultScanner(t)
	fs, err := s.ScanDiff(context.Background(), "cfg/app.py", []byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, x := range fs {
		got[x.RuleID] = x.StartLine
		if x.Fingerprint != fingerprint("", "cfg/app.py", x.RuleID, x.StartLine) {
			t.Errorf("fingerprint %s", x.Fingerprint)
		}
		if !strings.Contains(diff[x.Start:x.End], "_") {
			t.Errorf("span %q", diff[x.Start:x.End])
		}
	}
	if got["github-pat"] != 45 || got["stripe-access-token"] != 41 {
		t.Fatalf("lines %v; want the token at new line 45, the removed key at old line 41:%s", got, describe(diff, fs))
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".gitleaksignore"), "cfg/app.py:github-pat:45\n")
	ig, err := NewScanner(ScannerOptions{RepoRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	fs, err = ig.ScanDiff(context.Background(), "cfg/app.py", []byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range fs {
		if x.RuleID == "github-pat" {
			t.Errorf("ignored by the file's fingerprint, still reported: %+v", x)
		}
	}
	if !ig.IgnoresFingerprint("cfg/app.py:github-pat:45") || ig.IgnoresFingerprint("cfg/app.py:github-pat:44") {
		t.Error("IgnoresFingerprint")
	}
}

func TestEscapedStrings(t *testing.T) {
	text := `{"a": "plain", "b": "q\"x\\y\/z\n\t\u00e9\ud83d\ude00\x41\q", "c": "open` + "\n" + `"d\"e"`
	ss := escapedStrings(text)
	if len(ss) != 2 {
		t.Fatalf("got %d strings: %+v", len(ss), ss)
	}
	if want := "q\"x\\y/z\n\té😀A\\q"; ss[0].value != want {
		t.Errorf("decoded %q, want %q", ss[0].value, want)
	}
	if ss[1].value != `d"e` {
		t.Errorf("second %q", ss[1].value)
	}
	// Every decoded byte maps to a raw range that decodes to it alone.
	for _, s := range ss {
		for i := range s.value {
			if s.from[i] >= s.to[i] || s.to[i] > len(text) {
				t.Fatalf("byte %d maps to [%d,%d)", i, s.from[i], s.to[i])
			}
		}
	}
	doc, starts := decodedDoc(ss)
	i := strings.Index(doc, "x\\y")
	sp := rawSpans(ss, starts, i, i+3)
	if len(sp) != 1 || text[sp[0][0]:sp[0][1]] != `x\\y` {
		t.Errorf("raw span %v = %q", sp, text[sp[0][0]:sp[0][1]])
	}
	// A span across the separator of two strings is cut in two.
	if sp := rawSpans(ss, starts, 0, len(doc)); len(sp) != 2 {
		t.Errorf("spans across strings: %v", sp)
	}
}

func TestSettleSpan(t *testing.T) {
	tests := []struct{ text, span, want string }{
		{`token: "abcdef123456"`, `"abcdef123456"`, `abcdef123456`},           // quotes out
		{"k: abcdef\n", "abcdef\n", "abcdef"},                                 // line break out
		{"key=abcd+ef/gh==rest", "abcd+ef", "abcd+ef/gh=="},                   // the whole base64 token
		{"https://h/bot123:AAbb/send", "123:AAbb", "bot123:AAbb"},             // the whole word, not the URL path
		{`"x": "ab\"cd\\"`, `ab\"cd\`, `ab\"cd`},                              // no escape split at the end
		{`"x\nTOKENabc"`, `TOKENabc`, `TOKENabc`},                             // an escaped n is not part of a token
		{"v=sk_live_abcdefXYZ123 ", "sk_live_abcdef", "sk_live_abcdefXYZ123"}, // no trailing key characters
	}
	for _, tt := range tests {
		s := strings.Index(tt.text, tt.span)
		a, z := settleSpan(tt.text, s, s+len(tt.span))
		if got := tt.text[a:z]; got != tt.want {
			t.Errorf("settleSpan(%q, %q) = %q, want %q", tt.text, tt.span, got, tt.want)
		}
	}
}

func TestIsChecksum(t *testing.T) {
	h1 := "h1:" + strings.Repeat("Ab3+", 10) + "abc="
	sha := "sha256:" + strings.Repeat("0f", 32)
	for _, tt := range []struct {
		text string
		s, e int
		want bool
	}{
		{"mod v1 " + h1, 7, 7 + len(h1), true},
		{"mod v1 " + h1, 10, 7 + len(h1), true},
		{"x " + sha, 2, 2 + len(sha), true},
		{"integrity sha512-" + strings.Repeat("A", 86) + "==", 17, 17 + 88, true},
		{"token: " + strings.Repeat("0f", 32), 7, 7 + 64, false}, // a hex token with no marker
		{"x " + sha + "ff", 2, 2 + len(sha) + 2, false},          // wrong length
	} {
		if got := isChecksum(tt.text, tt.s, tt.e); got != tt.want {
			t.Errorf("isChecksum(%q[%d:%d]) = %v", tt.text, tt.s, tt.e, got)
		}
	}
}

// TestRedactionMarkerIsNotAFinding: a rule that matches the marker a
// redaction left (curl -u "[REDACTED:curl-auth-user]") finds nothing, so a
// redacted text settles.
func TestRedactionMarkerIsNotAFinding(t *testing.T) {
	s := newDefaultScanner(t)
	content := "curl --retry 5 \\\n  -u \"${git_user}:${!pr_token}\" \\\n  https://api.github.com/repos\n"
	fs, err := s.Scan(context.Background(), "sync.sh", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) == 0 {
		t.Fatal("no curl-auth-user finding: the fixture no longer exercises a marker match")
	}
	red := redactAs(content, fs)
	again, err := s.Scan(context.Background(), "sync.sh", []byte(red))
	if err != nil || len(again) != 0 {
		t.Errorf("the redacted text is not clean: %v%s\n%s", err, describe(red, again), red)
	}
	known := func(rule string) bool { return rule == "x" }
	if withinMarker("a [REDACTED:x] b", 1, 8, known) || !withinMarker("a [REDACTED:x] b", 3, 14, known) || withinMarker("a [REDACTED:y] b", 3, 14, known) {
		t.Error("withinMarker")
	}
}

// TestScanDiffHeaders: a diff's header lines (blob ids of 40 hex digits,
// which a rule takes for a token) are not scanned as content; its hunk
// lines are, without their markers, removed lines included.
func TestScanDiffHeaders(t *testing.T) {
	s := newDefaultScanner(t)
	pw := secrettest.NewGen(91).Str(secrettest.Alnum, 16)
	diff := "diff --git a/go.sum b/go.sum\nindex " + strings.Repeat("a1", 20) + ".." + strings.Repeat("b2", 20) + " 100644\n--- a/go.sum\n+++ b/go.sum\n" +
		"@@ -1,2 +1,2 @@\n context line\n-DB_PASSWORD=" + pw + "\n+DB_PASSWORD=${DB_PASSWORD}\n"
	fs, err := s.ScanDiff(context.Background(), "deploy/.env", []byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || diff[fs[0].Start:fs[0].End] != pw || fs[0].StartLine != 2 {
		t.Fatalf("want only the removed password at old line 2:%s", describe(diff, fs))
	}
	if got := unmarkDiff(diff); len(got) != len(diff) || strings.Contains(got, "index ") || !strings.Contains(got, " DB_PASSWORD="+pw) {
		t.Errorf("unmarkDiff:\n%s", got)
	}
}
