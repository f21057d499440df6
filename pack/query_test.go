package pack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pipeline"
)

func query(t *testing.T, opts pipeline.PackOptions, text string, maxChars int) (*pack.QueryPack, []byte) {
	t.Helper()
	qp, data, err := pipeline.Query(context.Background(), opts, text, maxChars)
	if err != nil {
		t.Fatal(err)
	}
	var back pack.QueryPack
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCount(data); n != qp.Budget.UsedChars || n > qp.Budget.MaxChars {
		t.Fatalf("%q: %d characters, budget %+v", text, n, qp.Budget)
	}
	return qp, data
}

func ids(qp *pack.QueryPack) []string {
	var out []string
	for _, it := range qp.Items {
		out = append(out, it.ID+" "+it.Symbol+" "+it.Role)
	}
	return out
}

func TestQueryPack(t *testing.T) {
	g := changeRepo(t)
	cases := []struct {
		name, text string
		commit     string
		maxChars   int
		first      string // the first item: id symbol role
		contains   string // an item that must be there
	}{
		{"identifier", "validKey", "HEAD", 0, "store/check.go:3:6 validKey primary", ""},
		{"qualified identifier", "Store.Insert", "HEAD", 0, "store/store.go:188:231 Store.Insert primary", "api/handler.go:5:8 Put related"},
		{"path", "store/check.go", "HEAD", 0, "store/check.go:3:6 validKey primary", ""},
		{"path by suffix", "api/handler.go", "", 0, "api/handler.go:5:8 Put primary", ""},
		{"phrase", "insert refuses empty keys", "HEAD", 0, "store/store.go:188:231 Store.Insert related", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			qp, _ := query(t, pipeline.PackOptions{Dir: g.Dir, Commit: c.commit}, c.text, c.maxChars)
			got := ids(qp)
			if len(got) == 0 || got[0] != c.first {
				t.Fatalf("items = %q, want first %q", got, c.first)
			}
			if c.contains != "" && !strings.Contains(strings.Join(got, "\n"), c.contains) {
				t.Errorf("items = %q, want %q", got, c.contains)
			}
			if qp.Version != 1 || qp.Query != c.text || qp.ModelID != pack.QueryModelID {
				t.Errorf("header = %+v", qp)
			}
			for i := 1; i < len(qp.Items); i++ {
				if qp.Items[i].Score > qp.Items[i-1].Score {
					t.Errorf("items not ranked: %v", got)
				}
			}
		})
	}
	// A small budget drops what does not fit and says so.
	qp, _ := query(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"}, "store/store.go", 1500)
	if !qp.Budget.Truncated || qp.Budget.DroppedItems == 0 || len(qp.Items) == 0 {
		t.Fatalf("budget = %+v, %d items", qp.Budget, len(qp.Items))
	}
	// Same input, same bytes.
	_, a := query(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"}, "Store.Insert", 0)
	_, b := query(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"}, "Store.Insert", 0)
	if string(a) != string(b) {
		t.Error("query packs differ between runs")
	}
}

// Chunks leave like any content: a secret in one is redacted, an excluded
// file is never a chunk, and the query itself is scanned.
func TestQueryPackEgress(t *testing.T) {
	g := changeRepo(t)
	token := secrettest.Make(3).GitHub
	g.Write("store/config.go", "package store\n\n// tokenFor returns the API token.\nfunc tokenFor() string {\n\treturn \""+token+"\"\n}\n")
	g.Write(".env", "TOKEN_FOR="+token+"\n")
	g.Commit("token")
	qp, data := query(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"}, "tokenFor "+token, 0)
	if strings.Contains(string(data), token) {
		t.Fatal("the secret left in the query pack")
	}
	found := false
	for _, it := range qp.Items {
		if it.File == ".env" {
			t.Error(".env became a chunk")
		}
		if it.File == "store/config.go" && len(it.Redactions) == 1 && strings.Contains(it.Content, "[REDACTED:") {
			found = true
		}
	}
	if !found {
		t.Errorf("the chunk with the secret is not there redacted: %q", ids(qp))
	}
	if _, _, err := pipeline.Query(context.Background(), pipeline.PackOptions{Dir: g.Dir, Base: "HEAD~1", Head: "HEAD"}, "x", 0); err == nil {
		t.Error("a range query was accepted")
	}
	if _, _, err := pipeline.Query(context.Background(), pipeline.PackOptions{Dir: g.Dir}, "  ", 0); err == nil {
		t.Error("an empty query was accepted")
	}
}

// A qualified query's callers call it as a method: a method of a type of
// the same name (its receiver is not a use), and another package's function
// of that name (http.Redirect), are not its callers; tests are test_of.
func TestQueryQualifiedCallers(t *testing.T) {
	g := gittest.New(t)
	g.Write("go.mod", "module example.com/web\n")
	g.Write("render/redirect.go", "package render\n\nimport \"net/http\"\n\n// Redirect renders a redirect.\ntype Redirect struct{ Location string }\n\n"+
		"// Render writes it.\nfunc (r Redirect) Render(w http.ResponseWriter, req *http.Request) error {\n\thttp.Redirect(w, req, r.Location, 302)\n\treturn nil\n}\n")
	g.Write("context.go", "package web\n\nimport \"example.com/web/render\"\n\n// Context is a request.\ntype Context struct{}\n\n"+
		"// Redirect redirects.\nfunc (c *Context) Redirect(code int, location string) {\n\t_ = render.Redirect{Location: location}\n}\n\n"+
		"// Login sends the user home.\nfunc Login(c *Context) {\n\tc.Redirect(302, \"/\")\n}\n")
	g.Write("context_test.go", "package web\n\nimport \"testing\"\n\nfunc TestRedirect(t *testing.T) {\n\t(&Context{}).Redirect(302, \"/x\")\n}\n")
	g.Commit("web")
	qp, _ := query(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"}, "Context.Redirect", 0)
	got := map[string]string{}
	for _, it := range qp.Items {
		got[it.Symbol] = strings.Join(it.Relationship, ",")
	}
	want := map[string]string{"Context.Redirect": "", "Redirect": "", "Login": pack.RelCalledBy, "TestRedirect": pack.RelTestOf}
	if len(got) != len(want) {
		t.Errorf("items %v, want %v", got, want)
	}
	for sym, rel := range want {
		if r, ok := got[sym]; !ok || r != rel {
			t.Errorf("%s: %q (present %v), want %q", sym, r, ok, rel)
		}
	}
}
