package transparency

import (
	"fmt"
	"html"
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
)

var (
	smTagRE      = regexp.MustCompile(`<(/?)([A-Za-z][A-Za-z0-9-]*)`)
	smCodeRE     = regexp.MustCompile(`<code>.*?</code>`)
	smHrefRE     = regexp.MustCompile(`<a href="[^"]*">`)
	smMentionRE  = regexp.MustCompile(`(?i)(^|[^a-z0-9_` + "`" + `])@[a-z0-9]`)
	smIssueRE    = regexp.MustCompile(`(?i)(^|[^a-z0-9_&])#[0-9]`)
	smGHRE       = regexp.MustCompile(`(?i)\bGH-[0-9]`)
	smRawAtRE    = regexp.MustCompile(`@[A-Za-z0-9]`)
	smRawHashRE  = regexp.MustCompile(`(^|[^&])#[0-9]`)
	smAllowedTag = map[string]bool{"code": true, "details": true, "summary": true, "a": true}
)

// smAssertInert checks that a summary cannot inject markup on GitHub: no raw
// dangerous strings, only the tags the summary writes itself, balanced code
// elements on every line, and — modelling GitHub, which decodes character
// references and then links @mentions and #refs outside code elements — no
// mention, issue reference, link or image outside <code>.
func smAssertInert(t *testing.T, out string) {
	t.Helper()
	lower := strings.ToLower(out)
	for _, bad := range []string{"<img", "](", "@org", "javascript:", "www.", "\x1b", "\u202e", "<b>", "![", "http://evil"} {
		if strings.Contains(lower, bad) {
			t.Errorf("summary holds raw %q", bad)
		}
	}
	if m := smRawAtRE.FindString(out); m != "" {
		t.Errorf("summary holds a raw mention-like %q", m)
	}
	if m := smRawHashRE.FindString(out); m != "" {
		t.Errorf("summary holds a raw reference-like %q", m)
	}
	for _, m := range smTagRE.FindAllStringSubmatch(out, -1) {
		if !smAllowedTag[strings.ToLower(m[2])] {
			t.Errorf("summary holds tag <%s%s>", m[1], m[2])
		}
	}
	for i, line := range strings.Split(out, "\n") {
		if strings.Count(line, "<code>") != strings.Count(line, "</code>") {
			t.Errorf("line %d: unbalanced code element: %q", i+1, line)
		}
		if i > 0 && strings.Contains(line, "<!--") {
			t.Errorf("line %d: HTML comment outside the marker: %q", i+1, line)
		}
	}
	outside := html.UnescapeString(smHrefRE.ReplaceAllString(smCodeRE.ReplaceAllString(out, " "), "<a>"))
	for _, re := range []*regexp.Regexp{smMentionRE, smIssueRE, smGHRE} {
		if m := re.FindString(outside); m != "" {
			t.Errorf("GitHub would link %q outside code elements", m)
		}
	}
	// Decoded characters are literal text, never markup; what matters there
	// is what GitHub's autolinkers would still find.
	for _, bad := range []string{"://", "www."} {
		if strings.Contains(strings.ToLower(outside), bad) {
			t.Errorf("rendered text outside code holds the autolink %q", bad)
		}
	}
}

func TestSummaryGoldenHostile(t *testing.T) {
	p, rec := viewFixture()
	out := Summary(rec, p, SummaryOptions{
		Marker:      "<!-- ctxpack:summary -->",
		RunURL:      "https://github.com/acme/widgets/actions/runs/42",
		ArtifactURL: "javascript:alert(1)",
		Notes:       []string{"history was not available (shallow clone): set fetch-depth: 0", "@org/admins see #12 and [x](http://evil)"},
	})
	viewGolden(t, "summary_hostile.golden.md", out)
	smAssertInert(t, out)
	if !strings.HasPrefix(out, "<!-- ctxpack:summary -->\n## ❌ ") {
		t.Errorf("marker and verdict must come first:\n%s", out[:80])
	}
	for _, want := range []string{
		"**❌ fail** — 2 failed checks · 1 warning · 1 skipped check",
		"| Content bytes | 1,234,567 |",
		"| Estimated tokens | 3,086 (o200k&#95;base) |",
		"**Pack type:** <code>full</code>",
		"<code>secret&#95;in&#95;history</code>",
		"<code>forbidden&#95;content</code>",
		"<code>over&#95;tier</code>",
		"<code>blob&#95;mismatch</code>",
		"<code>aws-access-token</code> | <code>&#35;1&#46;md&#58;4</code> | <code>3333333</code> | history |",
		"<code>pk&#95;abcd2345</code>",
		"<code>" + strings.Repeat("a", 64) + "</code>",
		`<a href="https://github.com/acme/widgets/actions/runs/42">workflow run</a>`,
		"90,000 → 134 bytes",
		"<details><summary>credentials — 1 file</summary>",
		"<code>&#64;org/team&#46;md</code>",
		"<code>&#60;img src&#61;x onerror&#61;alert&#40;1&#41;&#62;&#46;go</code>",
		"<code>&#35;1&#46;md</code>",
		"<code>new&#92;nline&#92;x1b&#91;31m&#46;go</code>",
		"<code>src/&#92;u202egnp&#46;go</code>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if strings.Contains(out, "href=\"javascript") || strings.Contains(out, "javascript:") {
		t.Error("a javascript: link was kept")
	}
	// Every hostile name that has no control character reads back exactly.
	for _, name := range []string{viewImg, viewTeam, viewIssue, viewTicks, viewPipe, viewImage, viewEmph, viewMentions, viewLink} {
		enc := ghEscape(name, true)
		if !strings.Contains(out, "<code>"+enc+"</code>") {
			t.Errorf("%q is not shown as a code element", name)
		}
		if got := html.UnescapeString(enc); got != name {
			t.Errorf("%q reads back as %q", name, got)
		}
	}
	// The secrets table keeps its five columns whatever the names hold.
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Count(line, "|") != 3 && strings.Count(line, "|") != 6 {
			t.Errorf("table row with a stray pipe: %q", line)
		}
	}
	if !strings.Contains(out, "Values are never recorded") || strings.Contains(out, "f1") && strings.Contains(out, "fingerprint") {
		t.Error("secrets section")
	}
}

func TestSummaryGoldenPass(t *testing.T) {
	v := audit.NewVerdict()
	rec := &Record{
		PackID: "pk_zzzz2222",
		Source: pack.Source{Repository: "acme/widgets", Trigger: "push", Head: "4444444444444444444444444444444444444444"},
		ContextPackInfo: ContextPackInfo{Type: "full", SelectionReason: "full pack requested", FilesScanned: 2, FilesIncluded: 2,
			ContentBytes: 2048},
		Ledger: []pack.LedgerRow{
			{Path: "main.go", Included: true, Role: pack.RolePrimary, BytesOriginal: new(int64(1024)), BytesSent: 1024},
			{Path: "README.md", Included: true, Role: pack.RoleRelated, BytesOriginal: new(int64(1024)), BytesSent: 1024},
		},
		Digests: Digests{PackSHA256: strings.Repeat("1", 64)},
		Verdict: v,
	}
	out := Summary(rec, nil, SummaryOptions{})
	viewGolden(t, "summary_pass.golden.md", out)
	smAssertInert(t, out)
	if !strings.HasPrefix(out, "## ✅ ctxpack: context pack passed the policy\n\n**✅ pass** — 0 failed checks · 0 warnings · 0 skipped checks") {
		t.Errorf("pass verdict first:\n%s", out)
	}
	if !strings.Contains(out, "Nothing: every scanned file is in the pack.") || !strings.Contains(out, "### Secrets\n\nNone found.") {
		t.Error("empty sections should say so")
	}
}

func TestSummaryNoVerdictFailsClosed(t *testing.T) {
	p, rec := viewFixture()
	rec.Verdict = nil
	out := Summary(rec, p, SummaryOptions{})
	if !strings.HasPrefix(out, "## ❌ ctxpack: no audit verdict") {
		t.Errorf("a record without a verdict must read as failing:\n%s", out[:100])
	}
	// Pack only: the exclusions come from the file index.
	out = Summary(nil, p, SummaryOptions{})
	smAssertInert(t, out)
	for _, want := range []string{"<details><summary>pattern&#95;match — 3 files</summary>", "<code>&#35;1&#46;md</code> — exclude&#58; &#35;&#8205;&#42;&#46;md"} {
		if !strings.Contains(out, want) {
			t.Errorf("pack-only summary lacks %q", want)
		}
	}
}

func smBigRecord(n int) *Record {
	v := audit.NewVerdict()
	for i := 0; i < 3; i++ {
		v.Fail(audit.Check{Kind: audit.KindPolicy, Code: audit.CodeForbiddenContent, Message: fmt.Sprintf("forbidden path %d", i)})
	}
	rec := &Record{PackID: "pk_bbbbbbbb", Verdict: v,
		ContextPackInfo: ContextPackInfo{Type: "full", FilesScanned: n + 50, FilesIncluded: 50, FilesExcluded: n}}
	for i := 0; i < n; i++ {
		rec.Ledger = append(rec.Ledger, pack.LedgerRow{Path: fmt.Sprintf("vendor/github.com/some/dependency/pkg%04d/file_%04d.go", i, i),
			Reason: pack.ReasonDependencyDir, Detail: "vendor/"})
	}
	for i := 0; i < 50; i++ {
		rec.Ledger = append(rec.Ledger, pack.LedgerRow{Path: fmt.Sprintf("src/f%02d.go", i), Included: true, BytesSent: 100, Role: pack.RolePrimary})
		rec.Secrets = append(rec.Secrets, SecretRow{Path: fmt.Sprintf("src/f%02d.go", i), Line: i + 1, RuleID: "generic-api-key", Where: "content", Action: pack.SecretRedacted})
	}
	return rec
}

func TestSummaryBound(t *testing.T) {
	rec := smBigRecord(5000)
	out := Summary(rec, nil, SummaryOptions{Marker: "<!-- ctxpack:summary -->"})
	if n := utf8.RuneCountInString(out); n > DefaultSummaryMaxChars {
		t.Fatalf("summary is %d characters, over %d", n, DefaultSummaryMaxChars)
	}
	smAssertInert(t, out)
	shown := strings.Count(out, "<code>vendor/")
	m := regexp.MustCompile(`- … and ([0-9,]+) more paths not shown`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the cut list does not say what was cut")
	}
	if cut := strings.ReplaceAll(m[1], ",", ""); cut != fmt.Sprint(5000-shown) {
		t.Errorf("cut %s, shown %d of 5000", m[1], shown)
	}
	if !strings.Contains(out, "> ✂️ This summary was shortened to fit 65,000 characters: "+m[1]+" paths not shown.") {
		t.Errorf("no notice of the cut near the top")
	}
	// The longest list is cut first: the 50 sent files and 50 findings stay whole.
	if strings.Count(out, "<code>src/f") != 100 || strings.Contains(out, "more findings not shown") {
		t.Errorf("shorter lists were cut before the longest one")
	}
	for i := 0; i < 3; i++ {
		if !strings.Contains(out, fmt.Sprintf("forbidden path %d", i)) {
			t.Errorf("failed check %d was cut", i)
		}
	}
	if !strings.HasPrefix(out, "<!-- ctxpack:summary -->\n## ❌") || !strings.Contains(out, "</details>") || !strings.Contains(out, "### Pack") {
		t.Error("structure lost when cutting")
	}
	if Summary(rec, nil, SummaryOptions{}) != Summary(smBigRecord(5000), nil, SummaryOptions{}) {
		t.Error("the cut is not deterministic")
	}

	// Smaller bounds cut more, down to the fixed text, and never overflow.
	for _, max := range []int{20000, 3000, 1200, 300, 40, 5} {
		out := Summary(rec, nil, SummaryOptions{MaxChars: max})
		if n := utf8.RuneCountInString(out); n > max {
			t.Errorf("MaxChars %d: got %d characters", max, n)
		}
		if max >= 3000 && !strings.Contains(out, "not shown") {
			t.Errorf("MaxChars %d: does not say what was cut", max)
		}
	}
}

func TestSummaryDeterministic(t *testing.T) {
	p, rec := viewFixture()
	want := Summary(rec, p, SummaryOptions{})
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 5; i++ {
		_, rec2 := viewFixture()
		r.Shuffle(len(rec2.Ledger), func(a, b int) { rec2.Ledger[a], rec2.Ledger[b] = rec2.Ledger[b], rec2.Ledger[a] })
		r.Shuffle(len(rec2.Secrets), func(a, b int) { rec2.Secrets[a], rec2.Secrets[b] = rec2.Secrets[b], rec2.Secrets[a] })
		r.Shuffle(len(rec2.Verdict.Failed), func(a, b int) {
			rec2.Verdict.Failed[a], rec2.Verdict.Failed[b] = rec2.Verdict.Failed[b], rec2.Verdict.Failed[a]
		})
		if got := Summary(rec2, p, SummaryOptions{}); got != want {
			t.Fatalf("order of the record changes the summary:\n%s", viewFirstDiff(want, got))
		}
	}
}

func TestSummaryEscaping(t *testing.T) {
	for _, c := range []struct{ in, code, text string }{
		{"plain/path-1,2.go", "plain/path-1,2&#46;go", "plain/path-1,2&#46;go"},
		{"@org/team", "&#64;org/team", "&#64;&#8205;org/team"},
		{"#1", "&#35;1", "&#35;&#8205;1"},
		{"see GH-12", "see GH-12", "see GH-&#8205;12"},
		{"go to http://x or www.y.z", "go to http&#58;//x or www&#46;y&#46;z", "go to http&#58;&#8205;//x or www&#8205;&#46;y&#46;z"},
		{"a\nb\tc\\", "a&#92;nb&#92;tc&#92;&#92;", "a&#92;nb&#92;tc&#92;&#92;"},
		{"\xff\u200b", "&#92;xff&#92;u200b", "&#92;xff&#92;u200b"},
		{"$x$ ~y~ :smile:", "&#36;x&#36; &#126;y&#126; &#58;smile&#58;", "&#36;x&#36; &#126;y&#126; &#58;smile&#58;"},
	} {
		if got := ghEscape(c.in, true); got != c.code {
			t.Errorf("code %q: got %q, want %q", c.in, got, c.code)
		}
		if got := ghEscape(c.in, false); got != c.text {
			t.Errorf("text %q: got %q, want %q", c.in, got, c.text)
		}
	}
	for in, want := range map[string]string{
		"https://x.test/a?b=1&c=(2)":    `<a href="https://x.test/a?b=1&amp;c=(2)">run</a>`,
		"javascript:alert(1)":           "",
		"/relative":                     "",
		"https://user:pw@x.test/":       "",
		`https://x.test/"onmouseover=1`: `<a href="https://x.test/%22onmouseover=1">run</a>`,
	} {
		if got := ghLink(in, "run"); got != want {
			t.Errorf("link %q: got %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"<!-- ctxpack:summary -->":        "<!-- ctxpack:summary -->",
		"":                                "",
		"<!-- a --> <img src=x> <!-- -->": "<!-- a  img srcx -->",
		"ctxpack:summary":                 "<!-- ctxpack:summary -->",
		"<!--> x -->":                     "<!-- x -->",
	} {
		if got := ghMarker(in); got != want {
			t.Errorf("marker %q: got %q, want %q", in, got, want)
		}
	}
}

func TestViewInt(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 65000: "65,000", 1234567: "1,234,567", -1234: "-1,234", -123: "-123", -123456: "-123,456"} {
		if got := viewInt(in); got != want {
			t.Errorf("viewInt(%d) = %q, want %q", in, got, want)
		}
	}
	if viewCount(1, "file", "files") != "1 file" || viewCount(1234, "file", "files") != "1,234 files" {
		t.Error("viewCount")
	}
}
