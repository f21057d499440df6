//go:build ctxpack_re2

package audit

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRE2AgreesWithGoRegexp compares, rule by rule, whether RE2 and Go's
// regexp find a match, on every text the pruner could see (valid UTF-8,
// no NUL), where gitleaks' keyword prefilter runs the rule, the way the
// pruner asks.
func TestRE2AgreesWithGoRegexp(t *testing.T) {
	cfg := mustDefaultConfig(t)
	p := newRulePruner(cfg)
	if p == nil {
		t.Fatal("no RE2 pruner in a build with the ctxpack_re2 tag")
	}
	res := p.compiled()
	std := make([]*regexp.Regexp, len(p.prunable))
	for i, r := range p.prunable {
		std[i] = cfg.Rules[r.id].Regex
	}
	compared, matched := 0, 0
	for i, f := range engineTexts(t) {
		if i%(3*sample(5)) != 0 || !utf8.ValidString(f.text) || strings.IndexByte(f.text, 0) >= 0 {
			continue
		}
		for _, text := range decodePasses(f.text, DecodeDepth) {
			present := map[string]bool{}
			lower := strings.ToLower(text)
			for _, m := range p.keywords.MatchString(lower) {
				present[lower[m.Pos():int(m.Pos())+len(m.Match())]] = true
			}
			for j, r := range p.prunable {
				if !runs(r.keywords, present) {
					continue
				}
				want, got := std[j].MatchString(text), res[j].MatchString(text)
				if want != got {
					t.Fatalf("%s: rule %s: Go's regexp matches %v, RE2 %v", f.path, r.id, want, got)
				}
				compared++
				if want {
					matched++
					// keepDecoded reads RE2's match positions too.
					if w, g := std[j].FindAllStringIndex(text, -1), res[j].FindAllStringIndex(text, -1); fmt.Sprint(w) != fmt.Sprint(g) {
						t.Fatalf("%s: rule %s: Go's regexp matches at %v, RE2 at %v", f.path, r.id, w, g)
					}
				}
			}
		}
	}
	t.Logf("%d rule runs compared, %d with a match", compared, matched)
	if matched < 50 {
		t.Errorf("only %d rule runs matched: the texts do not exercise the rules", matched)
	}
}
