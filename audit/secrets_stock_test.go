package audit

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zricethezav/gitleaks/v8/detect/codec"

	"github.com/ctxpack/ctxpack/internal/leakcorpus"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
)

// scanTexts are texts for differential tests: this repository's and
// gitleaks' files, the leak corpus, and generated assignments with fake
// secrets of every kind, in ASCII and with non-ASCII runes (ſ, K, é, emoji).
// CTXPACK_SCAN_TEXTS sets how many are generated (3000).
func scanTexts(t testing.TB) []textFile {
	files := realFiles(t)
	c := leakcorpus.Build(7)
	for _, m := range []map[string]string{c.Base, c.Head, c.Interim, c.InterimExtra} {
		for _, p := range slices.Sorted(func(yield func(string) bool) {
			for p := range m {
				if !yield(p) {
					return
				}
			}
		}) {
			files = append(files, textFile{p, m[p]})
		}
	}
	r := rand.New(rand.NewPCG(5, 8))
	fake := secrettest.Make(42)
	g := secrettest.NewGen(9)
	secrets := []string{fake.AWSKeyID, fake.AWSSecret, fake.GitHub, fake.Slack, fake.Stripe, fake.JWT, fake.APIKey, fake.DBPassword, fake.RSAKey, fake.OpenSSHKey}
	keys := []string{"api_key", "token", "secret", "password", "auth", "ſecret", "\u212aEY", "clé", "access", "AKIA", "ghp_", "xoxb-", "sk_live_"}
	odd := []string{"é", "ſ", "\u212a", "日本", "🔑", "\u00a0", "\r\n", "\t", "`", "\\u0041", "%41%42"}
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("CTXPACK_SCAN_TEXTS")); err == nil {
		n = v
	}
	for i := 0; i < n/sample(10); i++ {
		var b strings.Builder
		for k := 1 + r.IntN(8); k > 0; k-- {
			b.WriteString(keys[r.IntN(len(keys))])
			b.WriteString([]string{"=", ": ", " = \"", ":='", " => "}[r.IntN(5)])
			s := secrets[r.IntN(len(secrets))]
			if r.IntN(3) == 0 {
				s = g.Str(secrettest.Alnum+"+/=_-", 8+r.IntN(50))
			}
			if r.IntN(4) == 0 {
				at := r.IntN(len(s) + 1)
				s = s[:at] + odd[r.IntN(len(odd))] + s[at:]
			}
			if r.IntN(6) == 0 {
				s = base64.StdEncoding.EncodeToString([]byte(s))
			} else if r.IntN(8) == 0 {
				s = url.QueryEscape(s)
			}
			b.WriteString(s)
			b.WriteString([]string{"\n", "\"\n", " ", odd[r.IntN(len(odd))]}[r.IntN(4)])
		}
		files = append(files, textFile{fmt.Sprintf("gen/%d.env", i), b.String()})
	}
	return files
}

// defaultAndStock returns the scanner NewScanner builds (the fast path:
// windowed rules, native decoding passes) and one with gitleaks' detector
// alone.
func defaultAndStock(t testing.TB) (*Scanner, *Scanner) {
	t.Helper()
	def, err := NewScanner(ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if def.fast == nil {
		t.Fatal("the default scanner has no fast path: nothing to compare")
	}
	stock, err := NewScanner(ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stock.fast = nil
	return def, stock
}

func sameScan(t *testing.T, def, stock *Scanner, path, text string) []pack.Finding {
	t.Helper()
	got, err := def.Scan(context.Background(), path, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want, err := stock.Scan(context.Background(), path, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: scan differs from gitleaks' detector\ntext: %.300q\n got: %v\nwant: %v", path, text, got, want)
	}
	return want
}

// TestScanMatchesStock compares whole scans (rule, lines, offsets,
// fingerprints) of the default scanner with gitleaks' detector alone.
func TestScanMatchesStock(t *testing.T) {
	def, stock := defaultAndStock(t)
	texts := scanTexts(t)
	found := 0
	for i, f := range texts {
		if i%(4*sample(4)) != 0 {
			continue
		}
		if len(sameScan(t, def, stock, f.path, f.text)) > 0 {
			found++
		}
	}
	t.Logf("%d texts, %d with findings", len(texts), found)
	if found < 25 {
		t.Errorf("only %d texts with findings", found)
	}
}

// TestScanWithInlineAllowMatchesStock: under an InlineAllow (the base's
// lines) the fast path and gitleaks' detector alone drop the same
// findings, on every text holding an allow comment, with about half of the
// lines trusted; and trusting every line drops what gitleaks' own rule
// drops, a finding inside another's match included (ctxpack's password
// rules, an escaped string), which is reported when that one is allowed.
func TestScanWithInlineAllowMatchesStock(t *testing.T) {
	half := func(_, line string) bool { return len(line)%2 == 0 }
	every := func(string, string) bool { return true }
	scanners := func(trust func(string, string) bool) (*Scanner, *Scanner) {
		def, err := NewScanner(ScannerOptions{InlineAllow: trust})
		if err != nil {
			t.Fatal(err)
		}
		stock, err := NewScanner(ScannerOptions{InlineAllow: trust})
		if err != nil {
			t.Fatal(err)
		}
		stock.fast = nil
		return def, stock
	}
	def, stock := scanners(half)
	all, _ := scanners(every)
	native, _ := defaultAndStock(t)
	fake := secrettest.Make(12)
	texts := []textFile{
		{"a.env", "api_key = " + fake.APIKey + " # gitleaks:allow\ntoken = " + fake.GitHub + "\n"},
		{"id_rsa", strings.Replace(fake.RSAKey, "\n", "\n# gitleaks:allow\n", 1) + "\n"},
		{"a.env", "cfg = 1 # gitleaks:allow; api_key =\n" + fake.APIKey + "\n"},
		{"a.json", `{"x": "token = \"` + fake.GitHub + `\" # gitleaks:allow"}` + "\n"},
		// A finding inside another's match, on a line without the comment.
		{"key.txt", strings.Replace(fake.RSAKey, "\n", " # gitleaks:allow\nDB_PASSWORD=p@ss!w0rd#x9\n", 1) + "\n"},
		{"a.json", "-----BEGIN RSA PRIVATE KEY----- # gitleaks:allow\n" + `{"x": "pass\u0077ord = \"` + fake.DBPassword + `!\""}` + "\n" + strings.Repeat("A", 70) + "\n-----END RSA PRIVATE KEY-----\n"},
	}
	crafted := len(texts)
	for _, f := range scanTexts(t) {
		if strings.Contains(f.text, AllowSignature) {
			texts = append(texts, f)
		}
	}
	ctx := context.Background()
	for i, f := range texts {
		if i < crafted || i%(3*sample(4)) == 0 { // gitleaks' detector alone is slow: a sample
			sameScan(t, def, stock, f.path, f.text)
		}
		got, err := all.Scan(ctx, f.path, []byte(f.text))
		if err != nil {
			t.Fatal(err)
		}
		want, err := native.Scan(ctx, f.path, []byte(f.text))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: trusting every line finds %v, gitleaks' rule %v", f.path, got, want)
		}
	}
	t.Logf("%d texts with an allow comment", len(texts))
}

// TestScanDecodingPassesMatchStock covers the decoding passes: a secret
// found only after decoding (base64, hex, percent, twice), next to one
// found in the raw text.
func TestScanDecodingPassesMatchStock(t *testing.T) {
	def, stock := defaultAndStock(t)
	fake := secrettest.Make(3)
	b64 := base64.StdEncoding.EncodeToString
	for _, text := range []string{
		"export TOKEN=" + b64([]byte("github_token = "+fake.GitHub)) + "\n",
		"a = \"" + b64([]byte(b64([]byte("aws_secret_access_key = "+fake.AWSSecret)))) + "\"\n",
		"url = \"https://x.example/?q=" + url.QueryEscape("stripe: "+fake.Stripe) + "\"\nkey = " + fake.Slack + "\n",
		"blob: " + fmt.Sprintf("%x", "api_key="+fake.APIKey) + "\n" + strings.Repeat("plain text line\n", 50),
		"nothing: " + b64([]byte("hello, world, nothing here")) + "\n",
		// A match in the decoded text away from the decoded value, and
		// one touching it.
		"api_key = \"" + fake.APIKey + "\"\nnote: " + b64([]byte("hello, world, nothing here")) + "\n",
		"password=" + b64([]byte("x"+fake.DBPassword)) + "\n",
		"auth_token: " + b64([]byte("Zz9"+fake.APIKey)) + "\n",
	} {
		sameScan(t, def, stock, "config.yaml", text)
	}
	fs, err := def.Scan(context.Background(), "x.env", []byte("export TOKEN="+b64([]byte("github_token = "+fake.GitHub))+"\n"))
	if err != nil || len(fs) == 0 {
		t.Fatalf("a base64-encoded token is not found (%v, %v)", fs, err)
	}
}

// FuzzScanMatchesStock: the default scanner (the fast path: windowed
// rules, native decoding passes) and gitleaks' detector alone find the
// same on any text.
func FuzzScanMatchesStock(f *testing.F) {
	fake := secrettest.Make(11)
	f.Add("api_key = " + fake.APIKey + "\n")
	f.Add("token: " + base64.StdEncoding.EncodeToString([]byte("ghp "+fake.GitHub)) + "\n")
	f.Add(fake.RSAKey + "\n\u212aey=" + fake.Stripe)
	f.Add("%41%50%49_KEY=" + fake.Slack + "\xff")
	f.Add("x\napi_key =\n\n '" + fake.APIKey + "'\nU+0041 U+0042 \\u0061uth=" + fake.JWT)
	f.Add("a\n" + fake.AWSKeyID + "\n" + fake.GitHub + " // gitleaks:allow")
	def, stock := defaultAndStock(f)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 64<<10 {
			return
		}
		sameScan(t, def, stock, "fuzz.env", text)
	})
}

// decodeTexts are texts full of what gitleaks' decoder looks for: base64
// (standard and URL), hex, percent and unicode escapes, nested, touching
// and overlapping each other, among ordinary text.
func decodeTexts(n int) []string {
	r := rand.New(rand.NewPCG(21, 34))
	fake := secrettest.Make(8)
	b64 := base64.StdEncoding.EncodeToString
	pieces := []func() string{
		func() string { return b64([]byte(randPrintable(r, 4+r.IntN(40)))) },
		func() string { return base64.RawURLEncoding.EncodeToString([]byte(randPrintable(r, 4+r.IntN(40)))) },
		func() string { return b64([]byte(b64([]byte("token=" + fake.GitHub)))) },
		func() string { return fmt.Sprintf("%x", randPrintable(r, 16+r.IntN(20))) },
		func() string { return url.QueryEscape(randPrintable(r, 3+r.IntN(20))) },
		func() string { return "%" + randFrom(r, "0123456789abcdefABCDEF%", 2+r.IntN(3)) },
		func() string { return randFrom(r, "0123456789abcdef", 1+r.IntN(70)) },
		func() string { return randFrom(r, secrettest.Alnum+"+/-_", 1+r.IntN(40)) },
		func() string { return strings.Repeat("=", r.IntN(4)) },
		func() string { return randFrom(r, " \n\t\r=%:\"'.,;", 1+r.IntN(3)) },
		func() string { return "U+" + randFrom(r, "0123456789ABCDEF", 4) + " " },
		func() string { return `\u` + randFrom(r, "0123456789abcdef", 4) },
		func() string { return "é日" },
		func() string { return "key: " + fake.Stripe + "\n" },
	}
	var out []string
	for i := 0; i < n; i++ {
		var b strings.Builder
		for k := 1 + r.IntN(10); k > 0; k-- {
			b.WriteString(pieces[r.IntN(len(pieces))]())
		}
		out = append(out, b.String())
	}
	return out
}

// sameSegments checks the decoded values' ranges of each pass against
// gitleaks' segments: a position touches one of ours exactly when it
// touches one of gitleaks' (codec.SegmentsWithDecodedOverlap), the test
// gitleaks applies to each match.
func sameSegments(t *testing.T, passes []string, ranges [][][2]int) {
	t.Helper()
	var segs []*codec.EncodedSegment
	dec := codec.NewDecoder()
	for p := 1; p < len(passes); p++ {
		_, segs = dec.Decode(passes[p-1], segs)
		if ranges[p] == nil {
			continue // gitleaks' decoder made this pass
		}
		for i := 0; i <= len(passes[p]); i++ {
			want := len(codec.SegmentsWithDecodedOverlap(segs, i, i)) > 0
			if got := touchesAny(ranges[p], i, i); got != want {
				t.Fatalf("pass %d of %q: position %d touches a decoded value: got %v, gitleaks %v (ranges %v)", p, passes[0], i, got, want, ranges[p])
			}
		}
	}
}

// decodePasses returns the texts gitleaks' detector runs its rules on for
// text with depth decoding passes, made by gitleaks' decoder alone: text,
// then each decoded text while the decoder finds something
// (detect.Detector.DetectContext's loop).
func decodePasses(text string, depth int) []string {
	out := []string{text}
	for d := 1; d <= depth; d++ {
		next, segs := codec.NewDecoder().Decode(out[len(out)-1], nil)
		if len(segs) == 0 {
			break
		}
		out = append(out, next)
	}
	return out
}
