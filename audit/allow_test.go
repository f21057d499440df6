package audit

import (
	"context"
	"testing"

	"github.com/ctxpack/ctxpack/internal/secrettest"
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
