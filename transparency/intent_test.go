package transparency

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
)

// intentPack is a change pack with an intent, a changed region, a related
// region and a summarised hunk.
func intentPack() *pack.Pack {
	p, _ := viewFixture()
	p.Intent = &pack.Intent{
		Goal: "Reject expired <tokens>",
		PullRequest: &pack.PullRequest{Number: 7, Title: "Reject expired tokens", Body: "Fixes the login.\n\n- [ ] expired tokens fail", Labels: []string{"bug"},
			Closes: []pack.IssueRef{{Number: 3, Title: "expired tokens pass"}}},
		Commits:    []pack.CommitMessage{{Commit: "1111111111111111111111111111111111111111", Subject: "auth: check expiry", Body: "Why: tokens lived forever."}},
		Acceptance: []string{"expired tokens fail"},
		Mentioned:  []string{"auth/login.go"},
	}
	changed := viewItem("auth/login.go", pack.RolePrimary, "func Login() {}\n")
	changed.ID, changed.StartLine, changed.EndLine = "auth/login.go:10:10", 10, 10
	changed.Symbol, changed.SymbolType, changed.Relationship = "Login", "function", []string{pack.RelChanged}
	changed.Truncated = true // a region of a longer file
	p.Metadata.TruncatedFiles++
	caller := viewItem("cmd/main.go", pack.RoleRelated, "func main() { Login() }\n")
	caller.ID, caller.StartLine, caller.EndLine = "cmd/main.go:3:3", 3, 3
	caller.Symbol, caller.SymbolType, caller.Relationship, caller.Distance = "main", "function", []string{pack.RelCalledBy}, new(2)
	p.Contents = append([]pack.Item{changed, caller}, p.Contents...)
	p.Changes = append(p.Changes, pack.Change{Path: "auth/token.go", Status: "modified", Added: 40, Deleted: 2, DiffWithheld: pack.ReasonSizeLimit,
		OmittedHunks: []pack.HunkSummary{{Header: "@@ -1,5 +1,45 @@", Added: 40, Deleted: 2, Symbol: "Parse"}}})
	return p
}

func TestIntentRenderings(t *testing.T) {
	p := intentPack()
	md, err := Render(p, "markdown")
	if err != nil {
		t.Fatal(err)
	}
	m := string(md)
	for _, want := range []string{
		"## Intent", "- goal: Reject expired <tokens>", "- pull request #7: Reject expired tokens · labels: bug",
		"- closes #3: expired tokens pass", "  - expired tokens fail", "`auth/login.go`", "auth: check expiry", "Why: tokens lived forever.",
		"- lines 10–10 · symbol `Login` (function) · relationship: changed",
		"- lines 3–3 · symbol `main` (function) · relationship: called_by · distance 2",
		"- hunks not sent (1):", "`@@ -1,5 +1,45 @@` +40 −2 in `Parse`",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	// A message is prose: no end-of-file marker after its block.
	if strings.Contains(m, "Why: tokens lived forever.\n```\n\\ No newline") || strings.Contains(m, "- [ ] expired tokens fail\n```\n\\ No newline") {
		t.Error("markdown marks a message's missing final newline")
	}
	if !strings.Contains(m, "Why: tokens lived forever.\n```\n") {
		t.Error("markdown lacks the commit body block")
	}
	if strings.Index(m, "## Intent") > strings.Index(m, "## Changes") {
		t.Error("the intent does not come before the changes")
	}
	x, err := Render(p, "xml")
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(x, new(struct{})); err != nil {
		t.Fatalf("xml does not parse: %v", err)
	}
	for _, want := range []string{"<intent>\n<goal>", `<goal>Reject expired &lt;tokens&gt;</goal>`, `<closes number="3" title="expired tokens pass"/>`,
		`<acceptance>expired tokens fail</acceptance>`, `symbol="Login" type="function" relationship="changed"`, `<omitted_hunk header="@@ -1,5 +1,45 @@" added="40" deleted="2" symbol="Parse"/>`} {
		if !strings.Contains(string(x), want) {
			t.Errorf("xml lacks %q", want)
		}
	}
	page, err := Read(p, nil, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Objective:** Reject expired <tokens>", "### Intent", "- acceptance:\n  - expired tokens fail",
		"- changed symbols: `auth/login.go: Login`, `auth/token.go: Parse`", "**Pack:** hand over"} {
		if !strings.Contains(page, want) {
			t.Errorf("orchestrator page lacks %q", want)
		}
	}
	// The region is the lines its id names, not a head-and-tail cut.
	if !strings.Contains(page, "- partial files: 1 file sent as regions") || !strings.Contains(page, "- gaps: 1 file truncated (head and tail kept)") {
		t.Errorf("orchestrator page misnames the region:\n%s", page)
	}
	if i, j := strings.Index(page, "### Intent"), strings.Index(page, "### Scope"); i < 0 || i > j {
		t.Error("the orchestrator page does not open with the intent")
	}
}

func TestChangedSymbols(t *testing.T) {
	got := strings.Join(ChangedSymbols(intentPack()), "|")
	if got != "auth/login.go: Login|auth/token.go: Parse" {
		t.Fatalf("changed symbols = %q", got)
	}
}
