package audit

import (
	"context"
	"encoding/base64"
	"maps"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

// A profile of the secret scan (bench/, 10,000 generated files) puts ~95% of
// gitleaks' time in two regular expressions that Go's regexp runs as an NFA
// over every byte of every file: the decoder's search for encoded text
// (base64, hex, percent, unicode), which runs after the first pass on every
// fragment, and the default `generic-api-key` rule, whose keywords (key,
// token, api, auth, …) are in nearly every source file. fastDetect gets
// gitleaks' exact findings with less of that work:
//
//   - mayDecode decides, with a byte loop, whether the decoder would find
//     anything to decode. When it cannot, the decoding passes would not run
//     either, and one pass without them gives the same findings. When it
//     might, the fragment goes through the stock detector.
//   - generic-api-key runs only on windows of lines that can hold one of its
//     matches (its keyword followed by an assignment operator, as its pattern
//     requires), each window reaching as many lines past the keyword as a
//     match can span. Matches cannot start before their keyword's line and
//     the windows start on line boundaries (with the preceding '\n', so
//     gitleaks' line and column arithmetic is unchanged), so each window
//     yields the same matches as the whole text, and the whole text has no
//     others. A window holds one of the rule's keywords, so gitleaks'
//     keyword prefilter would run the rule on that text too; gitleaks' rule
//     that a generic finding yields to a specific one on the same line is
//     applied across both detectors.
//
// It is used only with gitleaks v8.30.1 (whose decoder it mirrors) and when
// the generic rule is gitleaks' own pattern; anything else goes through the
// stock detector. The differential tests in secrets_fast_test.go compare it
// with the stock detector on random, adversarial and real texts.
type fastDetect struct {
	// base has every rule but the generic one, with no decoding passes.
	base *detect.Detector
	// generic has only the generic rule, without keywords (the prefilter is
	// applied here, on the whole text) and without decoding passes; nil
	// when the generic rule is not windowed.
	generic  *detect.Detector
	keywords []string // the generic rule's keywords, lowercased
	// span is how many lines after its keyword's line a generic match can
	// end on.
	span int
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

// genericKeywords are the alternatives of genericPattern's keyword group,
// lowercased: every match contains one of them (ASCII case-insensitively,
// given no 'ſ' or 'K', see foldRunes).
var genericKeywords = []string{"access", "auth", "api", "credential", "creds", "key", "passwd", "password", "secret", "token"}

// newFastDetect returns nil when the fast path does not apply to cfg.
func newFastDetect(cfg config.Config, version string) *fastDetect {
	if version != fastGitleaksVersion {
		return nil
	}
	f := &fastDetect{}
	g, ok := cfg.Rules[genericRuleID]
	// Its keywords must include every keyword of the pattern: then a text
	// with a window (an ASCII keyword) always passes gitleaks' prefilter.
	windowed := ok && g.Regex != nil && g.Regex.String() == genericPattern && g.Path == nil &&
		len(g.RequiredRules) == 0 && !g.SkipReport && hasKeywords(g.Keywords, genericKeywords)
	for _, r := range cfg.Rules {
		for _, req := range r.RequiredRules {
			if req.RuleID == genericRuleID {
				windowed = false // another rule needs its findings
			}
		}
	}
	if windowed {
		span, ok := maxNewlines(genericPattern)
		if !ok {
			windowed = false
		}
		f.span = span
	}
	baseCfg := cfg
	if windowed {
		baseCfg.Rules = maps.Clone(cfg.Rules)
		delete(baseCfg.Rules, genericRuleID)
		gcfg := cfg
		g.Keywords = nil
		gcfg.Rules = map[string]config.Rule{genericRuleID: g}
		gcfg.Keywords = map[string]struct{}{}
		f.generic = detect.NewDetector(gcfg)
		f.generic.MaxDecodeDepth = 0
		for _, k := range cfg.Rules[genericRuleID].Keywords {
			f.keywords = append(f.keywords, strings.ToLower(k))
		}
	}
	f.base = detect.NewDetector(baseCfg)
	f.base.MaxDecodeDepth = 0
	return f
}

// detect returns gitleaks' findings for frag, or ok=false when the fragment
// must go through the stock detector (it holds something to decode).
//
// With a pruner that applies to the fragment, the rules that cannot match
// it are left out of the detector (rulePruner).
func (f *fastDetect) detect(ctx context.Context, frag fragment, prune *rulePruner) ([]report.Finding, bool) {
	text := frag.Raw
	if mayDecode(text) {
		return nil, false
	}
	var keep map[string]bool
	if prune.applies(text) {
		keep, _ = prune.keep([]string{text})
	}
	return f.detectOnce(ctx, frag, prune, keep), true
}

// detectOnce is gitleaks' findings for frag without decoding passes; with
// keep, only those rules run (prune's detectors).
func (f *fastDetect) detectOnce(ctx context.Context, frag fragment, prune *rulePruner, keep map[string]bool) []report.Finding {
	text := frag.Raw
	base, generic := f.base, f.generic != nil
	if keep != nil {
		base = prune.detector(f.base.Config, keep, 0)
		generic = generic && keep[genericRuleID]
	}
	out := base.DetectContext(ctx, frag)
	if !generic {
		return out
	}
	var gen []report.Finding
	if strings.ContainsAny(text, foldRunes) {
		// Case folding can match where an ASCII search sees no keyword:
		// the whole text, when gitleaks' prefilter would run the rule.
		if f.runsGeneric(text) {
			gen = f.generic.DetectContext(ctx, frag)
		}
	} else {
		// A window holds an ASCII keyword, which gitleaks' prefilter finds
		// too: no window, no run.
		for _, w := range genericWindows(text, f.span) {
			wf := frag
			wf.Raw = text[w.start:w.end]
			wf.StartLine = frag.StartLine + w.line
			gen = append(gen, f.generic.DetectContext(ctx, wf)...)
		}
	}
	return append(out, yieldToSpecific(gen, out)...)
}

// runsGeneric reports whether gitleaks' keyword prefilter selects the
// generic rule for text: one of its keywords in the lowercased text.
func (f *fastDetect) runsGeneric(text string) bool {
	lower := strings.ToLower(text)
	for _, k := range f.keywords {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

// hasKeywords reports whether keywords include each of want, ignoring case.
func hasKeywords(keywords, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(keywords, func(k string) bool { return strings.EqualFold(k, w) }) {
			return false
		}
	}
	return true
}

// yieldToSpecific drops the generic findings that gitleaks' filter would
// drop: a generic finding whose secret is inside a specific rule's secret on
// the same line.
func yieldToSpecific(gen, specific []report.Finding) []report.Finding {
	var out []report.Finding
	for _, g := range gen {
		keep := true
		for _, s := range specific {
			if g.StartLine == s.StartLine && g.Commit == s.Commit && g.RuleID != s.RuleID &&
				strings.Contains(s.Secret, g.Secret) && !strings.Contains(strings.ToLower(s.RuleID), "generic") {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, g)
		}
	}
	return out
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

// genericWindows returns the windows that hold every match of the generic
// pattern in text: for each keyword occurrence followed by what the pattern
// needs before its value (up to 20 of [ \t\w.-], up to 3 of [\s'"], an
// operator), its line through span lines after it.
func genericWindows(text string, span int) []window {
	lower := asciiLower(text)
	var lines []int
	var nl []int
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			nl = append(nl, i)
		}
	}
	lineOf := func(off int) int { return sort.SearchInts(nl, off) }
	for _, k := range genericKeywords {
		for i := 0; ; {
			j := strings.Index(lower[i:], k)
			if j < 0 {
				break
			}
			at := i + j
			if operatorFollows(text, at+len(k)) {
				lines = append(lines, lineOf(at))
			}
			i = at + 1
		}
	}
	if len(lines) == 0 {
		return nil
	}
	sort.Ints(lines)
	var out []window
	for i := 0; i < len(lines); {
		first, last := lines[i], lines[i]+span
		j := i + 1
		for j < len(lines) && lines[j] <= last+1 {
			last = max(last, lines[j]+span)
			j++
		}
		w := window{end: len(text)}
		if first > 0 {
			w.start, w.line = nl[first-1], first-1
		}
		if last < len(nl) {
			w.end = nl[last] + 1
		} else if !strings.HasSuffix(text, "\n") {
			// gitleaks gives a match on a last line without '\n' the whole
			// fragment up to it as its Line (which gitleaks:allow and line
			// allowlists read): only the whole text gives the same.
			return []window{{0, len(text), 0}}
		}
		out = append(out, w)
		i = j
	}
	return out
}

// operatorFollows reports whether, from off, up to 20 bytes of [ \t\w.-]
// then up to 3 of [\s'"] can be followed by the first byte of one of the
// pattern's operators (= > : | ? ,).
func operatorFollows(text string, off int) bool {
	for i := 0; i <= 20 && off+i <= len(text); i++ {
		q := off + i
		for j := 0; j <= 3 && q+j < len(text); j++ {
			switch text[q+j] {
			case '=', '>', ':', '|', '?', ',':
				return true
			}
			if !isSpaceQuote(text[q+j]) {
				break
			}
		}
		if q >= len(text) || !isKeyTail(text[q]) {
			break
		}
	}
	return false
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
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// maxNewlines is the most '\n' a match of pattern can hold; ok is false when
// it is unbounded or the pattern has an assertion a window could change (a
// begin-of-text or word boundary: windows start at line boundaries, but
// their first line is the empty one before the '\n').
func maxNewlines(pattern string) (int, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, false
	}
	const inf = 1 << 30
	var walk func(*syntax.Regexp) int
	bad := false
	walk = func(re *syntax.Regexp) int {
		switch re.Op {
		case syntax.OpLiteral:
			return strings.Count(string(re.Rune), "\n")
		case syntax.OpCharClass:
			for i := 0; i+1 < len(re.Rune); i += 2 {
				if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
					return 1
				}
			}
			return 0
		case syntax.OpAnyChar:
			return 1
		case syntax.OpAnyCharNotNL, syntax.OpEmptyMatch, syntax.OpEndText, syntax.OpEndLine:
			return 0
		case syntax.OpBeginText, syntax.OpBeginLine, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			bad = true
			return 0
		case syntax.OpCapture:
			return walk(re.Sub[0])
		case syntax.OpConcat:
			n := 0
			for _, s := range re.Sub {
				n += walk(s)
			}
			return min(n, inf)
		case syntax.OpAlternate:
			n := 0
			for _, s := range re.Sub {
				n = max(n, walk(s))
			}
			return n
		case syntax.OpQuest:
			return walk(re.Sub[0])
		case syntax.OpStar, syntax.OpPlus:
			if walk(re.Sub[0]) > 0 {
				return inf
			}
			return 0
		case syntax.OpRepeat:
			n := walk(re.Sub[0])
			if n == 0 {
				return 0
			}
			if re.Max < 0 {
				return inf
			}
			return min(n*re.Max, inf)
		}
		bad = true
		return 0
	}
	n := walk(re)
	if bad || n >= inf {
		return 0, false
	}
	return n, true
}

// mayDecode reports whether gitleaks' decoder (detect/codec, v8.30.1) could
// find an encoded segment in text, the condition for its decoding passes.
// It may say yes when the decoder finds nothing (the stock detector then
// runs, at the usual cost); it never says no when the decoder would find
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
	if mayHoldUnicodeEscape(text) {
		return true
	}
	n := len(text)
	for p := 0; p < n; {
		// The leftmost start at or after p: a '%' with two hex digits, or
		// a position with 16 class bytes ahead (hex needs 32, so it starts
		// where base64 can).
		s, percent := -1, false
		for i := p; i < n; i++ {
			c := text[i]
			if c == '%' && i+2 < n && isHexDigit(text[i+1]) && isHexDigit(text[i+2]) {
				s, percent = i, true
				break
			}
			if isB64Class(c) {
				r := classRun(text, i)
				if r >= 16 {
					s = i
					break
				}
				i += r - 1
			}
		}
		if s < 0 {
			return false
		}
		var e int
		var decoded string
		switch {
		case percent:
			e = s + 3
			for t := s + 3; t+2 < n && text[t] != '\n'; t++ {
				if text[t] == '%' && isHexDigit(text[t+1]) && isHexDigit(text[t+2]) {
					e = t + 3
				}
			}
			decoded = decodePercentLike(text[s:e])
		case hexRun(text, s) >= 32:
			e = s + hexRun(text, s)
			decoded = decodeHexLike(text[s:e])
		default:
			e = s + classRun(text, s)
			for k := 0; k < 2 && e < n && text[e] == '='; k++ {
				e++
			}
			decoded = decodeBase64Like(text[s:e])
		}
		if decoded != "" {
			return true
		}
		p = e
	}
	return false
}

// mayHoldUnicodeEscape reports whether text holds "U+" and four hex digits,
// or a backslash, 'u' or 'U' and four hex digits.
func mayHoldUnicodeEscape(text string) bool {
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

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isB64Class is the decoder's base64 class [\w\/+-].
func isB64Class(c byte) bool {
	return c == '_' || c == '/' || c == '+' || c == '-' ||
		'0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

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

// detectOrSkip is detect on a possibly nil fastDetect.
func (f *fastDetect) detectOrSkip(ctx context.Context, frag fragment, prune *rulePruner) ([]report.Finding, bool) {
	if f == nil {
		return nil, false
	}
	return f.detect(ctx, frag, prune)
}
