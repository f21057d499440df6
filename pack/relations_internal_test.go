package pack

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/ctxpack/ctxpack/lang"
)

// Which names relations look up across the tree: identifiers of at least
// minCallerName bytes; a JavaScript name may hold "$"; a name with a blank
// or a dot (an extractor's "anonymous function", a qualified name) is in no
// code as a word.
func TestGreppable(t *testing.T) {
	for _, c := range []struct {
		name      string
		ident, ok bool
	}{
		{"validKey", true, true},
		{"$http", true, true},
		{"Ünïcode", true, true},
		{"get", true, false},
		{"it", true, false},
		{"anonymous function", false, false},
		{"Store.Insert", false, false},
		{"", false, false},
	} {
		if got := identifier(c.name); got != c.ident {
			t.Errorf("identifier(%q) = %v, want %v", c.name, got, c.ident)
		}
		if got := greppable(c.name); got != c.ok {
			t.Errorf("greppable(%q) = %v, want %v", c.name, got, c.ok)
		}
	}
}

// An item names its file's imports (regionItem): importsOf gives the
// imports Extract would, derived alone when the file's facts are not
// (a file the change imports or calls, whose other facts nothing reads),
// the facts' when they are; none for a file not scanned yet, until it is.
func TestImportsOfDerivesImportsAlone(t *testing.T) {
	text := "package a\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\nfunc A() { fmt.Println(strings.ToUpper(\"a\")) }\n"
	entryOf := func(p string) *entry {
		return &entry{file: &File{Path: p}, original: text, analysis: text}
	}
	b := &builder{byPath: map[string]*entry{"a.go": entryOf("a.go"), "b.go": entryOf("b.go"), "c.go": entryOf("c.go")}}
	b.byPath["c.go"].pending = true
	b.facts = map[string]*lang.Facts{"b.go": {Imports: []string{"from/facts"}}}
	b.importsAll([]string{"a.go", "b.go", "c.go"})
	if got := b.importsOf("a.go"); !slices.Equal(got, []string{"fmt", "strings"}) {
		t.Errorf("a.go imports %q", got)
	}
	if _, ok := b.facts["a.go"]; ok {
		t.Error("a.go's facts were derived for its imports")
	}
	if got := b.importsOf("b.go"); !slices.Equal(got, []string{"from/facts"}) {
		t.Errorf("b.go imports %q, want its facts'", got)
	}
	if got := b.importsOf("c.go"); got != nil {
		t.Errorf("c.go, not scanned yet, imports %q", got)
	}
	b.byPath["c.go"].pending = false
	if got := b.importsOf("c.go"); !slices.Equal(got, []string{"fmt", "strings"}) {
		t.Errorf("c.go, scanned, imports %q", got)
	}
}

// importFiles reads what the imports' loop in relations takes: per
// package, the first file neither changed nor a test that may leave (an
// excluded one is passed over), at most maxImports in all, in order.
func TestImportFiles(t *testing.T) {
	b := &builder{snap: &Snapshot{}, byPath: map[string]*entry{}} // no tree: a missing file is none
	add := func(p string, reason Reason) {
		e := &entry{file: &File{Path: p}}
		e.row.Reason = reason
		b.byPath[p] = e
	}
	add("a/changed.go", "")
	add("a/a_test.go", "")
	add("a/excluded.go", ReasonSizeLimit)
	add("a/a.go", "")
	add("a/later.go", "")
	var imported [][]lang.Unit
	imported = append(imported, []lang.Unit{{Files: []string{"a/changed.go", "a/a_test.go", "a/excluded.go", "a/missing.go", "a/a.go", "a/later.go"}}})
	var pkgs []lang.Unit
	for i := range maxImports + 3 {
		p := fmt.Sprintf("p%02d/p.go", i)
		add(p, "")
		pkgs = append(pkgs, lang.Unit{Files: []string{p}})
	}
	imported = append(imported, nil, pkgs)
	r := &relationFinder{b: b, read: map[string]*entry{}}
	got, err := r.importFiles(context.Background(), imported, map[string]bool{"a/changed.go": true})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range got {
		paths = append(paths, e.file.Path)
	}
	want := []string{"a/a.go"}
	for i := range maxImports - 1 {
		want = append(want, fmt.Sprintf("p%02d/p.go", i))
	}
	if !slices.Equal(paths, want) {
		t.Errorf("import files %q, want %q", paths, want)
	}
}
