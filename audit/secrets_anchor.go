package audit

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// A rule whose every match contains one of a few literal strings (its
// anchors), and holds a bounded number of newlines before and after that
// literal, can only match on the lines around an anchor. anchorsOf finds
// such a set from the pattern's syntax tree; ruleWindows then runs the
// rule on those lines only (see secrets_window.go for why that gives the
// same matches as the whole text).

// anchorInfo describes a rule's anchors: every match of the pattern
// contains one of anchors (compared after asciiLower on both sides),
// with at most before newlines in the match ahead of that occurrence's
// first byte and at most after newlines from it to the match's end.
type anchorInfo struct {
	anchors       []string
	before, after int
	// next is the pattern that must follow the anchor in a match (the
	// concatenation's remaining nodes), for a cheaper check of candidate
	// occurrences; "" when the anchor is not a direct part of the
	// pattern's top-level concatenation or the anchors are not all of
	// what the node before it matches.
	next []*syntax.Regexp
	// prev is the concatenation's nodes before the anchor, and inConcat
	// whether prev and next are known (the same cases as next).
	prev     []*syntax.Regexp
	inConcat bool
	// whole: the anchors are every string the node they come from can
	// match, so what follows that node follows the anchor.
	whole bool
}

const (
	maxAnchorSet    = 64 // anchors per rule
	minAnchorLength = 2  // a single byte is no anchor
	unbounded       = 1 << 30
)

// anchorsOf returns pattern's anchors; ok is false when there is no usable
// set (an alternative without a literal, an unbounded number of newlines
// around it, or a literal that needs Unicode case folding).
func anchorsOf(pattern string) (anchorInfo, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return anchorInfo{}, false
	}
	best, ok := bestCandidate(candidates(re, true))
	if !ok {
		return anchorInfo{}, false
	}
	return best, true
}

// bestCandidate picks the most selective usable candidate: the longest
// shortest anchor, then the fewest anchors.
func bestCandidate(cs []anchorInfo) (anchorInfo, bool) {
	var best anchorInfo
	found := false
	for _, c := range cs {
		if len(c.anchors) == 0 || len(c.anchors) > maxAnchorSet || c.before >= unbounded || c.after >= unbounded {
			continue
		}
		if shortest(c.anchors) < minAnchorLength {
			continue
		}
		if !found || better(c, best) {
			best, found = c, true
		}
	}
	return best, found
}

func better(a, b anchorInfo) bool {
	sa, sb := shortest(a.anchors), shortest(b.anchors)
	if sa != sb {
		return sa > sb
	}
	if len(a.anchors) != len(b.anchors) {
		return len(a.anchors) < len(b.anchors)
	}
	return a.before+a.after < b.before+b.after
}

func shortest(ss []string) int {
	n := unbounded
	for _, s := range ss {
		n = min(n, len(s))
	}
	return n
}

// newlines is the most '\n' a match of re can hold (unbounded when a
// repetition without an upper bound can hold one).
func newlines(re *syntax.Regexp) int {
	return most(re, func(re *syntax.Regexp) int {
		switch re.Op {
		case syntax.OpLiteral:
			return strings.Count(string(re.Rune), "\n")
		case syntax.OpCharClass:
			for i := 0; i+1 < len(re.Rune); i += 2 {
				if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
					return 1
				}
			}
		case syntax.OpAnyChar:
			return 1
		}
		return 0 // empty-width assertions, empty match, no match, any char but '\n'
	})
}

// most is the most a match of re can hold of what leaf counts in each of
// its nodes that match text themselves (literals, classes, any character;
// the others count nothing): a sum along a concatenation, the largest of
// alternatives, unbounded for a repetition without an upper bound of
// something that counts.
func most(re *syntax.Regexp, leaf func(*syntax.Regexp) int) int {
	switch re.Op {
	case syntax.OpCapture, syntax.OpQuest:
		return most(re.Sub[0], leaf)
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n = min(n+most(s, leaf), unbounded)
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			n = max(n, most(s, leaf))
		}
		return n
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		n := most(re.Sub[0], leaf)
		if n == 0 {
			return 0
		}
		if re.Op != syntax.OpRepeat || re.Max < 0 || n >= unbounded {
			return unbounded
		}
		return min(n*re.Max, unbounded)
	}
	return leaf(re)
}

// exact returns the strings re can match, asciiLower'ed, when they are few
// and each is ASCII; ok=false otherwise. Under case folding ASCII letters
// also fold to 'ſ' and the Kelvin sign: a text holding either is never
// windowed (foldRunes), so they are left out here.
func exact(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		var b strings.Builder
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return nil, false
			}
			b.WriteByte(lowerByte(byte(r)))
		}
		return []string{b.String()}, true
	case syntax.OpCharClass:
		var set []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			for c := lo; c <= hi; c++ {
				if c == 0x17F || c == 0x212A {
					continue
				}
				if c >= utf8.RuneSelf || len(set) > 4 {
					return nil, false
				}
				s := string(lowerByte(byte(c)))
				if !slices.Contains(set, s) {
					set = append(set, s)
				}
			}
		}
		if len(set) == 0 || len(set) > 4 {
			return nil, false
		}
		slices.Sort(set)
		return set, true
	case syntax.OpCapture:
		return exact(re.Sub[0])
	case syntax.OpQuest:
		e, ok := exact(re.Sub[0])
		if !ok {
			return nil, false
		}
		out := append([]string{""}, e...)
		slices.Sort(out)
		return slices.Compact(out), true
	case syntax.OpConcat:
		out := []string{""}
		for _, s := range re.Sub {
			e, ok := exact(s)
			if !ok {
				return nil, false
			}
			out = cross(out, e)
			if len(out) > maxAnchorSet {
				return nil, false
			}
		}
		return out, true
	case syntax.OpAlternate:
		return union(re.Sub, exact)
	case syntax.OpRepeat:
		if re.Min != re.Max || re.Min > 4 {
			return nil, false
		}
		e, ok := exact(re.Sub[0])
		if !ok {
			return nil, false
		}
		out := []string{""}
		for i := 0; i < re.Min; i++ {
			out = cross(out, e)
			if len(out) > maxAnchorSet {
				return nil, false
			}
		}
		return out, true
	}
	return nil, false
}

// union is the sorted union of f over the alternatives subs, ok=false when
// f fails on one or the union is over maxAnchorSet.
func union(subs []*syntax.Regexp, f func(*syntax.Regexp) ([]string, bool)) ([]string, bool) {
	var out []string
	for _, s := range subs {
		e, ok := f(s)
		if !ok {
			return nil, false
		}
		out = append(out, e...)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out, len(out) <= maxAnchorSet
}

// starts returns non-empty strings, asciiLower'ed as exact gives them, one
// of which begins every match of re; ok=false when there is no such set (a
// leading class, repetition or assertion, a match that may begin with
// none, or too many).
func starts(re *syntax.Regexp) ([]string, bool) {
	if e, ok := exact(re); ok {
		return e, !slices.Contains(e, "")
	}
	switch re.Op {
	case syntax.OpCapture:
		return starts(re.Sub[0])
	case syntax.OpAlternate:
		return union(re.Sub, starts)
	case syntax.OpConcat:
		out := []string{""}
		for _, s := range re.Sub {
			if e, ok := exact(s); ok {
				out = cross(out, e)
			} else if e, ok := starts(s); ok {
				out = cross(out, e)
				break
			} else {
				break
			}
			if len(out) > maxAnchorSet {
				return nil, false
			}
		}
		return out, len(out) <= maxAnchorSet && !slices.Contains(out, "")
	}
	return nil, false
}

// matchStarts is starts letting a match open with assertions: every
// match of re begins with one of the strings, and where an occurrence of
// one begins a match in a text, the pattern anchored at the start of the
// text (\A) matches the text from that occurrence on. An assertion that
// holds at the start of any text may come first (^, \A, (?m)^), and \b
// when every string begins with a word byte: there \b holds exactly when
// the byte before is none, or not a word byte. (\B may fail at a text's
// start where it held in the middle: not let through.)
func matchStarts(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpCapture:
		return matchStarts(re.Sub[0])
	case syntax.OpAlternate:
		return union(re.Sub, matchStarts)
	case syntax.OpConcat:
		subs, boundary := leadingAssertions(re.Sub)
		if len(subs) == len(re.Sub) {
			return starts(re)
		}
		if len(subs) == 0 {
			return nil, false
		}
		out, ok := starts(&syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: subs})
		if !ok || boundary && slices.ContainsFunc(out, func(s string) bool { return !isWordByte(s[0]) }) {
			return nil, false
		}
		return out, true
	}
	return starts(re)
}

// leadingAssertions returns subs without the assertions matchStarts lets
// a match open with, and whether \b was one of them.
func leadingAssertions(subs []*syntax.Regexp) (rest []*syntax.Regexp, boundary bool) {
	for i, s := range subs {
		switch s.Op {
		case syntax.OpBeginLine, syntax.OpBeginText:
		case syntax.OpWordBoundary:
			boundary = true
		default:
			return subs[i:], boundary
		}
	}
	return nil, boundary
}

// requiredLiterals returns literals, asciiLower'ed as exact gives them and of at
// least minAnchorLength bytes, that every match of re contains.
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if e, ok := exact(re); ok && len(e) == 1 && len(e[0]) >= minAnchorLength {
			return e
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var out []string
		for _, s := range re.Sub {
			out = append(out, requiredLiterals(s)...)
		}
		slices.Sort(out)
		return slices.Compact(out)
	case syntax.OpAlternate:
		out := requiredLiterals(re.Sub[0])
		for _, s := range re.Sub[1:] {
			in := requiredLiterals(s)
			out = slices.DeleteFunc(out, func(x string) bool { return !slices.Contains(in, x) })
		}
		return out
	}
	return nil
}

// byteRun is what every match of a pattern holds: at least n consecutive
// bytes of class. A class with a rune outside ASCII counts every byte from
// 0x80 up as in it, so that a run of n runes is a run of at least n bytes
// whichever runes they are.
type byteRun struct {
	class [256]bool
	n     int
}

// minByteRun is the shortest run requiredRuns reports: shorter ones are
// in most texts and would spare nothing.
const minByteRun = 8

// requiredRuns returns runs of bytes every match of re holds, each of
// minByteRun bytes or more (nil: none). A text lacking one of them is
// ruled out by a pass over its bytes where Go's NFA would run the rule's
// whole pattern over it: sourcegraph-access-token (40 hex digits,
// whichever of its alternatives) and facebook-access-token (15 digits,
// then 27 of [0-9a-z_-]), which this repository's and gin's READMEs name,
// ~1.2 ms of a 24 KB README's 3.3 ms scan. Every run is looked for, not
// the longest alone: this README holds words of 27 such bytes but no 15
// digits in a row, and facebook-access-token's NFA was 3.7 ms of its scan.
func requiredRuns(re *syntax.Regexp) []*byteRun {
	var out []*byteRun
	for _, r := range runsOf(re) {
		if r.n >= minByteRun {
			out = append(out, r)
		}
	}
	return out
}

// runsOf returns runs every match of re holds.
func runsOf(re *syntax.Regexp) []*byteRun {
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return runsOf(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil
		}
		if re.Sub[0].Op == syntax.OpCharClass {
			r := &byteRun{n: re.Min}
			rs := re.Sub[0].Rune
			for i := 0; i+1 < len(rs); i += 2 {
				for c := rs[i]; c <= rs[i+1] && c < utf8.RuneSelf; c++ {
					r.class[c] = true
				}
				if rs[i+1] >= utf8.RuneSelf {
					for b := utf8.RuneSelf; b < 256; b++ {
						r.class[b] = true
					}
				}
			}
			return []*byteRun{r}
		}
		return runsOf(re.Sub[0])
	case syntax.OpConcat:
		var out []*byteRun
		for _, sub := range re.Sub {
			out = append(out, runsOf(sub)...)
		}
		return out
	case syntax.OpAlternate:
		// Every alternative holds one: a run of the union of their
		// classes (each alternative's longest), as long as the shortest.
		var out *byteRun
		for _, sub := range re.Sub {
			var r *byteRun
			for _, c := range runsOf(sub) {
				if r == nil || c.n > r.n {
					r = c
				}
			}
			if r == nil {
				return nil
			}
			if out == nil {
				c := *r
				out = &c
				continue
			}
			out.n = min(out.n, r.n)
			for b := range out.class {
				out.class[b] = out.class[b] || r.class[b]
			}
		}
		return []*byteRun{out}
	}
	return nil
}

// allIn reports whether s holds every one of runs.
func allIn(runs []*byteRun, s string) bool {
	for _, r := range runs {
		if !r.in(s) {
			return false
		}
	}
	return true
}

// in reports whether s holds the run.
func (r *byteRun) in(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		if !r.class[s[i]] {
			n = 0
		} else if n++; n >= r.n {
			return true
		}
	}
	return false
}

func cross(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// candidates lists anchor sets of re: each with the newlines a match of re
// can hold before and after the anchor occurrence. top is whether re is
// the pattern itself (only then is next recorded).
func candidates(re *syntax.Regexp, top bool) []anchorInfo {
	var out []anchorInfo
	if e, ok := exact(re); ok && !slices.Contains(e, "") {
		out = append(out, anchorInfo{anchors: e, before: 0, after: newlines(re), whole: true})
	}
	switch re.Op {
	case syntax.OpCapture:
		out = append(out, candidates(re.Sub[0], top)...)
	case syntax.OpConcat:
		nl := make([]int, len(re.Sub))
		for i, s := range re.Sub {
			nl[i] = newlines(s)
		}
		sum := func(from, to int) int {
			n := 0
			for _, v := range nl[from:to] {
				n = min(n+v, unbounded)
			}
			return n
		}
		for i, s := range re.Sub {
			for _, c := range candidates(s, false) {
				c.before = min(c.before+sum(0, i), unbounded)
				c.after = min(c.after+sum(i+1, len(re.Sub)), unbounded)
				c.next, c.prev, c.inConcat = nil, nil, false
				w := c.whole
				c.whole = false // of the child, not of re
				if top && w {
					c.next, c.prev, c.inConcat = re.Sub[i+1:], re.Sub[:i], true
				}
				out = append(out, c)
			}
			// Runs of consecutive exact nodes make longer anchors.
			for j := i + 2; j <= len(re.Sub); j++ {
				run := &syntax.Regexp{Op: syntax.OpConcat, Sub: re.Sub[i:j]}
				e, ok := exact(run)
				if !ok {
					break
				}
				if slices.Contains(e, "") {
					continue
				}
				c := anchorInfo{
					anchors: e,
					before:  sum(0, i),
					after:   sum(i, len(re.Sub)),
				}
				if top {
					c.next, c.prev, c.inConcat = re.Sub[j:], re.Sub[:i], true
				}
				out = append(out, c)
			}
		}
	case syntax.OpAlternate:
		union := anchorInfo{whole: true}
		for _, s := range re.Sub {
			best, ok := bestCandidate(candidates(s, false))
			if !ok {
				return out
			}
			union.anchors = append(union.anchors, best.anchors...)
			union.before = max(union.before, best.before)
			union.after = max(union.after, best.after)
			union.whole = union.whole && best.whole && best.before == 0
		}
		slices.Sort(union.anchors)
		union.anchors = slices.Compact(union.anchors)
		out = append(out, union)
	case syntax.OpPlus, syntax.OpRepeat:
		if re.Op == syntax.OpRepeat && re.Min < 1 {
			break
		}
		// The anchor is in one of the repetitions: any newline of the
		// whole repetition may be on either side of it.
		n := newlines(re)
		for _, c := range candidates(re.Sub[0], false) {
			out = append(out, anchorInfo{anchors: c.anchors, before: n, after: n})
		}
	}
	return out
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// precheckOf returns a pattern that matches somewhere in every text the
// pattern matches, cheaper for Go's regexp: a match's leading nodes that
// may match nothing are left out (what is left matches a suffix of the
// match), and so are its trailing ones, the last node kept matching only
// its shortest repetitions (what is left matches a prefix). "" when that
// leaves the pattern as it is.
func precheckOf(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return ""
	}
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat {
		return ""
	}
	subs := re.Sub
	for len(subs) > 0 && nullable(subs[0]) {
		subs = subs[1:]
	}
	for len(subs) > 0 && nullable(subs[len(subs)-1]) {
		subs = subs[:len(subs)-1]
	}
	if len(subs) == 0 {
		return ""
	}
	out := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags}
	out.Sub = append(slices.Clone(subs[:len(subs)-1]), truncEnd(subs[len(subs)-1]))
	s := out.String()
	if s == re.String() {
		return ""
	}
	return s
}

// truncEnd returns a pattern matching a prefix of every match of re.
func truncEnd(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return truncEnd(re.Sub[0])
	case syntax.OpAlternate:
		c := *re
		c.Sub = make([]*syntax.Regexp, len(re.Sub))
		for i, s := range re.Sub {
			c.Sub[i] = truncEnd(s)
		}
		return &c
	case syntax.OpConcat:
		subs := re.Sub
		for len(subs) > 1 && nullable(subs[len(subs)-1]) {
			subs = subs[:len(subs)-1]
		}
		c := *re
		c.Sub = append(slices.Clone(subs[:len(subs)-1]), truncEnd(subs[len(subs)-1]))
		return &c
	case syntax.OpPlus:
		return re.Sub[0]
	case syntax.OpRepeat:
		if re.Min >= 1 {
			c := *re
			c.Max = re.Min
			return &c
		}
	}
	return re
}

// nullable reports whether re can match the empty string.
func nullable(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpNoMatch:
		return false
	case syntax.OpCapture, syntax.OpPlus:
		return nullable(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min == 0 || nullable(re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !nullable(s) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if nullable(s) {
				return true
			}
		}
		return false
	}
	return true // star, quest, empty match, empty-width assertions
}
