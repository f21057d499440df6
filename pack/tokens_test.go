package pack

import (
	"bytes"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// o200kPattern is the pre-tokenizer pattern of o200k_base, as the tokenizer
// package compiles it: splitO200k must cut every text exactly where it does.
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

var o200kRegexp = regexp2.MustCompile(o200kPattern, regexp2.None)

func regexpPieces(t testing.TB, s string) []string {
	t.Helper()
	var out []string
	m, err := o200kRegexp.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = o200kRegexp.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func splitPieces(s string) []string {
	var out []string
	splitO200k(s, func(p string) bool { out = append(out, p); return true })
	return out
}

func checkSplit(t *testing.T, s string) bool {
	t.Helper()
	want, got := regexpPieces(t, s), splitPieces(s)
	if !slices.Equal(got, want) {
		t.Errorf("split %q\n got  %q\n want %q", s, got, want)
		return false
	}
	return true
}

// trickyRunes are characters whose class decides a cut: letters of every
// case category, marks, numbers of every kind, spaces of every kind,
// symbols, and the non-ASCII runes that fold to ASCII letters.
var trickyRunes = []string{
	"a", "z", "s", "t", "Q", "S", "T", "R", "E", "V", "M", "L", "D", "'", "\"", " ", "  ", "\t", "\n", "\r", "\r\n",
	"\v", "\f", "7", "123", "45678", "/", "\\", "{", "}", ":", ",", ".", "-", "_", "$", "!",
	"é", "É", "ü", "ß", "\u0301", "\u0308", "\u02b0", "\u01c5", "\u1d2c", "日本", "ا", "\u216b", "\u00bd", "\u0663",
	"\u00a0", "\u2028", "\u2029", "\u3000", "\u0085", "\u1680", "\ufeff", "\u200b", "\U0001f600", "\ufffd", "\x7f",
	"\u017f", "\u212a", "\u0130", "\u0131", "'S", "'LL", "'re", "'Ve", "'d", "'m", "'t",
}

// randomText is up to n-1 of trickyRunes, drawn with r.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for k := r.IntN(n); k > 0; k-- {
		b.WriteString(trickyRunes[r.IntN(len(trickyRunes))])
	}
	return b.String()
}

func TestSplitO200kMatchesThePattern(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3000; i++ {
		if !checkSplit(t, randomText(r, 40)) {
			return
		}
	}
}

// TestSplitO200kASCIIPaths: the byte loops' pieces (asciiLetters,
// asciiOther, asciiSpaced) at each of their edges: the end
// of the text, a non-ASCII character next (a letter, a mark, a space, a
// symbol), other white space next, a contraction next.
func TestSplitO200kASCIIPaths(t *testing.T) {
	var cases []string
	for _, piece := range []string{
		"HTTP", " URL", "(KEY", ".GOOS", "_SASS", "A", "'S", "HTML's", "DON'T", "ABCé", "ABC\u0301", "AB1", "AB_",
		" (", " **/*.", " :=", " \"", " -\n", " /", " (é", " (\u00a0", " ()\r\n/", " \x7f",
		" ", "  ", "      ", " 1", " 12345", "   x", "  X", "  (", "  \t", "  \n", "  \u00a0", "  é", " é", " \u3000",
	} {
		for _, next := range []string{"", "a", "Z", "1", " ", "\t", "\n", "(", "é", "\u0301", "\u00a0", "'s", "'S", "\x7f"} {
			cases = append(cases, piece+next, "x"+piece+next, "1"+piece+next)
		}
	}
	for _, s := range cases {
		if !checkSplit(t, s) {
			return
		}
	}
}

// TestSplitO200kEveryRune puts every 3rd code point of the first three planes
// in the contexts that decide its class: before and after letters, spaces,
// numbers and an apostrophe.
func TestSplitO200kEveryRune(t *testing.T) {
	step := 3
	if testing.Short() || raceEnabled {
		step = 61
	}
	for r := rune(0); r < 0x30000; r += rune(step) {
		if !utf8.ValidRune(r) {
			continue
		}
		c := string(r)
		s := "a" + c + "b " + c + "C'" + c + "\n" + c + c + "1" + c + " " + c + "x\t" + c + "'s " + c
		if !checkSplit(t, s) {
			return
		}
	}
}

func TestSplitO200kOnRealFiles(t *testing.T) {
	n := 0
	for _, text := range repositoryTexts(t, 4) {
		if utf8.ValidString(text) && !checkSplit(t, text) {
			break
		}
		n++
	}
	if n < 50 {
		t.Fatalf("only %d files checked", n)
	}
}

// repositoryTexts are the texts of this repository's .go, .md and .json
// files: all of them, or one in every `every` under -race.
func repositoryTexts(t *testing.T, every int) []string {
	t.Helper()
	var out []string
	seen := 0
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || strings.HasPrefix(d.Name(), ".") && p != "..") {
			if d != nil && d.IsDir() && p != ".." {
				return fs.SkipDir
			}
			return err
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".json")) {
			return nil
		}
		if seen++; raceEnabled && seen%every != 0 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCountTokensMatchesTokenizer compares the count with the tokenizer's
// own on whole texts, including invalid UTF-8 (counted by the tokenizer).
func TestCountTokensMatchesTokenizer(t *testing.T) {
	if err := loadTokenizer(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	texts := []string{"", "hello world", "don't STOP'LL", "\xff\xfeabc def", "a\x7fb \x7f\x7f", strings.Repeat("func main() {\n\tx := 1\n}\n", 50)}
	for i := 0; i < 200; i++ {
		texts = append(texts, randomText(r, 200))
	}
	for _, s := range texts {
		sameCount(t, s)
	}
}

// sameCount fails t unless CountTokens counts s as the tokenizer package
// does.
func sameCount(t testing.TB, s string) {
	t.Helper()
	want, err := codec.Count(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := CountTokens(s)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("CountTokens = %d, the tokenizer counts %d: %.200q", got, want, s)
	}
}

// TestTokenCounterMatchesCountTokens writes texts in random pieces: the
// streamed count is the count of the whole.
func TestTokenCounterMatchesCountTokens(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	texts := []string{"", `{"a":"b"}`, strings.Repeat(`{"path":"x.go","content":"package x\n"},`, 300)}
	for i := 0; i < 100; i++ {
		texts = append(texts, randomText(r, 300))
	}
	for _, s := range texts {
		want, err := CountTokens(s)
		if err != nil {
			t.Fatal(err)
		}
		// A buffer small at first: it grows, into new arrays, as it is written.
		buf := bytes.NewBuffer(make([]byte, 0, r.IntN(16)))
		// Counted with small caches, or with large ones as a large
		// pack is: the same count.
		c, err := newTokenCounter(buf, []int{len(s), largeText}[r.IntN(2)], nil)
		if err != nil {
			t.Fatal(err)
		}
		c.chunk = 1 + r.IntN(100) // many chunks, cut as CountTokens cuts
		w := io.MultiWriter(buf, c)
		for rest := s; len(rest) > 0; {
			n := min(len(rest), 1+r.IntN(64))
			if _, err := w.Write([]byte(rest[:n])); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		got, err := c.finish()
		if err != nil || got != want || buf.String() != s {
			t.Fatalf("streamed count of %q = %d (%v), want %d", s, got, err, want)
		}
	}
}

// TestCountTokensMatchesTokenizerOnRealFiles compares the count with the
// tokenizer package's on this repository's files, as text and as the JSON
// strings a pack holds them in, and on the file CTXPACK_TOKENS_FILE names
// when set (a pack of a public repository, say).
func TestCountTokensMatchesTokenizerOnRealFiles(t *testing.T) {
	if err := loadTokenizer(); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, s := range repositoryTexts(t, 8) {
		data, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, s, string(data))
	}
	if f := os.Getenv("CTXPACK_TOKENS_FILE"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(data))
	}
	for _, s := range texts {
		sameCount(t, s)
	}
	if len(texts) < 60 {
		t.Fatalf("only %d texts checked", len(texts))
	}
}

// TestCountPiecesAtMostTokens: a change pack estimates a file it has not
// scanned by its pre-tokenizer pieces (allocation.ready), which must not
// exceed the tokens of its text as the pack holds it (a JSON string) on
// real text: this repository's files and texts built to stress escaping.
func TestCountPiecesAtMostTokens(t *testing.T) {
	texts := []string{"a\nb", "x\n\n\ty", "\"quoted\"\\path\\\t", "line\r\nnext", "\x00\x01bin", "ünïcödé\n\"ß\"", strings.Repeat("} \n", 40)}
	texts = append(texts, repositoryTexts(t, 4)...)
	for _, s := range texts {
		data, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		tokens, err := CountTokensOf(data)
		if err != nil {
			t.Fatal(err)
		}
		if pieces := countPiecesUpTo(s, math.MaxInt).n; pieces > tokens {
			t.Errorf("%d pieces, %d tokens as a JSON string: %.80q", pieces, tokens, s)
		}
	}
	if len(texts) < 30 {
		t.Fatalf("only %d texts checked", len(texts))
	}
}

// TestCountPiecesUpTo: a count up to a limit is the whole count when that
// is within the limit, else it stops just past the limit and says so.
func TestCountPiecesUpTo(t *testing.T) {
	texts := append([]string{"", "a", "one two three", "ünïcödé \"ß\"", "\xff\xfe"}, repositoryTexts(t, 2)...)
	for _, s := range texts {
		whole := countPiecesUpTo(s, math.MaxInt).n
		for _, limit := range []int{-1, 0, 1, 2, whole - 1, whole, whole + 1, 1 << 30} {
			got := countPiecesUpTo(s, limit)
			want := pieceCount{n: whole}
			if whole > max(limit, 0) {
				want = pieceCount{n: max(limit, 0) + 1, atLeast: true}
			}
			if got != want {
				t.Errorf("countPiecesUpTo(%.40q, %d) = %+v, want %+v (whole: %d)", s, limit, got, want, whole)
			}
		}
	}
}
