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
	smTagRE     = regexp.MustCompile(`<(/?)([A-Za-z][A-Za-z0-9-]*)`)
	smCodeRE    = regexp.MustCompile(`<code>.*?</code>`)
	smHrefRE    = regexp.MustCompile(`<a href="[^"]*">`)
	smMentionRE = regexp.MustCompile(`(?i)(^|[^a-z0-9_` + "`" + `])@[a-z0-9]`)
	smIssueRE   = regexp.MustCompile(`(?i)(^|[^a-z0-9_&])#[0-9]`)
	smGHRE      = regexp.MustCompile(`(?i)\bGH-[0-9]`)
	smRawAtRE   = regexp.MustCompile(`@[A-Za-z0-9]`)
	smRawHashRE = regexp.MustCompile(`#[0-9]`)
	// smEscapedRE is a backslash escape of ASCII punctuation.
	smEscapedRE = regexp.MustCompile("\\\\[!-/:-@\\[-`{-~]")
	// smUnescapedLinkRE is "](" or "![" whose bracket has no backslash.
	smUnescapedLinkRE = regexp.MustCompile(`(^|[^\\])(\]\(|!\[)`)
	smAllowedTag      = map[string]bool{"code": true, "details": true, "summary": true, "a": true}
)

// smAssertInert checks that a summary cannot inject markup on GitHub: only
// the tags the summary writes itself, balanced code elements on every line,
// no link or image syntax that is not backslash-escaped, no autolink
// anywhere (GitHub's autolinker scans text inside raw <code> too), and —
// modelling GitHub, which links @mentions and #refs outside code elements —
// no mention or issue reference outside <code>.
func smAssertInert(t *testing.T, out string) {
	t.Helper()
	lower := strings.ToLower(out)
	for _, bad := range []string{"<img", "\x1b", "\u202e", "<b>", `href="javascript`} {
		if strings.Contains(lower, bad) {
			t.Errorf("summary holds raw %q", bad)
		}
	}
	if m := smUnescapedLinkRE.FindString(out); m != "" {
		t.Errorf("summary holds link or image syntax %q", m)
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
	noHref := smHrefRE.ReplaceAllString(out, "<a>")
	outside := html.UnescapeString(smCodeRE.ReplaceAllString(noHref, " "))
	for _, re := range []*regexp.Regexp{smMentionRE, smIssueRE, smGHRE, smRawAtRE, smRawHashRE} {
		if m := re.FindString(outside); m != "" {
			t.Errorf("GitHub would link %q outside code elements", m)
		}
	}
	// A backslash-escaped character is its own text node: what matters is
	// what the autolinker would still find in one piece.
	for _, bad := range []string{"://", "www."} {
		if strings.Contains(strings.ToLower(smEscapedRE.ReplaceAllString(html.UnescapeString(noHref), " ")), bad) {
			t.Errorf("the summary holds the autolink %q", bad)
		}
	}
}

// smUnescape reads an escaped string back as GitHub shows it: character
// references decoded, backslash escapes of ASCII punctuation removed, the
// invisible joiners dropped.
func smUnescape(s string) string {
	s = html.UnescapeString(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return strings.ReplaceAll(b.String(), ghZWJ, "")
}

// smCells counts a table row's cell separators: pipes not escaped.
func smCells(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' {
			i++
			continue
		}
		if line[i] == '|' {
			n++
		}
	}
	return n
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
		"| Estimated tokens | 3,086 (o200k_base) |",
		"**Pack type:** <code>full</code>",
		"<code>secret_in_history</code>",
		"- history was not available (shallow clone): set fetch-depth: 0",
		"### What stays behind (7 files kept out, 1 diff withheld)",
		"<code>forbidden_content</code>",
		"<code>over_tier</code>",
		"<code>blob_mismatch</code>",
		"<code>aws-access-token</code> | <code>#1.md:4</code> | <code>3333333</code> | history |",
		"<code>pk_abcd2345</code>",
		"<code>" + strings.Repeat("a", 64) + "</code>",
		`<a href="https://github.com/acme/widgets/actions/runs/42">workflow run</a>`,
		"90,000 → 134 bytes",
		"<details><summary>credentials — 1 file</summary>",
		"<code>@org/team.md</code>",
		"<code>&lt;img src=x onerror=alert(1)&gt;.go</code>",
		"<code>#1.md</code>",
		`<code>new\\nline\\x1b\[31m.go</code>`,
		`<code>src/\\u202egnp.go</code>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if strings.Contains(out, "href=\"javascript") || regexp.MustCompile(`[^\\]\]\(javascript:`).MatchString(out) {
		t.Error("a javascript: link was kept")
	}
	// Every hostile name that has no control character reads back exactly.
	for _, name := range []string{viewImg, viewTeam, viewIssue, viewTicks, viewPipe, viewImage, viewEmph, viewMentions, viewLink} {
		enc := ghEscape(name, true)
		if !strings.Contains(out, "<code>"+enc+"</code>") {
			t.Errorf("%q is not shown as a code element", name)
		}
		if got := smUnescape(enc); got != name {
			t.Errorf("%q reads back as %q", name, got)
		}
	}
	// The secrets table keeps its five columns whatever the names hold.
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| ") && smCells(line) != 3 && smCells(line) != 6 {
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
	for _, want := range []string{"<details><summary>pattern_match — 3 files</summary>", "<code>#1.md</code> — exclude: #\u200d\\*.md"} {
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
		{"plain/path-1,2.go", "plain/path-1,2.go", "plain/path-1,2.go"},
		{"go.sum:0 snake_case_name.go", "go.sum:0 snake_case_name.go", "go.sum:0 snake_case_name.go"},
		{"_x_ *y*", `\_x\_ \*y\*`, `\_x\_ \*y\*`},
		{"@org/team", "@org/team", "@\u200dorg/team"},
		{"#1", "#1", "#\u200d1"},
		{"# title", "# title", "\\#\u200d title"},
		{"1. item", "1. item", `1\. item`},
		{"0.1.0-dev", "0.1.0-dev", "0.1.0-dev"},
		{"- x", "- x", `\- x`},
		{"-x ---", "-x ---", "-x ---"},
		{"===", "===", `\===`},
		{"> quote", "&gt; quote", `\> quote`},
		{"a > b", "a &gt; b", "a &gt; b"},
		{"see GH-12", "see GH-12", "see GH-\u200d12"},
		{"go to http://x or www.y.z", `go to http\://x or www\.y.z`, `go to http\://x or www\.y.z`},
		{"<img src=x>&amp; & b", "&lt;img src=x&gt;&amp;amp; & b", "&lt;img src=x&gt;&amp;amp; & b"},
		{"[x](y) `c` a|b", "\\[x\\](y) \\`c\\` a\\|b", "\\[x\\](y) \\`c\\` a\\|b"},
		{"a\nb\tc\\", `a\\nb\\tc\\\\`, `a\\nb\\tc\\\\`},
		{"\xff\u200b", `\\xff\\u200b`, `\\xff\\u200b`},
		{"$x$ ~y~ :smile:", `\$x\$ \~y\~ :smile:`, `\$x\$ \~y\~ :smile:`},
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
