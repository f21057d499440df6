package pack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pack/schema"
	"github.com/ctxpack/ctxpack/pipeline"
)

var update = flag.Bool("update", false, "rewrite golden files")

// build packs dir and validates the result against the schema.
func build(t *testing.T, opts pipeline.PackOptions) (*pipeline.Outcome, *pack.Pack) {
	t.Helper()
	out, err := pipeline.Pack(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.ValidatePack(out.Result.JSON); err != nil {
		t.Fatalf("pack does not validate: %v", err)
	}
	var p pack.Pack
	if err := json.Unmarshal(out.Result.JSON, &p); err != nil {
		t.Fatal(err)
	}
	return out, &p
}

func index(p *pack.Pack) map[string]pack.IndexEntry {
	m := map[string]pack.IndexEntry{}
	for _, e := range p.FileIndex {
		m[e.Path] = e
	}
	return m
}

func item(p *pack.Pack, path string) (pack.Item, bool) {
	for _, it := range append(append([]pack.Item{}, p.KeyFiles...), p.Contents...) {
		if it.Path == path {
			return it, true
		}
	}
	return pack.Item{}, false
}

// fixture is a small Go project with one file of each interesting kind.
func fixture(t *testing.T, dir string) *gittest.Repo {
	g := gittest.Init(t, dir)
	g.Write("go.mod", "module example.com/demo\n\ngo 1.22\n\nrequire github.com/spf13/cobra v1.8.0\n")
	g.Write("README.md", "# demo\n\nDemo serves greetings over HTTP.\n")
	g.Write("main.go", "package main\n\nfunc main() { serve() }\n")
	g.Write("server.go", "package main\n\nimport \"net/http\"\n\nfunc serve() { http.ListenAndServe(\":8080\", nil) }\n")
	g.Write("internal/auth/login.go", "package auth\n\n// Login checks a password.\nfunc Login(user, password string) bool { return false }\n")
	g.Write("docs/guide.md", "# Guide\n\nUse it.\n")
	g.Write(".env", "API_TOKEN=abc\n")
	g.Write("node_modules/left-pad/index.js", "module.exports = 1\n")
	g.WriteBytes("assets/data.txt", []byte("looks like text\x00but is not"))
	g.WriteBytes("assets/logo.png", []byte("\x89PNG\r\n\x1a\n\x00\x00"))
	g.Write(".ctxpackignore", "docs/\n")
	g.Symlink("main.go", "link.go")
	g.Commit("initial")
	g.Write("server.go", "package main\n\nimport \"net/http\"\n\nfunc serve() {\n\thttp.HandleFunc(\"/hello\", hello)\n\thttp.ListenAndServe(\":8080\", nil)\n}\n")
	g.Write("hello.go", "package main\n\nimport \"net/http\"\n\nfunc hello(w http.ResponseWriter, r *http.Request) { w.Write([]byte(\"hi\")) }\n")
	g.Commit("add hello")
	return g
}

func TestGoldenFullPack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	fixture(t, dir)
	out, p := build(t, pipeline.PackOptions{Dir: dir, Commit: "HEAD", Scope: "tree", Type: "full"})
	golden := filepath.Join("testdata", "full_commit.golden.json")
	var pretty bytes.Buffer
	json.Indent(&pretty, out.Result.JSON, "", "  ")
	if *update {
		os.WriteFile(golden, pretty.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./pack -run Golden -update)", err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("pack differs from %s (run with -update and review the diff)\n%s", golden, pretty.String())
	}
	if p.Source.Trigger != "commit" || len(p.Changes) != 2 {
		t.Fatalf("source %+v changes %+v", p.Source, p.Changes)
	}
}

func TestExclusionReasons(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	fixture(t, dir)
	_, p := build(t, pipeline.PackOptions{Dir: dir, Commit: "HEAD", Scope: "tree", Type: "full"})
	idx := index(p)
	want := map[string]pack.Reason{
		".env":                           pack.ReasonCredentials,
		"node_modules/left-pad/index.js": pack.ReasonDependencyDir,
		"assets/data.txt":                pack.ReasonBinary,
		"assets/logo.png":                pack.ReasonBinary,
		"docs/guide.md":                  pack.ReasonPatternMatch,
		"link.go":                        pack.ReasonSymlink,
		"main.go":                        "",
		"hello.go":                       "",
	}
	for path, reason := range want {
		e, ok := idx[path]
		if !ok {
			t.Errorf("%s missing from the file index", path)
			continue
		}
		if e.ExclusionReason != reason || e.Included != (reason == "") {
			t.Errorf("%s: included=%v reason=%q, want %q", path, e.Included, e.ExclusionReason, reason)
		}
	}
	if idx["assets/data.txt"].Type != pack.TypeBinary || idx["assets/logo.png"].Type != pack.TypeImage {
		t.Errorf("types: %+v %+v", idx["assets/data.txt"], idx["assets/logo.png"])
	}
	if len(p.FileIndex) != p.Metadata.FilesIncluded+p.Metadata.FilesExcluded {
		t.Errorf("not every file accounted for: %d vs %d+%d", len(p.FileIndex), p.Metadata.FilesIncluded, p.Metadata.FilesExcluded)
	}
	s := p.Metadata.ExclusionStats
	if s.ByCredentials != 1 || s.ByBinary != 2 || s.ByPattern != 3 {
		t.Errorf("stats = %+v", s)
	}
	hello, ok := item(p, "hello.go")
	if !ok || hello.Role != pack.RolePrimary || hello.ID != "hello.go:1:5" {
		t.Errorf("hello.go item = %+v", hello)
	}
	// main.go calls the changed file's function: it comes as that caller's
	// definition, before any key file.
	mainGo, _ := item(p, "main.go")
	if mainGo.Role != pack.RoleRelated || len(mainGo.Relationship) != 1 || mainGo.Relationship[0] != pack.RelCalledBy || mainGo.Symbol != "main" {
		t.Errorf("main.go item = %+v", mainGo)
	}
	if strings.Contains(string(mustJSON(t, p)), "API_TOKEN") {
		t.Error(".env content leaked")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDeterministicAcrossClones(t *testing.T) {
	g := fixture(t, filepath.Join(t.TempDir(), "origin", "demo"))
	a := g.Clone(filepath.Join(t.TempDir(), "a", "deep", "demo")).Dir
	b := g.Clone(filepath.Join(t.TempDir(), "b", "demo")).Dir
	for _, opts := range []pipeline.PackOptions{{Commit: "HEAD"}, {Base: "HEAD~1", Head: "HEAD"}, {}} {
		oa, ob := opts, opts
		oa.Dir, ob.Dir = a, b
		ra, _ := build(t, oa)
		rb, _ := build(t, ob)
		if !bytes.Equal(ra.Result.JSON, rb.Result.JSON) {
			t.Errorf("%+v: packs differ between clones", opts)
		}
		again, _ := build(t, oa)
		if !bytes.Equal(ra.Result.JSON, again.Result.JSON) {
			t.Errorf("%+v: packs differ between runs", opts)
		}
	}
}
