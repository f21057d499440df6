package pack

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
	"golang.org/x/sync/errgroup"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// TruncationMarker is seed 000's marker between the kept head and tail.
const TruncationMarker = "\n... [truncated] ...\n"

// decode turns file bytes into UTF-8 text in the given encoding. Undecodable
// sequences become U+FFFD (seed 000: replace).
func decode(data []byte, enc string) (string, error) {
	switch enc {
	case EncUTF16LE, EncUTF16BE:
		end := unicode.LittleEndian
		if enc == EncUTF16BE {
			end = unicode.BigEndian
		}
		out, err := unicode.UTF16(end, unicode.ExpectBOM).NewDecoder().Bytes(data)
		if err != nil {
			return "", fmt.Errorf("decode %s: %w", enc, err)
		}
		return string(out), nil
	case EncLatin1:
		out, err := charmap.ISO8859_1.NewDecoder().Bytes(data)
		if err != nil {
			return "", fmt.Errorf("decode %s: %w", enc, err)
		}
		return string(out), nil
	default:
		return strings.ToValidUTF8(string(data), "\uFFFD"), nil
	}
}

// span is a kept byte range of the original text.
type span struct{ start, end int }

// truncate keeps the first head and last tail lines around the marker when
// text is over maxBytes; if head and tail are still over the limit (very long
// lines), they are cut at rune boundaries. It returns the text and the kept
// spans of the original, so secrets found in the original can be mapped.
func truncate(text string, maxBytes int64, head, tail int) (string, []span, bool) {
	if int64(len(text)) <= maxBytes {
		return text, []span{{0, len(text)}}, false
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if head+tail >= len(lines) {
		head, tail = len(lines), 0
	}
	headEnd := 0
	for _, l := range lines[:head] {
		headEnd += len(l)
	}
	tailStart := len(text)
	for i := len(lines) - 1; i >= len(lines)-tail && i >= head; i-- {
		tailStart -= len(lines[i])
	}
	budget := int(maxBytes) - len(TruncationMarker)
	if budget < 0 {
		budget = 0
	}
	if headEnd+(len(text)-tailStart) > budget {
		// Long lines: keep two thirds of the budget at the head, one third at the tail.
		h := budget * 2 / 3
		if h > headEnd {
			h = headEnd
		}
		t := budget - h
		if t > len(text)-tailStart {
			t = len(text) - tailStart
		}
		headEnd = runeFloor(text, h)
		tailStart = runeCeil(text, len(text)-t)
	}
	out := text[:headEnd] + TruncationMarker + text[tailStart:]
	return out, []span{{0, headEnd}, {tailStart, len(text)}}, true
}

func runeFloor(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

func runeCeil(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// mapSpan maps a byte span of the original text onto the truncated text, which
// is the kept spans joined by the marker. Parts cut away are dropped.
func mapSpan(kept []span, start, end int) []span {
	var out []span
	offset := 0
	for i, k := range kept {
		if i > 0 {
			offset += len(TruncationMarker)
		}
		s, e := max(start, k.start), min(end, k.end)
		if s < e {
			out = append(out, span{offset + s - k.start, offset + e - k.start})
		}
		offset += k.end - k.start
	}
	return out
}

// countLines counts lines the way an editor shows them.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// TokenEncoding is the tokenizer the token estimate uses.
const TokenEncoding = "o200k_base"

var (
	codecOnce sync.Once
	codec     tokenizer.Codec
	codecErr  error
)

// tokenChunk is the size of the pieces CountTokens counts in parallel.
const tokenChunk = 256 << 10

// CountTokens estimates the tokens of s with o200k_base. Large texts are cut
// into pieces of about 256 KiB that are counted on all cores. A cut is only
// made between an ASCII lowercase letter and a '"' (in a pack: after every
// JSON key, which a compact pack has many of, unlike newlines): o200k's
// pre-tokenizer always ends a piece there and starts the next one afresh,
// so the sum over the pieces is exactly the count of the whole text.
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
	if err := LoadTokenizer(); err != nil {
		return 0, err
	}
	var pieces []string
	for len(s) > chunk {
		cut := tokenCut(s, chunk)
		if cut < 0 {
			break
		}
		pieces = append(pieces, s[:cut])
		s = s[cut:]
	}
	pieces = append(pieces, s)
	counts := make([]int, len(pieces))
	var g errgroup.Group
	g.SetLimit(runtime.NumCPU())
	for i, p := range pieces {
		g.Go(func() error {
			n, err := codec.Count(p)
			counts[i] = n
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return 0, fmt.Errorf("count tokens: %w", err)
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	return total, nil
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
