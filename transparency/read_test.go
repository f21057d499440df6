package transparency

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
)

var rdHeadingRE = regexp.MustCompile(`^## \[(\d+)/(\d+)\] `)

// rdPage is a Read page as a markdown reader sees it: fenced code is skipped,
// so content that imitates a heading or the LEGEND counts for nothing.
type rdPage struct {
	chunks  []int // 1-based chunk numbers, in page order
	total   int   // N of [i/N]
	texts   map[int]string
	legend  map[string]string
	legends int
	fenced  int // fenced blocks
}

// rdFenceOpen is CommonMark's backtick fence opener: up to three spaces, three
// or more backticks, an info string without backticks.
func rdFenceOpen(line string) int {
	l := strings.TrimPrefix(line, strings.Repeat(" ", min(3, len(line)-len(strings.TrimLeft(line, " ")))))
	n := len(l) - len(strings.TrimLeft(l, "`"))
	if n < 3 || strings.Contains(l[n:], "`") {
		return 0
	}
	return n
}

func rdFenceClose(line string, n int) bool {
	l := strings.TrimPrefix(line, strings.Repeat(" ", min(3, len(line)-len(strings.TrimLeft(line, " ")))))
	m := len(l) - len(strings.TrimLeft(l, "`"))
	return m >= n && strings.TrimRight(l[m:], " \t") == ""
}

func rdParse(t *testing.T, out string) rdPage {
	t.Helper()
	pg := rdPage{texts: map[int]string{}, legend: map[string]string{}}
	fence, cur, inLegend := 0, 0, false
	var buf []string
	flush := func() {
		if cur > 0 {
			pg.texts[cur] = strings.Join(buf, "\n")
		}
		buf = nil
	}
	for _, line := range strings.Split(out, "\n") {
		if fence > 0 {
			buf = append(buf, line)
			if rdFenceClose(line, fence) {
				fence = 0
			}
			continue
		}
		if n := rdFenceOpen(line); n > 0 {
			fence = n
			pg.fenced++
			buf = append(buf, line)
			continue
		}
		if m := rdHeadingRE.FindStringSubmatch(line); m != nil {
			flush()
			cur, _ = strconv.Atoi(m[1])
			pg.total, _ = strconv.Atoi(m[2])
			pg.chunks = append(pg.chunks, cur)
		}
		if line == "## LEGEND" {
			flush()
			cur, inLegend = 0, true
			pg.legends++
			continue
		}
		if inLegend {
			if k, v, ok := strings.Cut(strings.TrimPrefix(line, "- "), ": "); ok {
				pg.legend[k] = v
			}
			continue
		}
		buf = append(buf, line)
	}
	flush()
	if fence > 0 {
		t.Fatalf("unclosed code fence")
	}
	if pg.legends != 1 {
		t.Fatalf("%d LEGEND sections outside code", pg.legends)
	}
	return pg
}

func rdMustRead(t *testing.T, p *pack.Pack, rec *Record, opts ReadOptions) (string, rdPage) {
	t.Helper()
	out, err := Read(p, rec, opts)
	if err != nil {
		t.Fatalf("Read(%+v): %v", opts, err)
	}
	return out, rdParse(t, out)
}

func TestReadGolden(t *testing.T) {
	p, rec := viewFixture()
	for _, c := range []struct {
		name string
		opts ReadOptions
	}{
		{"read_orchestrator.golden.md", ReadOptions{}},
		{"read_executor.golden.md", ReadOptions{Profile: ProfileExecutor}},
		{"read_reviewer.golden.md", ReadOptions{Profile: ProfileReviewer}},
		{"read_contains.golden.md", ReadOptions{Contains: "TEAM.MD", Limit: 2}},
	} {
		out, _ := rdMustRead(t, p, rec, c.opts)
		viewGolden(t, c.name, out)
		again, _ := Read(p, rec, c.opts)
		if again != out {
			t.Errorf("%s: not deterministic", c.name)
		}
	}
}

func TestReadProfiles(t *testing.T) {
	p, rec := viewFixture()
	_, all := rdMustRead(t, p, rec, ReadOptions{Profile: ProfileReviewer})
	total := all.total
	if total != 14 || len(all.chunks) != total {
		t.Fatalf("reviewer: %d of %d chunks; want all 14 (1 overview, 3 changes, 5 files, 5 excluded groups)", len(all.chunks), total)
	}
	for _, c := range []struct {
		profile string
		want    int
		limit   string
	}{{"", 6, "6"}, {ProfileOrchestrator, 6, "6"}, {ProfileExecutor, 14, "20"}, {ProfileReviewer, 14, "unlimited"}} {
		out, pg := rdMustRead(t, p, rec, ReadOptions{Profile: c.profile})
		if len(pg.chunks) != c.want {
			t.Errorf("%q: %d chunks, want %d", c.profile, len(pg.chunks), c.want)
		}
		profile := c.profile
		if profile == "" {
			profile = ProfileOrchestrator
		}
		l := pg.legend
		if l["profile"] != profile || l["pack_id"] != "pk_abcd2345" || l["limit"] != c.limit || l["offset"] != "0" ||
			l["returned"] != fmt.Sprint(c.want) || l["total_matching"] != "14" || l["has_more"] != fmt.Sprint(c.want < 14) {
			t.Errorf("%q: LEGEND %v", c.profile, l)
		}
		if (l["next_page_token"] == "none") != (c.want == 14) {
			t.Errorf("%q: next_page_token %q", c.profile, l["next_page_token"])
		}
		if pg.chunks[0] != 1 || !strings.Contains(pg.texts[1], "### Top risks and gaps") || !strings.Contains(pg.texts[1], "### Deep-nav hints") ||
			!strings.Contains(pg.texts[1], "**Objective:**") || !strings.Contains(pg.texts[1], "- status: ❌ fail") {
			t.Errorf("%q: the overview comes first with objective, verdict, risks and hints", c.profile)
		}
		compact := profile != ProfileReviewer
		if compact {
			if pg.fenced != 0 || strings.Contains(out, "not a fence end") {
				t.Errorf("%q: compact profiles carry no code fences and no content", c.profile)
			}
			if !strings.Contains(out, "--profile reviewer --contains") {
				t.Errorf("%q: compact profiles say how to read more", c.profile)
			}
		} else if pg.fenced != 2+5 || !strings.Contains(out, "not a fence end") {
			t.Errorf("reviewer: %d fenced blocks, want 2 diffs + 5 files", pg.fenced)
		}
	}
	// Executor lists hunks, orchestrator only counts them.
	out, _ := rdMustRead(t, p, rec, ReadOptions{Profile: ProfileExecutor})
	if !strings.Contains(out, "  - ``@@ -1,2 +1,4 @@ func `tick`()``\n  - `@@ -10 +12 @@`\n") {
		t.Error("executor: hunk headers")
	}
	out, _ = rdMustRead(t, p, rec, ReadOptions{Limit: 14})
	if strings.Contains(out, "@@ -1,2") || !strings.Contains(out, "- diff: 9 lines, 2 hunks") {
		t.Error("orchestrator: diff summary only")
	}
	// Without a record the verdict is unknown, never a pass.
	out, _ = rdMustRead(t, p, nil, ReadOptions{})
	if !strings.Contains(out, "- status: unknown (no transparency record given") {
		t.Error("no record: verdict must read as unknown")
	}
}

// TestReadPagingExactlyOnce follows next_page_token from the first page and
// checks that every matching chunk comes exactly once, in order.
func TestReadPagingExactlyOnce(t *testing.T) {
	p, rec := viewFixture()
	for _, profile := range ReadProfiles {
		for _, contains := range []string{"", "md", "CREDENTIALS", "no such text anywhere"} {
			_, whole := rdMustRead(t, p, rec, ReadOptions{Profile: profile, Contains: contains, Limit: 1000})
			for _, limit := range []int{0, 1, 2, 3, 5} {
				name := fmt.Sprintf("%s/%q/limit=%d", profile, contains, limit)
				seen := map[int]int{}
				var order []int
				opts := ReadOptions{Profile: profile, Contains: contains, Limit: limit}
				for pages := 0; ; pages++ {
					if pages > 100 {
						t.Fatalf("%s: paging does not end", name)
					}
					_, pg := rdMustRead(t, p, rec, opts)
					for _, c := range pg.chunks {
						seen[c]++
						order = append(order, c)
					}
					if got, _ := strconv.Atoi(pg.legend["returned"]); got != len(pg.chunks) {
						t.Errorf("%s: returned %s, page has %d", name, pg.legend["returned"], len(pg.chunks))
					}
					if pg.legend["total_matching"] != fmt.Sprint(len(whole.chunks)) {
						t.Errorf("%s: total_matching %s, want %d", name, pg.legend["total_matching"], len(whole.chunks))
					}
					tok := pg.legend["next_page_token"]
					if pg.legend["has_more"] != fmt.Sprint(tok != "none") {
						t.Errorf("%s: has_more %s with token %q", name, pg.legend["has_more"], tok)
					}
					if tok == "none" {
						break
					}
					// Continue with the token alone, as the seed's example does.
					opts = ReadOptions{PageToken: tok}
				}
				if fmt.Sprint(order) != fmt.Sprint(whole.chunks) {
					t.Errorf("%s: pages gave %v, want %v", name, order, whole.chunks)
				}
				for c, n := range seen {
					if n != 1 {
						t.Errorf("%s: chunk %d returned %d times", name, c, n)
					}
				}
			}
		}
	}
	// Passing the same options along with the token is accepted too.
	_, pg := rdMustRead(t, p, rec, ReadOptions{Profile: ProfileExecutor, Contains: "md", Limit: 2})
	if _, err := Read(p, rec, ReadOptions{Profile: ProfileExecutor, Contains: "md", Limit: 2, PageToken: pg.legend["next_page_token"]}); err != nil {
		t.Errorf("token with matching options: %v", err)
	}
	// An offset starts the first page anywhere.
	_, pg = rdMustRead(t, p, rec, ReadOptions{Offset: 12})
	if fmt.Sprint(pg.chunks) != "[13 14]" || pg.legend["offset"] != "12" || pg.legend["has_more"] != "false" {
		t.Errorf("offset 12: chunks %v, legend %v", pg.chunks, pg.legend)
	}
	_, pg = rdMustRead(t, p, rec, ReadOptions{Offset: 99})
	if len(pg.chunks) != 0 || pg.legend["returned"] != "0" || pg.legend["has_more"] != "false" {
		t.Errorf("offset past the end: %v %v", pg.chunks, pg.legend)
	}
}

func TestReadContains(t *testing.T) {
	p, rec := viewFixture()
	_, all := rdMustRead(t, p, rec, ReadOptions{Profile: ProfileReviewer})
	for _, needle := range []string{"TEAM.MD", "@org", "aws-ACCESS-token", "]]>", "pattern_match"} {
		_, pg := rdMustRead(t, p, rec, ReadOptions{Profile: ProfileReviewer, Contains: needle})
		var want []int
		for _, c := range all.chunks {
			if strings.Contains(strings.ToLower(all.texts[c]), strings.ToLower(needle)) {
				want = append(want, c)
			}
		}
		if len(want) == 0 || fmt.Sprint(pg.chunks) != fmt.Sprint(want) {
			t.Errorf("contains %q: got chunks %v, want %v", needle, pg.chunks, want)
		}
		if pg.legend["contains"] == "none" || pg.legend["total_chunks"] != "14" {
			t.Errorf("contains %q: legend %v", needle, pg.legend)
		}
	}
	// The filter sees the rendered text of the profile: content only in reviewer.
	_, pg := rdMustRead(t, p, rec, ReadOptions{Contains: "not a fence end"})
	if len(pg.chunks) != 0 {
		t.Errorf("orchestrator text holds no content, got %v", pg.chunks)
	}
	_, pg = rdMustRead(t, p, rec, ReadOptions{Profile: ProfileReviewer, Contains: "NOT A FENCE END"})
	if len(pg.chunks) != 1 {
		t.Errorf("reviewer: %v", pg.chunks)
	}
}

func rdErr(t *testing.T, err error) *ReadError {
	t.Helper()
	var re *ReadError
	if !errors.As(err, &re) {
		t.Fatalf("want a *ReadError, got %T %v", err, err)
	}
	if re.Kind != "validation" || re.Code != "invalid_data" || re.Details == nil || re.Message == "" {
		t.Fatalf("error contract: %+v", re)
	}
	var js map[string]any
	if err := json.Unmarshal(re.JSON(), &js); err != nil || js["kind"] != "validation" || js["code"] != "invalid_data" || js["message"] != re.Message {
		t.Fatalf("JSON form %s: %v", re.JSON(), err)
	}
	if _, ok := js["details"].(map[string]any); !ok {
		t.Fatalf("details must be an object: %s", re.JSON())
	}
	if c := re.Check(); c.Code != re.Code || c.Kind != re.Kind {
		t.Fatalf("Check form %+v", c)
	}
	return re
}

func TestReadStaleToken(t *testing.T) {
	p, rec := viewFixture()
	_, pg := rdMustRead(t, p, rec, ReadOptions{Contains: "md", Limit: 2})
	tok := pg.legend["next_page_token"]
	if tok == "none" {
		t.Fatal("no token")
	}
	other, _ := viewFixture()
	other.PackID = "pk_zzzz7777"
	stale, _ := viewFixture()
	stale.Changes = append(stale.Changes, pack.Change{Path: "added.md", Status: "added"})

	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	edited := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"offset":2`, `"offset":0`, 1)))
	if edited == tok {
		t.Fatal("token layout changed; update the test")
	}
	for _, c := range []struct {
		name   string
		p      *pack.Pack
		opts   ReadOptions
		reason string
	}{
		{"other pack", other, ReadOptions{PageToken: tok}, "pack_mismatch"},
		{"other contains", p, ReadOptions{PageToken: tok, Contains: "go"}, "options_mismatch"},
		{"other contains case", p, ReadOptions{PageToken: tok, Contains: "MD"}, "options_mismatch"},
		{"other profile", p, ReadOptions{PageToken: tok, Profile: ProfileReviewer}, "options_mismatch"},
		{"other limit", p, ReadOptions{PageToken: tok, Limit: 3}, "options_mismatch"},
		{"pack changed under the same id", stale, ReadOptions{PageToken: tok}, "stale"},
		{"edited", p, ReadOptions{PageToken: edited}, "checksum_mismatch"},
		{"garbage", p, ReadOptions{PageToken: "not a token!"}, "malformed"},
		{"not json", p, ReadOptions{PageToken: base64.RawURLEncoding.EncodeToString([]byte("[1,2]"))}, "malformed"},
		{"too long", p, ReadOptions{PageToken: strings.Repeat("A", rdTokenMaxLen+1)}, "malformed"},
	} {
		_, err := Read(c.p, rec, c.opts)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.Contains(err.Error(), "invalid_page_token") {
			t.Errorf("%s: %q lacks invalid_page_token", c.name, err)
		}
		re := rdErr(t, err)
		if re.Details["reason"] != c.reason || re.Details["requested_field"] != "page_token" {
			t.Errorf("%s: details %v, want reason %s", c.name, re.Details, c.reason)
		}
	}
	_, err := Read(other, rec, ReadOptions{PageToken: tok})
	if re := rdErr(t, err); re.Details["token_pack_id"] != "pk_abcd2345" || re.Details["pack_id"] != "pk_zzzz7777" {
		t.Errorf("pack mismatch details: %v", re.Details)
	}
	_, err = Read(p, rec, ReadOptions{PageToken: tok, Contains: "go"})
	if re := rdErr(t, err); fmt.Sprint(re.Details["mismatched_fields"]) != "[contains]" {
		t.Errorf("mismatch details: %v", re.Details)
	}
}

func TestReadInvalidOptions(t *testing.T) {
	p, rec := viewFixture()
	_, pg := rdMustRead(t, p, rec, ReadOptions{})
	tok := pg.legend["next_page_token"]
	for _, c := range []struct {
		name  string
		p     *pack.Pack
		opts  ReadOptions
		field string
	}{
		{"offset and token", p, ReadOptions{Offset: 2, PageToken: tok}, ""},
		{"unknown profile", p, ReadOptions{Profile: "admin"}, "profile"},
		{"negative limit", p, ReadOptions{Limit: -1}, "limit"},
		{"negative offset", p, ReadOptions{Offset: -1}, "offset"},
		{"no pack", nil, ReadOptions{}, "pack"},
	} {
		_, err := Read(c.p, rec, c.opts)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		re := rdErr(t, err)
		if c.field != "" && re.Details["requested_field"] != c.field {
			t.Errorf("%s: details %v", c.name, re.Details)
		}
		if c.field == "" && re.Details["mutually_exclusive"] != true {
			t.Errorf("%s: details %v", c.name, re.Details)
		}
	}
	if _, err := Read(p, rec, ReadOptions{Profile: " Reviewer "}); err != nil {
		t.Errorf("profile names are case-insensitive: %v", err)
	}
}

// TestReadHostileNames checks that names cannot forge chunk headings or the
// LEGEND, and that compact views hold no content.
func TestReadHostileNames(t *testing.T) {
	p, rec := viewFixture()
	for _, profile := range ReadProfiles {
		out, pg := rdMustRead(t, p, rec, ReadOptions{Profile: profile, Limit: 100})
		if len(pg.chunks) != 14 {
			t.Errorf("%s: %d chunks", profile, len(pg.chunks))
		}
		for _, bad := range []string{"\x1b", "\u202e", "new\nline"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: raw %q in output", profile, bad)
			}
		}
		if !strings.Contains(out, "```we`ird``name.go```") || !strings.Contains(out, "`new\\nline\\x1b[31m.go`") {
			t.Errorf("%s: names as code spans", profile)
		}
	}
}

func TestReadSummaryPack(t *testing.T) {
	p := rnSummaryPack()
	for _, profile := range ReadProfiles {
		_, whole := rdMustRead(t, p, nil, ReadOptions{Profile: profile, Limit: 100})
		// overview, 2 key file summaries, entrypoints, 1 excluded group
		if len(whole.chunks) != 5 {
			t.Fatalf("%s: %d chunks", profile, len(whole.chunks))
		}
		var got []int
		opts := ReadOptions{Profile: profile, Limit: 2}
		for {
			_, pg := rdMustRead(t, p, nil, opts)
			got = append(got, pg.chunks...)
			if pg.legend["next_page_token"] == "none" {
				break
			}
			opts = ReadOptions{PageToken: pg.legend["next_page_token"]}
		}
		if fmt.Sprint(got) != "[1 2 3 4 5]" {
			t.Errorf("%s: paging gave %v", profile, got)
		}
		ov := whole.texts[1]
		if !strings.Contains(ov, "- description: a CLI\\n## LEGEND") || !strings.Contains(ov, "- hotspot `a|b.go`: auth — token handling") {
			t.Errorf("%s: overview lacks the repo summary or hotspots:\n%s", profile, ov)
		}
		notable := strings.Count(whole.texts[2], "- notable:")
		if want := map[string]int{ProfileOrchestrator: 3, ProfileExecutor: 5, ProfileReviewer: 5}[profile]; notable != want {
			t.Errorf("%s: %d notable lines, want %d", profile, notable, want)
		}
	}
}

// Sections a caller gives are read first, page with the pack's chunks, and
// are all that is read without a pack; a token bound to one revision is
// stale under another; Nav words the hints.
func TestReadSectionsBindingNav(t *testing.T) {
	p, rec := viewFixture()
	sections := []ReadSection{
		{ID: "scope", Title: "document: scope", Body: "scope body\n"},
		{ID: "qa", Title: "document: qa", Body: "verdict pass\n"},
	}
	_, whole := rdMustRead(t, p, rec, ReadOptions{Profile: ProfileReviewer})
	out, pg := rdMustRead(t, p, rec, ReadOptions{Sections: sections, Limit: 2, Binding: "rev-1",
		Legend: []LegendLine{{"selected_by", "exact_id"}},
		Nav: func(h ReadHint) string {
			return fmt.Sprintf("output read profile=%s contains=%q next=%t", h.Profile, h.Contains, h.NextPage)
		}})
	if pg.total != whole.total+2 || len(pg.chunks) != 2 || !strings.Contains(pg.texts[1], "scope body") || !strings.Contains(pg.texts[2], "verdict pass") {
		t.Fatalf("sections not first: total %d (pack %d), chunks %v\n%s", pg.total, whole.total, pg.chunks, out)
	}
	if pg.legend["selected_by"] != "exact_id" {
		t.Fatalf("legend line missing: %v", pg.legend)
	}
	next := pg.legend["next_page_token"]
	out2, pg2 := rdMustRead(t, p, rec, ReadOptions{Sections: sections, Binding: "rev-1", PageToken: next,
		Nav: func(h ReadHint) string { return fmt.Sprintf("output read profile=%s next=%t", h.Profile, h.NextPage) }})
	if pg2.chunks[0] != 3 || !strings.Contains(out2, "`output read profile=reviewer next=false`") || strings.Contains(out2, "ctxpack read PACK") {
		t.Fatalf("second page: chunks %v\n%s", pg2.chunks, out2)
	}
	if !strings.Contains(out2, "2 document sections") {
		t.Fatalf("deep-nav hints do not count the sections:\n%s", out2)
	}
	_, err := Read(p, rec, ReadOptions{Sections: sections, Binding: "rev-2", PageToken: next})
	var re *ReadError
	if !errors.As(err, &re) || !strings.Contains(re.Message, ReadInvalidPageToken) || re.Details["reason"] != "stale" {
		t.Fatalf("token of another binding: %v", err)
	}
	// No pack: the sections alone, named by ID.
	out, pg = rdMustRead(t, nil, nil, ReadOptions{Sections: sections, ID: "pk_abcd2345"})
	if pg.total != 2 || !strings.Contains(out, "# ctxpack read: `pk_abcd2345`") || pg.legend["pack_id"] != "pk_abcd2345" {
		t.Fatalf("sections without a pack:\n%s", out)
	}
}
