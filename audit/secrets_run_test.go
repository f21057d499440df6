package audit

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// TestRequiredRun checks the runs found for patterns of each shape, and
// those of the two default rules the check was made for.
func TestRequiredRun(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		n       int    // 0: none
		in, out string // a byte of the class, one outside it
	}{
		{`x[0-9]{15,16}y`, 15, "7", "a"},
		{`(?i)\b(\d{15,16}(\||%)[0-9a-z\-_]{27,40})(?:['"\s;]|$)`, 27, "K", "|"},
		{`(?i)\b(\b(sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40}|[a-fA-F0-9]{40})\b)`, 40, "F", "g"},
		{`(?:[a-f]{10}|[0-9]{12})`, 10, "5", "g"}, // the union, the shorter
		{`(?:[a-f]{10}|x)`, 0, "", ""},            // an alternative without one
		{`[a-f]{7}`, 0, "", ""},                   // too short to spare anything
		{`[a-f]{0,20}`, 0, "", ""},                // may be empty
		{`[^"]{9}`, 9, "\xc3", "\""},              // a class reaching past ASCII
	} {
		re, err := syntax.Parse(tc.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		r := requiredRun(re)
		if tc.n == 0 {
			if r != nil {
				t.Errorf("%s: run of %d, want none", tc.pattern, r.n)
			}
			continue
		}
		if r == nil || r.n != tc.n || !r.class[tc.in[0]] || r.class[tc.out[0]] {
			t.Errorf("%s: run %+v, want %d bytes with %q and without %q", tc.pattern, r, tc.n, tc.in, tc.out)
			continue
		}
		run, o := strings.Repeat(tc.in, tc.n), tc.out
		if !r.in(o+run+o) || r.in(o+run[1:]+o+tc.in+o) {
			t.Errorf("%s: in is wrong on %d and %d-1 bytes", tc.pattern, tc.n, tc.n)
		}
	}
}

// TestRequiredRunHoldsInEveryMatch: for every default rule that is not
// anchored and has a required run, every text of the differential tests
// its pattern matches holds the run (what the scan skips it for lacking),
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
		if r.anchored || r.run() == nil {
			continue
		}
		checked++
		for _, f := range texts {
			if r.re().MatchString(f.text) && !r.run().in(f.text) {
				t.Fatalf("%s matches %.200q, which lacks its run of %d", r.id, f.text, r.run().n)
			}
		}
	}
	if checked < 2 {
		t.Fatalf("%d rules with a run: the test tests nothing", checked)
	}
	t.Logf("%d rules with a run, %d texts", checked, len(texts))
}
