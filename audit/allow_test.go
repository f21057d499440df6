package audit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
)

func TestAllowLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\tkey = x // gitleaks:allow\n", "key = x // gitleaks:allow"},
		{"+key = x // gitleaks:allow", "key = x // gitleaks:allow"},
		{"- key = x // gitleaks:allow\r\n", "key = x // gitleaks:allow"},
		{"  -v // gitleaks:allow", "v // gitleaks:allow"},
		{"", ""},
	} {
		if got := AllowLine(tc.in); got != tc.want {
			t.Errorf("AllowLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// An inline gitleaks:allow is honoured only on the lines InlineAllow
// trusts; elsewhere the finding stands, at the same offsets.
func TestInlineAllowOnlyOnTrustedLines(t *testing.T) {
	f := secrettest.Make(31)
	trusted := "a := \"" + f.GitHub + "\" // gitleaks:allow"
	other := "b := \"" + f.Stripe + "\" // gitleaks:allow"
	text := "package x\n\n" + trusted + "\n" + other + "\n"
	s, err := NewScanner(ScannerOptions{InlineAllow: func(path, line string) bool {
		return path == "x.go" && line == trusted
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path  string
		lines []int
	}{
		{"x.go", []int{4}},    // the trusted line is allowed, the other found
		{"y.go", []int{3, 4}}, // trust is per path
	} {
		fs, err := s.Scan(context.Background(), tc.path, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		var lines []int
		for _, fd := range fs {
			lines = append(lines, fd.StartLine)
			if got := text[fd.Start:fd.End]; got != f.GitHub && got != f.Stripe {
				t.Errorf("%s: finding at %d:%d is %q, not the secret", tc.path, fd.Start, fd.End, got)
			}
		}
		if len(lines) != len(tc.lines) || (len(lines) > 0 && lines[0] != tc.lines[0]) {
			t.Errorf("%s: findings on lines %v, want %v", tc.path, lines, tc.lines)
		}
	}
	// Without InlineAllow the comment is honoured everywhere, as in gitleaks.
	plain, err := NewScanner(ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := plain.Scan(context.Background(), "x.go", []byte(text))
	if err != nil || len(fs) != 0 {
		t.Errorf("findings %v %v, want none", fs, err)
	}
}

// linesOf is an InlineAllow that knows the lines of base, each as
// AllowLine spells it, at path.
func linesOf(path, base string) func(string, string) bool {
	set := map[string]bool{}
	for l := range strings.SplitSeq(base, "\n") {
		set[AllowLine(l)] = true
	}
	return func(p, line string) bool { return p == path && set[line] }
}

// A base line with gitleaks:allow that a change carries into the middle of
// its own multi-line secret does not allow the secret: gitleaks honours a
// comment on any line of a finding's match, and the key's match spans every
// line of the key, most of them lines the base does not have. A finding
// whose lines the base all has keeps the comment's effect. The fast path
// and gitleaks' detector alone agree; a file, a commit's added lines and a
// diff read the same.
func TestInlineAllowNeedsEveryLineOfTheFinding(t *testing.T) {
	f := secrettest.Make(37)
	allow := `password = "example-pass" # gitleaks:allow`
	begin, body, _ := strings.Cut(f.RSAKey, "\n")
	inKey := allow + "\n" + begin + "\n" + allow + "\n" + body + "\n"
	k := secrettest.NewGen(37).Str(secrettest.Alnum, 32)
	comment := "cfg = 1 # gitleaks:allow; api_key ="
	generic := comment + "\n" + k + "\n" // the match spans both lines, the secret is the second
	for _, tc := range []struct {
		name, base, text string
		rules            []string // found, in order
	}{
		{"a base line inside the change's key", allow + "\n", inKey, []string{"private-key"}},
		{"the key is the base's", inKey, inKey, nil},
		{"the base's comment, the change's secret", comment + "\n", generic, []string{"generic-api-key"}},
		{"both lines the base's", generic, generic, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewScanner(ScannerOptions{InlineAllow: linesOf("settings.py", tc.base)})
			if err != nil {
				t.Fatal(err)
			}
			stock, err := NewScanner(ScannerOptions{InlineAllow: linesOf("settings.py", tc.base)})
			if err != nil {
				t.Fatal(err)
			}
			stock.fast = nil
			ctx := context.Background()
			var lines []pack.Line
			var diff strings.Builder
			diff.WriteString("diff --git a/settings.py b/settings.py\n--- a/settings.py\n+++ b/settings.py\n")
			fmt.Fprintf(&diff, "@@ -0,0 +1,%d @@\n", strings.Count(tc.text, "\n"))
			for i, l := range strings.Split(strings.TrimSuffix(tc.text, "\n"), "\n") {
				lines = append(lines, pack.Line{Number: i + 1, Text: l})
				diff.WriteString("+" + l + "\n")
			}
			scans := map[string]func(*Scanner) ([]pack.Finding, error){
				"file":   func(s *Scanner) ([]pack.Finding, error) { return s.Scan(ctx, "settings.py", []byte(tc.text)) },
				"commit": func(s *Scanner) ([]pack.Finding, error) { return s.ScanCommit(ctx, "c0ffee", "settings.py", lines) },
				"diff":   func(s *Scanner) ([]pack.Finding, error) { return s.ScanDiff(ctx, "settings.py", []byte(diff.String())) },
			}
			for _, how := range []string{"file", "commit", "diff"} {
				got, err := scans[how](s)
				if err != nil {
					t.Fatal(err)
				}
				want, err := scans[how](stock)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: the fast path finds %v, gitleaks' detector %v", how, got, want)
				}
				var rules []string
				for _, fd := range got {
					rules = append(rules, fd.RuleID)
				}
				if !slices.Equal(rules, tc.rules) {
					t.Errorf("%s: rules %v, want %v", how, rules, tc.rules)
				}
			}
		})
	}
}

// ScanText is for text that is no file (the intent, the pack's other
// fields): there gitleaks:allow is never honoured, whatever InlineAllow
// trusts, while Scan of a file honours it as before.
func TestScanTextHonoursNoAllow(t *testing.T) {
	f := secrettest.Make(38)
	text := "# Rotate " + f.GitHub + " gitleaks:allow\n"
	for _, tc := range []struct {
		name  string
		trust func(string, string) bool
	}{
		{"gitleaks' rule", nil},
		{"every line trusted", func(string, string) bool { return true }},
	} {
		s, err := NewScanner(ScannerOptions{InlineAllow: tc.trust})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		fs, err := s.ScanText(ctx, "(intent)", []byte(text))
		if err != nil || len(fs) != 1 || text[fs[0].Start:fs[0].End] != f.GitHub {
			t.Errorf("%s: ScanText found %v %v, want the token", tc.name, fs, err)
		}
		if fs, err := s.Scan(ctx, "task.md", []byte(text)); err != nil || len(fs) != 0 {
			t.Errorf("%s: Scan of a file found %v %v, want none (the comment is honoured)", tc.name, fs, err)
		}
	}
}

// An allow comment is read on the raw line, as gitleaks reads it: one an
// escape spells inside the string it would allow is none, there or in the
// decoded strings the scanner reads besides.
func TestEscapedAllowIsNoComment(t *testing.T) {
	f := secrettest.Make(39)
	tok := `\x67` + strings.TrimPrefix(f.GitHub, "g")
	s, err := NewScanner(ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text  string
		found int
	}{
		{`x = "` + tok + ` \x67itleaks:allow"` + "\n", 1},
		{`x = "` + tok + `" # gitleaks:allow` + "\n", 0},
	} {
		fs, err := s.Scan(context.Background(), "a.py", []byte(tc.text))
		if err != nil || len(fs) != tc.found {
			t.Errorf("%q: findings %v %v, want %d", tc.text, fs, err, tc.found)
		}
	}
}
