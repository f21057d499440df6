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
