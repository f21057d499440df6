package audit

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	ahocorasick "github.com/BobuSumisu/aho-corasick"

	"github.com/ctxpack/ctxpack/internal/secrettest"
)

// TestNativeEncodingsMatchRegexp compares nativeEncodings with Go's regexp
// of gitleaks' encodings pattern, match by match and group by group.
func TestNativeEncodingsMatchRegexp(t *testing.T) {
	re := regexp.MustCompile(encodingsPattern)
	texts := decodeTexts(8000 / sample(10))
	for i, f := range scanTexts(t) {
		if i%sample(4) == 0 {
			texts = append(texts, f.text)
		}
	}
	texts = append(texts, "U+0041", "U+0041 U+0042\tU+004", `\\\u0041\U0042\\u00zz`, "abU+0041 xyz", "%41\n%42", "=\xffU+0041 ")
	found := 0
	for _, text := range texts {
		want := re.FindAllStringSubmatchIndex(text, -1)
		got := nativeEncodings{}.FindAllStringSubmatchIndex(text, -1)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("encodings of %q\n got: %v\nwant: %v", text, got, want)
		}
		if len(want) > 0 {
			found++
		}
	}
	if found < len(texts)/4 {
		t.Errorf("only %d of %d texts hold an encoding", found, len(texts))
	}
}

// FuzzNativeEncodings: nativeEncodings finds what the pattern finds, and
// the decoding passes made with it are gitleaks' decoder's.
func FuzzNativeEncodings(f *testing.F) {
	for _, s := range decodeTexts(8) {
		f.Add(s)
	}
	f.Add("U+0041 U+0042")
	f.Add(`\\u0041\u0042`)
	re := regexp.MustCompile(encodingsPattern)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 64<<10 {
			return
		}
		want := re.FindAllStringSubmatchIndex(text, -1)
		got := nativeEncodings{}.FindAllStringSubmatchIndex(text, -1)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("encodings differ\n got: %v\nwant: %v", got, want)
		}
		passes := decodePasses(text, DecodeDepth)
		native, ranges := decodePassesSegs(text, DecodeDepth)
		if !slices.Equal(native, passes) {
			t.Fatalf("decoding passes differ\n got: %q\nwant: %q", native, passes)
		}
		sameSegments(t, passes, ranges)
	})
}

// TestNativeDecodePassesMatchGitleaks compares the decoding passes made
// with nativeEncodings with gitleaks' decoder's, with the decoded values'
// ranges: on texts that decode, on the same with invalid UTF-8 and NULs
// put in (before, inside and after segments), and on scanned texts.
func TestNativeDecodePassesMatchGitleaks(t *testing.T) {
	texts := decodeTexts(8000 / sample(10))
	r := rand.New(rand.NewPCG(5, 6))
	bad := []string{"\xff", "\x80", "\xc3", "\x00", "\xe2\x82", "%\xff", "\xff%41", "U+0041\xff"}
	for _, text := range decodeTexts(8000 / sample(10)) {
		b := []byte(text)
		for range 1 + r.IntN(3) {
			b = slices.Insert(b, r.IntN(len(b)+1), []byte(bad[r.IntN(len(bad))])...)
		}
		texts = append(texts, string(b))
	}
	for i, f := range scanTexts(t) {
		if i%sample(4) == 0 {
			texts = append(texts, f.text)
		}
	}
	decoded := 0
	for _, text := range texts {
		want := decodePasses(text, DecodeDepth)
		got, ranges := decodePassesSegs(text, DecodeDepth)
		if !slices.Equal(got, want) {
			t.Fatalf("decoding passes differ for %q\n got: %q\nwant: %q", text, got, want)
		}
		sameSegments(t, want, ranges)
		if len(want) > 1 {
			decoded++
		}
	}
	if decoded < len(texts)/4 {
		t.Errorf("only %d texts decode", decoded)
	}
}

// TestFastDetectWindowEdges: matches at a text's first and last lines,
// across lines, on a last line without '\n', next to each other, with
// gitleaks:allow on the line, and after decoding.
func TestFastDetectWindowEdges(t *testing.T) {
	f, stock := defaultFast(t)
	fake := secrettest.Make(5)
	b64 := base64.StdEncoding.EncodeToString
	for _, text := range []string{
		"api_key = " + fake.APIKey,
		"api_key = " + fake.APIKey + "\n",
		"x\napi_key =\n\n\n  '" + fake.APIKey + "'\n",
		"token:\n" + fake.GitHub,
		fake.GitHub + " " + fake.Slack + "\n" + fake.Stripe,
		"a\n" + fake.AWSKeyID + "\n" + fake.JWT,
		"secret = " + fake.APIKey + " // gitleaks:allow\nsecret = " + fake.APIKey + "\n",
		"github_token = " + fake.GitHub + "\n",
		"export TOKEN=" + b64([]byte("github_token = "+fake.GitHub)) + "\n",
		"x = \"\\u0061pi_key = " + fake.APIKey + "\"\n",
		"U+0041 U+0042\napi_key: " + fake.APIKey,
		strings.Repeat("line\n", 30) + "password = \"" + fake.DBPassword + "\"\n" + strings.Repeat("tail\n", 30),
		"ſecret = " + fake.APIKey + "\n",
		fake.RSAKey + "\n",
		// Windows holding a fold rune beside windows without one (those
		// take the occurrences the ASCII search found), and a long one.
		strings.Repeat("line\n", 40) + "ſecret = " + fake.APIKey + "\n" + strings.Repeat("mid\n", 60) +
			"github_token = " + fake.GitHub + "\napi_key = " + fake.APIKey + "\n" + strings.Repeat("tail\n", 40) + "a \u212a and a ſ\n",
		strings.Repeat("x = 1\n", 1000) + "password = \"" + fake.DBPassword + "\"\n" + strings.Repeat("y\n", 500) + "\u212aey = " + fake.APIKey + "\n",
	} {
		for _, start := range []int{1, 40} {
			frag := fragment{Raw: text, FilePath: "edge.env", StartLine: start}
			sameFindings(t, f, stock, frag)
		}
	}
}

// TestFastDetectDecodedSecrets: texts full of encoded values, some of
// them secrets (decodeTexts), and fake secrets encoded next to keywords.
func TestFastDetectDecodedSecrets(t *testing.T) {
	f, stock := defaultFast(t)
	fake := secrettest.Make(13)
	b64 := base64.StdEncoding.EncodeToString
	texts := decodeTexts(2000 / sample(10))
	for _, s := range []string{fake.GitHub, fake.Slack, fake.Stripe, fake.AWSKeyID, fake.JWT, fake.APIKey} {
		texts = append(texts,
			"api_key = "+b64([]byte(s))+"\n",
			"x\n"+b64([]byte("token: "+s))+"\ny = 1\n",
			"u = \"%74%6f%6b%65%6e%3d"+s+"\"\n",
			fmt.Sprintf("h = %x\n", "secret="+s),
			"s = \"\\u0074oken=\\u0022"+s+"\"\n",
			b64([]byte(b64([]byte("password: "+s))))+"\n")
	}
	found := 0
	for i, text := range texts {
		frag := fragment{Raw: text, FilePath: "dec.txt", StartLine: 1 + i%3}
		sameFindings(t, f, stock, frag)
		if len(stock.DetectContext(context.Background(), frag)) > 0 {
			found++
		}
	}
	if found < 20 {
		t.Errorf("only %d texts with findings", found)
	}
}

// TestFastDetectMatchesStockOnTree compares the fast path with gitleaks'
// detector on every text file of a tree: CTXPACK_SCAN_TREE=DIR (a checkout,
// e.g. of prometheus or hugo); without it, on the generated tree
// BenchmarkScanGenerated scans.
func TestFastDetectMatchesStockOnTree(t *testing.T) {
	f, stock := defaultFast(t)
	var files []textFile
	if os.Getenv("CTXPACK_SCAN_TREE") != "" {
		texts := treeTexts(t)
		for _, p := range slices.Sorted(maps.Keys(texts)) {
			files = append(files, textFile{p, texts[p]})
		}
	} else {
		for i, it := range generatedItems() {
			if i%sample(10) == 0 {
				files = append(files, textFile{it.Path, string(it.Content)})
			}
		}
	}
	found := 0
	for _, file := range files {
		frag := fragment{Raw: file.text, FilePath: file.path, StartLine: 1}
		want := findingsKey(stock.DetectContext(context.Background(), frag))
		got := f.detect(context.Background(), frag, newLineIndex(frag.Raw))
		if g := findingsKey(got); !slices.Equal(g, want) {
			t.Fatalf("%s: fast path findings differ\n got: %d findings\nwant: %d", file.path, len(g), len(want))
		}
		if g := fastWithSpans(f, frag); !slices.Equal(g, want) {
			t.Fatalf("%s: fast path findings differ with every window tested through its spans\n got: %d findings\nwant: %d", file.path, len(g), len(want))
		}
		found += len(want)
	}
	t.Logf("%d files, %d findings", len(files), found)
}

// TestLiteralsMatchSearch compares literals with strings.Index (every
// occurrence of every anchor and keyword) and the keywords found with
// gitleaks' prefilter trie, on real and generated texts.
func TestLiteralsMatchSearch(t *testing.T) {
	f, _ := defaultFast(t)
	w := f.rules
	cfg := mustDefaultConfig(t)
	trie := ahocorasick.NewTrieBuilder().AddStrings(slices.Sorted(maps.Keys(cfg.Keywords))).Build()
	var texts []string
	for i, file := range scanTexts(t) {
		if i%sample(4) == 0 {
			texts = append(texts, file.text)
		}
	}
	texts = append(texts, "", "k", "ke", "KEY", "s.s.", "hvs.hvs.", "ſecret \u212aey")
	for _, text := range texts {
		lower, alower := lowered(text)
		lits := *w.scanLiterals(lower, alower)
		want := map[string]bool{}
		for _, m := range trie.MatchString(lower) {
			want[lower[m.Pos():int(m.Pos())+len(m.Match())]] = true
		}
		present := map[string]bool{}
		for id, ok := range lits.present {
			if ok {
				present[w.lits.strs[id]] = true
			}
		}
		if !maps.Equal(present, want) {
			t.Fatalf("keywords in %.80q: %v, gitleaks' prefilter %v", text, present, want)
		}
		for id, s := range w.lits.strs {
			if !w.isAnchor[id] {
				continue
			}
			var at []int
			for i := 0; ; {
				j := strings.Index(alower[i:], s)
				if j < 0 {
					break
				}
				at = append(at, i+j)
				i += j + 1
			}
			if !slices.Equal(lits.at[id], at) {
				t.Fatalf("anchor %q in %.80q at %v, strings.Index %v", s, text, lits.at[id], at)
			}
		}
	}
}
