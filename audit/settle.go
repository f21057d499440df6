package audit

import (
	"strings"
)

// A finding's span is what the builder replaces with [REDACTED:<rule>]. Rules
// do not all end where the secret does: a pattern's value class may stop
// before a base64 '+' or '/' and leave the key's last characters, a match
// may take a closing quote or a line break with it, a span may end inside
// an escape sequence. settleSpan makes the span the whole secret and only
// the secret, so the redacted text keeps its quotes, line breaks and
// surrounding syntax.

// settleSpan returns the span [s,e) of text adjusted to the secret:
//   - quotes, backquotes and white space at either end are left out;
//   - an escape sequence is never split: a span starting on the escaped
//     byte takes its backslash, a span ending on a backslash that starts an
//     escape leaves it (the escape, a quote perhaps, stays whole);
//   - a span on one line is widened to the whole token it is part of:
//     letters, digits, '_' and '-' on both sides; '+', '/' and '=' padding
//     after it only when the secret itself is base64-like (holds '+' or
//     '/'), so a URL path after a token is not taken.
//
// A span that trimming would empty is returned unchanged.
func settleSpan(text string, s, e int) (int, int) {
	if s < 0 || e > len(text) || s >= e {
		return s, e
	}
	a, z := s, e
	for a < z && isTrimByte(text[a]) {
		a++
	}
	for z > a && isTrimByte(text[z-1]) {
		z--
	}
	if a == z {
		return s, e
	}
	if z > a && text[z-1] == '\\' && oddBackslashesBefore(text, z) {
		z--
	}
	if a > 0 && text[a-1] == '\\' && oddBackslashesBefore(text, a) {
		a--
	}
	if a == z {
		return s, e
	}
	if strings.IndexByte(text[a:z], '\n') >= 0 {
		return a, z
	}
	b64 := strings.ContainsAny(text[a:z], "+/")
	if isTokenByte(text[z-1]) || b64 && strings.IndexByte("+/", text[z-1]) >= 0 {
		for z < len(text) && (isTokenByte(text[z]) || b64 && (text[z] == '+' || text[z] == '/')) {
			z++
		}
		if b64 || isTokenByte(text[z-1]) {
			for n := 0; n < 2 && z < len(text) && text[z] == '='; n++ {
				z++
			}
		}
	}
	if isTokenByte(text[a]) {
		for a > 0 && isTokenByte(text[a-1]) && !(a-1 > 0 && text[a-2] == '\\' && oddBackslashesBefore(text, a-1)) {
			a--
		}
	}
	return a, z
}

func isTrimByte(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '\f', '\v', '"', '\'', '`':
		return true
	}
	return false
}

func isTokenByte(c byte) bool {
	return c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// oddBackslashesBefore reports whether the run of backslashes ending just
// before off is odd: the last one escapes text[off].
func oddBackslashesBefore(text string, off int) bool {
	n := 0
	for i := off - 1; i >= 0 && text[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// checksumMarkers precede a digest, each with the encodings and lengths the
// digest has after it: go.sum's h1: (base64 sha256), Subresource Integrity
// (npm, yarn: sha512-<base64>), and algo:hex (pip hashes, poetry.lock,
// Pipfile.lock, OCI image digests).
var checksumMarkers = []struct {
	marker string
	hex    []int // hex digest lengths
	b64    []int // base64 digest lengths, with padding
}{
	{"h1:", nil, []int{44}},
	{"sha1-", nil, []int{28}},
	{"sha256-", nil, []int{44}},
	{"sha384-", nil, []int{64}},
	{"sha512-", nil, []int{88}},
	{"md5:", []int{32}, nil},
	{"sha1:", []int{40}, nil},
	{"sha224:", []int{56}, nil},
	{"sha256:", []int{64}, nil},
	{"sha384:", []int{96}, nil},
	{"sha512:", []int{128}, nil},
}

// isChecksum reports whether text[s:e] is a digest written after its
// algorithm marker (the marker inside the span or just before it): a
// checksum of a lockfile or go.sum, never a credential.
func isChecksum(text string, s, e int) bool {
	v := text[s:e]
	for _, m := range checksumMarkers {
		d := ""
		switch {
		case strings.HasPrefix(strings.ToLower(v), m.marker):
			d = v[len(m.marker):]
		case s >= len(m.marker) && strings.EqualFold(text[s-len(m.marker):s], m.marker):
			d = v
		default:
			continue
		}
		for _, n := range m.hex {
			if len(d) == n && allHex(d) {
				return true
			}
		}
		for _, n := range m.b64 {
			if len(d) == n && allBase64(d) {
				return true
			}
		}
	}
	return false
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func allBase64(s string) bool {
	t := strings.TrimRight(s, "=")
	if len(s)-len(t) > 2 || t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c == '+' || c == '/' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// redactionMarker is how the builder replaces a secret: [REDACTED:<rule>].
const redactionMarker = "[REDACTED:"

// withinMarker reports whether text[s:e] lies inside one redaction marker
// the builder makes, `[REDACTED:<rule>]` with rule one of the scanner's
// (known): a redacted text is scanned again, and a rule matching a marker
// (curl -u "[REDACTED:curl-auth-user]") has found what was already taken
// out. Only a marker naming a rule: a secret a file wraps as
// `[REDACTED:<the secret>]` is no marker.
func withinMarker(text string, s, e int, known func(rule string) bool) bool {
	from := min(len(text), s+len(redactionMarker))
	i := strings.LastIndex(text[:from], redactionMarker)
	if i < 0 {
		return false
	}
	j := strings.IndexByte(text[i:], ']')
	return i <= s && j >= 0 && i+j+1 >= e && known(text[i+len(redactionMarker):i+j])
}
