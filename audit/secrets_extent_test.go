package audit

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/zricethezav/gitleaks/v8/config"
)

func TestMaxEnd(t *testing.T) {
	for _, c := range []struct {
		pattern, text string
		p, want       int
	}{
		{`abc`, "xxxxxxxx", 0, 3},
		{`a{2,5}`, "xxxxxxxx", 1, 6},
		{`[a-z]+`, "abc1def", 0, 3},
		{`[a-z]+`, "abc1def", 4, 7},
		{`[a-z]*=`, "abc=def", 0, 4},
		{`(?i)k+`, "kK\u212akx", 0, 6},     // the Kelvin sign folds to k (3 bytes)
		{`[é]+`, "ééé!", 0, 6},             // two-byte runes
		{`[\x{FFFD}]+`, "\xff\xfe!", 0, 2}, // invalid bytes match as U+FFFD, one byte each
		{`(?:ab|[0-9]+)x`, "1234567", 0, 7},
		{`(?:[a-z]+;){0,3}`, "ab;cd;ef;gh;", 0, 9}, // runs inside a bounded repetition
		{`(?:ab)+`, "abababab", 0, 8},              // not one rune: up to the limit
		{`.+`, "ab\ncd", 0, 2},
		{`(?s).+`, "ab\ncd", 0, 5},
		{`\bx\b`, "", 0, 1},
	} {
		re, err := syntax.Parse(c.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := maxEnd(re, c.text, c.p, max(len(c.text), c.want)); got != c.want {
			t.Errorf("maxEnd(%q, %q, %d) = %d, want %d", c.pattern, c.text, c.p, got, c.want)
		}
	}
}

func TestMaxLen(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    int
	}{
		{`abc`, 3},
		{`(?i)k`, 3}, // the Kelvin sign
		{`(?i)s`, 2}, // ſ
		{`[a-z]{0,50}?`, 50},
		{`[\w.-]{2,4}|é{3}`, 6},
		{`x+`, unbounded},
		{`(?:)+`, 0},
		{`^\b$`, 0},
		{`.`, 4},
	} {
		re, err := syntax.Parse(c.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := maxLen(re); got != c.want {
			t.Errorf("maxLen(%q) = %d, want %d", c.pattern, got, c.want)
		}
	}
}

// longLines are minified-looking texts: the generated secrets and
// assignments of scanTexts and the adversarial pieces, joined into lines
// tens of kilobytes long by separators a bundle has.
func longLines(t testing.TB) []string {
	r := rand.New(rand.NewPCG(11, 12))
	fake := secrettest.Make(11)
	pieces := advPieces(r, fake, secrettest.NewGen(12))
	var out []string
	seps := []string{";", ",", " ", "", "{", "}", ";var a=", ",token:"}
	for i := 0; i < 6; i++ {
		var b strings.Builder
		for b.Len() < 6000+r.IntN(12000) {
			s := advText(r, pieces)
			b.WriteString(strings.NewReplacer("\n", seps[r.IntN(len(seps))], "\r", "").Replace(s))
			b.WriteString(seps[r.IntN(len(seps))])
		}
		out = append(out, b.String())
	}
	for _, f := range scanTexts(t) {
		if len(out) >= 12 {
			break
		}
		if len(f.text) > 2000 {
			out = append(out, strings.ReplaceAll(f.text, "\n", ";"))
		}
	}
	return out
}

// TestExtentBoundsMatches: every match of a default rule's pattern in long
// one-line texts (FindAll's, and the first one from each anchor's line
// offset on) lies within the bounds ruleExtent gives around one of its
// anchor occurrences, matchesNear finds a match wherever the pattern has
// one, and touchesNear answers as matchTouches over the whole line.
func TestExtentBoundsMatches(t *testing.T) {
	f, _ := defaultFast(t)
	w := f.rules
	texts := longLines(t)
	checked, bounded, touched := 0, 0, 0
	for i := range w.windowed {
		wr := &w.windowed[i]
		if !wr.anchored || wr.extent == nil {
			continue
		}
		ext := wr.extent()
		if ext == nil {
			continue
		}
		bounded++
		re := wr.re()
		for _, text := range texts {
			lower := asciiLower(text)
			lits := *w.scanLiterals(lower, lower)
			var occ [][2]int // offset, anchor length
			for k, id := range wr.anchorID {
				for _, o := range lits.at[id] {
					occ = append(occ, [2]int{o, len(wr.anchor.anchors[k])})
				}
			}
			if len(occ) == 0 {
				continue // no match without an anchor (TestFastDetectMatchesStock*)
			}
			var ms [][]int
			ms = append(ms, re.FindAllStringIndex(text, -1)...)
			for k, o := range occ {
				if k%max(len(occ)/8, 1) != 0 {
					continue // a sample: each search runs to the text's end
				}
				from := max(o[0]-ext.before-8, 0)
				if m := re.FindStringIndex(text[from:]); m != nil {
					ms = append(ms, []int{from + m[0], from + m[1]})
				}
			}
			for _, m := range ms {
				if !withinExtent(text, m, occ, ext) {
					t.Fatalf("%s: match [%d,%d) is beyond every anchor's extent", wr.id, m[0], m[1])
				}
				checked++
			}
			win := window{0, len(text), 0}
			if re.MatchString(text) && !wr.matchesNear(text, win, lits, ext) {
				t.Fatalf("%s: the pattern matches a long line where its spans do not", wr.id)
			}
			// touchesNear is matchTouches over the line, for ranges around
			// the matches' edges and elsewhere.
			for _, m := range ms {
				for _, ranges := range [][][2]int{{{m[0], m[0]}}, {{m[1] - 1, m[1] + 3}}, {{max(m[0]-9, 0), max(m[0]-2, 0)}}, {{m[1] + 1, m[1] + 7}}} {
					want := matchTouches(re, text, 0, ranges)
					if got := wr.touchesNear(text, win, lits, ext, ranges); got != want {
						t.Fatalf("%s: touchesNear %v = %v, matchTouches over the line = %v", wr.id, ranges, got, want)
					}
					touched++
				}
			}
		}
	}
	if bounded < 50 || checked < 50 {
		t.Fatalf("%d rules with an extent, %d matches checked: the test checks too little", bounded, checked)
	}
	t.Logf("%d rules with an extent, %d matches checked, %d range tests", bounded, checked, touched)
}

func withinExtent(text string, m []int, occ [][2]int, ext *ruleExtent) bool {
	for _, o := range occ {
		if o[0] < m[0] || o[0]+o[1] > m[1] {
			continue
		}
		if (ext.before >= unbounded || m[0] >= o[0]-ext.before) && m[1] <= ext.end(text, o[0]+o[1], len(text)) {
			return true
		}
	}
	return false
}

// TestExtentOf: extents only for anchors that are a node of the top-level
// concatenation, with what comes before them bounded or not.
func TestExtentOf(t *testing.T) {
	for _, c := range []struct {
		pattern string
		ok      bool
		before  int
	}{
		{`[a-z]{0,5}secret[0-9]+`, true, 5},
		{`(?i)(?:token|secret)[ \t]*=[ \t]*([a-z0-9]{32})`, true, 0},
		{`[a-z]*apikey=[0-9]{8}`, true, unbounded},
		{`x(?:ab|cd)*secret`, true, unbounded},
		{`secret[0-9]+|token[a-z]+`, false, 0}, // the anchors are not a node of a concatenation
	} {
		a, ok := anchorsOf(c.pattern)
		if !ok {
			t.Fatalf("%q: no anchors", c.pattern)
		}
		ext := extentOf(c.pattern, a.anchors)
		if (ext != nil) != c.ok {
			t.Errorf("extentOf(%q) = %v, want an extent: %v", c.pattern, ext, c.ok)
			continue
		}
		if ext != nil && ext.before != c.before {
			t.Errorf("extentOf(%q).before = %d, want %d", c.pattern, ext.before, c.before)
		}
	}
}

// TestNearRangesNeverMisses: on the decoding passes of generated texts
// full of encoded secrets (and of the same texts on one line), whenever
// one of an unanchored default rule's matches touches a decoded value,
// nearRanges finds a match in the lines around the values.
func TestNearRangesNeverMisses(t *testing.T) {
	f, _ := defaultFast(t)
	var rules []*windowedRule
	for i := range f.rules.windowed {
		if wr := &f.rules.windowed[i]; !wr.anchored && wr.reach() < unbounded {
			rules = append(rules, wr)
		}
	}
	if len(rules) == 0 {
		t.Fatal("no unanchored default rule with bounded newlines: nothing to check")
	}
	r := rand.New(rand.NewPCG(21, 22))
	fake := secrettest.Make(21)
	pieces := advPieces(r, fake, secrettest.NewGen(22))
	var texts []string
	for i := 0; i < 300; i++ {
		texts = append(texts, advText(r, pieces))
	}
	for _, c := range adversarialCases(fake) {
		texts = append(texts, c.text)
	}
	// Encoded values that decode to what the unanchored rules with few
	// newlines look for (40 hex digits; a Facebook access token), among
	// lines before and after.
	g := secrettest.NewGen(23)
	for i := 0; i < 60; i++ {
		var v string
		switch i % 3 {
		case 0:
			v = "id " + g.Str("0123456789abcdef", 40) + " ok"
		case 1:
			v = g.Str("0123456789", 15) + "|" + g.Str(secrettest.Alnum, 30) + " x"
		default:
			v = "x\n" + g.Str("0123456789ABCDEF", 40) + "\n"
		}
		enc := base64.StdEncoding.EncodeToString([]byte(v))
		if i%4 == 1 {
			enc = hex.EncodeToString([]byte(v))
		}
		texts = append(texts, strings.Repeat("line\n", i%5)+"value = \""+enc+"\"\n"+strings.Repeat("more\n", i%3))
	}
	touched, passes := 0, 0
	for _, text := range texts {
		ps, segs := decodePassesSegs(text, DecodeDepth)
		for p := 1; p < len(ps); p++ {
			if segs[p] == nil {
				continue
			}
			passes++
			nl := newlineOffsets(ps[p])
			for _, wr := range rules {
				if !matchTouches(wr.re(), ps[p], 0, segs[p]) {
					continue
				}
				touched++
				if !nearRanges(wr.re(), ps[p], nl, segs[p], wr.reach()) {
					t.Fatalf("%s: a match touches a decoded value of %q, but none is found near the values", wr.id, ps[p])
				}
			}
		}
	}
	if passes < 50 || touched < 5 {
		t.Fatalf("%d decoding passes, %d rule matches touching a decoded value: the test checks too little", passes, touched)
	}
	t.Logf("%d decoding passes, %d rule matches touching a decoded value", passes, touched)
}

// TestLineRegexes: the regexes of allowlists that test the line are
// gathered from every list, and one with an empty-width assertion stops
// the spans from answering for the window.
func TestLineRegexes(t *testing.T) {
	al := func(target string, res ...string) *config.Allowlist {
		a := &config.Allowlist{RegexTarget: target}
		for _, r := range res {
			a.Regexes = append(a.Regexes, regexp.MustCompile(r))
		}
		return a
	}
	for _, c := range []struct {
		name  string
		lists [][]*config.Allowlist
		n     int
		ok    bool
	}{
		{"none", nil, 0, true},
		{"line and others", [][]*config.Allowlist{{al("line", `import\s+x`), al("match", `^x$`)}, {al("", `\bsecret\b`), al("line", `--mount`)}}, 2, true},
		{"anchored line regex", [][]*config.Allowlist{{al("line", `^import`)}}, 0, false},
		{"word boundary", [][]*config.Allowlist{{al("line", `x`)}, {al("line", `\bkey\b`)}}, 0, false},
		{"end of text", [][]*config.Allowlist{{al("line", `x\z`)}}, 0, false},
	} {
		res, ok := lineRegexes(c.lists...)
		if ok != c.ok || len(res) != c.n {
			t.Errorf("%s: %d regexes, ok %v; want %d, %v", c.name, len(res), ok, c.n, c.ok)
		}
	}
	// The default config's, which quietNear must be able to use.
	f, _ := defaultFast(t)
	wr := f.rules.windowedRule("generic-api-key")
	if res, ok := wr.lineRegexes(); !ok || len(res) == 0 {
		t.Fatalf("generic-api-key: %d line regexes, ok %v: want its import and mount allowlists, usable", len(res), ok)
	}
}
