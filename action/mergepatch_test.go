package action

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
)

// TestAPIMergePatchIsWhatNoParentHas: through the API, a merge's patch is
// the lines its comparison with every parent adds (a secret the merge
// itself brings), not the lines one parent's side brought (those are the
// other commits'), and a file whose patch the API leaves out is missing.
func TestAPIMergePatchIsWhatNoParentHas(t *testing.T) {
	token := secrettest.Make(77).GitHub
	g := gittest.New(t)
	g.Write("README.md", "# demo\n")
	g.Write("shared.txt", "one\ntwo\n")
	g.Commit("init")
	g.Git("checkout", "-q", "-b", "side")
	g.Write("side.txt", "from the side\n")
	g.Write("shared.txt", "one\ntwo\nside\n")
	side := g.Commit("side")
	g.Git("checkout", "-q", "main")
	g.Git("checkout", "-q", "-b", "feature")
	g.Write("app.go", "package app\n")
	g.Write("shared.txt", "zero\none\ntwo\n")
	first := g.Commit("feature")
	g.Git("merge", "-q", "--no-ff", "--no-commit", "side")
	g.Write("cfg.go", "package app\n\nvar tok = \""+token+"\"\n") // the merge's own
	g.Write("shared.txt", "zero\none\ntwo\nside\nresolved\n")     // and its resolution
	merge := g.Commit("Merge side")

	serve := func(gh *fakeGitHub, dropPatch string) {
		gh.files["GET /repos/octo/widgets/commits/"+first] = apiFiles(t, g, first+"~1", first)
		gh.parents[first] = []string{g.Git("rev-parse", first+"~1")}
		gh.files["GET /repos/octo/widgets/commits/"+merge] = apiFiles(t, g, first, merge)
		gh.parents[merge] = []string{first, side}
		for _, p := range []string{first, side} {
			files := apiFiles(t, g, p, merge)
			for _, f := range files {
				if f["filename"] == dropPatch {
					delete(f, "patch")
				}
			}
			gh.files["GET /repos/octo/widgets/compare/"+p+"..."+merge] = files
		}
	}
	client := func(gh *fakeGitHub) *http.Client { return gh.srv.Client() }

	gh := newFakeGitHub(t)
	serve(gh, "")
	c, err := newGitHub(gh.srv.URL, "t", client(gh), &retryTransport{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := commitsPatches(context.Background(), c, "octo", "widgets", []string{first, merge})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Missing) != 0 || len(h.Commits) != 2 || h.Commits[1].Commit != merge {
		t.Fatalf("history %+v", h)
	}
	got := map[string]string{}
	for _, f := range h.Commits[1].Files {
		var lines []string
		for _, l := range f.Lines {
			lines = append(lines, l.Text)
		}
		got[f.Path] = strings.Join(lines, "|")
	}
	want := map[string]string{"cfg.go": "package app||var tok = \"" + token + "\"", "shared.txt": "resolved"}
	if len(got) != len(want) || got["cfg.go"] != want["cfg.go"] || got["shared.txt"] != want["shared.txt"] {
		t.Fatalf("merge patch %q, want %q (side.txt and the sides' lines are the other commits')", got, want)
	}
	if l := h.Commits[1].Files[1].Lines[0]; l != (pack.Line{Number: 5, Text: "resolved"}) {
		t.Fatalf("resolution line %+v, want line 5 of the merge's version", l)
	}

	gh = newFakeGitHub(t)
	serve(gh, "cfg.go")
	if c, err = newGitHub(gh.srv.URL, "t", client(gh), &retryTransport{}); err != nil {
		t.Fatal(err)
	}
	if h, err = commitsPatches(context.Background(), c, "octo", "widgets", []string{first, merge}); err != nil {
		t.Fatal(err)
	}
	if len(h.Missing) != 1 || !strings.Contains(h.Missing[0], "cfg.go in merge "+merge[:7]) {
		t.Fatalf("missing %q: a file every comparison changes, without a patch, is not scanned", h.Missing)
	}

	// A comparison of as many files as the API lists may leave out the
	// merge's own: the merge's scan is incomplete.
	gh = newFakeGitHub(t)
	serve(gh, "")
	key := "GET /repos/octo/widgets/compare/" + side + "..." + merge
	for i := len(gh.files[key]); i < maxCompareFiles; i++ {
		gh.files[key] = append(gh.files[key], map[string]any{"sha": "0", "filename": fmt.Sprintf("gen/f%03d.txt", i), "status": "added", "additions": 1, "patch": "@@ -0,0 +1 @@\n+x\n"})
	}
	if c, err = newGitHub(gh.srv.URL, "t", client(gh), &retryTransport{}); err != nil {
		t.Fatal(err)
	}
	if h, err = commitsPatches(context.Background(), c, "octo", "widgets", []string{first, merge}); err != nil {
		t.Fatal(err)
	}
	if len(h.Missing) != 1 || !strings.Contains(h.Missing[0], "at most 300 files of a comparison") {
		t.Fatalf("missing %q: a comparison the API may have cut is not reported", h.Missing)
	}
}
