package o200k

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// onePiece are texts o200k_base's pre-tokenizer leaves whole (one letter
// run, one punctuation run, up to three digits, one whitespace run), so
// that the tokenizer's count of each is its byte-pair count, as Count's.
func onePiece(r *rand.Rand) []string {
	texts := []string{"", "a", " ", "hello", " world", "Hello", "ZZZZZZZZ", "123", "////", "\n\n\n", "    ",
		"é", " naïve", "日本語", "ſ", "\u00a0\u00a0", strings.Repeat("a", 500), strings.Repeat("=", 300),
		strings.Repeat(" ", 200), strings.Repeat("ab", 100), " " + strings.Repeat("xyz", 40)}
	pick := func(alphabet string, n int) string {
		a := []rune(alphabet)
		var b strings.Builder
		for range n {
			b.WriteRune(a[r.IntN(len(a))])
		}
		return b.String()
	}
	for range 400 {
		n := 1 + r.IntN(200)
		switch r.IntN(4) {
		case 0:
			texts = append(texts, pick("abcdefghijklmnopqrstuvwxyz", n))
		case 1:
			texts = append(texts, " "+pick("etaoinshrdlu", n))
		case 2:
			texts = append(texts, pick("!\"#$%&()*+,-.:;<=>?@[]^_`{|}~", n))
		default:
			texts = append(texts, pick("äöüßéèêàçñøåæœ", n))
		}
	}
	return texts
}

// TestCountMatchesTokenizer: Count is the tokenizer package's count of
// each one-piece text, long ones (the heap) and short ones (the scan).
func TestCountMatchesTokenizer(t *testing.T) {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range onePiece(rand.New(rand.NewPCG(1, 2))) {
		want, err := c.Count(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Count(s); got != want {
			t.Fatalf("Count(%q) = %d, the tokenizer counts %d", s, got, want)
		}
	}
}

// TestScanAndHeapAgree: the two ways of finding each merge give the same
// parts on every text either could be given (the scan reads the first
// ranks from pairRanks, the heap looks each up).
func TestScanAndHeapAgree(t *testing.T) {
	for _, s := range onePiece(rand.New(rand.NewPCG(3, 4))) {
		for len(s) >= heapFrom {
			s = s[:heapFrom-1]
		}
		if len(s) < 2 {
			continue
		}
		if a, b := countScan(s), countHeap(s); a != b {
			t.Fatalf("%q: scan counts %d, heap %d", s, a, b)
		}
	}
}

func TestRankMisses(t *testing.T) {
	for _, s := range []string{"", "zq9xvzq9xvzq9xv", strings.Repeat("a", 129), "\xff\xfe\xfd\xfc"} {
		if r, ok := Rank(s); ok {
			t.Errorf("Rank(%q) = %d, want none", s, r)
		}
	}
}

// TestCacheCountsAsCount: a Cache answers Count's counts, for pieces of
// every length around its limit and for many more pieces than it has
// slots (so that pieces share and evict slots); either size, and the zero
// Cache, which remembers nothing.
func TestCacheCountsAsCount(t *testing.T) {
	for _, c := range []*Cache{new(Cache), NewCache(SmallCache), NewCache(LargeCache)} {
		testCacheCounts(t, c)
	}
}

func testCacheCounts(t *testing.T, c *Cache) {
	r := rand.New(rand.NewPCG(9, 10))
	alphabet := []rune("abcxyz  \n\t=_-é日QZ09")
	for i := range 4 * max(len(c.words), 1<<SmallCache) {
		n := 1 + i%20
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		p := b.String()
		for range 2 { // the second time from the cache, if still there
			if got, want := c.Count(p), Count(p); got != want {
				t.Fatalf("Cache.Count(%q) = %d, Count %d", p, got, want)
			}
		}
	}
	if got := c.Count(""); got != 0 {
		t.Fatalf("Cache.Count(\"\") = %d", got)
	}
}

// TestCacheKey: the keys read a word at a time are the key read byte by
// byte (each byte in its place, the length in the top byte), for every
// length a cached piece has.
func TestCacheKey(t *testing.T) {
	byteByByte := func(piece string) [2]uint64 {
		var k [2]uint64
		k[min(len(piece)/8, 1)] = uint64(len(piece)) << 56
		for i := 0; i < len(piece); i++ {
			k[i/8] |= uint64(piece[i]) << (8 * (i % 8))
		}
		return k
	}
	r := rand.New(rand.NewPCG(11, 12))
	for n := 3; n <= 15; n++ {
		for range 200 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			want := byteByByte(string(b))
			if n < 8 {
				if got := wordKey(string(b)); got != want[0] {
					t.Fatalf("wordKey(%q) = %x, want %x", b, got, want[0])
				}
			} else if got := longKey(string(b)); got != want {
				t.Fatalf("longKey(%q) = %x, want %x", b, got, want)
			}
		}
	}
}
