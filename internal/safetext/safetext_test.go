package safetext

import (
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain/path.go":                "plain/path.go",
		"new\nline":                    `new\nline`,
		"\x1b[32mverdict: pass\x1b[0m": `\u001B[32mverdict: pass\u001B[0m`,
		"::warning file=x::pwned":      `\u003A:warning file=x::pwned`,
		"  ::set-output name=a::b":     `  \u003A:set-output name=a::b`,
		"a\n::error::forged":           `a\n::error::forged`,
		"caf\xe9.txt":                  `caf\xe9.txt`,
		"evil\u202egnp.exe":            `evil\u202Egnp.exe`,
		"tab\there\r":                  `tab\there\r`,
		"\u0085next":                   `\u0085next`,
		"ünïcödé 名前":                   "ünïcödé 名前",
		"x\u2028y":                     `x\u2028y`,
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzLine(f *testing.F) {
	f.Add("::error::x\n\x1b[1m")
	f.Add("\xff\xfe::")
	f.Fuzz(func(t *testing.T, s string) {
		out := Line(s)
		if strings.ContainsAny(out, "\n\r\x1b\x00\u2028\u202e") {
			t.Fatalf("Line(%q) = %q keeps a control character", s, out)
		}
		if strings.HasPrefix(strings.TrimLeft(out, " "), "::") {
			t.Fatalf("Line(%q) = %q starts a workflow command", s, out)
		}
	})
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"preserve_head_lines":                      `"preserve_head_lines"`,
		"src/**/*.{go,ts}":                         `"src/**/*.{go,ts}"`,
		"fail":                                     `"fail"`,
		"sha256-deadbeef":                          `"sha256-deadbeef"`,
		"ghp_" + strings.Repeat("aB3", 12):         "(a 40-character text, not shown: it may hold a secret)",
		"AKIA" + strings.Repeat("Q7", 8):           "(a 20-character text, not shown: it may hold a secret)",
		"key_" + strings.Repeat("x", 130):          "(a 134-character text, not shown: it may hold a secret)",
		strings.Repeat("a", 20):                    `"` + strings.Repeat("a", 20) + `"`,
		"x-" + strings.Repeat("1234567890", 2):     `"x-` + strings.Repeat("1234567890", 2) + `"`,
		"id " + strings.Repeat("a1", 8) + " after": "(a 25-character text, not shown: it may hold a secret)",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestYAMLError(t *testing.T) {
	for in, want := range map[string]string{
		"line 2: cannot unmarshal !!str `hunter2pw` into int":       "line 2: cannot unmarshal !!str a value into int",
		"line 3: cannot unmarshal !!str `ghp_R4n...` into []string": "line 3: cannot unmarshal !!str a value into []string",
		"line 1: did not find expected key":                         "line 1: did not find expected key",
	} {
		if got := YAMLError(in); got != want {
			t.Errorf("YAMLError(%q) = %q, want %q", in, got, want)
		}
	}
}
