package audit

import (
	"context"
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

// A profile of the secret scan (bench/, 10,000 generated files) puts ~95% of
// gitleaks' time in regular expressions that Go's regexp runs as an NFA
// over every byte of every file: the rules whose keywords a file holds
// (generic-api-key's — key, token, api, auth, … — are in nearly every
// source file) and the decoder's search for encoded text (base64, hex,
// percent, unicode), which runs after the first pass on every fragment.
// fastDetect gets gitleaks' exact findings with less of that work:
//
//   - ruleWindows runs each rule whose matches hold one of a few literals
//     (its anchors) only on the lines around them, the others on the
//     whole text (see ruleWindows for why the findings are the same).
//   - mayDecode decides, with a byte loop, whether the decoder would find
//     anything to decode. When it cannot, the decoding passes would not
//     run either, and one pass without them gives the same findings.
//   - When it might, the decoding passes are made with nativeEncodings
//     (gitleaks' decoder on invalid UTF-8 or NUL), and a rule runs
//     on them only when one of its matches there touches a decoded value,
//     the matches gitleaks keeps (decodedRules). Usually none does, and
//     the first pass gives the findings; otherwise gitleaks' detector with
//     its decoding passes runs with those rules only, for their decoded
//     findings.
//
// It is used only with gitleaks v8.30.1 (whose decoder and filter it
// mirrors). The differential tests in secrets_fast_test.go and
// secrets_window_test.go compare it with the stock detector on random,
// adversarial and real texts.
type fastDetect struct {
	rules *ruleWindows
	// decoding is gitleaks' detector over the given rules with its
	// decoding passes, for the rare fragment a decoded value matches.
	decoding func(keep map[string]bool) *detect.Detector
}

// fragment is gitleaks v8's detect.Fragment.
//
//lint:ignore SA1019 v8's DetectContext takes detect.Fragment; sources.Fragment replaces it only in v9
type fragment = detect.Fragment

// fastGitleaksVersion is the gitleaks version whose decoder mayDecode mirrors.
const fastGitleaksVersion = "v8.30.1"

// genericRuleID and genericPattern are gitleaks' default generic rule.
const (
	genericRuleID  = "generic-api-key"
	genericPattern = `(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`
)

// maxDecodingDetectors bounds fastDetect's cache of detectors, one per set
// of rules a decoded value matched.
const maxDecodingDetectors = 256

// newFastDetect returns nil when the fast path does not apply to the rules
// of src.
func newFastDetect(src *ruleSource, version string) *fastDetect {
	if version != fastGitleaksVersion {
		return nil
	}
	rules := src.ruleWindows()
	if rules == nil {
		return nil
	}
	var mu sync.Mutex
	cache := map[string]*detect.Detector{}
	return &fastDetect{rules: rules, decoding: func(keep map[string]bool) *detect.Detector {
		ids := slices.Sorted(maps.Keys(keep))
		key := strings.Join(ids, "\x00")
		mu.Lock()
		defer mu.Unlock()
		if d, ok := cache[key]; ok {
			return d
		}
		d := detect.NewDetector(src.subset(ids))
		d.MaxDecodeDepth = DecodeDepth
		if len(cache) < maxDecodingDetectors {
			cache[key] = d
		}
		return d
	}}
}

// detect returns gitleaks' findings for frag; li indexes frag.Raw.
func (f *fastDetect) detect(ctx context.Context, frag fragment, li *lineIndex) []report.Finding {
	text := frag.Raw
	out := f.rules.detect(ctx, frag, li)
	if !mayDecode(text) {
		return out
	}
	passes, segs := decodePassesSegs(text, DecodeDepth)
	if len(passes) < 2 {
		return out
	}
	dec := f.rules.decodedRules(ctx, passes, segs)
	if len(dec) == 0 {
		return out
	}
	for _, g := range f.decoding(dec).DetectContext(ctx, frag) {
		// Findings of a decoding pass carry the decoding's tags after
		// the rule's; the first pass's are in out already.
		if len(g.Tags) > len(f.rules.src.rule(g.RuleID).Tags) {
			out = append(out, g)
		}
	}
	return gitleaksFilter(out)
}

// foldRunes are the non-ASCII runes that Go's case folding maps to ASCII
// letters (ſ to s, the Kelvin sign to k): a text holding one can match the
// generic pattern where an ASCII keyword search sees nothing.
const foldRunes = "\u017f\u212a"

// window is a byte range of a text starting at a line boundary: at the '\n'
// that ends the line before its first line (or at 0). line is the 0-based
// line of that '\n', so line+1 is the first full line's index.
type window struct {
	start, end int
	line       int
}

// operatorReach is the last offset at which an operator of the generic
// pattern (= > : | ? ,) can start after a keyword ending at off: past up
// to 20 bytes of [ \t\w.-], then up to 3 of [\s'"]; -1 when none can.
func operatorReach(text string, off int) int {
	reach := -1
	for i := 0; i <= 20 && off+i <= len(text); i++ {
		q := off + i
		for j := 0; j <= 3 && q+j < len(text); j++ {
			switch text[q+j] {
			case '=', '>', ':', '|', '?', ',':
				reach = max(reach, q+j)
			}
			if !isSpaceQuote(text[q+j]) {
				break
			}
		}
		if q >= len(text) || !isKeyTail(text[q]) {
			break
		}
	}
	return reach
}

func isKeyTail(c byte) bool {
	return c == ' ' || c == '\t' || c == '.' || c == '-' || c == '_' ||
		'0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isSpaceQuote(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\f', '\r', '\'', '"':
		return true
	}
	return false
}

// asciiLower lowercases ASCII letters only, keeping every byte offset.
func asciiLower(s string) string {
	if len(s) == 0 {
		return ""
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	// b is not written again: the string is its bytes, not a second copy
	// (every text scanned is lowered, 20 of the 600 MB a 10,000-file
	// pack allocated).
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// toLower is strings.ToLower(s) (gitleaks' prefilter input), faster on
// text that is mostly ASCII: once a string holds one non-ASCII byte the
// standard library maps every rune through unicode.ToLower, where here
// only the non-ASCII runes are (hugo's documentation and translations:
// ~2.5% of its full-tree pack's CPU). An invalid byte becomes U+FFFD, as
// strings.Map writes it (FuzzByteHelpers holds the two the same).
func toLower(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, i, len(s)+len(s)/16)
	copy(b, s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, unicode.ToLower(r))
		i += w
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// mayDecode reports whether gitleaks' decoder (detect/codec, v8.30.1) could
// find an encoded segment in text, the condition for its decoding passes.
// It may say yes when the decoder finds nothing (the decoding passes are
// then made, to find nothing); it never says no when the decoder would find
// something. The decoder searches with
//
//	(?P<percent>%[0-9A-Fa-f]{2}(?:.*%[0-9A-Fa-f]{2})?)|
//	(?P<unicode>(?:(?:U\+[a-fA-F0-9]{4}(?:\s|$))+|(?i)(?:\\{1,2}u[a-fA-F0-9]{4})+))|
//	(?P<hex>[0-9A-Fa-f]{32,})|(?P<base64>[\w\/+-]{16,}={0,2})
//
// and keeps a match when it decodes to something (printable ASCII). Any
// text that could hold a unicode match is a yes; the percent, hex and base64
// matches are found the way the leftmost-first search finds them and decoded
// the way the decoder decodes them.
func mayDecode(text string) bool {
	// Without a possible unicode escape, nextEncoding finds only percent,
	// hex and base64 segments.
	return mayHoldUnicodeEscape(text) || anyDecodes(text, false)
}

// anyDecodes reports whether one of the segments nextMatch finds in text
// (with unicode, as nextEncoding does), one after the other, decodes to
// something.
func anyDecodes(text string, unicode bool) bool {
	for p := 0; p < len(text); {
		s, e, kind := nextMatch(text, p, unicode)
		if s < 0 {
			return false
		}
		if decodeSegment(kind, text[s:e]) != "" {
			return true
		}
		p = e
	}
	return false
}

// mayHoldUnicodeEscape reports whether text holds "U+" and four hex digits,
// or a backslash, 'u' or 'U' and four hex digits.
func mayHoldUnicodeEscape(text string) bool {
	// Each prefix's first byte found by IndexByte (a vector search), not a
	// test a byte: a scan asks this of every file.
	escapeAt := func(first byte, second string) bool {
		for i := 0; i+5 < len(text); i++ {
			j := strings.IndexByte(text[i:len(text)-5], first)
			if j < 0 {
				return false
			}
			i += j
			if strings.IndexByte(second, text[i+1]) >= 0 &&
				isHexDigit(text[i+2]) && isHexDigit(text[i+3]) && isHexDigit(text[i+4]) && isHexDigit(text[i+5]) {
				return true
			}
		}
		return false
	}
	return escapeAt('\\', "uU") || escapeAt('U', "+")
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isB64Class is the decoder's base64 class [\w\/+-].
func isB64Class(c byte) bool { return b64Class[c] }

var b64Class = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '_' || c == '/' || c == '+' || c == '-' ||
			'0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	return t
}()

func classRun(text string, i int) int {
	j := i
	for j < len(text) && isB64Class(text[j]) {
		j++
	}
	return j - i
}

func hexRun(text string, i int) int {
	j := i
	for j < len(text) && isHexDigit(text[j]) {
		j++
	}
	return j - i
}

// printable is gitleaks' printableASCII: '\t' through '~'.
func printable(b byte) bool { return '\x08' < b && b < '\x7f' }

func printableAll(b []byte) bool {
	for _, c := range b {
		if !printable(c) {
			return false
		}
	}
	return true
}

func hexVal(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 0xff
}

// decodePercentLike is codec.decodePercent.
func decodePercentLike(enc string) string {
	out := make([]byte, 0, len(enc))
	for i := 0; i < len(enc); {
		if enc[i] == '%' && i+2 < len(enc) {
			n1, n2 := hexVal(enc[i+1]), hexVal(enc[i+2])
			if n1|n2 != 0xff {
				b := n1<<4 | n2
				if !printable(b) {
					return ""
				}
				out = append(out, b)
				i += 3
				continue
			}
		}
		out = append(out, enc[i])
		i++
	}
	return string(out)
}

// decodeHexLike is codec.decodeHex.
func decodeHexLike(enc string) string {
	if len(enc)%2 != 0 || !strings.ContainsAny(enc, "0123456789") {
		return ""
	}
	out := make([]byte, len(enc)/2)
	for i := 0; i < len(enc); i += 2 {
		n1, n2 := hexVal(enc[i]), hexVal(enc[i+1])
		if n1|n2 == 0xff {
			return ""
		}
		b := n1<<4 | n2
		if !printable(b) {
			return ""
		}
		out[i/2] = b
	}
	return string(out)
}

// decodeBase64Like is codec.decodeBase64.
func decodeBase64Like(enc string) string {
	if !strings.ContainsAny(enc, "0123456789+/-_") {
		return ""
	}
	if b, err := base64.StdEncoding.DecodeString(enc); err == nil && printableAll(b) {
		return string(b)
	}
	if b, err := base64.RawURLEncoding.DecodeString(enc); err == nil && printableAll(b) {
		return string(b)
	}
	return ""
}

// detectOrSkip is detect on a possibly nil fastDetect; ok=false when f is
// nil.
func (f *fastDetect) detectOrSkip(ctx context.Context, frag fragment, li *lineIndex) ([]report.Finding, bool) {
	if f == nil {
		return nil, false
	}
	return f.detect(ctx, frag, li), true
}
