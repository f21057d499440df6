package audit

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/detect/codec"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/ctxpack/ctxpack/internal/secrettest"
)

// sample is 1, or every nth under the race detector.
func sample(n int) int {
	if raceEnabled {
		return n
	}
	return 1
}

func defaultFast(t testing.TB) (*fastDetect, *detect.Detector) {
	t.Helper()
	src, err := loadRules("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fastAndStockOf(t, src)
}

// fastAndStock are the fast path and gitleaks' own detector over cfg.
func fastAndStock(t testing.TB, cfg config.Config) (*fastDetect, *detect.Detector) {
	t.Helper()
	return fastAndStockOf(t, eagerRules(cfg))
}

// fastAndStockOf are the fast path over src's rules (the default ones
// translated one by one as they are needed) and gitleaks' own detector
// over the whole config translated at once.
func fastAndStockOf(t testing.TB, src *ruleSource) (*fastDetect, *detect.Detector) {
	t.Helper()
	f := newFastDetect(src, fastGitleaksVersion)
	if f == nil {
		t.Fatal("the fast path does not apply to the config")
	}
	stock := detect.NewDetector(src.full())
	stock.MaxDecodeDepth = DecodeDepth
	return f, stock
}

// genericKeywords are the alternatives of genericPattern's keyword group,
// lowercased.
var genericKeywords = []string{"access", "api", "auth", "credential", "creds", "key", "passwd", "password", "secret", "token"}

func TestFastPathAppliesToDefaultRules(t *testing.T) {
	f, _ := defaultFast(t)
	g := f.rules.windowedRule(genericRuleID)
	if g == nil {
		t.Fatal("generic-api-key is not windowed")
	}
	if !slices.Equal(g.anchor.anchors, genericKeywords) || g.anchor.before != 0 || g.anchor.after != 9 || !g.assign || g.assignRest != 1 {
		t.Errorf("generic-api-key: anchors %q, %d lines before, %d after, assignment %v (%d lines after its value); want %q, 0, 9, true (1)",
			g.anchor.anchors, g.anchor.before, g.anchor.after, g.assign, g.assignRest, genericKeywords)
	}
	// The rules gitleaks generates like it (twitter, adobe, …) are
	// recognised as assignments too.
	for _, id := range []string{"twitter-api-key", "adobe-client-id", "etsy-access-token"} {
		if r := f.rules.windowedRule(id); r == nil || !r.assign {
			t.Errorf("%s is not windowed as an assignment", id)
		}
	}
	if r := f.rules.windowedRule("jwt"); r == nil || r.assign {
		t.Error("jwt is windowed as an assignment")
	}
	for _, text := range []string{"abc", "ſ", "\u212a", "é\u212ax", "\xc5"} {
		if hasFoldRune(text) != strings.ContainsAny(text, foldRunes) {
			t.Errorf("hasFoldRune(%q) = %v", text, hasFoldRune(text))
		}
	}
	// Most default rules are windowed; the ones that are not have a match
	// without a literal or reaching across any number of lines.
	n := 0
	for _, r := range f.rules.windowed {
		if r.anchored {
			n++
		}
	}
	if n < 200 {
		t.Errorf("only %d default rules are windowed", n)
	}
	for _, id := range []string{"private-key", "curl-auth-user", "kubernetes-secret-yaml"} {
		if r := f.rules.windowedRule(id); r == nil || r.anchored {
			t.Errorf("%s is windowed, but its matches can span any number of lines", id)
		}
	}
	if newFastDetect(eagerRules(mustDefaultConfig(t)), "v8.31.0") != nil {
		t.Error("the fast path must only be used with the gitleaks version it mirrors")
	}
	// A rule another rule requires runs on the whole text.
	cfg := mustDefaultConfig(t)
	cfg.Rules = maps.Clone(cfg.Rules)
	gh := cfg.Rules["github-pat"]
	gh.RequiredRules = []*config.Required{{RuleID: "jwt"}}
	cfg.Rules["github-pat"] = gh
	f2 := newFastDetect(eagerRules(cfg), fastGitleaksVersion)
	if f2.rules.windowedRule("jwt") != nil || f2.rules.windowedRule("github-pat") != nil {
		t.Error("a rule with required rules, or required by one, must not be windowed")
	}
	s, err := NewScanner(ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.fast == nil {
		t.Error("NewScanner does not use the fast path with the default rules")
	}
}

func mustDefaultConfig(t testing.TB) config.Config {
	cfg, err := loadGitleaksConfig("", ".")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestAnchorsOf(t *testing.T) {
	for _, c := range []struct {
		re            string
		anchors       []string
		before, after int
		ok            bool
	}{
		{`abc`, []string{"abc"}, 0, 0, true},
		{`a\nbc`, []string{"a\nbc"}, 0, 1, true},
		{`(?i)x[\s]{0,3}KEY[\s]{0,2}=`, []string{"key"}, 3, 2, true},
		{`(?i)\b(?:ghp|gho)_[a-z]{4}`, []string{"ghp_", "gho_"}, 0, 0, true},
		{`[Aa]pi|API`, []string{"api"}, 0, 0, true},
		{`(?:foo|ba)r\s{0,4}=`, []string{"bar", "foor"}, 0, 4, true},
		{`(ab|cd[\n]{1,3})+x`, []string{"ab", "cd"}, 0, 0, false}, // unbounded reach
		{`token\s*=`, nil, 0, 0, false},
		{`[a-z]{10}`, nil, 0, 0, false},
		{`x|yz`, nil, 0, 0, false}, // a one-byte alternative
		{`(?i)clé`, nil, 0, 0, false},
		{`(?:ab){2}c`, []string{"ababc"}, 0, 0, true},
		{`\d{3}(?:ab|cd){1,2}\n?`, []string{"ab", "cd"}, 0, 1, true},
		{`(?:x\n?ab|cd)+`, nil, 0, 0, false},
		{`(?:x\n?ab|cd){1,3}`, []string{"cd", "x\nab", "xab"}, 3, 3, true},
		{`(?i)[\w.-]{0,50}?(?:secret|passw(?:or)?d)[ \t\w.-]{0,20}[\s'"]{0,3}=\s?x`, []string{"passwd", "password", "secret"}, 0, 4, true},
	} {
		a, ok := anchorsOf(c.re)
		if ok != c.ok {
			t.Errorf("anchorsOf(%q): ok %v, want %v (%+v)", c.re, ok, c.ok, a)
			continue
		}
		if !ok {
			continue
		}
		want := slices.Clone(c.anchors)
		slices.Sort(want)
		if !slices.Equal(a.anchors, want) || a.before != c.before || a.after != c.after {
			t.Errorf("anchorsOf(%q) = %q, %d, %d; want %q, %d, %d", c.re, a.anchors, a.before, a.after, want, c.before, c.after)
		}
	}
}

// TestFoldRunes checks that ſ and the Kelvin sign are the only non-ASCII
// runes Go's case folding puts in an ASCII letter's orbit.
func TestFoldRunes(t *testing.T) {
	var extra []rune
	for c := 'A'; c <= 'z'; c++ {
		if !unicode.IsLetter(c) {
			continue
		}
		for r := unicode.SimpleFold(c); r != c; r = unicode.SimpleFold(r) {
			if r >= utf8.RuneSelf && !slices.Contains(extra, r) {
				extra = append(extra, r)
			}
		}
	}
	slices.Sort(extra)
	if foldRunes != string(extra) {
		t.Errorf("non-ASCII folds of ASCII letters: %q, foldRunes %q", string(extra), foldRunes)
	}
}

// decoderFinds is gitleaks' own answer: does the first decoding pass find
// an encoded segment?
func decoderFinds(text string) bool {
	_, segs := codec.NewDecoder().Decode(text, []*codec.EncodedSegment{})
	return len(segs) > 0
}

func TestMayDecodeNeverMissesASegment(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	pieces := []func() string{
		func() string { return base64.StdEncoding.EncodeToString([]byte(randPrintable(r, 4+r.IntN(40)))) },
		func() string { return base64.RawURLEncoding.EncodeToString([]byte(randPrintable(r, 4+r.IntN(40)))) },
		func() string { return hex.EncodeToString([]byte(randPrintable(r, 16+r.IntN(20)))) },
		func() string { return url.QueryEscape(randPrintable(r, 3+r.IntN(20))) },
		func() string { return "%" + randFrom(r, "0123456789abcdefABCDEF%", 2+r.IntN(3)) },
		func() string { return randFrom(r, "0123456789abcdef", 1+r.IntN(70)) },
		func() string {
			return randFrom(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_", 1+r.IntN(40))
		},
		func() string { return strings.Repeat("=", r.IntN(4)) },
		func() string { return randFrom(r, " \n\t\r=%:\"'.,;", 1+r.IntN(3)) },
		func() string { return "U+" + randFrom(r, "0123456789ABCDEF", 4) + " " },
		func() string { return `\u` + randFrom(r, "0123456789abcdef", 4) },
		func() string { return "\xff\xfe" },
		func() string { return "é" },
	}
	found, said := 0, 0
	for i := 0; i < 200000/sample(10); i++ {
		var b strings.Builder
		for n := 1 + r.IntN(8); n > 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))]())
		}
		text := b.String()
		want, got := decoderFinds(text), mayDecode(text)
		if want && !got {
			t.Fatalf("mayDecode(%q) = false, but gitleaks' decoder finds a segment", text)
		}
		if want {
			found++
		}
		if got {
			said++
		}
	}
	t.Logf("decoder found segments in %d texts, mayDecode said yes for %d", found, said)
}

func TestMayDecodeOnRealFiles(t *testing.T) {
	files := realFiles(t)
	yes, extra := 0, 0
	for i, f := range files {
		if i%sample(4) != 0 {
			continue
		}
		want, got := decoderFinds(f.text), mayDecode(f.text)
		if want && !got {
			t.Fatalf("%s: mayDecode says no, but gitleaks' decoder finds a segment", f.path)
		}
		if want {
			yes++
		} else if got {
			extra++
		}
	}
	t.Logf("%d files: %d with segments, %d more sent to the stock detector", len(files), yes, extra)
}

func randFrom(r *rand.Rand, set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

func randPrintable(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(' ' + r.IntN(95))
	}
	return string(b)
}

type textFile struct{ path, text string }

// realFiles are this repository's text files and gitleaks' own sources and
// test data (full of secrets), when the module is in the module cache.
func realFiles(t testing.TB) []textFile {
	t.Helper()
	dirs := []string{".."}
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", gitleaksModule).Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	var files []textFile
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if n := d.Name(); n == ".git" || n == "bench" && dir == ".." {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if info, err := d.Info(); err != nil || info.Size() > 4<<20 {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil || strings.IndexByte(string(b[:min(len(b), 8000)]), 0) >= 0 {
				return nil
			}
			files = append(files, textFile{p, string(b)})
			return nil
		})
	}
	if len(files) < 100 {
		t.Fatalf("only %d files found", len(files))
	}
	return files
}

// findingsKey is a finding in a form that compares across detectors.
func findingsKey(fs []report.Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s|%d-%d|%d-%d|%q|%q|%q|%g|%v", f.RuleID, f.StartLine, f.EndLine,
			f.StartColumn, f.EndColumn, f.Match, f.Secret, f.Line, f.Entropy, f.Tags))
	}
	slices.Sort(out)
	return out
}

// sameFindings runs both detectors on frag and fails on any difference.
func sameFindings(t *testing.T, f *fastDetect, stock *detect.Detector, frag fragment) {
	t.Helper()
	want := findingsKey(stock.DetectContext(context.Background(), frag))
	got := f.detect(context.Background(), frag, newLineIndex(frag.Raw))
	if g := findingsKey(got); !slices.Equal(g, want) {
		t.Fatalf("%s: fast path findings differ\n got: %q\nwant: %q\ntext: %q", frag.FilePath, g, want, frag.Raw)
	}
	if g := fastWithSpans(f, frag); !slices.Equal(g, want) {
		t.Fatalf("%s: fast path findings differ with every window tested through its spans\n got: %q\nwant: %q\ntext: %q", frag.FilePath, g, want, frag.Raw)
	}
}

func TestFastDetectMatchesStockOnRealFiles(t *testing.T) {
	f, stock := defaultFast(t)
	files := realFiles(t)
	for i, file := range files {
		if i%sample(30) != 0 {
			continue
		}
		frag := fragment{Raw: file.text, FilePath: file.path, StartLine: 1}
		if i%2 == 1 {
			// As the history scan sees it: a later start line and a commit.
			frag.StartLine, frag.CommitSHA = 40, "0123456789abcdef0123456789abcdef01234567"
		}
		sameFindings(t, f, stock, frag)
	}
}

func TestFastDetectMatchesStockOnGeneratedText(t *testing.T) {
	f, stock := defaultFast(t)
	r := rand.New(rand.NewPCG(3, 5))
	fake := secrettest.Make(99)
	g := secrettest.NewGen(17)
	keys := append(slices.Clone(genericKeywords), "API", "Api", "aPi", "KEY", "Token", "client_secret", "db_password", "monkey", "turkey", "keyword")
	ops := []string{"=", " = ", ": ", ":=", "::=", "=>", " => ", "||", "?=", ",", ">", "\n=", " '\n\"=", "\n\n\n:", "  \n \n \n \n="}
	quotes := []string{"", "\"", "'", "`", " ", "\n", "\n\n", " \n  \n"}
	values := []func() string{
		func() string { return g.Str(secrettest.Alnum, 10+r.IntN(30)) },
		func() string { return g.Str(secrettest.Alnum+"._=-", 8+r.IntN(160)) },
		func() string { return strings.ToLower(g.Str(secrettest.Alnum, 12)) + "+/" + g.Str("abc123", 8) + "==" },
		func() string { return "aaaaaaaaaaaaaaaa" },
		func() string { return "example-placeholder-value" },
		func() string { return fake.Stripe },
		func() string { return fake.GitHub },
		func() string { return fake.AWSKeyID },
		func() string { return fake.Slack },
		func() string { return fake.JWT },
		func() string { return fake.APIKey + " // gitleaks:allow" },
	}
	filler := []func() string{
		func() string { return "func main() {\n\tfmt.Println(\"hello\")\n}\n" },
		func() string { return strings.Repeat("x", r.IntN(80)) + "\n" },
		func() string { return g.Str("abcdefghij .-_\t", r.IntN(60)) },
		func() string { return "\n" },
		func() string { return "\r\n" },
		func() string { return "// the key to the kingdom\n" },
		func() string { return "ſecret = " + g.Str(secrettest.Alnum, 20) + "\n" },
		func() string { return "\u212aey: " + g.Str(secrettest.Alnum, 20) + "\n" },
		func() string { return "é\xff" },
		func() string { return fake.RSAKey + "\n" },
		func() string {
			return fmt.Sprintf("url = \"https://user:%s@example.org/\"\n", g.Str(secrettest.Alnum, 12))
		},
	}
	iterations := 4000
	if n, err := strconv.Atoi(os.Getenv("CTXPACK_FAST_ITERATIONS")); err == nil {
		iterations = n // a longer differential run
	}
	iterations /= sample(30)
	for i := 0; i < iterations; i++ {
		var b strings.Builder
		for n := 1 + r.IntN(12); n > 0; n-- {
			if r.IntN(3) == 0 {
				b.WriteString(filler[r.IntN(len(filler))]())
				continue
			}
			b.WriteString(g.Str("abcXYZ_.-", r.IntN(6)))
			b.WriteString(keys[r.IntN(len(keys))])
			b.WriteString(g.Str(" \t_.-abc", r.IntN(4)))
			b.WriteString(ops[r.IntN(len(ops))])
			b.WriteString(quotes[r.IntN(len(quotes))])
			b.WriteString(values[r.IntN(len(values))]())
			b.WriteString(quotes[r.IntN(len(quotes))])
			if r.IntN(4) > 0 {
				b.WriteString("\n")
			}
		}
		path := []string{"main.go", "config/app.yaml", ".env", "src/settings.py", "gitleaks.toml", "README.md"}[r.IntN(6)]
		frag := fragment{Raw: b.String(), FilePath: path, StartLine: 1 + r.IntN(3)}
		sameFindings(t, f, stock, frag)
	}
}

// TestScannerFastPathSameResults compares whole Scanner results (spans,
// assignment rules, ignore handling) with and without the fast path.
func TestScannerFastPathSameResults(t *testing.T) {
	s, slow := defaultAndStock(t)
	for i, file := range realFiles(t) {
		if i%(4*sample(5)) != 0 {
			continue // a sample: TestFastDetectMatchesStockOnRealFiles compares every file
		}
		sameScan(t, s, slow, file.path, file.text)
	}
}

// TestPrecheckOf: the precheck of each default rule, and of patterns
// built to trip it, matches every text the pattern matches.
func TestPrecheckOf(t *testing.T) {
	cfg := mustDefaultConfig(t)
	type pat struct{ id, re string }
	var pats []pat
	for id, r := range cfg.Rules {
		if r.Regex != nil {
			pats = append(pats, pat{id, r.Regex.String()})
		}
	}
	for _, p := range []string{`x{0,3}ab{2,5}(c|d{3,})e?`, `\bkey\s{0,2}=\s*([a-z]{4,8}|[0-9]+)$`, `(?i)(a|b)+c{1,}`} {
		pats = append(pats, pat{p, p})
	}
	texts := []string{"xxabbbbddddde", "key = abcdefgh", "key =12345", "AbAbCC", "ab"}
	for i, f := range scanTexts(t) {
		// A sample of the generated texts full of secrets and of the others
		// (every rule over every text takes minutes).
		if strings.HasPrefix(f.path, "gen/") && i%(16*sample(4)) == 0 || i%(256*sample(4)) == 0 {
			texts = append(texts, f.text)
		}
	}
	checked := 0
	for _, p := range pats {
		pre := precheckOf(p.re)
		if pre == "" {
			continue
		}
		re := regexp.MustCompile(p.re)
		pr, err := regexp.Compile(pre)
		if err != nil {
			t.Fatalf("%s: precheck %q does not compile: %v", p.id, pre, err)
		}
		checked++
		for _, text := range texts {
			for _, m := range re.FindAllStringIndex(text, -1) {
				if !pr.MatchString(text[m[0]:m[1]]) {
					t.Fatalf("%s: precheck %q does not match the match %q", p.id, pre, text[m[0]:m[1]])
				}
			}
		}
	}
	if checked < 150 {
		t.Errorf("only %d patterns have a precheck", checked)
	}
}

// TestGateOf: a pattern's gate leaves out only the leading nodes that
// match nothing anywhere, and matches where the pattern does: each
// default rule's, on texts full of secrets and others, whole and cut
// around each match of either.
func TestGateOf(t *testing.T) {
	for _, c := range []struct{ pattern, gate string }{
		{`(?i)[\w.-]{0,50}?(?:key|token)=([a-z]{4})`, "(?i:(?:KEY|TOKEN)=([A-Za-z\u017f\u212a]{4}))"}, // as syntax prints it
		{`a*b?(c)`, `(c)`},
		{`((?:x)?y{0,2}z)`, `z`},
		{`\bkey=([a-z]+)`, ""}, // an assertion holds only in places
		{`(?:^|x)key`, ""},
		{`x?`, ""},
		{`a*`, ""},
	} {
		g := gateOf(mustParse(t, c.pattern))
		if got := ""; g != nil {
			got = g.String()
			if got != c.gate {
				t.Errorf("gateOf(%q) = %q, want %q", c.pattern, got, c.gate)
			}
		} else if c.gate != "" {
			t.Errorf("gateOf(%q) = nil, want %q", c.pattern, c.gate)
		}
	}
	if gateOf(nil) != nil {
		t.Error("a gate of a pattern that does not parse")
	}
	cfg := mustDefaultConfig(t)
	texts := []string{"x.api_key = abcdef0123456789\n", "key = abcdefgh", "KEY:\t'0123456789abcdef'"}
	for i, f := range scanTexts(t) {
		if strings.HasPrefix(f.path, "gen/") && i%(32*sample(4)) == 0 || i%(512*sample(4)) == 0 {
			texts = append(texts, f.text)
		}
	}
	gated := 0
	for id, r := range cfg.Rules {
		if r.Regex == nil {
			continue
		}
		g := gateOf(mustParse(t, r.Regex.String()))
		if g == nil {
			continue
		}
		gated++
		for _, text := range texts {
			cuts := []string{text}
			for _, re := range []*regexp.Regexp{r.Regex, g} {
				for _, m := range re.FindAllStringIndex(text, 4) {
					cuts = append(cuts, text[m[0]:m[1]], text[max(0, m[0]-60):min(len(text), m[1]+10)], text[m[0]+1:m[1]], text[m[0]:m[1]-1])
				}
			}
			for _, cut := range cuts {
				if a, b := r.Regex.MatchString(cut), g.MatchString(cut); a != b {
					t.Fatalf("%s: the rule matches %q: %v, its gate %v: %v", id, cut, a, g, b)
				}
			}
		}
	}
	if gated < 100 {
		t.Errorf("only %d default rules have a gate", gated)
	}
}

// TestCostlyPrechecks: foldWork tells the patterns whose precheck is slow
// to derive (a negated class folds nearly every rune) from the rest, and
// only a few default rules go without one.
func TestCostlyPrechecks(t *testing.T) {
	for _, c := range []struct {
		pattern string
		costly  bool
	}{
		{`[^"]{3,}`, true},
		{`[\s\S-]{64,}?KEY`, true},
		{`sk_[\S]{29}`, true},
		{`(?i)[a-z0-9]{32}`, false},
		{`[\w.=-]{10,150}`, false},
		{`ghp_[0-9a-zA-Z]{36}`, false},
		{`(`, false}, // unparsable: no precheck to derive
	} {
		if got := foldWork(c.pattern) > costlyFoldWork; got != c.costly {
			t.Errorf("%q: costly %v, want %v (fold work %d)", c.pattern, got, c.costly, foldWork(c.pattern))
		}
	}
	f, _ := defaultFast(t)
	var costly []string
	for _, r := range f.rules.windowed {
		if foldWork(r.re().String()) > costlyFoldWork {
			costly = append(costly, r.id)
		}
	}
	if len(costly) == 0 || len(costly) > 10 {
		t.Errorf("%d default rules have a costly precheck: %v", len(costly), costly)
	}
}

// TestStarts: the strings one of which begins every match.
func TestStarts(t *testing.T) {
	for _, c := range []struct {
		re     string
		starts []string
		ok     bool
	}{
		{`abc[0-9]+`, []string{"abc"}, true},
		{`(?i)(?:ghp|GHO)_[a-z]{4}`, []string{"gho_", "ghp_"}, true},
		{`(?:hvs\.[\w-]{90}|s\.[a-z]{24})`, []string{"hvs.", "s."}, true},
		{`(?i:A)(?:(?i:CCESS|UTH)|pi)[0-9]`, []string{"access", "api", "auth"}, true},
		{`(?:ab)?c[0-9]`, []string{"abc", "c"}, true},
		{`(?:ab)?[0-9]`, nil, false}, // may begin with a digit
		{`passw(?:or)?d\s*=`, []string{"passwd", "password"}, true},
		{`(x)?abc`, []string{"abc", "xabc"}, true},
		{`x*abc`, nil, false}, // a repetition first
		{`[a-z]{3}_key`, nil, false},
		{`\bkey`, nil, false}, // an assertion first
		{`(?:key|[0-9]+)=`, nil, false},
	} {
		got, ok := starts(mustParse(t, c.re))
		if ok != c.ok || ok && !slices.Equal(got, c.starts) {
			t.Errorf("starts(%q) = %q, %v; want %q, %v", c.re, got, ok, c.starts, c.ok)
		}
	}
}

// TestMatchStarts: the strings one of which begins every match, after the
// assertions that hold at the start of any text; \b only before strings
// that begin with a word byte, \B never.
func TestMatchStarts(t *testing.T) {
	for _, c := range []struct {
		re     string
		starts []string
		ok     bool
	}{
		{`\bkey[0-9]`, []string{"key"}, true},
		{`^abc|(?m)^xyz`, []string{"abc", "xyz"}, true},
		{`\A\bcurl\b.*-u`, []string{"curl"}, true},
		{`(?i)(?:\bkind:.{0,9}secret|\bdata:.{0,9}kind:)`, []string{"data:", "kind:"}, true},
		{`abc[0-9]+`, []string{"abc"}, true}, // as starts
		{`\b-key`, nil, false},               // \b before a non-word byte needs the byte before
		{`\b(?:key|-k)`, nil, false},
		{`\Bkey`, nil, false},
		{`\b`, nil, false},
		{`\b[a-z]+`, nil, false},
		{`x*\bkey`, nil, false},
	} {
		got, ok := matchStarts(mustParse(t, c.re))
		if ok != c.ok || ok && !slices.Equal(got, c.starts) {
			t.Errorf("matchStarts(%q) = %q, %v; want %q, %v", c.re, got, ok, c.starts, c.ok)
		}
	}
}

// TestStartsAnywhere: the default rules that are not anchored but whose
// matches begin with a literal run only on texts where their pattern
// matches from one, and a text spelling one with a fold rune is searched
// whole; the findings are the stock detector's either way.
func TestStartsAnywhere(t *testing.T) {
	f, stock := defaultFast(t)
	for _, id := range []string{"kubernetes-secret-yaml", "curl-auth-user"} {
		r := f.rules.windowedRule(id)
		if r == nil || r.anchored {
			t.Fatalf("%s: windowed %v, want it not anchored", id, r != nil)
		}
		if strs, at := r.startAt(); at == nil || len(strs) == 0 {
			t.Errorf("%s: no strings its matches begin with", id)
		}
	}
	k8s := f.rules.windowedRule("kubernetes-secret-yaml")
	curl := f.rules.windowedRule("curl-auth-user")
	fake := secrettest.Make(7)
	for _, c := range []struct {
		name, text string
		rule       *windowedRule
		may        bool
	}{
		{"prose naming the keys", "A Secret of kind: Secret has data: in it, says the secret manual.\n", k8s, false},
		{"a manifest", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: " + fake.AWSSecret + "\n", k8s, true},
		{"data before kind", "data:\n  token: " + fake.AWSSecret + "\nkind: secret\n", k8s, true},
		{"a Kelvin sign spelling kind", "\u212aind: Secret\ndata:\n  password: " + fake.AWSSecret + "\n", k8s, true},
		{"prose naming curl", "Use curl to fetch it; curl -u is the option, with --user.\n", curl, false},
		{"a curl with a user", "curl -X POST https://example.org \\\n  -u admin:" + fake.DBPassword + "\n", curl, true},
		{"ſ is no letter of curl", "ſ: use curl.\n", curl, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.rule.startsAnywhere(c.text, asciiLower(c.text), foldOffsets(c.text)); got != c.may {
				t.Errorf("startsAnywhere = %v, want %v", got, c.may)
			}
			if !c.may && c.rule.re().MatchString(c.text) {
				t.Errorf("%s matches where startsAnywhere says it cannot", c.rule.id)
			}
			sameFindings(t, f, stock, fragment{Raw: c.text, FilePath: "README.md", StartLine: 1})
		})
	}
}

func mustParse(t *testing.T, re string) *syntax.Regexp {
	t.Helper()
	tree, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// TestAnchoredPrechecks: most default rules' prechecks begin with their
// anchors, so a window is screened at its anchor occurrences instead of
// searched whole; a precheck that does not (its anchor is not where its
// matches begin) is left unanchored.
func TestAnchoredPrechecks(t *testing.T) {
	f, _ := defaultFast(t)
	anchored := 0
	for _, r := range f.rules.windowed {
		if _, at := r.prechecks(); at != nil {
			anchored++
		}
	}
	for _, id := range []string{genericRuleID, "vault-service-token"} {
		if r := f.rules.windowedRule(id); r == nil {
			t.Errorf("%s: not windowed", id)
		} else if _, at := r.prechecks(); at == nil {
			t.Errorf("%s: no anchored precheck", id)
		}
	}
	if anchored < len(f.rules.windowed)/2 {
		t.Errorf("only %d of %d windowed rules have an anchored precheck", anchored, len(f.rules.windowed))
	}
	// The anchor "_key_" is in the middle of every match: no anchored
	// precheck, the window is searched whole.
	if _, at := prechecksOf(`[a-z]{3}_key_[0-9]{8}`, []string{"_key_"}); at != nil {
		t.Errorf("an anchored precheck for a pattern whose matches begin before its anchor: %v", at)
	}
	pre, at := prechecksOf(`\b(?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24}))(?:\s|$)`, []string{"hvs.", "s."})
	if at == nil || pre != nil {
		t.Fatalf("vault-like pattern: prechecks %v, %v; want the anchored one alone", pre, at)
	}
	// At an anchor the token follows; a line of code with "s." has none.
	text := "x := os.Getenv(\"A\")\ntoken: s." + strings.Repeat("a1", 12) + "\n"
	if at.MatchString(text[strings.Index(text, "s."):]) || !at.MatchString(text[strings.LastIndex(text, "s."):]) {
		t.Errorf("anchored precheck %v misjudges the occurrences in %q", at, text)
	}
}

// TestRequiredLiterals: the literals every match contains, and the default
// rule that is searched whole only in texts holding them.
func TestRequiredLiterals(t *testing.T) {
	for _, c := range []struct {
		re   string
		want []string
	}{
		{`abc[0-9]+xyz`, []string{"abc", "xyz"}},
		{`(?i)kind:.{0,9}SECRET|SeCrEt.*kind:`, []string{"kind:", "secret"}},
		{`(?:abc)+(?:xy){2,}z`, []string{"abc", "xy"}},
		{`(?:abc)?de`, []string{"de"}},
		{`(?:abc)*|x`, nil},
		{`ab(?:c|d)`, []string{"ab"}},
	} {
		if got := requiredLiterals(mustParse(t, c.re)); !slices.Equal(got, c.want) {
			t.Errorf("requiredLiterals(%q) = %q, want %q", c.re, got, c.want)
		}
	}
	f, _ := defaultFast(t)
	r := f.rules.windowedRule("kubernetes-secret-yaml")
	if r == nil || r.anchored {
		t.Fatalf("kubernetes-secret-yaml: windowed %v", r != nil)
	}
	if got, want := r.needs(), []string{"data:", "kind:", "secret"}; !slices.Equal(got, want) {
		t.Errorf("kubernetes-secret-yaml needs %q, want %q", got, want)
	}
}

// FuzzRuleAnalysis feeds rule patterns, which a repository's .gitleaks.toml
// controls, through the analyses the windowed scan rests on, and checks
// each claim on a text the pattern matches: every required literal and
// every required run is in the match, the precheck matches it, the
// anchored precheck matches at an anchor occurrence inside it, and an
// unanchored rule's anchored pattern (startAtOf) matches from the
// match's start, which one of its strings begins. Never a panic.
func FuzzRuleAnalysis(f *testing.F) {
	f.Add(`(?i)[\w.-]{0,50}?(?:key|token)[ \t]{0,5}[=:]\s*([a-z0-9]{10,40})`, "x.api_key = abcdef0123456789")
	f.Add(`\b(?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24}))(?:\s|$)`, "token s.ABCDEFGHIJKLMNOPQRSTUVWX\n")
	f.Add(`(?i)kind:.{0,20}secret|secret.{0,20}kind:`, "kind: Secret")
	f.Add(`(ab|cd)?ef[0-9]{2,}`, "cdef123")
	f.Add(`[^"]{3,}:[^"]{3,}`, `"user:pass"`)
	f.Add(`\bcurl\b(?:.*|.*(?:[\r\n]{1,2}.*){1,5})[ \t\n\r](?:-u|--user)(?:=|[ \t]{0,5})(\S+)`, "xcurl a\n curl b\n -u user:pass")
	f.Add(`(?i)\bkind:.{0,9}secret|^data:`, "kind kind: secret")
	f.Add(`(?i)\b(\d{15,16}(\||%)[0-9a-z\-_]{27,40})(?:['"\s;]|$)`, "982734650192837|zq8xk2mv9pl4st7wr1nb6cy3hj5gf0da\n")
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if len(pattern) > 512 || len(text) > 4096 {
			return
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		a, anchored := anchorsOf(pattern)
		pre, at := prechecksOf(pattern, a.anchors)
		tree, err := syntax.Parse(pattern, syntax.Perl)
		if err != nil {
			t.Fatalf("%q compiles but does not parse: %v", pattern, err)
		}
		if g := gateOf(tree); g != nil && g.MatchString(text) != re.MatchString(text) {
			t.Fatalf("%q matches %q: %v, its gate %v: %v", pattern, text, re.MatchString(text), g, g.MatchString(text))
		}
		need := requiredLiterals(tree)
		_, _ = starts(tree)
		strs, startAt := startAtOf(pattern, tree)
		m := re.FindStringIndex(text)
		if m == nil || hasFoldRune(text) {
			return
		}
		match := text[m[0]:m[1]]
		if startAt != nil {
			if !slices.ContainsFunc(strs, func(s string) bool { return strings.HasPrefix(asciiLower(text[m[0]:]), s) }) {
				t.Fatalf("the match %q of %q begins with none of %q", match, pattern, strs)
			}
			if !startAt.MatchString(text[m[0]:]) {
				t.Fatalf("%v does not match from the start %d of the match %q of %q", startAt, m[0], match, pattern)
			}
		}
		for _, lit := range need {
			if !strings.Contains(asciiLower(match), lit) {
				t.Fatalf("%q matches %q without its required literal %q", pattern, match, lit)
			}
		}
		for _, r := range requiredRuns(tree) {
			if !r.in(match) {
				t.Fatalf("%q matches %q without its required run of %d", pattern, match, r.n)
			}
		}
		if pre != nil && !pre.MatchString(match) {
			t.Fatalf("precheck %v misses the match %q of %q", pre, match, pattern)
		}
		if p := precheckOf(pattern); p != "" {
			if full, err := regexp.Compile(p); err == nil && !full.MatchString(match) {
				t.Fatalf("precheck %v misses the match %q of %q", full, match, pattern)
			}
		}
		if at == nil {
			return
		}
		if !anchored {
			t.Fatalf("%q: an anchored precheck without anchors", pattern)
		}
		lower := asciiLower(text)
		for _, an := range a.anchors {
			for i := m[0]; i < m[1]; i++ {
				if strings.HasPrefix(lower[i:], an) && at.MatchString(text[i:]) {
					return
				}
			}
		}
		t.Fatalf("anchored precheck %v matches at no anchor %q inside the match %q of %q", at, a.anchors, match, pattern)
	})
}

// TestFastDetectMatchesStockOnLargeText: a text of parallelRulesText bytes
// or more has its rules shared among the cores (ruleWindows.detect); its
// findings are still gitleaks', and the same from run to run in order
// too.
func TestFastDetectMatchesStockOnLargeText(t *testing.T) {
	f, stock := defaultFast(t)
	fake := secrettest.Make(5)
	var b strings.Builder
	for i := 0; b.Len() < 3*parallelRulesText; i++ {
		fmt.Fprintf(&b, "line %d\napi_key = \"%s\"\ntoken: %s\nstripe %s\n", i, fake.APIKey, fake.GitHub, fake.Stripe)
		b.WriteString("func main() {\n\tfmt.Println(\"hello\")\n}\n")
		if i%7 == 0 {
			b.WriteString(fake.RSAKey + "\n")
		}
		if i%5 == 0 {
			b.WriteString("curl -u admin:" + fake.DBPassword + " https://example.org\naws " + fake.AWSKeyID + "\n")
		}
	}
	frag := fragment{Raw: b.String(), FilePath: "big.txt", StartLine: 1}
	sameFindings(t, f, stock, frag)
	first := f.detect(context.Background(), frag, newLineIndex(frag.Raw))
	if len(first) == 0 {
		t.Fatal("no findings in a text full of secrets")
	}
	for range 5 {
		again := f.detect(context.Background(), frag, newLineIndex(frag.Raw))
		if !slices.EqualFunc(first, again, func(a, b report.Finding) bool {
			return findingsKey([]report.Finding{a})[0] == findingsKey([]report.Finding{b})[0]
		}) {
			t.Fatal("the findings' order changed from one run to the next")
		}
	}
}

// TestScanLargeTextAssignments: a text of parallelRulesText bytes or more
// has its password assignments found beside gitleaks' rules, on another
// goroutine (Scanner.assignments); its findings are those of its parts
// scanned one by one (every finding here is of one line), the same from
// run to run.
func TestScanLargeTextAssignments(t *testing.T) {
	fake := secrettest.Make(9)
	var parts []string
	var part strings.Builder
	for i := 0; len(parts) < 4; i++ {
		fmt.Fprintf(&part, "db_password = \"p@ss w0rd!%04d\"\ntoken: %s\n", i, fake.GitHub)
		part.WriteString("func main() {\n\tfmt.Println(\"hello\")\n}\n")
		if part.Len() > parallelRulesText/2 {
			parts = append(parts, part.String())
			part.Reset()
		}
	}
	text := strings.Join(parts, "")
	if len(text) < parallelRulesText {
		t.Fatalf("the text is %d bytes, under %d", len(text), parallelRulesText)
	}
	s, err := NewScanner(ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var want []string
	line := 0
	for i, p := range parts {
		found, err := s.Scan(ctx, fmt.Sprintf("part%d.txt", i), []byte(p))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			want = append(want, fmt.Sprintf("%s:%d:%d", f.RuleID, line+f.StartLine, f.End-f.Start))
		}
		line += strings.Count(p, "\n")
	}
	rules := map[string]bool{}
	for _, w := range want {
		rules[w[:strings.IndexByte(w, ':')]] = true
	}
	if !rules[RulePasswordAssignment] || len(rules) < 2 {
		t.Fatalf("the parts' findings are of rules %v: want %s and gitleaks' beside it", rules, RulePasswordAssignment)
	}
	for range 3 {
		found, err := s.Scan(ctx, "whole.txt", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range found {
			got = append(got, fmt.Sprintf("%s:%d:%d", f.RuleID, f.StartLine, f.End-f.Start))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("the whole text's findings (%d) are not its parts' (%d):\n%q\n%q", len(got), len(want), got[:min(6, len(got))], want[:min(6, len(want))])
		}
	}
}
