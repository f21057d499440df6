package audit

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/ctxpack/ctxpack/internal/secrettest"
)

// fastStockDiff runs the fast path and gitleaks' stock detector on frag.
//
// The fast path runs twice: as configured, and with every window tested
// through the spans around its anchors (longWindow 0); got is the first
// run's findings unless the second differs from want.
func fastStockDiff(f *fastDetect, stock *detect.Detector, frag fragment) (got, want []string) {
	want = findingsKey(stock.DetectContext(context.Background(), frag))
	got = findingsKey(f.detect(context.Background(), frag, newLineIndex(frag.Raw)))
	if spans := fastWithSpans(f, frag); !slices.Equal(spans, want) {
		return spans, want
	}
	return got, want
}

// fastWithSpans is the fast path's findings with every window tested
// through the spans around its anchors (see matchesNear).
func fastWithSpans(f *fastDetect, frag fragment) []string {
	defer func(n int) { longWindow = n }(longWindow)
	longWindow = 0
	return findingsKey(f.detect(context.Background(), frag, newLineIndex(frag.Raw)))
}

// advPieces are the pieces the adversarial generator strings together:
// keywords of the default rules, every byte the generic rule's key tail,
// spacers, operators and terminators read, line endings, fold runes,
// invalid UTF-8 and encoded values.
func advPieces(r *rand.Rand, fake secrettest.Fake, g *secrettest.Gen) []func() string {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	lit := func(s ...string) func() string { return func() string { return s[r.IntN(len(s))] } }
	secretVals := []string{fake.GitHub, fake.Slack, fake.Stripe, fake.AWSKeyID, fake.JWT, fake.APIKey, fake.DBPassword, fake.AWSSecret}
	val := func() string {
		switch r.IntN(4) {
		case 0:
			return secretVals[r.IntN(len(secretVals))]
		case 1:
			return g.Str(secrettest.Alnum, 10+r.IntN(30))
		case 2:
			return strings.ToLower(g.Str(secrettest.Alnum, 12)) + "+/" + g.Str("abc123", 8) + "=="
		}
		return g.Str(secrettest.Alnum+"._=-", 8+r.IntN(20))
	}
	return []func() string{
		lit("key", "KEY", "Key", "api", "API", "Api", "aPi", "token", "secret", "password", "passwd", "auth", "access", "creds", "credential",
			"aws_secret_access_key", "client_secret", "twitter", "kraken", "freshbooks", "heroku", "sendgrid", "github_token", "monkey", "keyword"),
		lit(" ", "\t", "\n", "\r", "\r\n", "\n\n", "'", "\"", "`", "\f", "\v", ";", `\n`, `\r`, ".", "-", "_", " \t "),
		lit("=", ":", ":=", "::=", ":::=", ">", "|", "||", "?=", "?", ",", "=>", "=="),
		val, val, val,
		lit("\u017f", "\u212a", "\xff", "\x00", "é", "İ", "\u2028"),
		func() string { return strings.Repeat(g.Str("abcxyz_.-", 1), r.IntN(60)) },
		func() string { return strings.Repeat(" ", r.IntN(25)) },
		func() string { return b64("api_key = " + val()) },
		func() string { return b64("token: " + val() + "\n") },
		func() string { return hex.EncodeToString([]byte("secret=" + val())) },
		func() string { return url.QueryEscape("password=" + val()) },
		func() string { return `\u0074oken=\u0022` + val() + `\u0022` },
		func() string { return "U+0041 U+0042 " },
		func() string { return b64(b64("password: " + val())) },
		func() string { return "%" + hex.EncodeToString([]byte(b64("key="+val()))) },
		lit("// gitleaks:allow", " gitleaks:allow\n"),
		func() string { return fake.RSAKey },
		lit("-----BEGIN RSA PRIVATE KEY-----\n", "-----END RSA PRIVATE KEY-----"),
		lit("https://user:", "@example.org/", "curl -u ", "Authorization: Bearer ", "kind: Secret\n", "data:\n  "),
	}
}

func advText(r *rand.Rand, pieces []func() string) string {
	var b strings.Builder
	for n := 1 + r.IntN(14); n > 0; n-- {
		b.WriteString(pieces[r.IntN(len(pieces))]())
	}
	return b.String()
}

// TestFastDetectAdversarialRandom strings adversarial pieces together and
// compares the fast path with the stock detector. CTXPACK_ADV_ITERATIONS
// runs longer.
func TestFastDetectAdversarialRandom(t *testing.T) {
	f, stock := defaultFast(t)
	iterations := 2000
	if n, err := strconv.Atoi(os.Getenv("CTXPACK_ADV_ITERATIONS")); err == nil {
		iterations = n
	}
	iterations /= sample(10)
	seed := uint64(41)
	if n, err := strconv.ParseUint(os.Getenv("CTXPACK_ADV_SEED"), 10, 64); err == nil {
		seed = n
	}
	r := rand.New(rand.NewPCG(seed, 43))
	fake := secrettest.Make(seed)
	pieces := advPieces(r, fake, secrettest.NewGen(seed+1))
	paths := []string{"a.env", "config/app.yaml", "x.php", "main.tf", "cert.p12", "README.md", "nuget.config"}
	withFindings := 0
	for i := 0; i < iterations; i++ {
		text := advText(r, pieces)
		frag := fragment{Raw: text, FilePath: paths[r.IntN(len(paths))], StartLine: 1 + r.IntN(40)}
		got, want := fastStockDiff(f, stock, frag)
		if len(want) > 0 {
			withFindings++
		}
		if !slices.Equal(got, want) {
			t.Fatalf("fast path findings differ on %s\ntext: %q\n got: %q\nwant: %q", frag.FilePath, text, got, want)
		}
	}
	t.Logf("%d texts, %d with findings", iterations, withFindings)
	if withFindings < iterations/4 {
		t.Errorf("only %d texts with findings: the generator is broken", withFindings)
	}
}

// FuzzFastDetectMatchesStock: on any text and path, the fast path gives
// the stock detector's findings.
func FuzzFastDetectMatchesStock(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	fake := secrettest.Make(5)
	pieces := advPieces(r, fake, secrettest.NewGen(6))
	for i := 0; i < 40; i++ {
		f.Add(advText(r, pieces), "a.env")
	}
	for _, c := range adversarialCases(fake) {
		f.Add(c.text, c.path)
	}
	// Real secrets-bearing text: gitleaks' own test data and rule sources.
	for i, file := range realFiles(f) {
		if i%sample(8) == 0 && len(file.text) < 16<<10 && strings.Contains(file.path, "gitleaks") &&
			(strings.Contains(file.path, "/testdata/") || strings.Contains(file.path, "/rules/")) {
			f.Add(file.text, file.path)
		}
	}
	fd, stock := defaultFast(f)
	f.Fuzz(func(t *testing.T, text, path string) {
		if len(text) > 16<<10 {
			return
		}
		frag := fragment{Raw: text, FilePath: path, StartLine: 1}
		got, want := fastStockDiff(fd, stock, frag)
		if !slices.Equal(got, want) {
			t.Fatalf("fast path findings differ on %q\ntext: %q\n got: %q\nwant: %q", path, text, got, want)
		}
	})
}

type advCase struct{ name, path, text string }

// adversarialCases are inputs built against the fast path's assumptions
// (windows, assignment reach, decoding, case folding, line endings).
func adversarialCases(fake secrettest.Fake) []advCase {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	k := fake.APIKey
	var cs []advCase
	add := func(name, path, text string) { cs = append(cs, advCase{name, path, text}) }
	add("crlf", "a.env", "x\r\napi_key = "+k+"\r\n")
	add("lone cr", "a.env", "x\rapi_key =\r\r\r"+k+"\r")
	add("cr spacers", "a.env", "key\r\r\r=\r\r\r\r\r"+k+"\n")
	add("newline spacers", "a.env", "key\n\n\n=\n\n\n\n\n"+k+"\n")
	add("six newline spacers", "a.env", "key\n\n\n=\n\n\n\n\n\n"+k+"\n")
	add("tail 20", "a.env", "key"+strings.Repeat("_", 20)+" = "+k+"\n")
	add("tail 21", "a.env", "key"+strings.Repeat("_", 21)+" = "+k+"\n")
	add("head 50", "a.env", strings.Repeat("x", 50)+"key = "+k+"\n")
	add("head 51", "a.env", strings.Repeat("x", 51)+"key = "+k+"\n")
	add("long line", "a.env", strings.Repeat("a ", 40000)+"token = "+k+" "+strings.Repeat("b", 70000)+"\n")
	add("kelvin", "a.env", "\u212aey = "+k+"\n")
	add("long s", "a.env", "\u017fecret = "+k+"\n")
	add("kelvin in value", "a.env", "key = "+k[:8]+"\u212a"+k[8:]+"\n")
	// Only the windows holding a fold rune take the rule's whole pattern:
	// folds beside, before and after plain windows, and in a long one.
	add("fold far from a plain secret", "a.env", "a \u212a b\n"+strings.Repeat("x\n", 50)+"api_key = "+k+"\n")
	add("plain window then a fold-spelled one", "a.env", "api_key = "+k+"\n"+strings.Repeat("y\n", 50)+"\u017fecret = "+k+"\n")
	add("long window, a fold in a value", "a.env", strings.Repeat("q = 1\n", 800)+"key = "+k[:8]+"\u212a"+k[8:]+"\n"+strings.Repeat("z\n", 300)+"password = \""+fake.DBPassword+"\"\n")
	add("nul", "a.env", "a\x00\nkey = "+k+"\n\x00")
	add("invalid utf8", "a.env", "\xff\xfekey = "+k+"\xff\n")
	add("b64 keyword", "a.env", "x = "+b64("aws_secret_access_key="+fake.AWSSecret)+"\n")
	add("nested", "a.env", "%"+hex.EncodeToString([]byte(b64("token = "+k)))+"\n")
	add("unicode escapes", "a.env", `s = "\u0074\u006f\u006b\u0065\u006e = `+k+`"`+"\n")
	add("allow next line", "a.env", "// gitleaks:allow\napi_key = "+k+"\n")
	add("allow prev line", "a.env", "api_key = "+k+"\n// gitleaks:allow\n")
	add("allow multi-line match", "a.env", "api_key = // gitleaks:allow\n"+k+"\n")
	add("private key crlf", "id_rsa", strings.ReplaceAll(fake.RSAKey, "\n", "\r\n")+"\r\n")
	add("jwt split", "a.env", strings.ReplaceAll(fake.JWT, ".", ".\n")+"\n")
	add("php freemius", "x.php", `'secret_key'   =>   'sk_`+strings.Repeat("a1B2", 7)+`z'`+"\n")
	add("php freemius wrong path", "x.txt", `'secret_key'   =>   'sk_`+strings.Repeat("a1B2", 7)+`z'`+"\n")
	add("p12 path", "certs/a.p12", "token = "+k+"\n")
	add("last line no newline", "a.env", "a\nb\ntoken = "+k)
	add("bitbake allowlist", "r.bb", `SRC_URI_SECRET = "`+k+`"`+"\n")
	add("import allowlist", "a.js", `import { apiKey } from 'x'; const api_key = "`+k+`"`+"\n")
	add("k8s secret", "s.yaml", "kind: Secret\nmetadata:\n  name: x\ndata:\n  password: "+b64(k)+"\n")
	add("decoded value after raw keyword", "a.env", "api_key = "+b64("\n\n\n"+k)+"\n")
	add("percent keyword raw value", "a.env", "%6Bey = "+k+"\n")
	add("percent newlines", "a.env", "token%0A%0A%3D%0A"+k+"\n")
	add("hex newline split", "a.env", hex.EncodeToString([]byte("secret\n=\n\n\n\n\n"+k))+"\n")
	add("decoded keyword far below", "a.env", b64("key\n")+"\n=\n"+k+"\n")
	add("decoded tail 20", "a.env", b64("key"+strings.Repeat("_", 20))+" = "+k+"\n")
	add("decoded straddles", "a.env", strings.Repeat("line\n", 5)+b64("x\n\n\nkey\n=\n"+k+"\n")+"\n")
	// Long windows tested on the spans around their anchors (quietNear): a
	// line's allow comment or its allowlisted import far from the match, or
	// on the span's previous line.
	filler := strings.Repeat("a;b;", 1200)
	add("long line allow far", "a.js", "api_key = "+k+";"+filler+"// gitleaks:allow\n")
	add("long line import far", "a.js", `import { apiKey } from 'x';`+filler+`const api_key = "`+k+`"`+"\n")
	add("long line import before the match's line", "a.js", filler+`token = 1; import { apiKey } from 'x'`+"\n"+`const api_key = "`+k+`";`+filler+"\n")
	add("long line allow before the match's line", "a.js", filler+"token = 1; // gitleaks:allow\n"+`const api_key = "`+k+`";`+filler+"\n")
	add("long line encoded far", "a.js", filler+"x = "+b64("token = "+k)+";"+filler+"\n")
	// A decoding pass holding a fold rune: an anchor spelled with it (the
	// Kelvin sign for k) before a decoded value, which the spans around
	// the anchors found in ASCII do not hold.
	add("kelvin key before a decoded value", "a.env", "\u212aey = "+b64(k)+"\n")
	add("kelvin key a line before a decoded value", "a.env", "\u212aey:\n"+b64(k)+"\n")
	return cs
}

// TestFastDetectAdversarialCases compares the fast path with the stock
// detector on adversarialCases, at two start lines and with a commit.
func TestFastDetectAdversarialCases(t *testing.T) {
	f, stock := defaultFast(t)
	for _, c := range adversarialCases(secrettest.Make(23)) {
		t.Run(c.name, func(t *testing.T) {
			starts := []int{1, 7}
			if raceEnabled {
				starts = starts[1:]
			}
			for _, start := range starts {
				frag := fragment{Raw: c.text, FilePath: c.path, StartLine: start, CommitSHA: fmt.Sprint(start)}
				got, want := fastStockDiff(f, stock, frag)
				if !slices.Equal(got, want) {
					t.Fatalf("fast path findings differ\ntext: %q\n got: %q\nwant: %q", c.text, got, want)
				}
			}
		})
	}
}

// genMatch returns a random string built from re's syntax tree: mostly a
// match of re (empty-width assertions are not enforced), with newlines,
// carriage returns and spaces favoured wherever a class allows them.
func genMatch(r *rand.Rand, re *syntax.Regexp, b *strings.Builder) {
	rep := func(min, max int) int {
		if max < 0 {
			max = min + 6
		}
		switch r.IntN(4) {
		case 0:
			return min
		case 1:
			return max
		}
		return min + r.IntN(max-min+1)
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && r.IntN(2) == 0 {
				c = unicode.SimpleFold(c)
				if c >= utf8.RuneSelf && r.IntN(4) > 0 {
					c = unicode.SimpleFold(c)
				}
			}
			b.WriteRune(c)
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return
		}
		var fav []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for _, c := range []rune{'\n', '\r', ' ', '\t', '=', '"', '\''} {
				if re.Rune[i] <= c && c <= re.Rune[i+1] {
					fav = append(fav, c)
				}
			}
		}
		if len(fav) > 0 && r.IntN(3) == 0 {
			b.WriteRune(fav[r.IntN(len(fav))])
			return
		}
		i := 2 * r.IntN(len(re.Rune)/2)
		lo, hi := re.Rune[i], min(re.Rune[i+1], re.Rune[i]+200)
		c := lo + rune(r.IntN(int(hi-lo)+1))
		if c > 0x10FFFF || (0xD800 <= c && c <= 0xDFFF) {
			c = lo
		}
		b.WriteRune(c)
	case syntax.OpAnyCharNotNL:
		b.WriteByte(byte('!' + r.IntN(90)))
	case syntax.OpAnyChar:
		if r.IntN(4) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(byte('!' + r.IntN(90)))
		}
	case syntax.OpCapture:
		genMatch(r, re.Sub[0], b)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			genMatch(r, s, b)
		}
	case syntax.OpAlternate:
		genMatch(r, re.Sub[r.IntN(len(re.Sub))], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, -1
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
		}
		for n := rep(lo, hi); n > 0; n-- {
			genMatch(r, re.Sub[0], b)
		}
	}
}

// TestFastDetectRuleMatches builds, for every default rule, random
// strings from its pattern (true positives, many spread over lines), puts
// them between random lines and compares the fast path with the stock
// detector. CTXPACK_RULE_SAMPLES runs longer.
func TestFastDetectRuleMatches(t *testing.T) {
	f, stock := defaultFast(t)
	cfg := mustDefaultConfig(t)
	samples := 6
	if n, err := strconv.Atoi(os.Getenv("CTXPACK_RULE_SAMPLES")); err == nil {
		samples = n
	}
	seed := uint64(77)
	if n, err := strconv.ParseUint(os.Getenv("CTXPACK_ADV_SEED"), 10, 64); err == nil {
		seed = n
	}
	r := rand.New(rand.NewPCG(seed, 3))
	ids := slices.Sorted(maps.Keys(cfg.Rules))
	fillers := []string{"", "\n", "x\n", "\r\n", "\n\n", " ", "foo = bar\n", "key\n", "token =\n", "// gitleaks:allow\n", "\"", "'"}
	matched, checked := 0, 0
	for _, id := range ids {
		rule := cfg.Rules[id]
		if rule.Regex == nil {
			continue
		}
		re, err := syntax.Parse(rule.Regex.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < samples/sample(4); i++ {
			var b strings.Builder
			for n := r.IntN(4); n > 0; n-- {
				b.WriteString(fillers[r.IntN(len(fillers))])
			}
			for n := 1 + r.IntN(2); n > 0; n-- {
				genMatch(r, re, &b)
				b.WriteString(fillers[r.IntN(len(fillers))])
			}
			text := b.String()
			if rule.Regex.MatchString(text) {
				matched++
			}
			path := "a.env"
			if rule.Path != nil {
				path = map[bool]string{true: "x.php", false: "deploy.yaml"}[strings.Contains(rule.Path.String(), "php")]
			}
			frag := fragment{Raw: text, FilePath: path, StartLine: 1 + r.IntN(5)}
			got, want := fastStockDiff(f, stock, frag)
			checked++
			if !slices.Equal(got, want) {
				t.Fatalf("%s: fast path findings differ\ntext: %q\n got: %q\nwant: %q", id, text, got, want)
			}
		}
	}
	t.Logf("%d texts compared, %d matched their rule's pattern", checked, matched)
	if matched < checked*3/4 {
		t.Errorf("only %d of %d texts match their rule's pattern: genMatch is broken", matched, checked)
	}
}

// TestScannerFastPathAdversarial compares whole Scanner results with and
// without the fast path on the adversarial texts.
func TestScannerFastPathAdversarial(t *testing.T) {
	s, slow := defaultAndStock(t)
	fake := secrettest.Make(31)
	r := rand.New(rand.NewPCG(8, 9))
	pieces := advPieces(r, fake, secrettest.NewGen(10))
	var cs []advCase
	cs = append(cs, adversarialCases(fake)...)
	for i := 0; i < 400/sample(10); i++ {
		cs = append(cs, advCase{fmt.Sprint("random ", i), "a.env", advText(r, pieces)})
	}
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) { sameScan(t, s, slow, c.path, c.text) })
	}
}

// customRulesTOML are repository rules built against the window proof:
// anchors with newlines around them, line anchors and text anchors,
// word boundaries at a window's edge, allowlists on the line and the
// match, a secret group, a rule requiring another, a generic rule of the
// repository's own and a path with a pattern.
const customRulesTOML = `
[extend]
useDefault = true

[[rules]]
id = "multi-begin"
regex = '''(?m)^BEGIN[ \t]*\n(?:[A-Za-z0-9+/=]{8,64}\n){1,4}END$'''
keywords = ["begin"]

[[rules]]
id = "around-anchor"
regex = '''(?i)\b[a-z0-9]{6,12}\s{0,2}MAGIC\s{0,3}([a-z0-9]{12,20})\b'''
secretGroup = 1
keywords = ["magic"]

[[rules]]
id = "text-edges"
regex = '''\Azz[0-9]{8}|yy[0-9]{8}\z'''
keywords = ["zz", "yy"]

[[rules]]
id = "nl-literal"
regex = '''pw:\n\s?([A-Za-z0-9]{12,})'''
keywords = ["pw:"]

[[rules]]
id = "line-allow"
regex = '''(?i)ticket[=:]([a-z0-9]{16})'''
keywords = ["ticket"]
[[rules.allowlists]]
regexTarget = "line"
regexes = ['''^\n?#''', '''(?s)ignore.*me''']
[[rules.allowlists]]
regexTarget = "match"
regexes = ['''TICKET=''']

[[rules]]
id = "custom-generic-pin"
regex = '''(?i)pin\s{0,2}=\s{0,2}([0-9]{6,10})'''
keywords = ["pin"]

[[rules]]
id = "needs-user"
regex = '''(?i)passcode:\s?([a-z0-9]{10,})'''
keywords = ["passcode"]
[[rules.required]]
id = "user-name"
withinLines = 2

[[rules]]
id = "user-name"
regex = '''user:\s?([a-z]{4,})'''
keywords = ["user"]

[[rules]]
id = "tf-only"
regex = '''tfsecret_[a-z0-9]{10}'''
path = '''\.tf$'''
keywords = ["tfsecret_"]

[[rules]]
id = "dollar"
regex = '''(?i)stash[ ]?=[ ]?[a-z0-9]{10,}$'''
keywords = ["stash"]
`

// TestFastDetectCustomRules compares the fast path with the stock detector
// under a repository config whose rules test the window proof.
func TestFastDetectCustomRules(t *testing.T) {
	cfg, err := loadGitleaksData("custom.toml", []byte(customRulesTOML), nil)
	if err != nil {
		t.Fatal(err)
	}
	f, stock := fastAndStock(t, cfg)
	iterations := 1500
	if n, err := strconv.Atoi(os.Getenv("CTXPACK_ADV_ITERATIONS")); err == nil {
		iterations = n
	}
	iterations /= sample(10)
	r := rand.New(rand.NewPCG(12, 13))
	fake := secrettest.Make(12)
	pieces := advPieces(r, fake, secrettest.NewGen(14))
	var custom []*syntax.Regexp
	for _, id := range []string{"multi-begin", "around-anchor", "text-edges", "nl-literal", "line-allow", "custom-generic-pin", "needs-user", "user-name", "tf-only", "dollar"} {
		re, err := syntax.Parse(cfg.Rules[id].Regex.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		custom = append(custom, re)
	}
	pieces = append(pieces,
		func() string { var b strings.Builder; genMatch(r, custom[r.IntN(len(custom))], &b); return b.String() },
		func() string { var b strings.Builder; genMatch(r, custom[r.IntN(len(custom))], &b); return b.String() },
		func() string { var b strings.Builder; genMatch(r, custom[r.IntN(len(custom))], &b); return b.String() },
		func() string {
			return []string{"#", "ignore", "me", "\n", "TICKET=", "zz12345678", "yy12345678"}[r.IntN(7)]
		},
	)
	found, byRule := 0, map[string]int{}
	for i := 0; i < iterations; i++ {
		text := advText(r, pieces)
		if i < 4*len(custom) {
			// Each custom rule's own match first, alone and after the
			// generator's text, so a short run (under -race) reaches them all.
			var b strings.Builder
			genMatch(r, custom[i%len(custom)], &b)
			if text = b.String(); i >= 2*len(custom) {
				text = advText(r, pieces) + "\n" + text
			}
		}
		path := []string{"a.env", "main.tf"}[r.IntN(2)]
		frag := fragment{Raw: text, FilePath: path, StartLine: 1 + r.IntN(9)}
		got, want := fastStockDiff(f, stock, frag)
		found += len(want)
		for _, w := range want {
			byRule[w[:strings.IndexByte(w, '|')]]++
		}
		if !slices.Equal(got, want) {
			t.Fatalf("fast path findings differ on %s\ntext: %q\n got: %q\nwant: %q", path, text, got, want)
		}
	}
	t.Logf("%d texts, %d findings: %v", iterations, found, byRule)
	for _, id := range []string{"multi-begin", "around-anchor", "text-edges", "nl-literal", "line-allow", "needs-user", "tf-only", "dollar"} {
		if byRule[id] == 0 {
			t.Errorf("no finding of %s: the generator does not reach it", id)
		}
	}
}

// TestFastDetectAssignmentExhaustive puts every string of up to four bytes
// of the generic rule's tail, spacer, operator and terminator alphabet
// between a keyword and a value, and one or two of them after the value,
// on a line between other lines: the assignment reach (operatorReach and
// the window's last line) must cut no match. By default every 7th string;
// CTXPACK_ASSIGN_ALL=1 runs them all.
func TestFastDetectAssignmentExhaustive(t *testing.T) {
	f, stock := defaultFast(t)
	const alphabet = " \t\n\r\"'`=:|>?,a-\\"
	step := 7 * sample(10)
	if os.Getenv("CTXPACK_ASSIGN_ALL") != "" {
		step = 1
	}
	value := secrettest.Make(3).APIKey
	var mids []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		mids = append(mids, prefix)
		if n == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			gen(prefix+alphabet[i:i+1], n-1)
		}
	}
	gen("", 4)
	ends := []string{"", "\n", "\"", "\r\n", ";", `\n`, "\n\n", " x"}
	checked, found := 0, 0
	for i := 0; i < len(mids); i += step {
		line := "x_token" + mids[i] + value + ends[i%len(ends)]
		texts := []string{"a\n" + line + "\nb\n"}
		if i%(3*step) == 0 {
			// The same assignment only in a decoding pass.
			texts = append(texts, "a\n"+base64.StdEncoding.EncodeToString([]byte(line))+"\nb\n")
		}
		for _, text := range texts {
			frag := fragment{Raw: text, FilePath: "a.env", StartLine: 1}
			got, want := fastStockDiff(f, stock, frag)
			checked++
			if len(want) > 0 {
				found++
			}
			if !slices.Equal(got, want) {
				t.Fatalf("fast path findings differ\ntext: %q\n got: %q\nwant: %q", text, got, want)
			}
		}
	}
	t.Logf("%d texts, %d with findings", checked, found)
	if found == 0 {
		t.Error("no text had a finding: the generator is broken")
	}
}
