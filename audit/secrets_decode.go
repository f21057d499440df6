package audit

// nativeEncodings finds gitleaks' encoded segments (encodingsPattern)
// with byte loops instead of Go's regexp, whose captures were most of the
// decoder's time. It answers only for texts without a possible unicode
// escape (mayHoldUnicodeEscape): then the unicode group cannot match, and
// the percent, hex and base64 groups are found the way the leftmost-first
// search finds them (see mayDecode). FuzzNativeEncodings and
// TestNativeEncodingsMatchRegexp compare it with the pattern.
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
