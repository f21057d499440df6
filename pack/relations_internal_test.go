package pack

import (
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
