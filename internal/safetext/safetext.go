// Package safetext makes text a repository or an event controls (file
// names, messages that quote them) safe to print on a terminal or in a CI
// log: one line, no terminal escape, no bidirectional override, and no
// GitHub workflow command (a line starting with "::").
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s as one printable line: newlines, tabs and every other
// control character (C0, DEL, C1, the line and paragraph separators and the
// bidirectional controls, which can reorder what a terminal shows) are
// written as visible escapes (\n, \r, \t, \u001B), invalid UTF-8 bytes as
// \xNN, and a line that would start with "::" (after blanks) gets its
// first colon escaped, so it cannot start a workflow command.
func Line(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || bidi(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	out := b.String()
	if t := strings.TrimLeft(out, " "); strings.HasPrefix(t, "::") {
		out = out[:len(out)-len(t)] + `\u003A` + t[1:]
	}
	return out
}

// bidi reports the bidirectional formatting characters (embeddings,
// overrides and isolates) and the marks that reorder displayed text.
func bidi(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069') || r == '\u200E' || r == '\u200F' || r == '\u061C'
}

// Quote is s quoted (as %q) for a message that repeats what a file or a
// user wrote (an unknown key, a bad value, a bad glob), unless s could be
// a secret: a run of tokenRun or more letters and digits holding both, as
// every token, key id and encoded key has, or more than maxQuoted bytes.
// Such a text is described by its length instead, since the message may
// end up in a CI log.
func Quote(s string) string {
	if len(s) > maxQuoted || tokenLike(s) {
		return fmt.Sprintf("(a %d-character text, not shown: it may hold a secret)", utf8.RuneCountInString(s))
	}
	return fmt.Sprintf("%q", s)
}

// tokenRun and maxQuoted bound what Quote repeats: a configuration key, a
// value or a glob a person writes has no 16 letters and digits in a row
// mixing both (`preserve_head_lines`, `src/**/*.go`, `fail`).
const (
	tokenRun  = 16
	maxQuoted = 120
)

// tokenLike reports whether s holds tokenRun or more ASCII letters and
// digits in a row, with at least one of each.
func tokenLike(s string) bool {
	run, letters, digits := 0, false, false
	for i := 0; i <= len(s); i++ {
		var c byte
		if i < len(s) {
			c = s[i]
		}
		switch {
		case c >= '0' && c <= '9':
			run, digits = run+1, true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			run, letters = run+1, true
		default:
			if run >= tokenRun && letters && digits {
				return true
			}
			run, letters, digits = 0, false, false
		}
	}
	return false
}

// YAMLError is a yaml.v3 error message without the values it quotes
// ("cannot unmarshal !!str `hunter2pw` into int"): the key and the type it
// wants say what to fix, and a value of a file may be a secret (a short
// one Quote would repeat, a password).
func YAMLError(msg string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '`')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(msg[i+1:], '`')
		}
		if j < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i])
		b.WriteString("a value")
		msg = msg[i+1+j+1:]
	}
}
