package audit

import (
	"sort"
	"strings"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/report"
)

// lineIndex gives byte offsets of lines in a text.
type lineIndex struct {
	text string
	nl   []int // byte offsets of every '\n'
	// alower is text ASCII-lowercased (asciiLower), made on first use by
	// lower: the rules' literals and the assignment lines both scan it.
	alower  string
	lowered bool
}

// lower is the text ASCII-lowercased, made once per text.
func (li *lineIndex) lower() string {
	if !li.lowered {
		li.alower, li.lowered = asciiLower(li.text), true
	}
	return li.alower
}

func newLineIndex(text string) *lineIndex {
	li := &lineIndex{text: text}
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			break
		}
		li.nl = append(li.nl, i+j)
		i += j + 1
	}
	return li
}

// lines is the number of lines (a final line without '\n' counts).
func (li *lineIndex) lines() int {
	n := len(li.nl)
	if len(li.text) == 0 || li.text[len(li.text)-1] != '\n' {
		n++
	}
	return n
}

// start is the offset of the first byte of 1-based line l.
func (li *lineIndex) start(l int) int {
	if l <= 1 {
		return 0
	}
	if l-2 < len(li.nl) {
		return li.nl[l-2] + 1
	}
	return len(li.text)
}

// end is the offset just past the last byte of 1-based line l, without its
// '\n'.
func (li *lineIndex) end(l int) int {
	if l >= 1 && l-1 < len(li.nl) {
		return li.nl[l-1]
	}
	return len(li.text)
}

// lineOf is the 1-based line of offset off.
func (li *lineIndex) lineOf(off int) int {
	return sort.SearchInts(li.nl, off) + 1
}

// columnBase inverts gitleaks' location(): for the first line a column c is
// the offset c-1; for later lines gitleaks counts from the preceding '\n'
// itself, so a column c on line l is the offset nl[l-2]+c-1 (one more than a
// conventional 1-based column). End columns are exclusive offsets from the
// same base.
func (li *lineIndex) columnBase(l int) (int, bool) {
	if l == 1 {
		return 0, true
	}
	if l >= 2 && l-2 < len(li.nl) {
		return li.nl[l-2], true
	}
	return 0, false
}

// gitleaksSpan finds the byte span [start,end) of f's secret in li.text.
// It inverts gitleaks' line/column arithmetic to find the match, checks the
// bytes equal f.Match, then re-runs the rule's regex on the match (as gitleaks
// does to pick the secret group) to find the secret inside it. When the match
// cannot be found verbatim (a secret found after base64/hex/percent decoding)
// the span is the encoded text gitleaks located. When nothing can be
// verified the span falls back to the whole lines of the finding, so the
// caller still redacts too much rather than too little.
func gitleaksSpan(li *lineIndex, f report.Finding, rule config.Rule) (int, int) {
	text := li.text
	if f.StartLine <= 0 {
		// Path-only rule ("file detected"): the file itself is the secret.
		return 0, len(text)
	}
	ms, me, ok := -1, -1, false
	if sb, ok1 := li.columnBase(f.StartLine); ok1 {
		if eb, ok2 := li.columnBase(f.EndLine); ok2 {
			ms, me = sb+f.StartColumn-1, eb+f.EndColumn
			ok = ms >= 0 && ms <= me && me <= len(text) && text[ms:me] == f.Match
		}
	}
	if !ok && f.Match != "" {
		// gitleaks trims '\n' from both ends of a match but only moves the
		// end, so a match that began with '\n' is off by the trimmed bytes;
		// look for it from the start of its line.
		from := li.start(f.StartLine) - 1
		if from < 0 {
			from = 0
		}
		if from < len(text) {
			if i := strings.Index(text[from:], f.Match); i >= 0 {
				ms, me, ok = from+i, from+i+len(f.Match), true
			}
		}
	}
	if !ok {
		if ms >= 0 && ms < me && me <= len(text) && isDecoded(f) {
			return ms, me
		}
		return li.start(f.StartLine), li.end(max(f.EndLine, f.StartLine))
	}
	if f.Secret == f.Match || f.Secret == "" {
		return ms, me
	}
	match := text[ms:me]
	if rule.Regex != nil {
		if idx := rule.Regex.FindStringSubmatchIndex(match); len(idx) >= 4 {
			gs, ge := -1, -1
			if rule.SecretGroup > 0 {
				if 2*rule.SecretGroup+1 < len(idx) {
					gs, ge = idx[2*rule.SecretGroup], idx[2*rule.SecretGroup+1]
				}
			} else {
				for g := 1; 2*g+1 < len(idx); g++ {
					if idx[2*g] >= 0 && idx[2*g+1] > idx[2*g] {
						gs, ge = idx[2*g], idx[2*g+1]
						break
					}
				}
			}
			if gs >= 0 && match[gs:ge] == f.Secret {
				return ms + gs, ms + ge
			}
		}
	}
	if i := strings.Index(match, f.Secret); i >= 0 {
		return ms + i, ms + i + len(f.Secret)
	}
	return ms, me
}

func isDecoded(f report.Finding) bool {
	for _, t := range f.Tags {
		if strings.HasPrefix(t, "decoded:") {
			return true
		}
	}
	return false
}
