package audit

import (
	"context"
	"maps"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/ctxpack/ctxpack/internal/workers"
)

// ruleWindows gives gitleaks' findings of one pass over a text (no
// decoding) running each anchored rule (anchorsOf) only on the lines
// around its anchors, and the other rules on the whole text. A rule runs
// gitleaks' detectRule (through a detector of its own) only on a window
// where its pattern matches.
//
// Why a window gives the same matches as the whole text T: let a rule's
// matches hold at most b newlines before an anchor occurrence and a from
// it to their end. Every possible match (any substring the pattern
// matches, not only the ones FindAll picks) contains an anchor, on some
// line k, so it lies within lines k-b..k+a and cannot end on or past the
// '\n' that ends line k+a. A window is a union of such line ranges,
// merged when they touch, from the '\n' before its first line (or the
// text's start) through the '\n' that ends its last line. So no possible
// match starts at a window's first byte (it would hold b+1 newlines
// before its anchor) or reaches its last byte, every empty-width
// assertion inside a match sees the same neighbours in the window as in
// T, and the possible matches starting at any position of the window are
// those of T. Go's FindAll picks, left to right, the leftmost possible
// match and its preferred extent, which then depend only on the window;
// no possible match lies between windows, so FindAll over T is FindAll
// over each window in turn. A window starts at a '\n', so gitleaks'
// line and column arithmetic (location) is unchanged once the fragment's
// StartLine is moved by the lines before it; a window that reaches a
// last line without '\n' starts at the text's start instead, because
// gitleaks then gives a match's Line from the fragment's first byte.
//
// Anchors are compared ASCII-lowercased. Under case folding Go also folds
// 's' to 'ſ' and 'k' to the Kelvin sign: in a text holding either, each
// such rune counts as an occurrence of every anchor (an anchor spelled
// with it starts at most utf8.UTFMax bytes a character before it), and a
// window is tested with the rule's own pattern. A rule runs on a text only when gitleaks' keyword prefilter
// (over the whole text) selects it; a rule's own detector has no keywords,
// so a window does not need to hold one. Rules that other rules require
// (or that require others) run in one detector on the whole text: their
// findings are paired across the fragment; so do rules without a pattern,
// when one's path matches. gitleaks' filter (a generic finding yields
// to a specific one on its line) is applied across all rules.
type ruleWindows struct {
	src      *ruleSource
	windowed []windowedRule // sorted by id
	// whole runs the rules that run together (built on first use: most
	// texts need it for no path, and its keyword trie is ~2.5 MB).
	whole func() *detect.Detector
	// wholeAlways: whole has a rule that may report on any path;
	// else it runs only when one of paths matches.
	wholeAlways bool
	paths       []*regexp.Regexp
	// lits holds cfg.Keywords (gitleaks' prefilter) and every anchor;
	// isKeyword and isAnchor tell them apart by id.
	lits                *literals
	isKeyword, isAnchor []bool
	keywords            map[string][]int // by rule id: its keywords' ids in lits
	// found holds the textLiterals of scanned texts for reuse (see
	// scanLiterals).
	found sync.Pool
}

type windowedRule struct {
	id string
	re func() *regexp.Regexp // the rule's, translated on first use
	// gate matches somewhere in a text exactly when re does, and is
	// cheaper: re without its leading nodes that match nothing anywhere
	// (gateOf), or re itself.
	gate func() *regexp.Regexp
	// prechecks are built on the rule's first window (none for a pattern
	// costly to print, see foldWork: its precheck would cost more to
	// derive, ~25 ms for curl-auth-user, than a run saves with it). pre
	// matches wherever re does, and is cheaper (precheckOf); at is the same
	// pattern anchored at the start of the text, built instead of pre when
	// every match of it begins with one of the rule's anchors (starts). Both
	// nil: none.
	prechecks func() (pre, at *regexp.Regexp)
	anchored  bool // else its window is the whole text
	// startAt is, for a rule that is not anchored, the strings one of
	// which begins every match (matchStarts) and the pattern anchored at
	// the start of the text: a text where it matches from no occurrence
	// of them is not searched (startsAnywhere). Nil: none.
	startAt func() (starts []string, at *regexp.Regexp)
	// needs are literals every match contains (requiredLiterals), for a
	// rule that is not anchored: a text without one of them is not searched;
	// nor is one without each of runs (requiredRuns).
	needs func() []string
	runs  func() []*byteRun
	// reach is the most newlines a match holds (unanchored rules only:
	// their tests on decoded texts look at the lines around the decoded
	// values, see nearRanges).
	reach    func() int
	keywords []int // its keywords' ids in ruleWindows.lits; none: runs on every text
	anchor   anchorInfo
	anchorID []int // the anchors' ids in ruleWindows.lits
	// assign: the anchor is followed in the pattern by an optional key
	// tail, an assignment operator and up to 5 of [\x60'"\s=]
	// (generic-api-key and the rules built like it); an occurrence not
	// followed by an operator is no anchor, and a match ends at most
	// assignRest lines after the line 9 bytes past its operator's start.
	assign     bool
	assignRest int
	det        func() *detect.Detector // the rule alone, without keywords
	// extent bounds its matches around the anchor, for long windows (nil:
	// not bounded; derived on the first long window).
	extent func() *ruleExtent
	// lineRegexes are the regexes its allowlists and the config's test a
	// finding's line with (see quietNear).
	lineRegexes func() ([]*regexp.Regexp, bool)
}

// assignTail is what follows the keyword in generic-api-key and in the
// rules gitleaks generates like it (utils.GenerateSemiGenericRegex): up
// to 20 of [ \t\w.-], up to 3 of [\s'"], an operator (at most 4 bytes),
// up to 5 of [\x60'"\s=]. operatorReach finds the operators.
var assignTail = sync.OnceValue(func() []string {
	re, err := syntax.Parse(genericPattern, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 6 {
		return nil
	}
	var out []string
	for _, s := range re.Sub[2:6] {
		out = append(out, s.String())
	}
	return out
})

// ruleAnchors is what a rule's windows take from its pattern: whether it
// is anchored (ok), its anchors with the newlines a match holds before and
// after one, and whether the anchor is followed by an assignment tail
// (assign; see windowedRule).
type ruleAnchors struct {
	ok            bool
	anchors       []string
	before, after int
	assign        bool
	assignRest    int
}

// analyzeAnchors derives pattern's ruleAnchors from its syntax tree.
func analyzeAnchors(pattern string) ruleAnchors {
	a, ok := anchorsOf(pattern)
	if !ok {
		return ruleAnchors{}
	}
	f := ruleAnchors{ok: true, anchors: a.anchors, before: a.before, after: a.after}
	if isAssignTail(a.next) {
		f.assign = true
		for _, n := range a.next[len(assignTail()):] {
			f.assignRest = min(f.assignRest+newlines(n), unbounded)
		}
	}
	return f
}

// anchorsFor is analyzeAnchors(pattern), read from defaultAnchors for the
// patterns of gitleaks' default rules: deriving them (parsing each pattern
// again, then walking its tree) was ~5 ms of every process.
func anchorsFor(pattern string) ruleAnchors {
	if f, ok := defaultAnchors[pattern]; ok {
		return f
	}
	return analyzeAnchors(pattern)
}

// isAssignTail reports whether next starts with assignTail.
func isAssignTail(next []*syntax.Regexp) bool {
	tail := assignTail()
	if tail == nil || len(next) < len(tail) {
		return false
	}
	for i, t := range tail {
		if next[i].String() != t {
			return false
		}
	}
	return true
}

// assignReach is how many bytes past its operator's first byte the
// assignment tail can end (operator, then up to 5 of [\x60'"\s=]).
const assignReach = 4 + 5

// newRuleWindows returns nil when no rule of cfg can be windowed.
func newRuleWindows(src *ruleSource) *ruleWindows {
	w := &ruleWindows{src: src}
	var whole []string
	for _, id := range src.ids {
		m := src.meta[id]
		if m.pattern == "" || m.skipReport || len(m.required) > 0 || m.requiredBy {
			whole = append(whole, id)
			if m.pattern == "" && m.path != "" && !m.skipReport {
				w.paths = append(w.paths, src.rule(id).Path)
			} else {
				w.wholeAlways = true
			}
			continue
		}
		pattern := m.pattern
		f := anchorsFor(pattern)
		wr := windowedRule{id: id, anchored: f.ok, assign: f.assign, assignRest: f.assignRest,
			anchor: anchorInfo{anchors: f.anchors, before: f.before, after: f.after}}
		wr.re = sync.OnceValue(func() *regexp.Regexp { return src.rule(id).Regex })
		// The pattern's tree, parsed once for what is derived from it
		// (nil: it does not parse).
		tree := sync.OnceValue(func() *syntax.Regexp {
			tree, err := syntax.Parse(pattern, syntax.Perl)
			if err != nil {
				return nil
			}
			return tree
		})
		re := wr.re
		wr.gate = sync.OnceValue(func() *regexp.Regexp {
			if g := gateOf(tree()); g != nil {
				return g
			}
			return re()
		})
		if !f.ok {
			wr.needs = sync.OnceValue(func() []string {
				if t := tree(); t != nil {
					return requiredLiterals(t)
				}
				return nil
			})
			wr.runs = sync.OnceValue(func() []*byteRun {
				if t := tree(); t != nil {
					return requiredRuns(t)
				}
				return nil
			})
			wr.reach = sync.OnceValue(func() int {
				if t := tree(); t != nil {
					return newlines(t)
				}
				return unbounded
			})
			wr.startAt = sync.OnceValues(func() ([]string, *regexp.Regexp) {
				return startAtOf(pattern, tree())
			})
		}
		wr.prechecks = sync.OnceValues(func() (pre, at *regexp.Regexp) {
			return prechecksOf(pattern, f.anchors)
		})
		if f.ok {
			wr.extent = sync.OnceValue(func() *ruleExtent { return extentOf(pattern, f.anchors) })
			wr.lineRegexes = sync.OnceValues(func() ([]*regexp.Regexp, bool) {
				return lineRegexes(src.base.Allowlists, src.rule(id).Allowlists)
			})
		}
		wr.det = sync.OnceValue(func() *detect.Detector {
			one := src.subset([]string{id})
			r := one.Rules[id]
			r.Keywords = nil
			one.Rules[id] = r
			one.Keywords = map[string]struct{}{}
			d := detect.NewDetector(one)
			d.MaxDecodeDepth = 0
			return d
		})
		w.windowed = append(w.windowed, wr)
	}
	if len(w.windowed) == 0 {
		return nil
	}
	w.whole = sync.OnceValue(func() *detect.Detector {
		d := detect.NewDetector(src.subset(whole))
		d.MaxDecodeDepth = 0
		return d
	})
	ids := map[string]int{}
	add := func(s string) int {
		id, ok := ids[s]
		if !ok {
			id = len(ids)
			ids[s] = id
			w.isKeyword = append(w.isKeyword, false)
			w.isAnchor = append(w.isAnchor, false)
		}
		return id
	}
	for _, k := range slices.Sorted(maps.Keys(src.base.Keywords)) {
		w.isKeyword[add(k)] = true
	}
	// Each rule's keywords by id (they are the config's keywords, which
	// its rules' make up), for the prefilter's test of a text (runs).
	w.keywords = make(map[string][]int, len(src.ids))
	for _, id := range src.ids {
		ks := []int{}
		for _, k := range src.meta[id].keywords {
			kid := add(k)
			w.isKeyword[kid] = true
			ks = append(ks, kid)
		}
		w.keywords[id] = ks
	}
	for i := range w.windowed {
		r := &w.windowed[i]
		r.keywords = w.keywords[r.id]
		for _, a := range r.anchor.anchors {
			id := add(a)
			w.isAnchor[id] = true
			r.anchorID = append(r.anchorID, id)
		}
	}
	strs := make([]string, len(ids))
	for s, id := range ids {
		strs[id] = s
	}
	w.lits = newLiterals(strs)
	return w
}

// textLiterals is what one pass of lits over a text found: the keywords
// gitleaks' prefilter finds (substrings of the lowercased text, as its
// trie reports them) and the anchors' offsets in the ASCII-lowercased text.
type textLiterals struct {
	present []bool  // by keyword id
	at      [][]int // by anchor id
	// folds are the offsets of the runes Go's case folding maps to an
	// ASCII letter (ſ to s, the Kelvin sign to k; nil: none). An anchor
	// matched through one is no occurrence the ASCII search finds: every
	// fold counts as one of every anchor's (see windows), and the tests at
	// the occurrences found are not made in a window holding one (see
	// matches): in the others the ASCII search found every occurrence.
	folds []int
}

// foldIn reports whether the window win holds a fold rune: this
// repository's README, which names the two runes, had every window of
// every rule tested with the rule's whole pattern (18 of a 3-file
// commit's 40 ms of CPU), where only those around the runes need it.
func (l textLiterals) foldIn(win window) bool {
	i := sort.SearchInts(l.folds, win.start)
	return i < len(l.folds) && l.folds[i] < win.end
}

// scanLiterals finds the keywords in lower and the anchors in alower (one
// pass when they are the same text). Its slices are as long as the
// literals, for each text scanned (79 of the 656 MB a 10,000-file pack
// allocated): they come from w.found and go back to it with release once
// the text's scan is over.
func (w *ruleWindows) scanLiterals(lower, alower string) *textLiterals {
	t, _ := w.found.Get().(*textLiterals)
	if t == nil {
		t = &textLiterals{present: make([]bool, len(w.lits.strs)), at: make([][]int, len(w.lits.strs))}
	}
	hit := func(id, at int) {
		if w.isKeyword[id] {
			t.present[id] = true
		}
		if w.isAnchor[id] {
			t.at[id] = append(t.at[id], at)
		}
	}
	if lower == alower {
		w.lits.scan(lower, nil, hit)
		return t
	}
	w.lits.scan(lower, w.isKeyword, func(id, _ int) { t.present[id] = true })
	w.lits.scan(alower, w.isAnchor, func(id, at int) { t.at[id] = append(t.at[id], at) })
	return t
}

// release hands t, which scanLiterals returned, back for another text's
// scan: nothing may use it after.
func (w *ruleWindows) release(t *textLiterals) {
	clear(t.present)
	for i := range t.at {
		t.at[i] = t.at[i][:0]
	}
	t.folds = nil
	w.found.Put(t)
}

// lowered returns toLower(text) (gitleaks' prefilter input) and
// asciiLower(text) (the anchors' search text), the same string when text
// is ASCII.
func lowered(text string) (lower, alower string) {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return toLower(text), asciiLower(text)
		}
	}
	s := asciiLower(text)
	return s, s
}

// detect is gitleaks' findings of one pass without decoding over frag; li
// indexes frag.Raw.
func (w *ruleWindows) detect(ctx context.Context, frag fragment, li *lineIndex) []report.Finding {
	text := frag.Raw
	var out []report.Finding
	if w.runsWhole(frag) {
		out = w.whole().DetectContext(ctx, frag)
	}
	alower, lower := li.lower(), li.lower()
	if !isASCII(text) {
		lower = toLower(text)
	}
	buf := w.scanLiterals(lower, alower)
	defer w.release(buf)
	lits := *buf
	lits.folds = foldOffsets(text)
	nl := li.nl
	rule := func(i int) []report.Finding {
		r := &w.windowed[i]
		if !runs(r.keywords, lits.present) {
			return nil
		}
		if !r.anchored && lits.folds == nil && !containsAll(alower, r.needs()) {
			return nil // no match without them
		}
		if !r.anchored {
			if !allIn(r.runs(), text) {
				return nil // nor without its runs
			}
			if !r.startsAnywhere(text, alower, lits.folds) {
				return nil // nor where none of its matches can begin
			}
		}
		var found []report.Finding
		for _, win := range r.windows(text, nl, lits) {
			if ctx.Err() != nil {
				return nil
			}
			if !r.matches(text, win, lits) || r.quietNear(ctx, frag, text, win, lits) {
				continue
			}
			wf := frag
			wf.Raw = text[win.start:win.end]
			wf.StartLine = frag.StartLine + win.line
			found = append(found, r.det().DetectContext(ctx, wf)...)
		}
		return found
	}
	if len(text) < parallelRulesText {
		for i := range w.windowed {
			out = append(out, rule(i)...)
		}
		return gitleaksFilter(out)
	}
	// A large text's rules are shared among the cores, their findings
	// kept in rule order: a change's one large file (a README) was scanned
	// on one core while the other waited (this repository's 118 KB README:
	// ~24 ms).
	found := make([][]report.Finding, len(w.windowed))
	onAllCores(ctx, len(found), func(i int) { found[i] = rule(i) })
	for _, f := range found {
		out = append(out, f...)
	}
	return gitleaksFilter(out)
}

// parallelRulesText is the size of a text from which ruleWindows.detect
// runs its rules on all the cores.
const parallelRulesText = 32 << 10

// onAllCores calls rule(i) for each i below n on all the cores; each call
// writes its own index's results. Calls not started when ctx ends are not
// made: the scan reports ctx's error after.
func onAllCores(ctx context.Context, n int, rule func(i int)) {
	_ = workers.Each(ctx, n, runtime.GOMAXPROCS(0), func(_ context.Context, i int) error {
		rule(i)
		return nil
	})
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// runs reports whether gitleaks' prefilter runs a rule with these keywords
// on a text holding the present ones.
func runs(keywords []int, present []bool) bool {
	if len(keywords) == 0 {
		return true
	}
	for _, k := range keywords {
		if present[k] {
			return true
		}
	}
	return false
}

// matches reports whether the rule's pattern matches the window win of
// text (whose anchors' offsets lits holds); a long window is tested on the
// spans around its anchors (matchesNear).
//
// With an anchored precheck it first looks for an anchor occurrence in
// the window where the precheck matches: a match M of the rule in the
// window holds a match of the precheck (the pattern's nodes after its
// nullable head, the last cut short), which begins with one of the rule's
// anchors (starts), so that anchor occurs in M, hence in the window, and
// the precheck matches at it. The text past the window only lets the
// anchored precheck match more often, never less.
func (r *windowedRule) matches(text string, win window, lits textLiterals) bool {
	sub := text[win.start:win.end]
	if lits.foldIn(win) {
		// Occurrences through a fold are not in lits, but a match holds
		// one of the rule's anchors however its letters are spelled: with
		// the folds spelled in ASCII and the text lowered, one is in the
		// window, or the rule does not match there; and where the rule has
		// an anchored precheck, it matches at one of them, as startsIn asks
		// of the others. (Every fold makes a window of every rule: this
		// repository's README, which names the runes, had each tested with
		// the rule's whole pattern by Go's NFA, 19 ms of a 3-file commit's
		// 80.)
		if len(r.anchorID) == 0 {
			// The precheck is a pattern too, folding as the rule's does.
			if pre, _ := r.prechecks(); pre != nil && !pre.MatchString(sub) {
				return false
			}
			return r.gate().MatchString(sub)
		}
		starts := r.foldedStarts(text, win)
		if len(starts) == 0 {
			return false
		}
		if _, at := r.prechecks(); at != nil && !slices.ContainsFunc(starts, func(o int) bool { return at.MatchString(text[o:]) }) {
			return false
		}
		return r.gate().MatchString(sub)
	}
	pre, at := r.prechecks()
	if at != nil && !r.startsIn(at, text, win, lits) {
		return false
	}
	if len(sub) >= longWindow && r.extent != nil {
		if ext := r.extent(); ext != nil {
			return r.matchesNear(text, win, lits, ext)
		}
	}
	if at == nil && pre != nil && !pre.MatchString(sub) {
		return false
	}
	return r.gate().MatchString(sub)
}

// foldedStarts are the offsets in text of the occurrences in the window
// win of the rule's anchors (lower-case ASCII), however a case-insensitive
// pattern may spell their letters (see foldedLower), in no order.
func (r *windowedRule) foldedStarts(text string, win window) []int {
	folded, from := foldedLower(text[win.start:win.end])
	var out []int
	for _, a := range r.anchor.anchors {
		for i := 0; ; {
			j := strings.Index(folded[i:], a)
			if j < 0 {
				break
			}
			out = append(out, win.start+from[i+j])
			i += j + 1
		}
	}
	return out
}

// foldedLower is s with the runes Go's case folding maps to an ASCII
// letter spelled as that letter (ſ as s, the Kelvin sign as k) and ASCII
// lowered, and for each of its bytes the offset in s of the rune it comes
// from: where a rule's anchor occurs however a case-insensitive pattern
// may spell it. (Anchors are ASCII: an occurrence starts at a rune.)
func foldedLower(s string) (string, []int) {
	var b strings.Builder
	b.Grow(len(s))
	from := make([]int, 0, len(s))
	for i, c := range s {
		n := b.Len()
		switch {
		case c == '\u017f':
			b.WriteByte('s')
		case c == '\u212a':
			b.WriteByte('k')
		case 'A' <= c && c <= 'Z':
			b.WriteByte(byte(c) + 'a' - 'A')
		default:
			b.WriteRune(c)
		}
		for range b.Len() - n {
			from = append(from, i)
		}
	}
	return b.String(), from
}

// touches reports whether one of the rule's matches in the window win of
// text touches one of ranges: matchTouches over the window, or over the
// spans around its anchors when it is long (see touchesNear).
func (r *windowedRule) touches(text string, win window, lits textLiterals, ranges [][2]int) bool {
	if win.end-win.start >= longWindow && r.extent != nil && !lits.foldIn(win) { // spans hold no fold occurrences
		if ext := r.extent(); ext != nil {
			return r.touchesNear(text, win, lits, ext, ranges)
		}
	}
	return r.matches(text, win, lits) && matchTouches(r.re(), text[win.start:win.end], win.start, ranges)
}

// startsIn reports whether at matches the text from an occurrence of one
// of the rule's anchors inside win.
func (r *windowedRule) startsIn(at *regexp.Regexp, text string, win window, lits textLiterals) bool {
	for _, id := range r.anchorID {
		occ := lits.at[id] // ascending
		i, _ := slices.BinarySearch(occ, win.start)
		for ; i < len(occ) && occ[i] < win.end; i++ {
			if at.MatchString(text[occ[i]:]) {
				return true
			}
		}
	}
	return false
}

// startAtOf builds an unanchored rule's startAt from its pattern and its
// syntax tree (nil: unparsable).
func startAtOf(pattern string, tree *syntax.Regexp) ([]string, *regexp.Regexp) {
	if tree == nil {
		return nil, nil
	}
	strs, ok := matchStarts(tree)
	if !ok {
		return nil, nil
	}
	at, err := regexp.Compile(`\A(?:` + pattern + `)`)
	if err != nil {
		return nil, nil
	}
	return strs, at
}

// startsAnywhere reports whether the rule, which is not anchored, may
// match text (alower: text ASCII-lowered; folds: the offsets of its fold
// runes): whether its anchored pattern matches text from an occurrence
// of one of the strings every match begins with, or the rule has none.
//
// Such a rule's pattern is run by Go's NFA over the whole text, where an
// anchored one stops where no match can go on: kubernetes-secret-yaml
// (every match begins with kind: or data:) and curl-auth-user (curl) were
// ~10 and ~5 ms of a scan of this repository's README, which names them,
// as Go's prefix search cannot skip to a literal behind \b or a case
// fold. A match beginning at an occurrence o is a match of the anchored
// pattern on text[o:] (see matchStarts), so none there means none at all.
// Occurrences are looked for ASCII-lowered (a case-sensitive pattern only
// has fewer); a rune Go folds to a letter of the strings (ſ to s, the
// Kelvin sign to k) may spell one where lowering does not see it, and
// the text is then searched as before.
func (r *windowedRule) startsAnywhere(text, alower string, folds []int) bool {
	if r.startAt == nil {
		return true
	}
	strs, at := r.startAt()
	if at == nil {
		return true
	}
	for _, f := range folds {
		c, _ := utf8.DecodeRuneInString(text[f:])
		letter := "k"
		if c == '\u017f' {
			letter = "s"
		}
		if slices.ContainsFunc(strs, func(s string) bool { return strings.Contains(s, letter) }) {
			return true
		}
	}
	for _, s := range strs {
		for i := 0; ; {
			j := strings.Index(alower[i:], s)
			if j < 0 {
				break
			}
			if at.MatchString(text[i+j:]) {
				return true
			}
			i += j + 1
		}
	}
	return false
}

// prechecksOf builds a rule's prechecks (see windowedRule.prechecks) from
// its pattern and anchors.
func prechecksOf(pattern string, anchors []string) (pre, at *regexp.Regexp) {
	if foldWork(pattern) > costlyFoldWork {
		return nil, nil
	}
	p := precheckOf(pattern)
	if p == "" {
		return nil, nil
	}
	if beginsWithAnchor(p, anchors) {
		if at, err := regexp.Compile(`\A(?:` + p + `)`); err == nil {
			return nil, at // matches screens with at alone
		}
	}
	if pre, err := regexp.Compile(p); err == nil {
		return pre, nil
	}
	return nil, nil
}

// gateOf returns the pattern re (parsed; nil: none) without its leading
// nodes that match the empty string anywhere (a star, a question mark, a
// repetition from 0: gitleaks' `[\w.-]{0,50}?` before a rule's keyword),
// or nil when it has none. It matches somewhere in a text exactly when the pattern does: a
// match of the pattern ends with a match of it, in the same text, so
// that an assertion in it sees the same bytes around it; and a match of
// it is one of the pattern, those leading nodes matching nothing before
// it. Go's regexp runs every repetition of such a head at each byte
// (generic-api-key on the 1,308 windows around "key" in prometheus' Go
// files: 220 ms with it, 90 without). An assertion (`^`, `\b`) is kept:
// it matches the empty string, but not everywhere.
func gateOf(re *syntax.Regexp) *regexp.Regexp {
	if re == nil {
		return nil
	}
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat {
		return nil
	}
	subs := re.Sub
	for len(subs) > 1 && emptyAnywhere(subs[0]) {
		subs = subs[1:]
	}
	if len(subs) == len(re.Sub) {
		return nil
	}
	out := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: subs}
	g, err := regexp.Compile(out.String())
	if err != nil {
		return nil
	}
	return g
}

// emptyAnywhere reports whether re matches the empty string at every
// place of every text.
func emptyAnywhere(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpStar, syntax.OpQuest:
		return true
	case syntax.OpRepeat:
		return re.Min == 0
	case syntax.OpCapture:
		return emptyAnywhere(re.Sub[0])
	}
	return false
}

// beginsWithAnchor reports whether every match of the pattern p begins
// with one of anchors (starts).
func beginsWithAnchor(p string, anchors []string) bool {
	tree, err := syntax.Parse(p, syntax.Perl)
	if err != nil || len(anchors) == 0 {
		return false
	}
	begins, ok := starts(tree)
	if !ok {
		return false
	}
	for _, b := range begins {
		if !slices.ContainsFunc(anchors, func(a string) bool { return a != "" && strings.HasPrefix(b, a) }) {
			return false
		}
	}
	return true
}

// costlyFoldWork: a pattern whose classes hold more foldable runes than
// this takes over a millisecond to print (three default rules do, and
// their prechecks are nearly the whole pattern).
const costlyFoldWork = 1 << 16

// foldWork is how many runes printing pattern's syntax tree folds: the
// printer (regexp/syntax's calcFlags) folds every rune from 'A' to the
// last foldable one of each class range. An unparsable pattern is 0.
func foldWork(pattern string) int {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0
	}
	var work func(*syntax.Regexp) int
	work = func(re *syntax.Regexp) int {
		n := 0
		if re.Op == syntax.OpCharClass {
			for i := 0; i+1 < len(re.Rune); i += 2 {
				lo, hi := max(re.Rune[i], 'A'), min(re.Rune[i+1], lastFoldable)
				n += max(0, int(hi-lo)+1)
			}
		}
		for _, s := range re.Sub {
			n += work(s)
		}
		return n
	}
	return work(re)
}

// lastFoldable is the last rune unicode.SimpleFold maps to another
// (regexp/syntax's maxFold).
const lastFoldable = 0x1E943

// runsWhole reports whether the whole detector can report on frag.
func (w *ruleWindows) runsWhole(frag fragment) bool {
	if w.wholeAlways {
		return true
	}
	for _, p := range w.paths {
		if p.MatchString(frag.FilePath) || frag.WindowsFilePath != "" && p.MatchString(frag.WindowsFilePath) {
			return true
		}
	}
	return false
}

// foldOffsets are the offsets of the fold runes of text, in order (nil:
// none).
func foldOffsets(text string) []int {
	if !hasFoldRune(text) {
		return nil
	}
	var out []int
	for i, r := range text {
		if r == '\u017f' || r == '\u212a' {
			out = append(out, i)
		}
	}
	return out
}

// hasFoldRune is strings.ContainsAny(text, foldRunes), faster: IndexAny
// decodes every rune of a text, Index skips to a rare first byte.
func hasFoldRune(text string) bool {
	return strings.Contains(text, "\u017f") || strings.Contains(text, "\u212a")
}

func newlineOffsets(text string) []int {
	nl := []int{}
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return nl
		}
		nl = append(nl, i+j)
		i += j + 1
	}
}

// windows returns the windows of text that hold every possible match of
// the rule (see ruleWindows), in order; nl holds the offsets of its '\n'
// and lits what scanLiterals found in it.
func (r *windowedRule) windows(text string, nl []int, lits textLiterals) []window {
	if !r.anchored {
		return []window{{0, len(text), 0}}
	}
	var lines [][2]int
	longest := 0
	for i, id := range r.anchorID {
		longest = max(longest, len(r.anchor.anchors[i]))
		for _, at := range lits.at[id] {
			if l, ok := r.occurrenceLines(text, nl, at, len(r.anchor.anchors[i])); ok {
				lines = append(lines, l)
			}
		}
	}
	// An occurrence spelled with a fold rune at f starts at most
	// utf8.UTFMax bytes a character before it.
	for _, f := range lits.folds {
		first := sort.SearchInts(nl, max(f-longest*utf8.UTFMax, 0))
		lines = append(lines, [2]int{max(first-r.anchor.before, 0), sort.SearchInts(nl, f) + r.anchor.after})
	}
	return lineWindows(text, nl, lines)
}

// occurrenceLines is the line range around an anchor at offset at (see
// windows); ok is false when it cannot be a match's anchor.
func (r *windowedRule) occurrenceLines(text string, nl []int, at, n int) ([2]int, bool) {
	k := sort.SearchInts(nl, at)
	first, last := max(k-r.anchor.before, 0), k+r.anchor.after
	if r.assign {
		o := operatorReach(text, at+n)
		if o < 0 {
			return [2]int{}, false
		}
		last = min(last, sort.SearchInts(nl, min(o+assignReach, len(text)))+r.assignRest)
	}
	return [2]int{first, last}, true
}

// lineWindows merges line ranges [first, last] into windows (see
// ruleWindows).
func lineWindows(text string, nl []int, lines [][2]int) []window {
	if len(lines) == 0 {
		return nil
	}
	slices.SortFunc(lines, func(a, b [2]int) int { return a[0] - b[0] })
	var out []window
	for i := 0; i < len(lines); {
		first, last := lines[i][0], lines[i][1]
		j := i + 1
		for j < len(lines) && lines[j][0] <= last+1 {
			last = max(last, lines[j][1])
			j++
		}
		w := window{end: len(text)}
		if first > 0 {
			w.start, w.line = nl[first-1], first-1
		}
		if last < len(nl) {
			w.end = nl[last] + 1
		} else if !strings.HasSuffix(text, "\n") {
			return []window{{0, len(text), 0}}
		}
		out = append(out, w)
		i = j
	}
	return out
}

// gitleaksFilter is gitleaks' detect.filter (without redaction): a finding
// of a rule whose id contains "generic" is dropped when another rule's
// finding on the same line and commit, not a generic one, holds its
// secret.
func gitleaksFilter(fs []report.Finding) []report.Finding {
	var out []report.Finding
	for _, f := range fs {
		include := true
		if strings.Contains(strings.ToLower(f.RuleID), "generic") {
			for _, g := range fs {
				if f.StartLine == g.StartLine && f.Commit == g.Commit && f.RuleID != g.RuleID &&
					strings.Contains(g.Secret, f.Secret) && !strings.Contains(strings.ToLower(g.RuleID), "generic") {
					include = false
					break
				}
			}
		}
		if include {
			out = append(out, f)
		}
	}
	return out
}

// decodedRules returns the rules that report something on gitleaks'
// decoding passes of a text: passes[1:] are the decoded texts and segs
// their decoded values' ranges (nil: unknown). gitleaks keeps a match on
// a decoded text only when it touches a decoded value, so a rule is kept
// when one of its matches there does (any match, where the ranges are
// unknown), and with it the rules it requires.
func (w *ruleWindows) decodedRules(ctx context.Context, passes []string, segs [][][2]int) map[string]bool {
	keep := map[string]bool{}
	ids := w.src.ids
	touched := make([]bool, len(ids))
	for p := 1; p < len(passes); p++ {
		text, ranges := passes[p], segs[p]
		lower, alower := lowered(text)
		buf := w.scanLiterals(lower, alower)
		lits := *buf
		// A fold rune counts as an occurrence of every anchor (windows), as
		// in detect: an anchor spelled with one is in no ASCII search.
		lits.folds = foldOffsets(text)
		pass := decodedPass{text: text, alower: alower, ranges: ranges, lits: lits, nl: newlineOffsets(text)}
		rule := func(k int) {
			id := ids[k]
			touched[k] = !keep[id] && ctx.Err() == nil && w.touchesDecoded(id, &pass)
		}
		if len(text) < parallelRulesText {
			for k := range ids {
				rule(k)
			}
		} else {
			// As in detect: a large text's rules on all the cores (this
			// repository's README, whose decoded pass two rules without
			// anchors search whole: ~7 of its ~23 ms).
			onAllCores(ctx, len(ids), rule)
		}
		for k, id := range ids {
			if touched[k] {
				keep[id] = true
			}
		}
		w.release(buf)
	}
	for changed := true; changed; {
		changed = false
		for id := range keep {
			for _, req := range w.src.meta[id].required {
				if _, ok := w.src.meta[req]; ok && !keep[req] {
					keep[req] = true
					changed = true
				}
			}
		}
	}
	return keep
}

// decodedPass is one decoding pass's text as decodedRules looks at it:
// lowered, its literals found, its decoded values' ranges (nil: unknown)
// and its newlines.
type decodedPass struct {
	text, alower string
	ranges       [][2]int
	lits         textLiterals
	nl           []int
}

// touchesDecoded reports whether one of rule id's matches on the pass
// touches a decoded value (any match, where the ranges are unknown), as
// gitleaks keeps a match on a decoded text.
func (w *ruleWindows) touchesDecoded(id string, p *decodedPass) bool {
	if w.src.meta[id].pattern == "" || !runs(w.keywords[id], p.lits.present) {
		return false
	}
	text, ranges := p.text, p.ranges
	wr := w.windowedRule(id)
	if wr != nil && !wr.anchored && p.lits.folds == nil && !containsAll(p.alower, wr.needs()) {
		return false // no match without them
	}
	if wr != nil && !wr.anchored && (!allIn(wr.runs(), text) || !wr.startsAnywhere(text, p.alower, p.lits.folds)) {
		return false // no match anywhere
	}
	if wr == nil || !wr.anchored || ranges == nil {
		if wr != nil && !wr.anchored && ranges != nil && wr.reach() < unbounded &&
			!nearRanges(wr.gate(), text, p.nl, ranges, wr.reach()) {
			return false // no match touches a decoded value
		}
		return matchTouches(w.src.rule(id).Regex, text, 0, ranges)
	}
	// Every window, then those that can hold a match touching a range:
	// windows from only the anchors near the ranges could cut a match that
	// merging would have kept whole.
	for _, win := range wr.windows(text, p.nl, p.lits) {
		if touchesAny(ranges, win.start, win.end) && wr.touches(text, win, p.lits, ranges) {
			return true
		}
	}
	return false
}

// nearRanges reports whether re matches in the lines around ranges (the
// decoded values of a decoding pass text, nl its newlines): reach lines
// before and after the lines each range touches, from the '\n' before
// them through the one after. A match that touches a range and holds at
// most reach newlines lies in those lines, and sees its neighbours there as
// in text, so false means that none of re's matches touches a range; true
// may come from a match that does not (or from a `^` at a window's first
// byte), and the caller then asks matchTouches over the whole text.
func nearRanges(re *regexp.Regexp, text string, nl []int, ranges [][2]int, reach int) bool {
	lines := make([][2]int, 0, len(ranges))
	for _, r := range ranges {
		first := sort.SearchInts(nl, max(r[0]-1, 0)) - reach
		last := sort.SearchInts(nl, min(r[1], max(len(text)-1, 0))) + reach
		lines = append(lines, [2]int{max(first, 0), last})
	}
	for _, w := range lineWindows(text, nl, lines) {
		if re.MatchString(text[w.start:w.end]) {
			return true
		}
	}
	return false
}

// matchTouches reports whether one of re's matches in sub (at offset off
// of the pass) touches a range; with ranges nil, whether there is one.
func matchTouches(re *regexp.Regexp, sub string, off int, ranges [][2]int) bool {
	if ranges == nil {
		return re.MatchString(sub)
	}
	for _, m := range re.FindAllStringIndex(sub, -1) {
		if touchesAny(ranges, off+m[0], off+m[1]) {
			return true
		}
	}
	return false
}

func (w *ruleWindows) windowedRule(id string) *windowedRule {
	i, ok := slices.BinarySearchFunc(w.windowed, id, func(r windowedRule, id string) int { return strings.Compare(r.id, id) })
	if !ok {
		return nil
	}
	return &w.windowed[i]
}
