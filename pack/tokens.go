package pack

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/ctxpack/ctxpack/pack/internal/o200k"
	"github.com/tiktoken-go/tokenizer"
)

// TokenEncoding is the tokenizer the token estimate uses.
const TokenEncoding = "o200k_base"

var (
	codecOnce sync.Once
	codec     tokenizer.Codec
	codecErr  error
)

// pieceCounts and largePieceCounts hold caches of piece counts
// (o200k.Cache, small and large) for the counts of this process to reuse,
// each by one goroutine at a time.
var (
	pieceCounts      = sync.Pool{New: func() any { return o200k.NewCache(o200k.SmallCache) }}
	largePieceCounts = sync.Pool{New: func() any { return o200k.NewCache(o200k.LargeCache) }}
)

// largeText is the size from which a text is counted with large caches:
// a large cache costs ~1 MiB of memory written in each worker, which a
// range's pack of tens of kilobytes would pay for nothing.
const largeText = 4 << 20

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
// The tokenizer package's own count runs a backtracking pre-tokenizer
// (regexp2, an allocation per piece) and looks its merges up in a
// 200,000-entry map it builds in every process. So the text is cut into
// pre-tokenizer pieces by splitO200k, and each piece is counted by
// o200k.Count: the same byte-pair merges over the same vocabulary, read in
// place from a table. On invalid UTF-8 (which the pre-tokenizer sees as
// U+FFFD) the tokenizer package counts the whole chunk.
func CountTokens(s string) (int, error) {
	return countTokens(s, tokenChunk)
}

// loadTokenizer loads the tokenizer package's own o200k_base codec (~20
// ms, once per process): only a text that is not valid UTF-8 needs it, the
// rest is counted against the table of package o200k.
func loadTokenizer() error {
	codecOnce.Do(func() { codec, codecErr = tokenizer.Get(tokenizer.O200kBase) })
	if codecErr != nil {
		return fmt.Errorf("load tokenizer: %w", codecErr)
	}
	return nil
}

func countTokens(s string, chunk int) (int, error) {
	if len(s) <= chunk {
		// One chunk: counted here, without workers (a change pack counts
		// many small texts, the same ones again while it fits its budget:
		// the pool keeps their pieces' counts from one call to the next).
		c := pieceCounts.Get().(*o200k.Cache)
		n, err := countText(s, c)
		pieceCounts.Put(c)
		if err != nil {
			return 0, fmt.Errorf("count tokens: %w", err)
		}
		return n, nil
	}
	c, err := newCounter(len(s) >= largeText)
	if err != nil {
		return 0, err
	}
	for len(s) > chunk {
		cut := tokenCut(s, chunk)
		if cut < 0 {
			break
		}
		c.chunks <- textChunk{text: s[:cut]}
		s = s[cut:]
	}
	c.chunks <- textChunk{text: s}
	return c.wait()
}

// counter counts the tokens of chunks of text on all cores.
type counter struct {
	chunks chan textChunk
	done   sync.WaitGroup
	counts []int
	errs   []error
}

// textChunk is a text to count and, when out is set, where its own count goes
// (besides the total) once counted.
type textChunk struct {
	text string
	out  *int
}

// newCounter starts a counter, whose workers count with large caches
// when large is set (the text is at least largeText).
func newCounter(large bool) (*counter, error) {
	n := runtime.NumCPU()
	c := &counter{chunks: make(chan textChunk, n), counts: make([]int, n), errs: make([]error, n)}
	caches := &pieceCounts
	if large {
		caches = &largePieceCounts
	}
	for w := range n {
		c.done.Go(func() {
			cache := caches.Get().(*o200k.Cache)
			defer caches.Put(cache)
			for ch := range c.chunks {
				if c.errs[w] != nil {
					continue // drain, so that senders never block
				}
				k, err := countText(ch.text, cache)
				c.counts[w] += k
				c.errs[w] = err
				if ch.out != nil {
					*ch.out = k
				}
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

// countText counts the tokens of one chunk: the count of each
// pre-tokenizer piece, through c. (Go maps of the pieces' counts, per
// worker and per process, were slower than counting a piece again against
// the table, 104 → 111 MB/s without them; c, a direct-mapped table of short
// pieces, is faster than both: 120 → 186 MB/s.)
func countText(s string, c *o200k.Cache) (int, error) {
	if !utf8.ValidString(s) {
		if err := loadTokenizer(); err != nil {
			return 0, err
		}
		return codec.Count(s)
	}
	total := 0
	splitO200k(s, func(piece string) bool {
		total += c.Count(piece)
		return true
	})
	return total, nil
}

// tokenCounter counts the tokens of what a buffer holds, exactly as
// CountTokens counts the whole, as it is written: the text is cut into
// chunks as CountTokens cuts it (see tokenCut), each counted on a core as
// soon as it is complete. A chunk is a string over the buffer's bytes, not
// a copy (a 10,000-file pack copied its 24 MB, 39 of the 600 MB it
// allocated): a bytes.Buffer written and never read only appends, and
// when it grows it copies into a new array and never writes the old one
// again, so bytes once written stay as they are. Start it with
// newTokenCounter; finish returns the count.
type tokenCounter struct {
	c     *counter
	buf   *bytes.Buffer
	chunk int // the least size of a chunk
	start int // offset in buf of the first byte not in a chunk
	from  int // where, from start, the search for the next cut resumes

	// counts, when set, remembers the counts of items' contents across
	// runs (see noteItem); region is the next write's content region,
	// keyed by key; known sums the counts remembered, and counted the
	// regions counted now, to remember at the end.
	counts  TokenCounts
	region  [2]int
	key     string
	known   int
	counted []countedRegion
}

type countedRegion struct {
	key string
	n   *int
}

// TokenCounts remembers token counts of a pack's parts across runs, so
// that a run over files counted before does not count them again (the
// scan cache keeps them beside the scan results: audit.Scanner). A key is
// 64 lowercase hex digits, a digest of what was counted.
type TokenCounts interface {
	TokenCount(key string) (n int, ok bool)
	StoreTokenCount(key string, n int)
}

// minRememberedRegion is the smallest content whose count is remembered.
// A cache entry costs ~8 µs to look up and store in a first run, counting
// 4 KiB ~20 µs: from 4 KiB, the files that hold most of a tree's bytes
// (94% of prometheus', 1,667 files, in 645 entries) and few entries where
// files are small (10,000 generated files of ~2.4 KB: 1,020 entries, a
// first run no slower; at 512 bytes, 9,500 entries made it 6% slower).
const minRememberedRegion = 4096

// newTokenCounter counts what is written to buf, a text of about size
// bytes (with large caches from largeText on).
func newTokenCounter(buf *bytes.Buffer, size int, counts TokenCounts) (*tokenCounter, error) {
	c, err := newCounter(size >= largeText)
	if err != nil {
		return nil, err
	}
	return &tokenCounter{c: c, buf: buf, chunk: tokenChunk, counts: counts}, nil
}

// contentKey and contentEnd frame an item's content in its serialization:
// `"content":"` is only ever a key there (a value's quotes are escaped),
// and the sha256 field, never omitted, follows the content.
var (
	contentKey = []byte(`"content":"`)
	contentEnd = []byte(`","sha256":"`)
)

// noteItem tells the counter that its next write is it, serialized as b.
// The region of b from the quote that closes the content key to the one
// that closes the content, `":"` and the escaped content, is a part the
// count of the whole is the sum over, like a chunk, when both quotes
// follow a lowercase letter (tokenCut): a content ending in a newline
// (escaped "\n") or a letter. Its count is then the one remembered under
// the digest of the content (which the item's sha256 is; the audit holds
// it to the content), else counted alone and remembered.
func (t *tokenCounter) noteItem(it *Item, b []byte) {
	t.region = [2]int{}
	if t.counts == nil || len(it.Content) < minRememberedRegion || len(it.SHA256) != 64 {
		return
	}
	i := bytes.Index(b, contentKey)
	if i < 0 {
		return
	}
	rs := i + len(contentKey) - 3 // at the quote that closes the key
	j := bytes.Index(b[rs+3:], contentEnd)
	if j < 0 {
		return
	}
	re := rs + 3 + j // at the quote that closes the content
	if c := b[re-1]; c < 'a' || c > 'z' {
		return
	}
	sum := sha256.Sum256([]byte(tokenCountsVersion + runtime.Version() + "\x00" + it.SHA256))
	t.region, t.key = [2]int{rs, re}, hex.EncodeToString(sum[:])
}

// tokenCountsVersion names what a remembered count counts: o200k_base's
// tokens, as splitO200k and package o200k count them, of `":"` and the
// content as encoding/json escapes it. The key adds the Go release (its
// encoding/json) and the content's digest; a change to how tokens are
// counted changes this version, as a change to the scan changes the scan
// cache's (audit's cacheKey).
const tokenCountsVersion = "ctxpack-tokens-o200k-content-v1\x00"

// Write cuts the chunks buf now completes; what it is given is what was
// just written to buf (it follows buf in an io.MultiWriter).
func (t *tokenCounter) Write(b []byte) (int, error) {
	data := t.buf.Bytes()
	if t.region[1] > 0 {
		base := len(data) - len(b)
		rs, re := base+t.region[0], base+t.region[1]
		t.region = [2]int{}
		t.cutBefore(data, rs)
		if rs > t.start {
			t.c.chunks <- textChunk{text: unsafe.String(&data[t.start], rs-t.start)}
		}
		region := data[rs:re]
		if n, ok := t.counts.TokenCount(t.key); ok && n >= 1 && n <= len(region) {
			t.known += n // every token is at least a byte
		} else {
			n := new(int)
			t.c.chunks <- textChunk{text: unsafe.String(&region[0], len(region)), out: n}
			t.counted = append(t.counted, countedRegion{t.key, n})
		}
		t.start, t.from = re, 0
	}
	t.cutBefore(data, len(data))
	return len(b), nil
}

// cutBefore sends the chunks of at least t.chunk bytes that end by end.
func (t *tokenCounter) cutBefore(data []byte, end int) {
	for end-t.start > t.chunk {
		s := unsafe.String(&data[t.start], end-t.start)
		cut := tokenCut(s, max(t.chunk, t.from))
		if cut < 0 {
			t.from = len(s)
			break
		}
		t.c.chunks <- textChunk{text: s[:cut]}
		t.start += cut
		t.from = 0
	}
}

// finish counts the rest and returns the total, and remembers the counts
// of the regions counted. buf may change after.
func (t *tokenCounter) finish() (int, error) {
	rest := t.buf.Bytes()[t.start:]
	t.c.chunks <- textChunk{text: unsafe.String(unsafe.SliceData(rest), len(rest))}
	total, err := t.c.wait()
	if err != nil {
		return 0, err
	}
	for _, r := range t.counted {
		t.counts.StoreTokenCount(r.key, *r.n)
	}
	return total + t.known, nil
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
	// clsNone is U+007F, which the tokenizer's regexp engine leaves out of
	// the negated classes [^\r\n\p{L}\p{N}] and [^\s\p{L}\p{N}]: no
	// alternative matches it, and the tokenizer's search skips it (it
	// counts no token for it, where o200k_base's own byte-pair encoding
	// would count one).
	clsNone
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
	if r == 0x7f {
		c |= clsNone
	}
	return c
}

// pieceCount is a count of pre-tokenizer pieces; atLeast: the count
// stopped there, the text has more.
type pieceCount struct {
	n       int
	atLeast bool
}

// countPiecesUpTo is how many pieces o200k_base's pre-tokenizer cuts s
// into, each at least one token (0 for invalid UTF-8: no estimate), or,
// when that is over limit, the count as far as the first piece over it
// (atLeast).
func countPiecesUpTo(s string, limit int) pieceCount {
	if !utf8.ValidString(s) {
		return pieceCount{}
	}
	// A text with more pieces than limit is most of those the budget has
	// no room for: a byte loop over its letters says so sooner than
	// cutting the pieces.
	if limit >= 0 && letterRuns(s, limit) > limit {
		return pieceCount{n: limit + 1, atLeast: true}
	}
	c := pieceCount{}
	splitO200k(s, func(string) bool {
		c.n++
		if c.n > limit {
			c.atLeast = true
			return false
		}
		return true
	})
	return c
}

// letterRuns is a lower bound of the pieces splitO200k cuts valid UTF-8 s
// into, counted as far as limit+1: the runs of ASCII letters and bytes
// from 0x80 (which may be letters or marks) that hold an ASCII letter,
// apostrophes' left out. Only a letter alternative of the pattern takes
// ASCII letters, and its letters and marks stand together but for a
// contraction after an apostrophe ('s, 're…), so no piece holds two such
// runs; runs joined by other non-ASCII characters only count fewer.
func letterRuns(s string, limit int) int {
	n := 0
	counted := false // the current run is counted
	inRun := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		ascii := 'a' <= c|0x20 && c|0x20 <= 'z'
		if !ascii && c < 0x80 {
			inRun, counted = false, false
			continue
		}
		if !inRun {
			inRun = true
			counted = i > 0 && s[i-1] == '\'' // an apostrophe's run: never counted
		}
		if ascii && !counted {
			counted = true
			if n++; n > limit {
				return n
			}
		}
	}
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
		if c, n := cls(i); c&(clsNewline|clsLetter|clsNumber|clsNone) == 0 {
			if e := letters(i + n); e >= 0 {
				return e
			}
		}
		return letters(i)
	}
	for i := 0; i < len(s); {
		if end, letters := asciiPiece(s, i); end >= 0 {
			if letters {
				end = contraction(end)
			}
			if !yield(s[i:end]) {
				return
			}
			i = end
			continue
		}
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
			// No alternative matches here (U+007F, see clsNone): the
			// pattern's search skips the character.
			i += n
			continue
		}
		if !yield(s[i:end]) {
			return
		}
		i = end
	}
}

// asciiPiece is the end of the piece at i when a byte loop finds it (-1
// when none does: the pattern's alternatives decide), and whether it ends
// in letters, which a contraction may follow: asciiLetters, asciiOther
// and asciiSpaced, which never match at the same i.
func asciiPiece(s string, i int) (end int, letters bool) {
	if end = asciiLetters(s, i); end >= 0 {
		return end, true
	}
	if end = asciiOther(s, i); end >= 0 {
		return end, false
	}
	return asciiSpaced(s, i), false
}

// asciiLetters is the first or the second alternative of the pattern at
// i, short of its contraction, when it matches ASCII alone: an optional
// ASCII prefix character, then [A-Z]*[a-z]+ followed by an ASCII
// character or the end of the text (most of a pack's pieces: identifiers
// and words), or else [A-Z]+ followed by an ASCII character that is not a
// lower-case letter, or the end (HTTP, .GOOS). -1 otherwise (a non-ASCII
// character may extend the letters, or be one). For ASCII the upper run
// can only give back letters that are followed by another upper one, so
// the first alternative matches exactly when a lower letter follows the
// longest upper run; without one, no part of the run is followed by one,
// and the second takes the run.
func asciiLetters(s string, i int) int {
	c := s[i]
	if c >= utf8.RuneSelf {
		return -1
	}
	j := i
	if asciiClass[c]&(clsNewline|clsLetter|clsNumber|clsNone) == 0 {
		j++ // [^\r\n\p{L}\p{N}]?, taken first as the greedy ? does
	}
	k := j
	for k < len(s) && 'A' <= s[k] && s[k] <= 'Z' {
		k++
	}
	if k < len(s) && 'a' <= s[k] && s[k] <= 'z' {
		for k < len(s) && 'a' <= s[k] && s[k] <= 'z' {
			k++
		}
	} else if k == j {
		return -1
	}
	if k < len(s) && s[k] >= utf8.RuneSelf {
		return -1
	}
	return k
}

// asciiSpaced is the pattern's match at i where i holds an ASCII space
// and what decides the match is ASCII: a space and a run of ASCII symbols
// ( ?[^\s\p{L}\p{N}]+[\r\n/]*: the letters' alternatives need a letter
// after the space), or a run of spaces followed by an ASCII character
// that is not white space, or by the end of the text (\s+(?!\S): the run
// but its last space, which goes with what follows; a single space before
// a digit is \s+ alone). -1 otherwise (a space before a letter, other
// white space, a non-ASCII character after the run).
func asciiSpaced(s string, i int) int {
	if s[i] != ' ' {
		return -1
	}
	if i+1 < len(s) && s[i+1] < utf8.RuneSelf && asciiClass[s[i+1]]&notSymbol == 0 {
		return asciiSymbolsFrom(s, i+2)
	}
	ws := i + 1
	for ws < len(s) && s[ws] == ' ' {
		ws++
	}
	switch {
	case ws == len(s):
		return ws
	case s[ws] >= utf8.RuneSelf || asciiClass[s[ws]]&clsSpace != 0:
		return -1
	case ws-1 > i:
		return ws - 1
	case asciiClass[s[ws]]&clsNumber != 0:
		return ws
	}
	return -1
}

// asciiOther is the pattern's match at i where its first two alternatives
// cannot match and the third or fourth matches ASCII alone: up to three
// ASCII digits (\p{N}{1,3}), or a run of ASCII symbols ([^\s\p{L}\p{N}]+,
// U+007F never in it) and the line breaks and slashes after it ([\r\n/]*), each then
// followed by an ASCII character or the end (a non-ASCII one may be a
// number or a symbol that extends it). The first two alternatives cannot
// match at a digit, nor at a symbol that an ASCII non-letter follows (with
// the symbol as their prefix they need a letter next). -1 otherwise.
func asciiOther(s string, i int) int {
	c := s[i]
	if c >= utf8.RuneSelf {
		return -1
	}
	switch cl := asciiClass[c]; {
	case cl&clsNumber != 0:
		j := i + 1
		for j < len(s) && j < i+3 && '0' <= s[j] && s[j] <= '9' {
			j++
		}
		if j < i+3 && j < len(s) && s[j] >= utf8.RuneSelf {
			return -1
		}
		return j
	case cl&notSymbol == 0:
		if i+1 < len(s) && (s[i+1] >= utf8.RuneSelf || asciiClass[s[i+1]]&clsLetter != 0) {
			return -1
		}
		return asciiSymbolsFrom(s, i+1)
	}
	return -1
}

// notSymbol are the classes of the characters [^\s\p{L}\p{N}] leaves out
// (U+007F's too: no alternative matches it).
const notSymbol = clsLetter | clsNumber | clsSpace | clsNone

// asciiSymbolsFrom is the end of a run of symbols that the characters
// before j started: the ASCII symbols from j, then the line breaks and
// slashes after them ([\r\n/]*). -1 when a non-ASCII character follows
// the symbols (it may be one).
func asciiSymbolsFrom(s string, j int) int {
	for j < len(s) && s[j] < utf8.RuneSelf && asciiClass[s[j]]&notSymbol == 0 {
		j++
	}
	if j < len(s) && s[j] >= utf8.RuneSelf {
		return -1
	}
	for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
		j++
	}
	return j
}

// symbolsAt is ` ?[^\s\p{L}\p{N}]+[\r\n/]*` at i, -1 when it does not match.
func symbolsAt(s string, i int, cls func(int) (uint8, int)) int {
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
