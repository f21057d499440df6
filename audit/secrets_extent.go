package audit

import (
	"context"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zricethezav/gitleaks/v8/config"
)

// A minified file is one line: a rule's window there is the whole file,
// and Go's regexp, without a DFA, takes ~40 ns a byte to find that the
// pattern matches nowhere in it (two minified scripts were a third of
// hugo's tree scan). Whether it matches somewhere is all the window's
// first test asks; where the pattern's extent around its anchor can be
// bounded, the test runs on the spans around the anchor occurrences only.
//
// Why the spans answer as the window does: a match M of the pattern
// (anchored, its anchor a node of its top-level concatenation, see
// anchorInfo.prev) holds an anchor occurrence o that the anchor node
// matches, the nodes before it matching M's bytes before o and the nodes
// after it the bytes after. So M starts at or after o minus the most
// bytes the nodes before can match (maxLen), and ends at or before
// maxEnd(next, o+len(anchor)). A span takes utf8.UTFMax bytes more on each
// side (clipped to the window), and spans that overlap are merged: every
// match of the window lies in one merged span and sees the same runes
// around it there, so it is a match of the span's text. Conversely a match
// of a span's text has its anchor at one of the span's occurrences (by
// the same reasoning, in that text), so it starts at least utf8.UTFMax
// bytes after the span's first byte and ends as far before its last
// (unless the span reaches the window's edge there), and is a match of
// the window too. No match lies between spans: FindAll over the window is
// FindAll over its spans in turn.

// longWindow is the window length from which matches tests the spans
// around the anchors instead of the whole window (a variable: tests set
// it to 0 to run every window through the spans).
var longWindow = 4096

// ruleExtent bounds a windowed rule's matches around its anchor.
type ruleExtent struct {
	before int              // the most bytes of a match before its anchor (unbounded: not known)
	next   []*syntax.Regexp // what follows the anchor in the pattern
}

// extentOf returns the extent of pattern's matches around anchors, nil
// when the anchors are not a node of its top-level concatenation.
func extentOf(pattern string, anchors []string) *ruleExtent {
	a, ok := anchorsOf(pattern)
	if !ok || !a.inConcat || !slices.Equal(a.anchors, anchors) {
		return nil
	}
	before := 0
	for _, n := range a.prev {
		before = min(before+maxLen(n), unbounded)
	}
	return &ruleExtent{before: before, next: a.next}
}

// end is the last offset a match can end at when its anchor ends at p
// (limit when that is not bounded before it).
func (e *ruleExtent) end(text string, p, limit int) int {
	for _, n := range e.next {
		if p >= limit {
			return limit
		}
		p = maxEnd(n, text, p, limit)
	}
	return min(p, limit)
}

// maxLen is the most bytes a match of re can hold (unbounded when a
// repetition has no upper bound).
func maxLen(re *syntax.Regexp) int {
	return most(re, func(re *syntax.Regexp) int {
		switch re.Op {
		case syntax.OpLiteral:
			n := 0
			for _, r := range re.Rune {
				n += runeBytes(r, re.Flags&syntax.FoldCase != 0)
			}
			return n
		case syntax.OpCharClass:
			if len(re.Rune) > 0 {
				return runeBytes(re.Rune[len(re.Rune)-1], false)
			}
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			return utf8.UTFMax
		}
		return 0 // empty-width assertions, empty match, no match
	})
}

// runeBytes is the most bytes of input a rune up to r (a class's last) or,
// with fold, one of r's case variants takes; an invalid byte, which
// matches as U+FFFD, takes one.
func runeBytes(r rune, fold bool) int {
	n := utf8.RuneLen(r)
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			n = max(n, utf8.RuneLen(f))
		}
	}
	if n < 0 {
		return utf8.UTFMax
	}
	return n
}

// maxEnd is the last offset a match of re starting at p can end at, at
// most limit: p plus maxLen where that is bounded, and for a repetition
// without a bound of a node matching one rune, the end of the run of
// such runes at p. It never decreases as p grows, so a concatenation's is
// its nodes' applied in turn.
func maxEnd(re *syntax.Regexp, text string, p, limit int) int {
	if n := maxLen(re); n < unbounded {
		return min(p+n, limit)
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpQuest:
		return maxEnd(re.Sub[0], text, p, limit)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if p >= limit {
				return limit
			}
			p = maxEnd(s, text, p, limit)
		}
		return p
	case syntax.OpAlternate:
		e := p
		for _, s := range re.Sub {
			e = max(e, maxEnd(s, text, p, limit))
		}
		return e
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		sub := re.Sub[0]
		if re.Op == syntax.OpRepeat && re.Max >= 0 {
			for i := 0; i < re.Max && p < limit; i++ {
				q := maxEnd(sub, text, p, limit)
				if q == p {
					break // the same start gives the same end
				}
				p = q
			}
			return p
		}
		if in, ok := runeTest(sub); ok {
			for p < limit {
				r, w := utf8.DecodeRuneInString(text[p:])
				if !in(r) {
					break
				}
				p += w
			}
			return min(p, limit)
		}
	}
	return limit
}

// runeTest returns the test a node matching exactly one rune applies (Go's
// regexp reads an invalid byte as U+FFFD, as utf8.DecodeRuneInString does).
func runeTest(re *syntax.Regexp) (func(rune) bool, bool) {
	switch re.Op {
	case syntax.OpCharClass:
		ranges := re.Rune
		return func(r rune) bool {
			for i := 0; i+1 < len(ranges); i += 2 {
				if r < ranges[i] {
					return false
				}
				if r <= ranges[i+1] {
					return true
				}
			}
			return false
		}, true
	case syntax.OpLiteral:
		if len(re.Rune) != 1 {
			return nil, false
		}
		want, fold := re.Rune[0], re.Flags&syntax.FoldCase != 0
		return func(r rune) bool {
			if r == want {
				return true
			}
			if fold {
				for f := unicode.SimpleFold(want); f != want; f = unicode.SimpleFold(f) {
					if f == r {
						return true
					}
				}
			}
			return false
		}, true
	case syntax.OpAnyCharNotNL:
		return func(r rune) bool { return r != '\n' }, true
	case syntax.OpAnyChar:
		return func(rune) bool { return true }, true
	}
	return nil, false
}

// spans are the spans of win around the rule's anchor occurrences (see
// above), merged where they overlap, in order.
func (r *windowedRule) spans(text string, win window, lits textLiterals, ext *ruleExtent) [][2]int {
	var spans [][2]int
	for i, id := range r.anchorID {
		n := len(r.anchor.anchors[i])
		occ := lits.at[id] // ascending
		j, _ := slices.BinarySearch(occ, win.start)
		for ; j < len(occ) && occ[j] < win.end; j++ {
			o := occ[j]
			s := win.start
			if ext.before < unbounded {
				s = max(s, o-ext.before-utf8.UTFMax)
			}
			e := min(ext.end(text, min(o+n, win.end), win.end)+utf8.UTFMax, win.end)
			spans = append(spans, [2]int{s, e})
		}
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	out := spans[:0]
	for _, sp := range spans {
		if k := len(out) - 1; k >= 0 && sp[0] <= out[k][1] {
			out[k][1] = max(out[k][1], sp[1])
			continue
		}
		out = append(out, sp)
	}
	return out
}

// matchesNear is whether re matches in one of the spans of win around the
// rule's anchor occurrences: whether it matches in win (see above).
func (r *windowedRule) matchesNear(text string, win window, lits textLiterals, ext *ruleExtent) bool {
	re := r.gate()
	for _, sp := range r.spans(text, win, lits, ext) {
		if re.MatchString(text[sp[0]:sp[1]]) {
			return true
		}
	}
	return false
}

// touchesNear is matchTouches(re, win's text, win.start, ranges), found
// on the spans of win that touch a range: FindAll over the window is
// FindAll over the spans in turn (see above), and a match in a span that
// touches no range touches none.
func (r *windowedRule) touchesNear(text string, win window, lits textLiterals, ext *ruleExtent, ranges [][2]int) bool {
	re := r.re()
	for _, sp := range r.spans(text, win, lits, ext) {
		if touchesAny(ranges, sp[0], sp[1]) && matchTouches(re, text[sp[0]:sp[1]], sp[0], ranges) {
			return true
		}
	}
	return false
}

// quietNear reports that gitleaks' detector of the rule finds nothing in
// the long window win of frag's text, found by running it on the window's
// spans instead: false when it cannot tell (the caller then runs it on
// the window). A finding of the window comes from one of FindAll's
// matches, which are the spans' (see touchesNear), with the same match,
// secret and entropy, so the same checks of those; only the finding's
// line differs: a span's detector reads it from the span's text. The
// line decides two things, gitleaks' allow comment and the allowlists
// whose target is the line; when the span's text holds neither the
// comment nor a match of one of those allowlists' regexes, nothing the
// span's detector dropped was dropped for its line, and the window's
// detector drops it too. Those regexes must have no empty-width assertion,
// which could match a part of the text where they match nothing in it.
func (r *windowedRule) quietNear(ctx context.Context, frag fragment, text string, win window, lits textLiterals) bool {
	if win.end-win.start < longWindow || r.extent == nil || lits.foldIn(win) {
		return false
	}
	ext := r.extent()
	lines, ok := r.lineRegexes()
	if ext == nil || !ok {
		return false
	}
	for _, sp := range r.spans(text, win, lits, ext) {
		sub := text[sp[0]:sp[1]]
		if strings.Contains(sub, "gitleaks:allow") {
			return false
		}
		for _, re := range lines {
			if re.MatchString(sub) {
				return false
			}
		}
		sf := frag
		sf.Raw = sub
		if len(r.det().DetectContext(ctx, sf)) > 0 {
			return false
		}
	}
	return true
}

// lineRegexes are the regexes of the allowlists in lists that test a
// finding's line; ok is false when one holds an empty-width assertion (^,
// $, \A, \z, \b, \B).
func lineRegexes(lists ...[]*config.Allowlist) (out []*regexp.Regexp, ok bool) {
	for _, list := range lists {
		for _, a := range list {
			if a == nil || a.RegexTarget != "line" {
				continue
			}
			for _, re := range a.Regexes {
				tree, err := syntax.Parse(re.String(), syntax.Perl)
				if err != nil || hasEmptyWidth(tree) {
					return nil, false
				}
				out = append(out, re)
			}
		}
	}
	return out, true
}

func hasEmptyWidth(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, s := range re.Sub {
		if hasEmptyWidth(s) {
			return true
		}
	}
	return false
}
