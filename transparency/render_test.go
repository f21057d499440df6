package transparency

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
)

// rnFixture is the hostile pack plus content with CRLF line ends, an XML
// control character and no final newline.
func rnFixture() *pack.Pack {
	p, _ := viewFixture()
	p.Contents = append(p.Contents,
		viewItem("win.txt", pack.RoleRelated, "line one\r\nline two\r\n\t]]]]>>\r\n"),
		viewItem("ctl.txt", pack.RoleRelated, "bell\x07 here\n"),
		viewItem("empty.txt", pack.RoleRelated, ""),
		viewItem("fence.md", pack.RoleRelated, "````\n```\n`````x"),
	)
	return p
}

func TestRenderJSON(t *testing.T) {
	p := rnFixture()
	got, err := Render(p, FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := pack.Marshal(p)
	if !bytes.Equal(got, want) {
		t.Error("json must be pack.Marshal")
	}
	if _, err := Render(p, "yaml"); err == nil || !strings.Contains(err.Error(), `unknown format "yaml"`) {
		t.Errorf("unknown format: %v", err)
	}
	if _, err := Render(nil, FormatJSON); err == nil {
		t.Error("nil pack accepted")
	}
}

// rnFencedBlocks reads a markdown rendering as CommonMark does and returns the
// content of every fenced block, with the no-newline marker applied.
func rnFencedBlocks(t *testing.T, md string) []string {
	t.Helper()
	var blocks []string
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		n := rdFenceOpen(lines[i])
		if n == 0 {
			continue
		}
		var body []string
		j := i + 1
		for ; j < len(lines) && !rdFenceClose(lines[j], n); j++ {
			body = append(body, lines[j])
		}
		if j == len(lines) {
			t.Fatalf("fence at line %d never closes", i+1)
		}
		content := strings.Join(body, "\n")
		if len(body) > 0 {
			content += "\n"
		}
		if j+1 < len(lines) && lines[j+1] == viewNoEOL {
			content = strings.TrimSuffix(content, "\n")
			j++
		}
		blocks = append(blocks, content)
		i = j
	}
	return blocks
}

func TestRenderMarkdown(t *testing.T) {
	p := rnFixture()
	out, err := Render(p, FormatMarkdown)
	if err != nil {
		t.Fatal(err)
	}
	viewGolden(t, "render_markdown.golden.md", string(out))
	again, _ := Render(p, FormatMarkdown)
	if !bytes.Equal(out, again) {
		t.Error("markdown rendering is not deterministic")
	}
	// Every diff and every file reads back byte for byte, whatever fences,
	// headings or tags the content holds.
	var want []string
	for _, c := range p.Changes {
		if c.Diff != "" {
			want = append(want, c.Diff)
		}
	}
	for _, it := range rdAllItems(p) {
		want = append(want, it.Content)
	}
	got := rnFencedBlocks(t, string(out))
	if len(got) != len(want) {
		t.Fatalf("%d fenced blocks, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d reads back as %q, want %q", i, got[i], want[i])
		}
	}
	// Headings: one per change and file, outside fences, with the path in a
	// code span longer than its backtick runs.
	md := string(out)
	for _, h := range []string{"### ```we`ird``name.go```", "### `<img src=x onerror=alert(1)>.go`", "### `@org/team.md`", "### `a|b.go`"} {
		if !strings.Contains(md, "\n"+h+"\n") {
			t.Errorf("heading %q missing", h)
		}
	}
	if !strings.Contains(md, "- `new\\nline\\x1b[31m.go` — binary: binary content") || strings.Contains(md, "\x1b") || strings.Contains(md, "\u202e") {
		t.Error("control and bidi characters must be shown escaped")
	}
}

type rnXDoc struct {
	XMLName xml.Name `xml:"context_pack"`
	PackID  string   `xml:"pack_id,attr"`
	Changes []struct {
		Path    string `xml:"path,attr"`
		OldPath string `xml:"old_path,attr"`
		Diff    string `xml:"diff"`
	} `xml:"changes>change"`
	Files []struct {
		ID      string `xml:"id,attr"`
		Path    string `xml:"path,attr"`
		Role    string `xml:"role,attr"`
		Content struct {
			Text     string `xml:",chardata"`
			Replaced string `xml:"replaced_characters,attr"`
		} `xml:"content"`
	} `xml:"files>file"`
	Excluded []struct {
		Path   string `xml:"path,attr"`
		Reason string `xml:"reason,attr"`
		Detail string `xml:"detail,attr"`
	} `xml:"excluded>excluded_file"`
}

func TestRenderXML(t *testing.T) {
	p := rnFixture()
	out, err := Render(p, FormatXML)
	if err != nil {
		t.Fatal(err)
	}
	viewGolden(t, "render_xml.golden.xml", string(out))
	again, _ := Render(p, FormatXML)
	if !bytes.Equal(out, again) {
		t.Error("xml rendering is not deterministic")
	}
	s := string(out)
	items := rdAllItems(p)
	if n := strings.Count(s, "</file>"); n != len(items) {
		t.Errorf("%d </file> tags for %d files: content closed an element", n, len(items))
	}
	if strings.Contains(s, "]]>") || strings.Contains(s, "<![CDATA[") || strings.Contains(s, "</content>\n</content>") {
		t.Error("content delimiters leaked into the XML")
	}
	var doc rnXDoc
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	if doc.PackID != p.PackID || len(doc.Files) != len(items) || len(doc.Changes) != len(p.Changes) {
		t.Fatalf("structure: %d files, %d changes", len(doc.Files), len(doc.Changes))
	}
	for i, it := range items {
		f := doc.Files[i]
		want := it.Content
		if it.Path == "ctl.txt" {
			want = strings.ReplaceAll(want, "\x07", "\uFFFD")
			if f.Content.Replaced != "1" {
				t.Errorf("ctl.txt: replaced_characters %q", f.Content.Replaced)
			}
		} else if f.Content.Replaced != "" {
			t.Errorf("%s: replaced_characters %q", it.Path, f.Content.Replaced)
		}
		if f.Path != it.Path || f.ID != it.ID || f.Role != it.Role || f.Content.Text != want {
			t.Errorf("file %d reads back as %q %q %q, want %q %q %q", i, f.Path, f.ID, f.Content.Text, it.Path, it.ID, want)
		}
	}
	for i, c := range p.Changes {
		if doc.Changes[i].Path != c.Path || doc.Changes[i].OldPath != c.OldPath || doc.Changes[i].Diff != c.Diff {
			t.Errorf("change %d reads back as %+v", i, doc.Changes[i])
		}
	}
	paths := map[string]bool{}
	for _, e := range doc.Excluded {
		paths[e.Path] = true
	}
	// XML 1.0 cannot carry ESC: it reads back as U+FFFD; the rest is exact.
	for _, name := range []string{strings.ReplaceAll(viewNewline, "\x1b", "\uFFFD"), viewPipe, viewImage, viewBidi, viewIssue, viewMentions} {
		if !paths[name] {
			t.Errorf("excluded %q does not read back", name)
		}
	}
}

// rnSummaryPack is a Summary pack (seed 000 SummaryPack) with hostile text.
func rnSummaryPack() *pack.Pack {
	return &pack.Pack{
		SchemaVersion: 1, PackID: "pk_summ2345", Type: "summary",
		Source:   pack.Source{Repository: "acme/widgets", Trigger: "commit", Head: "5555555555555555555555555555555555555555"},
		Manifest: pack.Manifest{ProjectName: "widgets", Dependencies: []pack.Dependency{{Name: "x</dependency>", Version: "]]>", Type: "go", Source: "go.mod"}}, EntryPoints: []string{}},
		RepoSummary: &pack.RepoSummary{Description: "a CLI\n## LEGEND", ArchitecturePattern: "layers", KeyTechnologies: []string{"Go", "<script>"},
			NotablePatterns: []string{"`x`"}, PotentialConcerns: []string{"]]>"}},
		KeyFilesSummary: []pack.KeyFileSummary{
			{Path: viewImg, Category: pack.CatSource, Summary: "main\nentry", Exports: []string{"Main"}, Dependencies: []string{"fmt"}, NotableCode: []string{"a", "b", "c", "d", "e"}},
			{Path: viewTeam, Category: pack.CatDocumentation, Summary: "team"},
		},
		Entrypoints:  []pack.Entrypoint{{Path: "cmd/main.go", Type: "cli", Description: "the CLI", RoutesOrCommands: []string{"run </entrypoint>"}}},
		RiskHotspots: []pack.RiskHotspot{{Path: viewPipe, RiskType: "auth", Description: "token handling", Indicators: []string{"`token`"}}},
		FileIndex:    []pack.IndexEntry{{Path: viewImg, Included: true}, {Path: "big.bin", ExclusionReason: pack.ReasonBinary}},
		Metadata:     pack.Metadata{PackType: "summary", SelectionReason: "estimated size over max_content_bytes"},
	}
}

func TestRenderSummaryPack(t *testing.T) {
	p := rnSummaryPack()
	md, err := Render(p, FormatMarkdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Repository summary", "- description: a CLI\\n## LEGEND", "## Key file summaries (2)", "- notable: `e`",
		"## Entrypoints (1)", "  - `run </entrypoint>`", "## Risk hotspots (1)", "- `a|b.go` (auth): token handling — `` `token` ``"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	x, err := Render(p, FormatXML)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Desc     string   `xml:"repo_summary>description"`
		Concerns []string `xml:"repo_summary>potential_concern"`
		KFS      []struct {
			Path    string   `xml:"path,attr"`
			Notable []string `xml:"notable_code"`
		} `xml:"key_file_summary"`
		Routes []string `xml:"entrypoint>route_or_command"`
		Ind    []string `xml:"risk_hotspot>indicator"`
		Deps   []struct {
			Name    string `xml:"name,attr"`
			Version string `xml:"version,attr"`
		} `xml:"manifest>dependency"`
	}
	if err := xml.Unmarshal(x, &doc); err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	if doc.Desc != "a CLI\n## LEGEND" || len(doc.Concerns) != 1 || doc.Concerns[0] != "]]>" || len(doc.KFS) != 2 || doc.KFS[0].Path != viewImg ||
		len(doc.KFS[0].Notable) != 5 || doc.Routes[0] != "run </entrypoint>" || doc.Ind[0] != "`token`" || doc.Deps[0].Name != "x</dependency>" || doc.Deps[0].Version != "]]>" {
		t.Errorf("summary pack reads back as %+v", doc)
	}
}

func TestViewCodeSpan(t *testing.T) {
	for in, want := range map[string]string{
		"a":       "`a`",
		"":        "` `",
		"`a":      "`` `a ``",
		"a`":      "`` a` ``",
		" a ":     "`  a  `",
		"   ":     "`   `",
		"a``b":    "```a``b```",
		"x\ny":    "`x\\ny`",
		"\u202ex": "`\\u202ex`",
	} {
		if got := viewCodeSpan(in); got != want {
			t.Errorf("viewCodeSpan(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("a", 500) + ".go"
	got := viewClip(long, 300)
	if !strings.HasSuffix(got, "a.go") || !strings.Contains(got, "…[203 characters]…") || !strings.HasPrefix(got, strings.Repeat("a", 225)) {
		t.Errorf("viewClip: %q", got)
	}
	if viewClip("short", 300) != "short" {
		t.Error("viewClip shortens short strings")
	}
	if viewLang("x.GO") != "go" || viewLang("Makefile") != "" || viewLang("x.a`b") != "" || viewLang("x.verylongextension") != "" {
		t.Error("viewLang")
	}
}

// TestDescriptionParagraphs: a description's paragraphs are apart by a real
// blank line (no literal \n\n), inside the list item, and none can start a
// block.
func TestDescriptionParagraphs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"one", "one"},
		{"one\n\ntwo", "one\n\n  two"},
		{"one\ntwo\n\n\n\nthree\n", `one\ntwo` + "\n\n  three"},
		{"one\n\n## LEGEND\n\n1. x", "one\n\n  \\## LEGEND\n\n  \\1. x"},
		{"\n\n", ""},
	} {
		if got := viewParagraphs(c.in); got != c.want {
			t.Errorf("viewParagraphs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestBudgetLineAgrees: a change pack without a character cap says nothing
// of "0 characters" but names its token budget; a diff cut for the budget
// is not described as content that may not leave.
func TestBudgetLineAgrees(t *testing.T) {
	p, _ := viewFixture()
	p.Budget.MaxChars, p.Budget.MaxTokens, p.Budget.EstimatedTokens = 0, 6000, 5450
	p.Changes = append(p.Changes, pack.Change{Path: "big.go", Status: "modified", DiffWithheld: pack.ReasonSizeLimit})
	md, err := Render(p, "markdown")
	if err != nil {
		t.Fatal(err)
	}
	if s := string(md); strings.Contains(s, "of 0 characters") || !strings.Contains(s, "≈ 5,450 of 6,000 tokens") {
		t.Errorf("markdown budget line:\n%s", s[:strings.Index(s, "\n- project")])
	}
	out, err := Read(p, nil, ReadOptions{Profile: "reviewer", Contains: "big.go"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "- diff: left out for the budget") || strings.Contains(out, "big.go`\n\n- status: modified · +0 −0\n- diff: withheld") {
		t.Errorf("a budget cut reads as barred:\n%s", out)
	}
	ov, err := Read(p, nil, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ov, "left out for the budget") {
		t.Errorf("the overview does not count the budget cut:\n%s", ov)
	}
}
