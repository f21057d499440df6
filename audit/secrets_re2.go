package audit

import (
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/detect/codec"
)

// RE2 (github.com/wasilibs/go-re2, the engine of gitleaks' own release
// builds, pure Go through wazero) answers "does this rule match anywhere?"
// faster than Go's regexp over a whole large text, but its findings would
// come from another engine, it costs ~0.2 s to compile the rules, and
// go-re2 compiles its WebAssembly module when the process starts (~0.26 s
// of CPU and ~30 MB, measured with `ctxpack --version`), whatever the
// input. So it is linked only into builds with the ctxpack_re2 tag
// (secrets_re2_engine.go); without it there is no pruner. Since fastDetect
// runs each rule only on the lines around its anchors, such builds are
// slower than the default one on every tree measured (README).
//
// rulePruner uses it only to leave out of gitleaks' detector, for one large
// fragment, the rules that match no text gitleaks would run them on (and,
// for the decoding passes, the rules none of whose matches touches a
// decoded value): gitleaks reports nothing for such a rule, so the findings
// are the ones the full rule set gives, found by gitleaks' own code and
// engine. A rule is pruned only when RE2 and Go's regexp cannot disagree on
// it (re2Comparable; valid UTF-8 without NUL, no Unicode class that depends
// on either engine's Unicode tables). secrets_re2_engine_test.go compares
// the two engines rule by rule; secrets_re2_test.go compares the pruned
// scanner with gitleaks' detector alone and the decoding passes with
// gitleaks' decoder.
type rulePruner struct {
	cfg config.Config
	// prunable are the rules RE2 may leave out, by index; the others are
	// kept in every detector.
	prunable []prunableRule
	keywords *ahocorasick.Trie // every rule keyword, as gitleaks' prefilter
	compiled func() []ruleMatcher
	// encodings is encodingsPattern in RE2, for decodePassesWith.
	encodings func() ruleMatcher

	// large counts the bytes of large fragments seen; RE2 is compiled and
	// used once they amount to enough to pay for it.
	large     atomic.Int64
	minBytes  int   // a fragment at least this large may be pruned
	minLarge  int64 // and only once this many bytes of them were seen
	mu        sync.Mutex
	detectors map[string]*detect.Detector
}

type prunableRule struct {
	id       string
	pattern  string
	keywords []string // lowercased; none: the rule runs on every text
}

// Pruning thresholds, measured on prometheus/prometheus's files (forced
// pruning against none, by file size; BenchmarkScanTree for the whole
// tree): below 4 KiB the calls into wazero cost more than Go's regexp
// saves (0.25-0.6x), 4-8 KiB about even, 8-16 KiB 1.9x; compiling the rules
// (~0.2 s) pays for itself after about 1 MiB of large fragments.
const (
	pruneMinBytes      = 8 << 10
	pruneMinLargeBytes = 1 << 20
	maxPrunedDetectors = 256
)

// ruleMatcher is what the pruner asks of a compiled pattern (go-re2's
// Regexp has Go's regexp API).
type ruleMatcher interface {
	MatchString(s string) bool
	FindAllStringIndex(s string, n int) [][]int
	FindAllStringSubmatchIndex(s string, n int) [][]int
}

// compileRE2 compiles a pattern with RE2; nil in builds without the
// ctxpack_re2 tag.
var compileRE2 func(pattern string) (ruleMatcher, error)

// newRulePruner returns nil without RE2 or when no rule can be pruned.
func newRulePruner(cfg config.Config) *rulePruner {
	if compileRE2 == nil {
		return nil
	}
	return newRulePrunerWith(cfg, compileRE2)
}

// newRulePrunerWith is newRulePruner with the engine compile; nil when no
// rule can be pruned.
func newRulePrunerWith(cfg config.Config, compile func(string) (ruleMatcher, error)) *rulePruner {
	p := &rulePruner{cfg: cfg, minBytes: pruneMinBytes, minLarge: pruneMinLargeBytes, detectors: map[string]*detect.Detector{}}
	for id, r := range cfg.Rules {
		if r.Regex == nil || !re2Comparable(r.Regex.String()) {
			continue
		}
		pr := prunableRule{id: id, pattern: r.Regex.String()}
		for _, k := range r.Keywords {
			pr.keywords = append(pr.keywords, strings.ToLower(k))
		}
		p.prunable = append(p.prunable, pr)
	}
	if len(p.prunable) == 0 {
		return nil
	}
	slices.SortFunc(p.prunable, func(a, b prunableRule) int { return strings.Compare(a.id, b.id) })
	var kws []string
	for k := range cfg.Keywords {
		kws = append(kws, k)
	}
	slices.Sort(kws)
	p.keywords = ahocorasick.NewTrieBuilder().AddStrings(kws).Build()
	p.compiled = sync.OnceValue(func() []ruleMatcher {
		out := make([]ruleMatcher, len(p.prunable))
		for i, r := range p.prunable {
			// A pattern RE2 cannot compile (its program limits are lower
			// than Go's) stays nil: the rule is never pruned.
			if re, err := compile(r.pattern); err == nil {
				out[i] = re
			}
		}
		return out
	})
	p.encodings = sync.OnceValue(func() ruleMatcher {
		re, err := compile(encodingsPattern)
		if err != nil {
			return nil // gitleaks' decoder then finds the segments
		}
		return re
	})
	return p
}

// passes is decodePassesSegs with the pruner's RE2 compilation of the
// decoder.
func (p *rulePruner) passes(text string, depth int) ([]string, [][][2]int) {
	return decodePassesSegs(text, depth, p.encodings())
}

// applies reports whether a fragment of text is worth pruning: large
// enough, once enough large input was seen to pay for compiling RE2.
func (p *rulePruner) applies(text string) bool {
	if p == nil || len(text) < p.minBytes {
		return false
	}
	return p.large.Add(int64(len(text))) >= p.minLarge
}

// keep returns the rules a detector for texts needs, or ok=false when
// pruning cannot apply (a text RE2 might read unlike Go's regexp). texts
// are what gitleaks runs its rules on: the fragment and, when it decodes,
// each decoding pass's text. A prunable rule is kept when, on one of the
// texts, gitleaks' keyword prefilter would run it and RE2 finds a match;
// every other rule is kept.
func (p *rulePruner) keep(texts []string) (map[string]bool, bool) {
	for _, t := range texts {
		if !utf8.ValidString(t) || strings.IndexByte(t, 0) >= 0 {
			return nil, false
		}
	}
	res := p.compiled()
	keep := map[string]bool{}
	for id, r := range p.cfg.Rules {
		if r.Regex == nil {
			keep[id] = true
		}
	}
	pruned := map[string]bool{}
	for i, r := range p.prunable {
		pruned[r.id] = true
		if res[i] == nil {
			keep[r.id] = true
		}
	}
	for id := range p.cfg.Rules {
		if !pruned[id] {
			keep[id] = true
		}
	}
	for _, t := range texts {
		present := map[string]bool{}
		lower := strings.ToLower(t)
		for _, m := range p.keywords.MatchString(lower) {
			present[lower[m.Pos():int(m.Pos())+len(m.Match())]] = true
		}
		for i, r := range p.prunable {
			if keep[r.id] || !runs(r.keywords, present) {
				continue
			}
			if res[i].MatchString(t) {
				keep[r.id] = true
			}
		}
	}
	p.keepRequired(keep)
	return keep, true
}

// keepRequired adds to keep the rules its rules require, transitively:
// gitleaks looks them up by id and without them drops the primary finding.
func (p *rulePruner) keepRequired(keep map[string]bool) {
	for changed := true; changed; {
		changed = false
		for id := range keep {
			for _, req := range p.cfg.Rules[id].RequiredRules {
				if _, ok := p.cfg.Rules[req.RuleID]; ok && !keep[req.RuleID] {
					keep[req.RuleID] = true
					changed = true
				}
			}
		}
	}
}

// keepDecoded is keep for the decoded texts of a fragment (passes from
// index 1, with their decoded values' ranges from decodePassesSegs): a
// rule gitleaks runs on a decoded text reports only matches that touch or
// overlap a decoded value (codec.SegmentsWithDecodedOverlap), so where the
// ranges are known a rule is kept only when one of RE2's matches does.
func (p *rulePruner) keepDecoded(texts []string, segs [][][2]int) (map[string]bool, bool) {
	keep := map[string]bool{}
	for i, t := range texts {
		k, ok := p.keep([]string{t})
		if !ok {
			return nil, false
		}
		res := p.compiled()
		for j, r := range p.prunable {
			if !k[r.id] || keep[r.id] || res[j] == nil || segs[i] == nil {
				if k[r.id] {
					keep[r.id] = true
				}
				continue
			}
			for _, m := range res[j].FindAllStringIndex(t, -1) {
				if touchesAny(segs[i], m[0], m[1]) {
					keep[r.id] = true
					break
				}
			}
		}
		for id, v := range k {
			if v && !keep[id] && !p.isPrunable(id) {
				keep[id] = true
			}
		}
	}
	p.keepRequired(keep)
	return keep, true
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

func (p *rulePruner) isPrunable(id string) bool {
	_, ok := slices.BinarySearchFunc(p.prunable, id, func(r prunableRule, id string) int { return strings.Compare(r.id, id) })
	return ok
}

// anyRegex reports whether keep holds a rule with a pattern.
func (p *rulePruner) anyRegex(keep map[string]bool) bool {
	for id, k := range keep {
		if k && p.cfg.Rules[id].Regex != nil {
			return true
		}
	}
	return false
}

// runs reports whether gitleaks' prefilter runs a rule with these keywords
// on a text holding the present ones.
func runs(keywords []string, present map[string]bool) bool {
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

// detector returns a detector over the kept rules of base (a config whose
// rules are a subset of the pruner's), with depth decoding passes; built
// once per rule set.
func (p *rulePruner) detector(base config.Config, keep map[string]bool, depth int) *detect.Detector {
	var ids []string
	for id := range base.Rules {
		if keep[id] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	key := strings.Join(ids, "\x00") + "\x01" + string(rune('0'+depth))
	if len(base.Rules) != len(p.cfg.Rules) {
		key += "\x02" // fastDetect's base rules, without the generic one
	}
	p.mu.Lock()
	d, ok := p.detectors[key]
	p.mu.Unlock()
	if ok {
		return d
	}
	cfg := base
	cfg.Rules = make(map[string]config.Rule, len(ids))
	for _, id := range ids {
		cfg.Rules[id] = base.Rules[id]
	}
	d = detect.NewDetector(cfg)
	d.MaxDecodeDepth = depth
	p.mu.Lock()
	if len(p.detectors) < maxPrunedDetectors {
		p.detectors[key] = d
	}
	p.mu.Unlock()
	return d
}

// decodePasses returns the texts gitleaks' detector runs its rules on for
// text with depth decoding passes: text, then each decoded text while the
// decoder finds something (detect.Detector.DetectContext's loop).
func decodePasses(text string, depth int) []string {
	return decodePassesWith(text, depth, nil)
}

// decodePassesWith is decodePasses finding the encoded segments with enc,
// RE2's compilation of gitleaks' encodingsPattern or nativeEncodings, where
// it can (a pass over valid UTF-8 without NUL; a unicode escape's value
// is decoded by gitleaks' decoder alone); nil means gitleaks' decoder
// throughout. Go's regexp with captures is most of the decoder's time.
func decodePassesWith(text string, depth int, enc ruleMatcher) []string {
	texts, _ := decodePassesSegs(text, depth, enc)
	return texts
}

// decodePassesSegs is decodePassesWith, and for each decoded text (index
// 1 on) where its decoded values are: byte ranges [start, end) of the
// text; nil for a pass gitleaks' decoder made (not known).
func decodePassesSegs(text string, depth int, enc ruleMatcher) ([]string, [][][2]int) {
	out := []string{text}
	segs := [][][2]int{nil}
	cur := text
	for d := 1; d <= depth; d++ {
		next, found, ok := "", false, false
		var ranges [][2]int
		if enc != nil && utf8.ValidString(cur) && strings.IndexByte(cur, 0) < 0 {
			next, ranges = decodeOnce(enc, cur)
			found, ok = len(ranges) > 0, true
		}
		if !ok {
			var gs []*codec.EncodedSegment
			next, gs = codec.NewDecoder().Decode(cur, nil)
			found, ranges = len(gs) > 0, nil
		}
		if !found {
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

// decodeOnce is one pass of gitleaks' codec.Decoder.Decode over text with
// enc: the text with every segment replaced by its decoded value, and the
// decoded values' ranges in it (none: nothing to decode).
func decodeOnce(enc ruleMatcher, text string) (decoded string, ranges [][2]int) {
	type match struct{ kind, start, end int }
	var all []match
	for _, m := range enc.FindAllStringSubmatchIndex(text, -1) {
		for i, k := 2, 0; i+1 < len(m); i, k = i+2, k+1 {
			if m[i] > -1 {
				all = append(all, match{k, m[i], m[i+1]})
			}
		}
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
		var v string
		switch m.kind {
		case encUnicode:
			v = decodeUnicodeLike(text[m.start:m.end])
		case encPercent:
			v = decodePercentLike(text[m.start:m.end])
		case encHex:
			v = decodeHexLike(text[m.start:m.end])
		case encBase64:
			v = decodeBase64Like(text[m.start:m.end])
		}
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

// re2Comparable reports whether RE2 and Go's regexp agree on whether
// pattern matches a valid UTF-8 text: it parses in Go, and every literal and
// character class is ASCII apart from what both engines give alike (all of
// the non-ASCII runes, as a negated class or '.', or the two non-ASCII
// simple case folds of ASCII letters, ſ and the Kelvin sign).
func re2Comparable(pattern string) bool {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return false
	}
	ok := true
	var walk func(*syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			for _, r := range re.Rune {
				if r >= utf8.RuneSelf {
					ok = false
				}
			}
		case syntax.OpCharClass:
			ok = ok && comparableClass(re.Rune)
		case syntax.OpNoMatch, syntax.OpEmptyMatch, syntax.OpAnyCharNotNL, syntax.OpAnyChar,
			syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
			syntax.OpWordBoundary, syntax.OpNoWordBoundary,
			syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat,
			syntax.OpConcat, syntax.OpAlternate:
		default:
			ok = false
		}
		for _, s := range re.Sub {
			walk(s)
		}
	}
	walk(re)
	return ok
}

// comparableClass: the non-ASCII part of the class ranges is empty, all
// of U+0080–U+10FFFF, or some of ſ (U+017F) and K (U+212A).
func comparableClass(ranges []rune) bool {
	var non [][2]rune
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := max(ranges[i], utf8.RuneSelf), ranges[i+1]
		if lo <= hi {
			non = append(non, [2]rune{lo, hi})
		}
	}
	if len(non) == 0 {
		return true
	}
	// Go splits a class around the surrogates, which UTF-8 cannot encode.
	if full := [][2]rune{{utf8.RuneSelf, 0xD7FF}, {0xE000, utf8.MaxRune}}; slices.Equal(non, full) ||
		slices.Equal(non, [][2]rune{{utf8.RuneSelf, utf8.MaxRune}}) {
		return true
	}
	for _, r := range non {
		for c := r[0]; c <= r[1]; c++ {
			if c != 0x17F && c != 0x212A {
				return false
			}
		}
	}
	return true
}
