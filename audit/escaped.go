package audit

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Secrets inside backslash-escaped strings — a Jupyter notebook's cells, a
// command in a JSON config, a JSON document in a YAML double-quoted scalar —
// hide from patterns that expect a quote or a line end after a value: in
// `"source": ["token = \"ghp_…\"\n"]` the value ends at `\"`. So besides the
// raw text, the scanner reads the decoded value of every double-quoted
// string that holds an escape, and maps what it finds there back to the raw
// bytes, never splitting an escape sequence (a redaction replaces whole
// escapes, so the string stays well-formed).

// escapedString is one double-quoted literal holding a backslash escape,
// decoded. For each byte i of value, from[i] and to[i] are the raw byte
// range of the escape or character it came from.
type escapedString struct {
	value    string
	from, to []int
}

// hasEscape is a cheap test for escapedStrings: a backslash before a quote
// or an escape letter.
func hasEscape(text string) bool {
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '\\')
		if j < 0 || i+j+1 >= len(text) {
			return false
		}
		switch text[i+j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u', '\'', 'x':
			return true
		}
		i += j + 1
	}
}

// escapedStrings finds the double-quoted literals of text that hold an
// escape, one line at a time (a JSON string cannot hold a raw line break),
// and decodes them: JSON's escapes, plus \' and \xHH of JavaScript and
// Python. An unknown escape is kept as its two bytes; a literal left open
// at the end of its line is not one.
func escapedStrings(text string) []escapedString {
	var out []escapedString
	for ls := 0; ls < len(text); {
		le := strings.IndexByte(text[ls:], '\n')
		if le < 0 {
			le = len(text)
		} else {
			le += ls
		}
		for i := ls; i < le; {
			q := strings.IndexByte(text[i:le], '"')
			if q < 0 {
				break
			}
			start := i + q + 1
			end, escaped := start, false
			for end < le && text[end] != '"' {
				if text[end] == '\\' {
					escaped = true
					end++
				}
				end++
			}
			if end >= le {
				break // unterminated on this line
			}
			if escaped {
				out = append(out, decodeEscaped(text, start, end))
			}
			i = end + 1
		}
		ls = le + 1
	}
	return out
}

// decodeEscaped decodes text[start:end], the inside of a literal.
func decodeEscaped(text string, start, end int) escapedString {
	var es escapedString
	var b strings.Builder
	emit := func(s string, from, to int) {
		b.WriteString(s)
		for range len(s) {
			es.from = append(es.from, from)
			es.to = append(es.to, to)
		}
	}
	for i := start; i < end; {
		c := text[i]
		if c != '\\' || i+1 >= end {
			_, n := utf8.DecodeRuneInString(text[i:end])
			emit(text[i:i+n], i, i+n)
			i += n
			continue
		}
		switch e := text[i+1]; e {
		case '"', '\\', '/', '\'':
			emit(string(e), i, i+2)
			i += 2
		case 'b':
			emit("\b", i, i+2)
			i += 2
		case 'f':
			emit("\f", i, i+2)
			i += 2
		case 'n':
			emit("\n", i, i+2)
			i += 2
		case 'r':
			emit("\r", i, i+2)
			i += 2
		case 't':
			emit("\t", i, i+2)
			i += 2
		case 'x':
			if i+4 <= end && isHexDigit(text[i+2]) && isHexDigit(text[i+3]) {
				emit(string(rune(hexVal(text[i+2])<<4|hexVal(text[i+3]))), i, i+4)
				i += 4
				continue
			}
			emit(text[i:i+2], i, i+2)
			i += 2
		case 'u':
			r, n := decodeU(text[i:end])
			if n == 0 {
				emit(text[i:i+2], i, i+2)
				i += 2
				continue
			}
			emit(string(r), i, i+n)
			i += n
		default:
			emit(text[i:i+2], i, i+2)
			i += 2
		}
	}
	es.value = b.String()
	return es
}

// decodeU decodes a \uXXXX escape at the start of s, combining a surrogate
// pair; n is the bytes used, 0 when s does not start with one.
func decodeU(s string) (rune, int) {
	hex4 := func(s string) (rune, bool) {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range []byte(s[2:6]) {
			if !isHexDigit(c) {
				return 0, false
			}
			r = r<<4 | rune(hexVal(c))
		}
		return r, true
	}
	r, ok := hex4(s)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if r2, ok := hex4(s[6:]); ok {
			if c := utf16.DecodeRune(r, r2); c != utf8.RuneError {
				return c, 12
			}
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

// decodedDoc joins the decoded strings, each followed by '\n', into one text
// to scan, with the offset where each starts.
func decodedDoc(ss []escapedString) (string, []int) {
	var b strings.Builder
	starts := make([]int, len(ss))
	for i, s := range ss {
		starts[i] = b.Len()
		b.WriteString(s.value)
		b.WriteByte('\n')
	}
	return b.String(), starts
}

// rawSpans maps the span [s,e) of the decoded doc onto the raw text: one
// span per string it covers (a finding never spans the text between two
// literals), each covering whole escapes.
func rawSpans(ss []escapedString, starts []int, s, e int) [][2]int {
	var out [][2]int
	for i := range ss {
		vs, ve := starts[i], starts[i]+len(ss[i].value)
		a, z := max(s, vs), min(e, ve)
		if a >= z {
			continue
		}
		out = append(out, [2]int{ss[i].from[a-vs], ss[i].to[z-1-vs]})
	}
	return out
}
