package audit

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The byte loops the scan's helpers were written as: what each must
// answer.
func isASCIILoop(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func mayHoldUnicodeEscapeLoop(text string) bool {
	for i := 0; i+5 < len(text); i++ {
		c := text[i]
		if (c == 'U' && text[i+1] == '+') || (c == '\\' && (text[i+1] == 'u' || text[i+1] == 'U')) {
			if isHexDigit(text[i+2]) && isHexDigit(text[i+3]) && isHexDigit(text[i+4]) && isHexDigit(text[i+5]) {
				return true
			}
		}
	}
	return false
}

// mayDecodeLooking is mayDecode looking for a unicode match at every
// byte, as nextEncoding does.
func mayDecodeLooking(text string) bool {
	return mayHoldUnicodeEscape(text) || anyDecodes(text, true)
}

func isB64ClassTest(c byte) bool {
	return c == '_' || c == '/' || c == '+' || c == '-' ||
		'0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func checkByteHelpers(t *testing.T, s string) {
	t.Helper()
	if got, want := isASCII(s), isASCIILoop(s); got != want {
		t.Fatalf("isASCII(%q) = %v, want %v", s, got, want)
	}
	if got, want := mayHoldUnicodeEscape(s), mayHoldUnicodeEscapeLoop(s); got != want {
		t.Fatalf("mayHoldUnicodeEscape(%q) = %v, want %v", s, got, want)
	}
	if got, want := toLower(s), strings.ToLower(s); got != want {
		t.Fatalf("toLower(%q) = %q, want %q", s, got, want)
	}
	if got, want := mayDecode(s), mayDecodeLooking(s); got != want {
		t.Fatalf("mayDecode(%q) = %v, want %v", s, got, want)
	}
	if !mayHoldUnicodeEscape(s) {
		for p := 0; p <= len(s); p++ {
			gs, ge, gk := nextMatch(s, p, false)
			ws, we, wk := nextEncoding(s, p)
			if gs != ws || ge != we || gk != wk {
				t.Fatalf("nextMatch(%q, %d, false) = %d, %d, %d; nextEncoding %d, %d, %d", s, p, gs, ge, gk, ws, we, wk)
			}
		}
	}
}

// TestByteHelpersAreTheLoops: the word-at-a-time, vector-search and table
// forms answer what the byte loops do.
func TestByteHelpersAreTheLoops(t *testing.T) {
	for c := range 256 {
		if isB64Class(byte(c)) != isB64ClassTest(byte(c)) {
			t.Fatalf("isB64Class(%q) = %v", byte(c), isB64Class(byte(c)))
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	// Bytes and whole runes: upper case in one and two bytes (É), runes
	// whose lower case is shorter (İ, the Kelvin sign) or longer (Ⱥ),
	// U+FFFD, invalid bytes.
	alphabet := []string{"U", "+", "\\", "u", "a", "F", "0", "9", "g", "Z", " ", "x", "%", "=", "/", "dGVzdA", "0123456789abcdef",
		"\xc3", "\xa9", "\x80", "\xff", "é", "É", "İ", "\u212a", "Ⱥ", "\ufffd"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		checkByteHelpers(t, b.String())
	}
}

func FuzzByteHelpers(f *testing.F) {
	for _, s := range []string{"", "U+00e9 x", `a\u00E9`, "\\Uffff", "abcdefgh\xff", "U+12", "\\u12345", "ÉCOLE İstanbul \u212a", "AB\xc3"} {
		f.Add(s)
	}
	f.Fuzz(checkByteHelpers)
}
