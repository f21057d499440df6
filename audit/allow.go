package audit

import "strings"

// AllowSignature is gitleaks' inline allow comment: a finding on a line
// carrying it is dropped.
const AllowSignature = "gitleaks:allow"

// maskedAllow stands in for AllowSignature on a line that may not switch
// its own finding off: the same length (offsets are unchanged), not the
// signature.
const maskedAllow = "GITLEAKS:ALLOW"

// AllowLine is line as InlineAllow compares it: without a diff's leading
// +, - or space, the indentation and the line end, so that a line reads
// the same in a file, a diff and a commit's added lines.
func AllowLine(line string) string {
	line = strings.TrimRight(line, "\r\n")
	line = strings.TrimLeft(line, " \t")
	if line != "" && (line[0] == '+' || line[0] == '-') {
		line = line[1:]
	}
	return strings.TrimSpace(line)
}

// maskAllow keeps AllowSignature only on the lines the scanner's
// InlineAllow trusts (all of them when it has none): a change may not
// switch off the check of a secret it adds by commenting the line, any
// more than by editing .gitleaksignore. masked reports whether a line was
// changed (the text is then another, with a digest of its own).
func (s *Scanner) maskAllow(path, text string) (out string, masked bool) {
	if s.inlineAllow == nil || !strings.Contains(text, AllowSignature) {
		return text, false
	}
	var b strings.Builder
	b.Grow(len(text))
	for line := range strings.SplitAfterSeq(text, "\n") {
		if strings.Contains(line, AllowSignature) && !s.inlineAllow(path, AllowLine(line)) {
			line, masked = strings.ReplaceAll(line, AllowSignature, maskedAllow), true
		}
		b.WriteString(line)
	}
	return b.String(), masked
}
