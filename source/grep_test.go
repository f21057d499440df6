package source

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
)

// TestGrepWords: the head tree's Grep (git's one Perl pattern for whole
// words) finds, for each word, the files git grep -F -w finds it in, and
// the files the in-process search finds it in: words that are prefixes of
// others, underscores and digits next to a word, non-ASCII letters next
// to one, case, a word in a binary file or under another extension.
func TestGrepWords(t *testing.T) {
	g := gittest.New(t)
	files := map[string]string{
		"a.js":     "res.sendFile(p)\nresend()\n",
		"b.js":     "send(x); join_(y)\n",
		"c.js":     "éjoin() + sendé\n",
		"d.js":     "Send(); JOIN()\n",
		"e.js":     "x_y = a1 + a12\n",
		"f.js":     "$send() + send$\n",
		"g.txt":    "send join\n",
		"h.js":     "send\x00join\n",
		"sub/i.js": "// join the sendFile callers\n",
	}
	for p, s := range files {
		g.Write(p, s)
	}
	g.Commit("words")
	words := []string{"send", "sendFile", "join", "x_y", "a1", "Send", "missing"}
	opts := pack.GrepOptions{Exts: []string{".js"}}

	r, err := OpenWith(g.Dir, OpenOptions{Backend: BackendCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	tree, head := headTreeOf(t, r)
	if _, ok := wordPattern(words, opts); !ok {
		t.Fatal("these words should take the Perl pattern")
	}
	got, err := tree.Grep(ctx, words, opts)
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := r.fetchGit(ctx, nil, "grep", "-z", "-o", "-I", "-F", "-w", "-e", "send", "-e", "sendFile", "-e", "join",
		"-e", "x_y", "-e", "a1", "-e", "Send", "-e", "missing", string(head), "--", "*.js")
	if err != nil {
		t.Fatal(err)
	}
	want := parseGrep(fixed, string(head)+":", false, map[string][]string{})
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Grep = %v\ngit grep -F -w = %v", got, want)
	}
	inProcess, err := tree.grepObjects(ctx, words, opts, map[string][]string{})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(got, inProcess, slices.Equal) {
		t.Errorf("Grep = %v\nin process = %v", got, inProcess)
	}
	// A git built without PCRE refuses -P: the fixed strings answer alike.
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nfor a in \"$@\"; do if [ \"$a\" = -P ]; then echo 'fatal: cannot use Perl-compatible regexes when not compiled with USE_LIBPCRE' >&2; exit 128; fi; done\nexec '%s' \"$@\"\n", real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	withoutPCRE, err := tree.Grep(ctx, words, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(got, withoutPCRE, slices.Equal) {
		t.Errorf("Grep = %v\nwithout PCRE = %v", got, withoutPCRE)
	}
	if _, err := r.fetchGit(ctx, nil, "grep", "-P", "-e", "x", string(head)); err == nil {
		t.Error("the git on PATH runs -P")
	}

	// sendFile( and resend are not send; join_ is not join; é and $ are
	// not word characters to git; Send is not send; h.js is binary.
	if s, j := []string{"b.js", "c.js", "f.js"}, []string{"c.js", "sub/i.js"}; !slices.Equal(got["send"], s) || !slices.Equal(got["join"], j) {
		t.Errorf("send in %v, join in %v; want %v, %v", got["send"], got["join"], s, j)
	}
}

// Which words go to git as one Perl pattern: case-sensitive whole words of
// word characters only; anything else keeps -F.
func TestWordPattern(t *testing.T) {
	for _, c := range []struct {
		words []string
		opts  pack.GrepOptions
		want  string
	}{
		{[]string{"send", "x_1"}, pack.GrepOptions{}, "(?<![0-9A-Za-z_])(?:send|x_1)(?![0-9A-Za-z_])"},
		{[]string{"send", "$http"}, pack.GrepOptions{}, ""},
		{[]string{"naïve"}, pack.GrepOptions{}, ""},
		{[]string{"a.b"}, pack.GrepOptions{}, ""},
		{[]string{"(?x)"}, pack.GrepOptions{}, ""},
		{[]string{""}, pack.GrepOptions{}, ""},
		{[]string{"send"}, pack.GrepOptions{IgnoreCase: true}, ""},
		{[]string{"send"}, pack.GrepOptions{Substring: true}, ""},
	} {
		got, ok := wordPattern(c.words, c.opts)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("wordPattern(%q, %+v) = %q, %v; want %q", c.words, c.opts, got, ok, c.want)
		}
	}
}
