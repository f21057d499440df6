package audit

import "github.com/zricethezav/gitleaks/v8/detect/codec"

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
	n := len(text)
	for i := p; i < n; i++ {
		c := text[i]
		if c == 'U' || c == '\\' {
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
				for j := i + 1; j < i+r; j++ {
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

// MatchString and FindAllStringIndex complete ruleMatcher; the decoder
// uses only FindAllStringSubmatchIndex.
func (e nativeEncodings) MatchString(text string) bool {
	s, _, _ := nextEncoding(text, 0)
	return s >= 0
}

func (e nativeEncodings) FindAllStringIndex(text string, n int) [][]int {
	var out [][]int
	for _, m := range e.FindAllStringSubmatchIndex(text, n) {
		out = append(out, m[:2])
	}
	return out
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
