package pack

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// matchDefaultSlow is matchDefault without the literal prefilter.
func matchDefaultSlow(p string) (Reason, string, bool) {
	for _, g := range defaultGroups {
		for _, pat := range g.patterns {
			if doublestar.MatchUnvalidated(pat, p) {
				return g.reason, g.name + ": " + pat, true
			}
		}
	}
	return "", "", false
}

func TestLongestLiteral(t *testing.T) {
	for pat, want := range map[string]string{
		"**/node_modules/**":            "node_modules",
		"**/*.pem":                      ".pem",
		"**/.env*":                      ".env",
		"**/packages/*/node_modules/**": "node_modules",
		"**/*.tar*":                     ".tar",
		"**/{a,b}/x":                    "",
		"*":                             "",
	} {
		if got := longestLiteral(pat); got != want {
			t.Errorf("longestLiteral(%q) = %q, want %q", pat, got, want)
		}
	}
}

// TestMatchDefaultPrefilterIsExact compares matchDefault with and without
// the literal prefilter on paths built from the patterns' own pieces.
func TestMatchDefaultPrefilterIsExact(t *testing.T) {
	var pieces []string
	for _, g := range defaultGroups {
		for _, pat := range g.patterns {
			for _, seg := range strings.Split(pat, "/") {
				pieces = append(pieces, strings.ReplaceAll(seg, "*", ""), strings.ReplaceAll(seg, "*", "x"), seg)
			}
		}
	}
	pieces = append(pieces, "src", "main.go", "a", ".git", "Node_Modules", "env", ".envrc", "x.PEM", "")
	r := rand.New(rand.NewPCG(1, 2))
	matched, paths := 0, 200000
	if raceEnabled {
		paths = 20000
	}
	for i := 0; i < paths; i++ {
		n := 1 + r.IntN(5)
		segs := make([]string, n)
		for j := range segs {
			segs[j] = pieces[r.IntN(len(pieces))]
			if r.IntN(3) == 0 {
				segs[j] += pieces[r.IntN(len(pieces))]
			}
		}
		p := strings.Join(segs, "/")
		r1, pat1, ok1 := matchDefault(p)
		r2, pat2, ok2 := matchDefaultSlow(p)
		if r1 != r2 || pat1 != pat2 || ok1 != ok2 {
			t.Fatalf("matchDefault(%q) = %s %s %v, without the prefilter %s %s %v", p, r1, pat1, ok1, r2, pat2, ok2)
		}
		if ok1 {
			matched++
		}
	}
	t.Logf("%d of %d paths matched", matched, paths)
}
