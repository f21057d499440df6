package pack_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pipeline"
)

// storeGo is a long Go file: many functions, one of which a change edits.
func storeGo(saveBody string) string {
	var b strings.Builder
	b.WriteString("package store\n\nimport \"errors\"\n\n// Store keeps records.\ntype Store struct{ rows map[string]string }\n")
	for i := range 20 {
		fmt.Fprintf(&b, "\n// Get%02d reads row %d.\nfunc (s *Store) Get%02d() string {\n\tv := s.rows[\"%d\"]\n\tif v == \"\" {\n\t\treturn \"none\"\n\t}\n\treturn v\n}\n", i, i, i, i)
	}
	b.WriteString("\n// Insert stores a row.\nfunc (s *Store) Insert(k, v string) error {\n")
	for i := range 12 {
		fmt.Fprintf(&b, "\tif len(s.rows) > %d {\n\t\ts.rows[\"spill%d\"] = v\n\t}\n", 1000+i, i)
	}
	b.WriteString(saveBody + "}\n")
	for i := 20; i < 30; i++ {
		fmt.Fprintf(&b, "\n// Get%02d reads row %d.\nfunc (s *Store) Get%02d() string {\n\treturn s.rows[\"%d\"]\n}\n", i, i, i, i)
	}
	b.WriteString("\nvar errEmpty = errors.New(\"empty key\")\n")
	return b.String()
}

// changeRepo is a Go module with a change worth reviewing: a function
// edited in the middle of a long file (its enclosing definition), a helper
// the new lines call (callee), a handler and a test that use the changed
// function (caller, test), a changed test, a changed doc, and unchanged
// boilerplate at the root.
func changeRepo(t *testing.T) *gittest.Repo {
	g := gittest.New(t)
	g.Write("go.mod", "module example.com/shop\n\ngo 1.22\n")
	g.Write("go.sum", "example.com/x v1.0.0 h1:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG=\n")
	g.Write("LICENSE", "MIT License\n\nPermission is hereby granted, free of charge.\n")
	g.Write("CHANGELOG.md", "# Changelog\n\n## 1.0\n- first\n")
	g.Write("README.md", "# shop\n\nShop keeps orders in a store.\n")
	g.Write("store/store.go", storeGo("\ts.rows[k] = v\n\treturn nil\n"))
	g.Write("store/check.go", "package store\n\n// validKey reports whether k may be stored.\nfunc validKey(k string) bool {\n\treturn k != \"\"\n}\n")
	g.Write("store/store_test.go", "package store\n\nimport \"testing\"\n\nfunc TestInsert(t *testing.T) {\n\ts := &Store{rows: map[string]string{}}\n\tif err := s.Insert(\"a\", \"b\"); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n")
	g.Write("api/handler.go", "package api\n\nimport \"example.com/shop/store\"\n\n// Put handles a PUT.\nfunc Put(s *store.Store, k, v string) error {\n\treturn s.Insert(k, v)\n}\n")
	g.Write("store/get_test.go", "package store\n\nimport \"testing\"\n\nfunc TestGet(t *testing.T) {\n\t_ = (&Store{}).Get00()\n}\n")
	g.Write("docs/guide.md", "# Guide\n\nKeys are strings.\n")
	g.Commit("base")
	g.Write("store/store.go", storeGo("\tif !validKey(k) {\n\t\treturn errEmpty\n\t}\n\ts.rows[k] = v\n\treturn nil\n"))
	g.Write("store/get_test.go", "package store\n\nimport \"testing\"\n\nfunc TestGet(t *testing.T) {\n\tif (&Store{}).Get00() != \"none\" {\n\t\tt.Fatal(\"want none\")\n\t}\n}\n")
	g.Write("docs/guide.md", "# Guide\n\nKeys are non-empty strings.\n")
	g.Commit("store: refuse empty keys\n\nInsert used to store rows under \"\". The handler in api/handler.go\npasses keys through unchecked.\n\n- [ ] Insert refuses an empty key\n- [x] existing callers keep working\n")
	return g
}

// plan is a readable digest of a change pack: intent, changes with their
// hunks kept and summarised, the items in order, and what the budget cut.
func plan(p *pack.Pack) string {
	var b strings.Builder
	if in := p.Intent; in != nil {
		fmt.Fprintf(&b, "goal: %s\n", in.Goal)
		for _, c := range in.Commits {
			fmt.Fprintf(&b, "commit: %s\n", c.Subject)
		}
		fmt.Fprintf(&b, "acceptance: %s\n", strings.Join(in.Acceptance, " | "))
		fmt.Fprintf(&b, "mentioned: %s\n", strings.Join(in.Mentioned, ", "))
	}
	for _, c := range p.Changes {
		hunks := strings.Count(c.Diff, "\n@@ -")
		fmt.Fprintf(&b, "change %s %s +%d -%d: %d hunks sent, %d summarised", c.Path, c.Status, c.Added, c.Deleted, hunks, len(c.OmittedHunks))
		if c.DiffInContent {
			b.WriteString(", diff in content")
		}
		if c.DiffWithheld != "" {
			fmt.Fprintf(&b, ", withheld (%s)", c.DiffWithheld)
		}
		b.WriteString("\n")
	}
	for _, group := range [][]pack.Item{p.Contents, p.KeyFiles} {
		for _, it := range group {
			distance := "-"
			if it.Distance != nil {
				distance = fmt.Sprint(*it.Distance)
			}
			fmt.Fprintf(&b, "item %s %s %s symbol=%s type=%s distance=%s score=%g\n", it.ID, it.Role, strings.Join(it.Relationship, ","),
				it.Symbol, it.SymbolType, distance, it.Score)
		}
	}
	for _, e := range p.FileIndex {
		if !e.Included {
			fmt.Fprintf(&b, "out %s: %s\n", e.Path, e.ExclusionReason)
		}
	}
	for _, c := range p.Budget.Cut {
		fmt.Fprintf(&b, "cut: %s\n", c)
	}
	fmt.Fprintf(&b, "budget: %d tokens of %d, truncated %t\n", p.Budget.EstimatedTokens, p.Budget.MaxTokens, p.Budget.Truncated)
	return b.String()
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pack -run %s -update)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update and review the diff):\n%s", path, got)
	}
}

// The priority order, regions and ids of a change pack, at the default
// budget and at a budget too small for everything.
func TestChangePackOrderGolden(t *testing.T) {
	g := changeRepo(t)
	for _, c := range []struct {
		golden string
		opts   pipeline.PackOptions
	}{
		{"change_default.golden.txt", pipeline.PackOptions{Commit: "HEAD"}},
		{"change_tight.golden.txt", pipeline.PackOptions{Commit: "HEAD", MaxTokens: 1800}},
	} {
		opts := c.opts
		opts.Dir = g.Dir
		_, p := build(t, opts)
		checkGolden(t, c.golden, plan(p))
	}
}

// What the order promises, asserted directly on the default pack.
func TestChangePackPromises(t *testing.T) {
	g := changeRepo(t)
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"})
	if p.Intent == nil || p.Intent.Goal != "store: refuse empty keys" || len(p.Intent.Acceptance) != 2 ||
		strings.Join(p.Intent.Mentioned, ",") != "api/handler.go" {
		t.Fatalf("intent = %+v", p.Intent)
	}
	// The edited function is sent as its own region, the id naming its lines.
	save, ok := item(p, "store/store.go")
	if !ok || save.Symbol != "Store.Insert" || save.Role != pack.RolePrimary || !save.Truncated ||
		save.ID != fmt.Sprintf("store/store.go:%d:%d", save.StartLine, save.EndLine) || !strings.HasPrefix(save.Content, "// Insert stores a row.\n") {
		t.Fatalf("store.go region = %+v", save)
	}
	if lines := strings.Count(save.Content, "\n"); lines != save.EndLine-save.StartLine+1 {
		t.Errorf("region has %d lines, its id says %d", lines, save.EndLine-save.StartLine+1)
	}
	rels := map[string]string{}
	for _, it := range p.Contents {
		rels[it.Path+" "+it.Symbol] = strings.Join(it.Relationship, ",")
	}
	for k, want := range map[string]string{
		"store/check.go validKey":        pack.RelCalls,
		"api/handler.go ":                pack.RelMentioned,
		"store/store_test.go TestInsert": pack.RelTestOf,
	} {
		if rels[k] != want {
			t.Errorf("%s: relationship %q, want %q (items %v)", k, rels[k], want, rels)
		}
	}
	// Unchanged boilerplate never rides along; every diff line is there.
	for _, path := range []string{"LICENSE", "CHANGELOG.md", "go.sum"} {
		if e := index(p)[path]; e.Included || e.ExclusionReason != pack.ReasonBoilerplate {
			if e.Path != "" || !condensedAs(p, pack.ReasonBoilerplate) {
				t.Errorf("%s: %+v", path, e)
			}
		}
	}
	for _, c := range p.Changes {
		if c.Diff == "" || len(c.OmittedHunks) > 0 {
			t.Errorf("%s: diff not whole (%d omitted)", c.Path, len(c.OmittedHunks))
		}
	}
}

// condensedAs reports whether the index condenses files excluded for r.
func condensedAs(p *pack.Pack, r pack.Reason) bool {
	for _, e := range p.FileIndex {
		if strings.HasSuffix(e.Path, "/") && e.ExclusionReason == r {
			return true
		}
	}
	return false
}

// An added file is its own content, in chunks whose ids name their lines.
func TestAddedFileChunks(t *testing.T) {
	g := gittest.New(t)
	g.Write("README.md", "# x\n")
	g.Commit("base")
	g.Write("big.go", "package big\n"+strings.Repeat("// line\n", 450))
	g.Commit("add big")
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"})
	var ids []string
	for _, it := range p.Contents {
		if it.Path == "big.go" {
			ids = append(ids, it.ID)
		}
	}
	if strings.Join(ids, " ") != "big.go:1:200 big.go:201:400 big.go:401:451" {
		t.Fatalf("chunks = %v", ids)
	}
	if len(p.Changes) != 1 || !p.Changes[0].DiffInContent || p.Changes[0].Diff != "" {
		t.Fatalf("change = %+v", p.Changes[0])
	}
}

// utf16 encodes s as UTF-16LE with a byte-order mark: git calls it binary
// (it has NUL bytes), ctxpack decodes it as text.
func utf16(s string) string {
	b := []byte{0xFF, 0xFE}
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8))
	}
	return string(b)
}

// A changed file git calls binary but ctxpack reads as text is sent as its
// content, like an added file, never excluded as "did not fit" by a budget
// with room to spare.
func TestTextGitCallsBinaryIsSent(t *testing.T) {
	g := gittest.New(t)
	g.Write("README.md", "# x\n")
	g.Write("notes.txt", utf16("first line\nsecond line\n"))
	g.Commit("base")
	g.Write("hello.txt", utf16("hello from a UTF-16 file\nwith two lines\n"))
	g.Write("notes.txt", utf16("first line\nsecond line, edited\n"))
	g.Commit("add a UTF-16 file, edit another")
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"})
	for _, c := range []struct {
		path, text string
		added      bool
	}{
		{"hello.txt", "hello from a UTF-16 file\nwith two lines\n", true},
		{"notes.txt", "first line\nsecond line, edited\n", false},
	} {
		it, ok := item(p, c.path)
		if !ok || it.Content != c.text || it.Role != pack.RolePrimary || strings.Join(it.Relationship, ",") != pack.RelChanged {
			t.Errorf("%s: item %+v (index %+v)", c.path, it, index(p)[c.path])
		}
		for _, ch := range p.Changes {
			if ch.Path == c.path && (!ch.Binary || ch.DiffInContent != c.added || ch.DiffWithheld != "") {
				t.Errorf("%s: change %+v", c.path, ch)
			}
		}
	}
	if len(p.Budget.Cut) > 0 || p.Budget.Truncated {
		t.Errorf("budget %+v", p.Budget)
	}
}

// A rename without changed lines is in the pack's changes; its file is not
// said to have missed a budget it never competed for.
func TestPureRenameIsNotABudgetCut(t *testing.T) {
	g := gittest.New(t)
	g.Write("README.md", "# x\n")
	g.Write("docs/old.md", "# Guide\n\nRead me.\n")
	g.Commit("base")
	g.Git("mv", "docs/old.md", "docs/new.md")
	g.Commit("rename")
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"})
	e := index(p)["docs/new.md"]
	if e.ExclusionReason != pack.ReasonDiffOnly || len(p.Budget.Cut) > 0 {
		t.Fatalf("docs/new.md: %+v, cut %q", e, p.Budget.Cut)
	}
}

// Unchanged tool configuration (linters, CI, coverage, release, bots) never
// rides along with a change, whatever room the budget has left.
func TestToolConfigNeverRidesAlong(t *testing.T) {
	g := gittest.New(t)
	g.Write("go.mod", "module example.com/web\n\ngo 1.22\n\nrequire example.com/x v1.0.0\n")
	g.Write("go.sum", "example.com/x v1.0.0 h1:aaaa=\n")
	g.Write("web.go", "package web\n\n// Serve serves.\nfunc Serve() {}\n")
	configs := []string{".golangci.yml", "codecov.yml", ".goreleaser.yaml", "renovate.json", ".travis.yml", ".pre-commit-config.yaml",
		".github/workflows/api-test.yml", ".github/dependabot.yml", ".vscode/settings.json"}
	for _, p := range configs {
		g.Write(p, "# "+p+"\n"+strings.Repeat("setting: value\n", 20))
	}
	g.Commit("base")
	g.Write("go.mod", "module example.com/web\n\ngo 1.22\n\nrequire example.com/x v1.1.0\n")
	g.Write("go.sum", "example.com/x v1.1.0 h1:bbbb=\n")
	g.Commit("bump example.com/x to v1.1.0")
	for _, scope := range []string{"change", "tree"} {
		_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD", Scope: scope})
		for _, path := range configs {
			if _, ok := item(p, path); ok {
				t.Errorf("scope %s: %s sent", scope, path)
			}
			if e, ok := index(p)[path]; ok && e.ExclusionReason != pack.ReasonBoilerplate {
				t.Errorf("scope %s: %s: %+v", scope, path, e)
			}
		}
		if _, ok := item(p, "web.go"); !ok {
			t.Errorf("scope %s: web.go (the rest of the snapshot) not sent: the budget had room", scope)
		}
	}
}

// A function added to a long file is sent as a region named for it.
func TestAddedFunctionRegionIsNamed(t *testing.T) {
	g := gittest.New(t)
	g.Write("go.mod", "module example.com/shop\n")
	body := storeGo("\ts.rows[k] = v\n\treturn nil\n")
	g.Write("store/store.go", body)
	g.Commit("base")
	g.Write("store/store.go", body+"\n// helper trims a key.\nfunc helper(k string) string {\n\tfor len(k) > 0 && k[0] == ' ' {\n\t\tk = k[1:]\n\t}\n\treturn k\n}\n")
	g.Commit("add helper")
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"})
	it, ok := item(p, "store/store.go")
	if !ok || it.Symbol != "helper" || it.SymbolType != "function" || it.Distance == nil || *it.Distance != 0 {
		t.Fatalf("store.go region = %+v", it)
	}
}

// A short name the new lines call is looked for in the changed files only:
// sum, defined beside the call, is sent as what the change calls; add,
// defined only in an unchanged file of the package, is not looked for
// (short names are in most files and defined in few); addAll, as long as a
// name looked up across the tree must be, is found there.
func TestShortCalleesStayInTheChange(t *testing.T) {
	g := gittest.New(t)
	g.Write("go.mod", "module example.com/calc\n\ngo 1.22\n")
	var filler strings.Builder
	for i := range 40 {
		fmt.Fprintf(&filler, "\n// pad%d pads the file.\nfunc pad%d() int {\n\treturn %d\n}\n", i, i, i)
	}
	calc := func(body string) string {
		return "package calc\n\n// sum adds xs.\nfunc sum(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n" +
			filler.String() + "\n// Total is the total of xs.\nfunc Total(xs []int) int {\n" + body + "}\n"
	}
	g.Write("calc/calc.go", calc("\treturn 0\n"))
	g.Write("calc/add.go", "package calc\n\n// add adds two.\nfunc add(a, b int) int {\n\treturn a + b\n}\n\n// addAll adds all.\nfunc addAll(xs ...int) int {\n\treturn sum(xs)\n}\n")
	g.Commit("base")
	g.Write("calc/calc.go", calc("\treturn add(sum(xs), addAll(xs...))\n"))
	g.Commit("calc: total adds")
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"})
	calls := map[string]bool{}
	for _, it := range p.Contents {
		if slices.Contains(it.Relationship, pack.RelCalls) {
			calls[it.Path+" "+it.Symbol] = true
		}
	}
	want := map[string]bool{"calc/calc.go sum": true, "calc/add.go addAll": true}
	if !maps.Equal(calls, want) {
		t.Errorf("callees sent: %v, want %v", calls, want)
	}
}
