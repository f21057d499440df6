package audit

import "strings"

// AllowSignature is gitleaks' inline allow comment: gitleaks drops a
// finding when any line of its match carries it.
const AllowSignature = "gitleaks:allow"

// maskedAllow stands in for AllowSignature where gitleaks may not honour
// it: the same length (offsets are unchanged), not the signature.
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

// lineTrust says whether a line of path (as AllowLine spells it) is one an
// allow comment may speak for. nil is gitleaks' own rule: every line.
type lineTrust func(path, line string) bool

// noLine trusts no line: no allow comment is honoured.
func noLine(string, string) bool { return false }

// maskAllow replaces every AllowSignature in text, so that gitleaks (and
// the scanner's own rules) honour none and report every finding; the
// scanner then drops those a trusted comment allows (allowedFindings).
// masked reports whether text held one (the text is then another, with a
// digest of its own: one that does not depend on what is trusted, so the
// scan cache holds the same findings whoever reads them).
func maskAllow(text string) (out string, masked bool) {
	if !strings.Contains(text, AllowSignature) {
		return text, false
	}
	return strings.ReplaceAll(text, AllowSignature, maskedAllow), true
}

// allowedFindings drops the findings of text an allow comment switches
// off under trust: a comment on a line of the finding's match (where
// gitleaks looks), every line of the match and of the secret being one
// trust knows. So a change may not switch off the check of a secret it
// adds by commenting the line, nor by carrying a line of the base that
// has the comment into the middle of its own secret (a private key's
// match spans every line of the key). raw is not changed.
func allowedFindings(path, text string, raw []rawFinding, trust lineTrust) []rawFinding {
	li := newLineIndex(text)
	out := make([]rawFinding, 0, len(raw))
	for _, f := range raw {
		if f.Line > 0 && allowedFinding(path, text, li, f, trust) {
			continue
		}
		out = append(out, f)
	}
	return out
}

func allowedFinding(path, text string, li *lineIndex, f rawFinding, trust lineTrust) bool {
	from, to := f.Line, f.EndLine
	if f.MatchLine > 0 {
		from, to = min(from, f.MatchLine), max(to, f.MatchEnd)
	}
	line := func(l int) string { return text[li.start(l):li.end(l)] }
	commented := false
	for l := from; l <= to && !commented; l++ {
		commented = strings.Contains(line(l), AllowSignature)
	}
	if !commented {
		return false
	}
	for l := from; l <= to; l++ {
		if !trust(path, AllowLine(line(l))) {
			return false
		}
	}
	return true
}
