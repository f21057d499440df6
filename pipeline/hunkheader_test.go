package pipeline

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
)

// TestOmittedHunkHeaderCarriesNoFileText: a diff writes a line of the file
// after a hunk's ranges ("@@ -44,7 +44,207 @@ func Connect(…)"), and here
// that line holds a token. The hunk does not fit a small token budget, so it
// is listed in omitted_hunks and budget.cut: by its ranges only, and the
// audit — which rejects any other header — passes the pack.
func TestOmittedHunkHeaderCarriesNoFileText(t *testing.T) {
	f := secrettest.Make(41)
	var body strings.Builder
	body.WriteString("package app\n\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&body, "func F%d() int { return %d }\n", i, i)
	}
	signature := "func Connect(token string) string { return \"" + f.GitHub + "\" }"
	body.WriteString(signature + "\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&body, "\t// line %d\n", i)
	}
	g := gittest.New(t)
	g.Write("app.go", body.String())
	base := g.Commit("base")
	changed := strings.Replace(body.String(), "return 3 }", "return 33 }", 1)
	changed = strings.Replace(changed, "\t// line 3\n", "\t// line 3 changed\n"+strings.Repeat("\tprintln(\"a line that takes tokens, and more tokens, and more of them\")\n", 200), 1)
	g.Write("app.go", changed)
	g.Commit("change")

	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Base: base, Head: "HEAD", MaxTokens: 1500})
	if err != nil {
		t.Fatal(err)
	}
	p := run.Result.Pack
	if p.Type != "full" || len(p.Changes) != 1 {
		t.Fatalf("want a change pack of one change, got %s with %d", p.Type, len(p.Changes))
	}
	ranges := regexp.MustCompile(`^@@ -[0-9]+(,[0-9]+)? \+[0-9]+(,[0-9]+)? @@$`)
	c := p.Changes[0]
	if len(c.OmittedHunks) != 1 || c.OmittedHunks[0].Header != "@@ -44,7 +44,207 @@" || c.OmittedHunks[0].Added != 201 {
		t.Fatalf("omitted hunks = %+v", c.OmittedHunks)
	}
	for _, h := range c.OmittedHunks {
		if !ranges.MatchString(h.Header) {
			t.Fatalf("omitted hunk header %q carries more than its ranges", h.Header)
		}
	}
	for _, cut := range p.Budget.Cut {
		if strings.Contains(cut, "Connect") {
			t.Fatalf("budget.cut names the hunk by its heading: %q", cut)
		}
	}
	if strings.Contains(string(run.Result.JSON), f.GitHub) {
		t.Fatal("the token left in the pack")
	}
	v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, run.Result.JSON), RepoDir: g.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != audit.StatusPass {
		t.Fatalf("audit = %+v", v.Failed)
	}

	// A pack whose omitted hunk carries its heading (a redacted one, even)
	// fails the audit's schema check: the header is its ranges, nothing else.
	p.Changes[0].OmittedHunks[0].Header += " func Connect(token string) string { return \"[REDACTED:github-pat]\" }"
	v, err = Audit(context.Background(), AuditOptions{PackFile: writePack(t, refinalize(t, p)), RepoDir: g.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status == audit.StatusPass || !strings.Contains(codes(v.Failed), audit.CodeSchemaInvalid) {
		t.Fatalf("audit of a heading in omitted_hunks = %s", codes(v.Failed))
	}
}
