package lang

import "testing"

// TestRegexpsCompile: every pattern of the package compiles. They are
// compiled on first use (lazyre), no longer in the package's init, where a
// bad one stopped every process at once.
func TestRegexpsCompile(t *testing.T) {
	if regexps.Len() == 0 {
		t.Fatal("no pattern registered")
	}
	regexps.CompileAll()
}
