package pack

import "testing"

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
