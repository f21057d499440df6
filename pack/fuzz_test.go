package pack

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/policy"
)

// FuzzIgnore applies .ctxpackignore files a repository controls (nested
// ones too) to a path it controls: never a panic, and the answer does not
// depend on anything but the two.
func FuzzIgnore(f *testing.F) {
	f.Add("*.log\n!keep.log\nbuild/\n# comment\n\\#hash\n", "src/app.log")
	f.Add("[z-a]\n**/\n/\n!\n\\\n", "a/b/c")
	f.Add("a/**/b\n***\n[[:alpha:]]\n", "a/x/y/b")
	f.Add("\x00\xff\n", "\xff/\x00")
	f.Fuzz(func(t *testing.T, ignore, p string) {
		x := NewExcluder(policy.Default(), nil, map[string][]byte{
			IgnoreFileName:          []byte(ignore),
			"sub/" + IgnoreFileName: []byte(ignore),
		})
		r1, d1 := x.Reason(p)
		r2, d2 := x.Reason(p)
		if r1 != r2 || d1 != d2 {
			t.Fatalf("Reason(%q) is not stable", p)
		}
	})
}

// FuzzClassify classifies a path and content a repository controls: file
// type by name and by content, category and key-file importance.
func FuzzClassify(f *testing.F) {
	f.Add("src/main.go", []byte("package main\n"))
	f.Add("README.md", []byte("\xef\xbb\xbf# x"))
	f.Add("a/b/.env.production", []byte("\x00\x01"))
	f.Add("x.UTF16", []byte("\xff\xfe\x00"))
	f.Add("", []byte{})
	f.Fuzz(func(t *testing.T, p string, data []byte) {
		typ := typeByName(p)
		_, enc := sniff(data)
		cat, _ := classify(p, typ)
		if cat == "" {
			t.Fatalf("classify(%q) has no category", p)
		}
		if enc != "" {
			if text, err := decode(data, enc); err == nil && !utf8.ValidString(text) {
				t.Fatalf("decode(%q) is not UTF-8", enc)
			}
		}
	})
}

// FuzzTextOf reads a file a repository controls as the per-commit history
// scan does: text exactly when the sniff says text, and then the text
// DecodeText gives in the sniff's encoding, valid UTF-8.
func FuzzTextOf(f *testing.F) {
	f.Add([]byte("plain\n"))
	f.Add([]byte("\xff\xfeh\x00i\x00\n\x00"))
	f.Add([]byte("\xfe\xff\x00h\x00"))
	f.Add([]byte("caf\xe9\n"))
	f.Add([]byte("nul\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		text, ok := TextOf(string(data))
		binary, enc := sniff(data)
		if ok == binary {
			t.Fatalf("TextOf says text %v, sniff binary %v", ok, binary)
		}
		if !ok {
			return
		}
		if want, err := DecodeText(data, enc); err != nil || text != want {
			t.Fatalf("TextOf = %q, DecodeText(%s) = %q, %v", text, enc, want, err)
		}
		if !utf8.ValidString(text) {
			t.Fatalf("TextOf(%q) is not UTF-8", data)
		}
	})
}

// FuzzTruncate cuts text a repository controls with any line counts and
// byte limit, extreme ones included (a policy allows up to
// policy.MaxPreserveLines; truncate clamps whatever it is given): the result
// is within the byte limit plus the marker, its kept spans lie inside the
// text in order, and an untouched text comes back whole.
func FuzzTruncate(f *testing.F) {
	f.Add(strings.Repeat("line of text\n", 300), int64(1000), 100, 50)
	f.Add("no newline at all but long enough to be cut", int64(10), 1, 1)
	f.Add("\n\n\n\n", int64(1), 0, 0)
	f.Add("ü\nü\nü\n", int64(3), 1000000, 1000000)
	f.Add("a\nb\nc\nd\n", int64(2), math.MaxInt, math.MaxInt)
	f.Add("a\nb\nc\nd\n", int64(2), math.MaxInt-1, 2)
	f.Add("a\nb\nc\nd\n", int64(2), math.MinInt, math.MinInt)
	f.Add("a\nb\nc\nd\n", int64(math.MinInt64), 1, 1)
	f.Add("a\nb\nc\nd\n", int64(math.MaxInt64), 1, 1)
	f.Add(strings.Repeat("x", 100), int64(0), policy.MaxPreserveLines, policy.MaxPreserveLines)
	f.Fuzz(func(t *testing.T, text string, maxBytes int64, head, tail int) {
		if !utf8.ValidString(text) {
			return
		}
		out, spans, cut := truncate(text, maxBytes, head, tail)
		if !cut {
			if out != text {
				t.Fatal("an uncut text changed")
			}
			return
		}
		if int64(len(out)) > max(maxBytes, 0)+int64(len(TruncationMarker)) {
			t.Fatalf("cut to %d bytes, over %d plus the marker", len(out), maxBytes)
		}
		last := 0
		for _, s := range spans {
			if s.start < last || s.end < s.start || s.end > len(text) {
				t.Fatalf("span %+v out of order or outside the text (%d bytes)", s, len(text))
			}
			last = s.end
		}
	})
}

// callLines reads repository text: it never panics, and each line it
// returns holds a call of the name.
func FuzzCallLines(f *testing.F) {
	f.Add("func (r Redirect) Render() {\n\thttp.Redirect(w)\n\tc.Redirect(1)\n}\n", "Redirect", "http")
	f.Add(".Redirect(.Redirect(", "Redirect", "")
	f.Add("\n\n", "", "")
	f.Add("x.é(\ny.é(", "é", "x")
	f.Fuzz(func(t *testing.T, text, name, pkg string) {
		lines := callLines(text, name, map[string]bool{pkg: true})
		all := strings.Split(text, "\n")
		for _, l := range lines {
			if l < 1 || l > len(all) {
				t.Fatalf("line %d of %d", l, len(all))
			}
			if lo, hi := lineSpan(text, l); text[lo:hi] != all[l-1] || !strings.Contains(all[l-1], "."+name+"(") {
				t.Fatalf("line %d %q is not a call of %q", l, all[l-1], name)
			}
		}
	})
}

// FuzzCountTokens counts text a repository controls (its files, its
// commit messages): the count is the tokenizer package's own, on any
// bytes, and counting its JSON string form as a pack holds it agrees too.
func FuzzCountTokens(f *testing.F) {
	f.Add("func main() {\n\tfmt.Println(\"héllo\")\n}\n")
	f.Add("don't STOP'LL  \u00a0\u3000 123456 ///\r\n\r\n")
	f.Add(strings.Repeat("=", 200) + strings.Repeat("ab", 70))
	f.Add("\xff\xfe\x00abc")
	if err := loadTokenizer(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{s, string(data)} {
			sameCount(t, text)
		}
	})
}

// FuzzCountPiecesUpTo: letterRuns never counts more than the pieces, and
// countPiecesUpTo, which stops at it when it is over the limit, gives what
// a count of the pieces themselves gives, for any text and limit.
func FuzzCountPiecesUpTo(f *testing.F) {
	f.Add("func main() {\n\tfmt.Println(\"héllo\")\n}\n", 3)
	f.Add("don't STOP'LL  \u00a0\u3000 123456 ///\r\n\r\n", 2)
	f.Add("they're→.→caféteria a→b ſ 'x'", 4)
	f.Add("", 0)
	f.Add("it's", 1) // one piece: a contraction's letters are not a run of their own
	f.Add("→.→", 1)  // one piece: runs of other characters hold no letter
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if !utf8.ValidString(s) {
			return
		}
		pieces := 0
		splitO200k(s, func(string) bool { pieces++; return true })
		if runs := letterRuns(s, math.MaxInt); runs > pieces {
			t.Fatalf("letterRuns(%q) = %d, more than its %d pieces", s, runs, pieces)
		}
		want := pieceCount{n: pieces}
		if pieces > max(limit, 0) {
			want = pieceCount{n: max(limit, 0) + 1, atLeast: true}
		}
		if got := countPiecesUpTo(s, limit); got != want {
			t.Fatalf("countPiecesUpTo(%q, %d) = %+v, want %+v", s, limit, got, want)
		}
	})
}

// FuzzDiffSecrets reads a diff and the two versions of a file, all of
// which a repository (or GitHub's API, for a diff) controls, with findings
// anywhere in them: never a panic, and each span it returns lies inside
// the diff, shows bytes of its finding's side, and comes in order.
func FuzzDiffSecrets(f *testing.F) {
	f.Add("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@ h\n a\n-b\n+c\n", "a\nb\n", "a\nc\n", 0, 4, 2, 3)
	f.Add("@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n", "", "x", 0, 0, 0, 1)
	f.Add("@@ -1 +1 @@ \n-\r\n+\r\n", "\r\n", "\r\n", -1, 9, 0, 0)
	f.Fuzz(func(t *testing.T, diff, oldText, newText string, os, oe, ns, ne int) {
		old := &DiffSide{Text: oldText, Findings: []Finding{{RuleID: "r", Start: os, End: oe}}}
		cur := &DiffSide{Text: newText, Findings: []Finding{{RuleID: "r", Start: ns, End: ne}}}
		for _, sides := range [][2]*DiffSide{{old, cur}, {nil, cur}, {old, nil}} {
			got, ok := DiffSecrets(diff, sides[0], sides[1])
			if !ok {
				continue
			}
			for i, s := range got {
				if s.Start < 0 || s.End > len(diff) || s.Start >= s.End {
					t.Fatalf("span [%d,%d) of a diff of %d bytes", s.Start, s.End, len(diff))
				}
				side := sides[1]
				if s.Old {
					side = sides[0]
				}
				if !strings.Contains(side.Text, diff[s.Start:s.End]) {
					t.Fatalf("span %q is no text of its side", diff[s.Start:s.End])
				}
				if i > 0 && got[i-1].Start > s.Start {
					t.Fatal("spans out of order")
				}
			}
		}
	})
}
