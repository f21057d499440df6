package audit

import (
	"strings"

	"github.com/zricethezav/gitleaks/v8/detect/codec"
)

// decodePassesSegs returns the texts gitleaks' detector runs its rules on
// for text with depth decoding passes: text, then each decoded text while
// the decoder finds something (detect.Detector.DetectContext's loop); and
// for each decoded text (index 1 on) where its decoded values are: byte
// ranges [start, end) of the text. The segments are found with
// nativeEncodings (a unicode escape's value is decoded by gitleaks'
// decoder alone), in text that is not valid UTF-8 or holds a NUL too:
// gitleaks' decoder made those passes once (its pattern over a file,
// ~2% of hugo's full tree's CPU), and finds what nativeEncodings finds
// (FuzzNativeEncodings; TestNativeDecodePassesMatchGitleaks on texts with
// invalid bytes and NULs).
func decodePassesSegs(text string, depth int) ([]string, [][][2]int) {
	out := []string{text}
	segs := [][][2]int{nil}
	cur := text
	for d := 1; d <= depth; d++ {
		next, ranges := decodeOnce(cur)
		if len(ranges) == 0 {
			break
		}
		out = append(out, next)
		segs = append(segs, ranges)
		cur = next
	}
	return out, segs
}

// encodingsPattern is gitleaks' codec.encodingsRe (v8.30.1): its encodings'
// patterns as named groups, in precedence order.
const encodingsPattern = `(?P<percent>%[0-9A-Fa-f]{2}(?:.*%[0-9A-Fa-f]{2})?)|` +
	`(?P<unicode>(?:(?:U\+[a-fA-F0-9]{4}(?:\s|$))+|(?i)(?:\\{1,2}u[a-fA-F0-9]{4})+))|` +
	`(?P<hex>[0-9A-Fa-f]{32,})|(?P<base64>[\w\/+-]{16,}={0,2})`

// Encoding groups of encodingsPattern; a higher index yields to a lower one.
const (
	encPercent = iota
	encUnicode
	encHex
	encBase64
)

// decodeOnce is one pass of gitleaks' codec.Decoder.Decode over text: the
// text with every segment replaced by its decoded value, and the decoded
// values' ranges in it (none: nothing to decode).
func decodeOnce(text string) (decoded string, ranges [][2]int) {
	type match struct{ kind, start, end int }
	var all []match
	for p := 0; p < len(text); {
		s, e, kind := nextEncoding(text, p)
		if s < 0 {
			break
		}
		all = append(all, match{kind, s, e})
		p = e
	}
	// codec.findEncodingMatches: a match touching or overlapping a
	// neighbour of higher precedence waits for the next pass.
	overlaps := func(a, b match) bool { return b.start <= a.end && b.end >= a.start }
	var b strings.Builder
	last := 0
	for i, m := range all {
		if len(all) > 1 {
			if i > 0 && overlaps(m, all[i-1]) && all[i-1].kind < m.kind {
				continue
			}
			if i+1 < len(all) && overlaps(m, all[i+1]) && all[i+1].kind < m.kind {
				continue
			}
		}
		v := decodeSegment(m.kind, text[m.start:m.end])
		if v == "" {
			continue
		}
		b.WriteString(text[last:m.start])
		ranges = append(ranges, [2]int{b.Len(), b.Len() + len(v)})
		b.WriteString(v)
		last = m.end
	}
	if len(ranges) == 0 {
		return text, nil
	}
	b.WriteString(text[last:])
	return b.String(), ranges
}

// decodeSegment is the value of an encoded segment of the kind
// nextEncoding found, "" when gitleaks' decoder keeps none.
func decodeSegment(kind int, seg string) string {
	switch kind {
	case encUnicode:
		return decodeUnicodeLike(seg)
	case encPercent:
		return decodePercentLike(seg)
	case encHex:
		return decodeHexLike(seg)
	case encBase64:
		return decodeBase64Like(seg)
	}
	return ""
}

// touchesAny reports whether [start, end] touches or overlaps one of the
// ranges, as gitleaks' startEnd.overlaps decides.
func touchesAny(ranges [][2]int, start, end int) bool {
	for _, r := range ranges {
		if start <= r[1] && end >= r[0] {
			return true
		}
	}
	return false
}

// nativeEncodings finds gitleaks' encoded segments (encodingsPattern)
// with byte loops instead of Go's regexp, whose captures were most of the
// decoder's time: each group is found the way the leftmost-first search
// finds it (see mayDecode for percent, hex and base64; unicodeAt for the
// unicode group). FuzzNativeEncodings and TestNativeEncodingsMatchRegexp
// compare it with the pattern.
type nativeEncodings struct{}

// FindAllStringSubmatchIndex is the pattern's, for a text without a
// possible unicode escape: each match with its group's indices set.
func (nativeEncodings) FindAllStringSubmatchIndex(text string, n int) [][]int {
	var out [][]int
	for p := 0; p < len(text) && (n < 0 || len(out) < n); {
		s, e, kind := nextEncoding(text, p)
		if s < 0 {
			break
		}
		m := make([]int, 2+2*4)
		for i := range m {
			m[i] = -1
		}
		m[0], m[1] = s, e
		m[2+2*kind], m[3+2*kind] = s, e
		out = append(out, m)
		p = e
	}
	return out
}

// nextEncoding is the leftmost match at or after p: its span and group.
func nextEncoding(text string, p int) (start, end, kind int) {
	return nextMatch(text, p, true)
}

// nextMatch is nextEncoding, looking for a unicode match when unicode is
// set: without, it is nextEncoding over a text that holds none
// (!mayHoldUnicodeEscape), with no look at each 'U' and backslash
// (mayDecode, over every file a scan reads).
func nextMatch(text string, p int, unicode bool) (start, end, kind int) {
	n := len(text)
	for i := p; i < n; i++ {
		c := text[i]
		if unicode && (c == 'U' || c == '\\') {
			if e := unicodeAt(text, i); e > i {
				return i, e, encUnicode
			}
		}
		if c == '%' && i+2 < n && isHexDigit(text[i+1]) && isHexDigit(text[i+2]) {
			e := i + 3
			for t := i + 3; t+2 < n && text[t] != '\n'; t++ {
				if text[t] == '%' && isHexDigit(text[t+1]) && isHexDigit(text[t+2]) {
					e = t + 3
				}
			}
			return i, e, encPercent
		}
		if isB64Class(c) {
			r := classRun(text, i)
			if r < 16 {
				// No hex or base64 match starts in this run; a unicode
				// one ("U+") may.
				for j := i + 1; unicode && j < i+r; j++ {
					if text[j] == 'U' {
						if e := unicodeAt(text, j); e > j {
							return j, e, encUnicode
						}
					}
				}
				i += r - 1
				continue
			}
			if h := hexRun(text, i); h >= 32 {
				return i, i + h, encHex
			}
			e := i + r
			for k := 0; k < 2 && e < n && text[e] == '='; k++ {
				e++
			}
			return i, e, encBase64
		}
	}
	return -1, -1, 0
}

// unicodeAt is the end of the pattern's unicode group matched at i, or i:
// `(?:U\+[a-fA-F0-9]{4}(?:\s|$))+` or `(?i)(?:\\{1,2}u[a-fA-F0-9]{4})+`,
// each repetition taken while it matches (greedy).
func unicodeAt(text string, i int) int {
	n := len(text)
	hex4 := func(j int) bool {
		return j+4 <= n && isHexDigit(text[j]) && isHexDigit(text[j+1]) && isHexDigit(text[j+2]) && isHexDigit(text[j+3])
	}
	e := i
	if text[i] == 'U' {
		for j := i; j+1 < n && text[j] == 'U' && text[j+1] == '+' && hex4(j+2); {
			k := j + 6
			if k == n {
				return k // $
			}
			if !isSpace(text[k]) {
				break
			}
			e, j = k+1, k+1
		}
		return e
	}
	for j := i; j < n && text[j] == '\\'; {
		// \\{1,2} prefers two backslashes; with one, 'u' must follow.
		k := j + 1
		if k < n && text[k] == '\\' {
			k++
		}
		if k < n && (text[k] == 'u' || text[k] == 'U') && hex4(k+1) {
			e, j = k+5, k+5
			continue
		}
		break
	}
	return e
}

// isSpace is Go's \s: [\t\n\f\r ].
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// decodeUnicodeLike is codec.decodeUnicode, through gitleaks' decoder on
// the segment alone: the segment is the decoder's only match there.
func decodeUnicodeLike(enc string) string {
	out, segs := codec.NewDecoder().Decode(enc, nil)
	if len(segs) == 0 {
		return ""
	}
	return out
}
