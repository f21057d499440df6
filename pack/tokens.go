package pack

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/tiktoken-go/tokenizer"
)

// TokenEncoding is the tokenizer the token estimate uses.
const TokenEncoding = "o200k_base"

var (
	codecOnce sync.Once
	codec     tokenizer.Codec
	codecErr  error
)

// tokenChunk is the size of the pieces CountTokens counts in parallel.
const tokenChunk = 256 << 10

// CountTokens counts the tokens of s with o200k_base, exactly as the
// tokenizer package does. Large texts are cut into pieces of about 256 KiB
// that are counted on all cores. A cut is only made between an ASCII
// lowercase letter and a '"' (in a pack: after every JSON key, which a
// compact pack has many of, unlike newlines): o200k's pre-tokenizer always
// ends a piece there and starts the next one afresh, so the sum over the
// pieces is exactly the count of the whole text.
//
// A profile of a 23 MB pack put 70% of the tokenizer's time in its
// backtracking pre-tokenizer (regexp2, an allocation per piece) and the rest
// in byte-pair merges of pieces seen many times over (keywords, names,
// indentation). So the text is cut into pre-tokenizer pieces by splitO200k,
// and each distinct piece is counted by the tokenizer itself once per worker.
// On invalid UTF-8 (which the pre-tokenizer sees as U+FFFD) the tokenizer
// counts the whole chunk.
func CountTokens(s string) (int, error) {
	return countTokens(s, tokenChunk)
}

// LoadTokenizer loads the o200k_base vocabulary (~20 ms, once per
// process). CountTokens loads it on first use; a caller with other work to
// do first can start it early, in another goroutine.
func LoadTokenizer() error {
	codecOnce.Do(func() { codec, codecErr = tokenizer.Get(tokenizer.O200kBase) })
	if codecErr != nil {
		return fmt.Errorf("load tokenizer: %w", codecErr)
	}
	return nil
}

func countTokens(s string, chunk int) (int, error) {
	if len(s) <= chunk {
		// One chunk: counted here, without workers or a map of its own
		// (a change pack counts many small texts; the pieces' counts are
		// kept per process, see pieces).
		if err := LoadTokenizer(); err != nil {
			return 0, err
		}
		n, err := countText(s, nil)
		if err != nil {
			return 0, fmt.Errorf("count tokens: %w", err)
		}
		return n, nil
	}
	c, err := newCounter()
	if err != nil {
		return 0, err
	}
	for len(s) > chunk {
		cut := tokenCut(s, chunk)
		if cut < 0 {
			break
		}
		c.chunks <- s[:cut]
		s = s[cut:]
	}
	c.chunks <- s
	return c.wait()
}

// counter counts the tokens of chunks of text on all cores. Each worker
// keeps the counts of the pieces it has seen across its chunks.
type counter struct {
	chunks chan string
	done   sync.WaitGroup
	counts []int
	errs   []error
}

func newCounter() (*counter, error) {
	if err := LoadTokenizer(); err != nil {
		return nil, err
	}
	n := runtime.NumCPU()
	c := &counter{chunks: make(chan string, n), counts: make([]int, n), errs: make([]error, n)}
	for w := range n {
		c.done.Go(func() {
			m := newMemo()
			for chunk := range c.chunks {
				if c.errs[w] != nil {
					continue // drain, so that senders never block
				}
				k, err := countText(chunk, m)
				c.counts[w] += k
				c.errs[w] = err
			}
		})
	}
	return c, nil
}

// wait ends the input and returns the total.
func (c *counter) wait() (int, error) {
	close(c.chunks)
	c.done.Wait()
	total := 0
	for w, n := range c.counts {
		if c.errs[w] != nil {
			return 0, fmt.Errorf("count tokens: %w", c.errs[w])
		}
		total += n
	}
	return total, nil
}

// countText counts the tokens of one chunk: the tokenizer's count of each
// pre-tokenizer piece, looked up in m first. With m nil, only the pieces
// the process could not keep (pieces is full) are kept in a memo of this
// call's own.
func countText(s string, m *memo) (int, error) {
	if !utf8.ValidString(s) {
		return codec.Count(s)
	}
	total := 0
	var err error
	splitO200k(s, func(piece string) bool {
		n, ok := m.get(piece)
		if !ok {
			var kept bool
			if n, kept, err = pieceCount(piece); err != nil {
				return false
			}
			if m == nil && !kept {
				m = newMemo()
			}
			m.put(piece, n)
		}
		total += n
		return true
	})
	return total, err
}

// memo is the token counts of the pieces one counter has met: a piece of
// up to 7 bytes (most are) keyed by its bytes and length in one word,
// which hashes and compares faster than a string; longer ones by the
// string. A nil memo holds nothing and keeps nothing.
type memo struct {
	short map[uint64]int
	long  map[string]int
}

func newMemo() *memo { return &memo{short: map[uint64]int{}, long: map[string]int{}} }

// shortKey is the word a piece of up to 7 bytes is kept under.
func shortKey(p string) (uint64, bool) {
	if len(p) > 7 {
		return 0, false
	}
	k := uint64(len(p)) << 56
	for i := 0; i < len(p); i++ {
		k |= uint64(p[i]) << (8 * i)
	}
	return k, true
}

func (m *memo) get(p string) (int, bool) {
	if m == nil {
		return 0, false
	}
	if k, ok := shortKey(p); ok {
		n, ok := m.short[k]
		return n, ok
	}
	n, ok := m.long[p]
	return n, ok
}

func (m *memo) put(p string, n int) {
	if m == nil {
		return
	}
	if k, ok := shortKey(p); ok {
		m.short[k] = n
		return
	}
	m.long[strings.Clone(p)] = n // not a slice of the chunk: chunks are let go
}

// pieces is the token count of every pre-tokenizer piece any count of this
// process has met, up to maxPieces of them. A change pack counts each
// candidate's text, then the pack that holds some of them, several times
// while it fits the budget: the same pieces over and over, and the
// tokenizer's count of a piece (its backtracking pre-tokenizer, then
// byte-pair merges) is most of the cost of counting. A count is a function
// of the piece alone (one encoding per process), so a kept count is never
// stale.
var pieces struct {
	sync.RWMutex
	counts map[string]int
}

// maxPieces bounds pieces: a 1-file range meets 3,700–4,900 distinct
// pieces; a full-tree pack meets far more, counted, not kept (kept up to
// 65,536, they raised prometheus's full-tree peak RSS by ~25 MB).
const maxPieces = 1 << 13

// pieceCount is the tokenizer's count of one pre-tokenizer piece, and
// whether pieces holds it.
func pieceCount(piece string) (n int, kept bool, err error) {
	pieces.RLock()
	n, ok := pieces.counts[piece]
	pieces.RUnlock()
	if ok {
		return n, true, nil
	}
	if n, err = codec.Count(piece); err != nil {
		return 0, false, err
	}
	pieces.Lock()
	if pieces.counts == nil {
		pieces.counts = map[string]int{}
	}
	if len(pieces.counts) < maxPieces {
		pieces.counts[strings.Clone(piece)] = n
		kept = true
	}
	pieces.Unlock()
	return n, kept, nil
}

// tokenCounter counts the tokens of what is written to it, exactly as
// CountTokens counts the whole: what is written is gathered into chunks cut
// as CountTokens cuts (see tokenCut), counted on all cores as they fill.
// Start it with newTokenCounter; finish returns the count.
type tokenCounter struct {
	c       *counter
	chunk   int // the least size of a chunk
	size    int
	pending []byte
	from    int // where the search for the next cut resumes
}

func newTokenCounter() (*tokenCounter, error) {
	c, err := newCounter()
	if err != nil {
		return nil, err
	}
	return &tokenCounter{c: c, chunk: tokenChunk}, nil
}

func (t *tokenCounter) Write(b []byte) (int, error) {
	t.size += len(b)
	t.pending = append(t.pending, b...)
	for len(t.pending) > t.chunk {
		cut := tokenCut(unsafe.String(unsafe.SliceData(t.pending), len(t.pending)), max(t.chunk, t.from))
		if cut < 0 {
			t.from = len(t.pending)
			break
		}
		t.c.chunks <- string(t.pending[:cut])
		t.pending = append([]byte(nil), t.pending[cut:]...)
		t.from = 0
	}
	return len(b), nil
}

// finish counts the rest and returns the total.
func (t *tokenCounter) finish() (int, error) {
	t.c.chunks <- string(t.pending)
	t.pending = nil
	return t.c.wait()
}

// tokenCut is the first offset at or after from where o200k's pre-tokenizer
// must start a new piece whether or not the text goes on: between [a-z] and
// '"'. The piece before ends with the letter run (o200k's letter
// alternatives end at the first byte that is neither a letter, a mark nor
// the apostrophe of a contraction; none of its alternatives looks behind or
// past a letter run), so counting the two sides apart gives the same
// pieces. -1 when there is none.
func tokenCut(s string, from int) int {
	for i := max(from, 1); i < len(s); i++ {
		j := strings.IndexByte(s[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		if c := s[i-1]; 'a' <= c && c <= 'z' {
			return i
		}
	}
	return -1
}

// Character classes of o200k_base's pre-tokenizer pattern:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// (\s is unicode.IsSpace in the tokenizer's regexp engine, as here.)
const (
	clsLetter  = 1 << iota // \p{L}
	clsNumber              // \p{N}
	clsSpace               // \s
	clsUpper               // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	clsLower               // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	clsNewline             // [\r\n]
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classOf(r)
	}
	return t
}()

func classOf(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= clsLetter
	}
	if unicode.IsNumber(r) {
		c |= clsNumber
	}
	if unicode.IsSpace(r) {
		c |= clsSpace
	}
	if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M) {
		c |= clsUpper
	}
	if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M) {
		c |= clsLower
	}
	if r == '\r' || r == '\n' {
		c |= clsNewline
	}
	return c
}

// countPieces is how many pieces o200k_base's pre-tokenizer cuts s into,
// each at least one token; 0 for invalid UTF-8 (no estimate).
func countPieces(s string) int {
	if !utf8.ValidString(s) {
		return 0
	}
	n := 0
	splitO200k(s, func(string) bool { n++; return true })
	return n
}

// splitO200k calls yield with each piece o200k_base's pre-tokenizer cuts
// valid UTF-8 s into, in order, until yield returns false. It takes the
// pattern's alternatives in order at each position, with the pattern's
// greedy and backtracking choices (the differential tests compare it with
// the tokenizer's own pattern).
func splitO200k(s string, yield func(string) bool) {
	// cls and next read the character at byte offset i.
	cls := func(i int) (uint8, int) {
		if i >= len(s) {
			return 0, 0
		}
		if c := s[i]; c < utf8.RuneSelf {
			return asciiClass[c], 1
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		return classOf(r), n
	}
	// run is the end of the run of characters having any class bit of want.
	run := func(i int, want uint8) int {
		for i < len(s) {
			c, n := cls(i)
			if c&want == 0 {
				break
			}
			i += n
		}
		return i
	}
	// contraction is the end of an optional (?i:'s|'t|'re|'ve|'m|'ll|'d) at
	// i. The engine ignores case by Unicode case folding (so ſ is an s).
	contraction := func(i int) int {
		if i >= len(s) || s[i] != '\'' {
			return i
		}
	suffixes:
		for _, suf := range []string{"s", "t", "re", "ve", "m", "ll", "d"} {
			j := i + 1
			for _, want := range suf {
				r, n := utf8.DecodeRuneInString(s[j:])
				if n == 0 || !foldsTo(r, want) {
					continue suffixes
				}
				j += n
			}
			return j
		}
		return i
	}
	// lettersLowerLast is [upper]*[lower]+ at i: the upper run, given back
	// one character at a time (from its end) until a lower one follows,
	// then the lower run.
	lettersLowerLast := func(i int) int {
		for k := run(i, clsUpper); ; {
			if c, n := cls(k); c&clsLower != 0 {
				return run(k+n, clsLower)
			}
			if k == i {
				return -1
			}
			_, n := utf8.DecodeLastRuneInString(s[i:k])
			k -= n
		}
	}
	// lettersUpperFirst is [upper]+[lower]* at i.
	lettersUpperFirst := func(i int) int {
		j := run(i, clsUpper)
		if j == i {
			return -1
		}
		return run(j, clsLower)
	}
	// withPrefix tries letters at i after an optional [^\r\n\p{L}\p{N}]
	// (taken first, as the greedy ? does), then without it.
	withPrefix := func(i int, letters func(int) int) int {
		if c, n := cls(i); c&(clsNewline|clsLetter|clsNumber) == 0 {
			if e := letters(i + n); e >= 0 {
				return e
			}
		}
		return letters(i)
	}
	for i := 0; i < len(s); {
		c, n := cls(i)
		end := -1
		if e := withPrefix(i, lettersLowerLast); e >= 0 {
			end = contraction(e)
		} else if e := withPrefix(i, lettersUpperFirst); e >= 0 {
			end = contraction(e)
		} else if c&clsNumber != 0 {
			end = i
			for k := 0; k < 3; k++ {
				cc, nn := cls(end)
				if cc&clsNumber == 0 {
					break
				}
				end += nn
			}
		} else if sym := symbolsAt(s, i, cls); sym >= 0 {
			end = sym
		} else if c&clsSpace != 0 {
			ws := run(i, clsSpace)
			firstNewline := i
			for firstNewline < ws {
				cc, nn := cls(firstNewline)
				if cc&clsNewline != 0 {
					break
				}
				firstNewline += nn
			}
			switch {
			case firstNewline < ws:
				// \s*[\r\n]+ as the tokenizer's regexp engine matches it:
				// the spaces up to the first line break, and its run of
				// line breaks (not the longest match, which would run to
				// the last line break of the spaces).
				end = run(firstNewline, clsNewline)
			case ws == len(s): // \s+(?!\S) at the end of the text
				end = ws
			default:
				// \s+(?!\S): all but the last character, which goes with
				// what follows; a single one is \s+ alone.
				_, last := utf8.DecodeLastRuneInString(s[i:ws])
				end = ws - last
				if end == i {
					end = ws
				}
			}
		}
		if end < 0 {
			// Unreachable: every character is a letter, a mark, a number,
			// a space or one of [^\s\p{L}\p{N}]. The pattern's search
			// would skip a character it cannot match.
			i += n
			continue
		}
		if !yield(s[i:end]) {
			return
		}
		i = end
	}
}

// symbolsAt is ` ?[^\s\p{L}\p{N}]+[\r\n/]*` at i, -1 when it does not match.
func symbolsAt(s string, i int, cls func(int) (uint8, int)) int {
	const notSymbol = clsSpace | clsLetter | clsNumber
	start := i
	if i < len(s) && s[i] == ' ' {
		if c, _ := cls(i + 1); i+1 < len(s) && c&notSymbol == 0 {
			start = i + 1
		}
	}
	j := start
	for j < len(s) {
		c, n := cls(j)
		if c&notSymbol != 0 {
			break
		}
		j += n
	}
	if j == start {
		return -1
	}
	for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
		j++
	}
	return j
}

// foldsTo reports whether r is want under Unicode simple case folding.
func foldsTo(r, want rune) bool {
	for f := unicode.SimpleFold(want); f != want; f = unicode.SimpleFold(f) {
		if r == f {
			return true
		}
	}
	return r == want
}
