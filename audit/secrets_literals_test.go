package audit

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naiveHits is what literals.scan reports, found by comparing every string
// at every offset: at one offset, the one-byte strings, then the two-byte
// ones, then the longer ones, each in id order.
func naiveHits(strs []string, text string) [][2]int {
	var out [][2]int
	for at := 0; at < len(text); at++ {
		for _, class := range []func(n int) bool{
			func(n int) bool { return n == 1 }, func(n int) bool { return n == 2 }, func(n int) bool { return n > 2 },
		} {
			for id, s := range strs {
				if class(len(s)) && strings.HasPrefix(text[at:], s) {
					out = append(out, [2]int{id, at})
				}
			}
		}
	}
	return out
}

// TestLiteralsScanIsNaive: on random sets of strings (none, one or two
// distinct one-byte strings among them, pairs sharing a first byte,
// prefixes of each other) over a small alphabet, scan reports every
// occurrence, in order, as comparing at every offset does.
func TestLiteralsScanIsNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const alphabet = "ab@c."
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for round := range 3000 {
		var strs []string
		for range 1 + r.IntN(6) {
			strs = append(strs, word(1+r.IntN(4)))
		}
		if round%3 == 0 { // no one-byte string: the pass without them
			strs = slices.DeleteFunc(strs, func(s string) bool { return len(s) == 1 })
		}
		l := newLiterals(strs)
		text := word(r.IntN(40))
		var got [][2]int
		l.scan(text, nil, func(id, at int) { got = append(got, [2]int{id, at}) })
		if want := naiveHits(strs, text); !slices.Equal(got, want) {
			t.Fatalf("strings %q in %q:\n got  %v\n want %v", strs, text, got, want)
		}
		want := make([]bool, len(strs))
		for i := range want {
			want[i] = r.IntN(2) == 0
		}
		got = got[:0]
		l.scan(text, want, func(id, at int) { got = append(got, [2]int{id, at}) })
		all := naiveHits(strs, text)
		all = slices.DeleteFunc(all, func(h [2]int) bool { return !want[h[0]] })
		if !slices.Equal(got, all) {
			t.Fatalf("strings %q, wanted %v, in %q:\n got  %v\n want %v", strs, want, text, got, all)
		}
	}
}
