package audit

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// TestRequiredRuns checks the runs found for patterns of each shape, and
// those of the two default rules the check was made for.
func TestRequiredRuns(t *testing.T) {
	type run struct {
		n       int
		in, out string // a byte of the class, one outside it
	}
	for _, tc := range []struct {
		pattern string
		runs    []run
	}{
		{`x[0-9]{15,16}y`, []run{{15, "7", "a"}}},
		{`(?i)\b(\d{15,16}(\||%)[0-9a-z\-_]{27,40})(?:['"\s;]|$)`, []run{{15, "7", "a"}, {27, "K", "|"}}},
		{`(?i)\b(\b(sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40}|[a-fA-F0-9]{40})\b)`, []run{{40, "F", "g"}}},
		{`(?:[a-f]{10}|[0-9]{12})`, []run{{10, "5", "g"}}},           // the union, the shorter
		{`(?:[a-f]{10}x[0-9]{20}|[0-9]{12})`, []run{{12, "5", "g"}}}, // each alternative's longest
		{`(?:[a-f]{10}|x)`, nil},              // an alternative without one
		{`[a-f]{7}`, nil},                     // too short to spare anything
		{`[a-f]{0,20}`, nil},                  // may be empty
		{`[^"]{9}`, []run{{9, "\xc3", "\""}}}, // a class reaching past ASCII
		{`(?:[a-z]{9}-){2}[0-9]{8}`, []run{{9, "q", "-"}, {8, "3", "q"}}},
	} {
		re, err := syntax.Parse(tc.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		got := requiredRuns(re)
		if len(got) != len(tc.runs) {
			t.Errorf("%s: %d runs, want %d", tc.pattern, len(got), len(tc.runs))
			continue
		}
		for i, want := range tc.runs {
			r := got[i]
			if r.n != want.n || !r.class[want.in[0]] || r.class[want.out[0]] {
				t.Errorf("%s: run %d of %d bytes, want %d bytes with %q and without %q", tc.pattern, i, r.n, want.n, want.in, want.out)
				continue
			}
			full, o := strings.Repeat(want.in, want.n), want.out
			if !r.in(o+full+o) || r.in(o+full[1:]+o+want.in+o) {
				t.Errorf("%s: in is wrong on %d and %d-1 bytes", tc.pattern, want.n, want.n)
			}
		}
		if len(got) > 0 {
			var b strings.Builder
			for _, want := range tc.runs {
				b.WriteString(want.out + strings.Repeat(want.in, want.n))
			}
			if !allIn(got, b.String()) || allIn(got, b.String()[:b.Len()-1]) {
				t.Errorf("%s: allIn is wrong with every run and with the last cut short", tc.pattern)
			}
		}
	}
}

// TestRequiredRunHoldsInEveryMatch: for every default rule that is not
// anchored and has required runs, every text of the differential tests
// its pattern matches holds each run (what the scan skips it for lacking),
// and texts made to match the two rules it was made for are found as
// gitleaks' detector finds them.
func TestRequiredRunHoldsInEveryMatch(t *testing.T) {
	def, stock := defaultAndStock(t)
	w := def.fast.rules
	texts := scanTexts(t)
	hex40 := strings.Repeat("0123456789abcdef", 3)[:40]
	found := map[string]bool{}
	for _, text := range []string{
		"sourcegraph token " + hex40 + "\n",
		"sourcegraph token " + hex40[:39] + "\n",
		"sourcegraph sgp_local_" + hex40 + " x\n",
		"sourcegraph sgp_0123456789abcdef_" + hex40 + "\n",
		"facebook 982734650192837|zq8xk2mv9pl4st7wr1nb6cy3hj5gf0da\n",
		"facebook 98273465019283|zq8xk2mv9pl4st7wr1nb6cy3hj5gf0da\n",
		"facebook 982734650192837%Zq8xK2mV9pL4sT7wR\u212an6cY3hJ5gF0dA\n",
	} {
		texts = append(texts, textFile{"made.txt", text})
		for _, f := range sameScan(t, def, stock, "made.txt", text) {
			found[f.RuleID] = true
		}
	}
	for _, id := range []string{"sourcegraph-access-token", "facebook-access-token"} {
		if !found[id] {
			t.Errorf("no text made for %s is found: the test tests nothing of it", id)
		}
	}
	checked := 0
	for i := range w.windowed {
		r := &w.windowed[i]
		if r.anchored || len(r.runs()) == 0 {
			continue
		}
		checked++
		for _, f := range texts {
			if r.re().MatchString(f.text) && !allIn(r.runs(), f.text) {
				t.Fatalf("%s matches %.200q, which lacks one of its runs", r.id, f.text)
			}
		}
	}
	if checked < 2 {
		t.Fatalf("%d rules with a run: the test tests nothing", checked)
	}
	t.Logf("%d rules with a run, %d texts", checked, len(texts))
}
