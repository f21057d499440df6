package lazyre

import (
	"fmt"
	"strings"
	"testing"
)

// TestSet: a pattern is compiled once, on first use or by CompileAll, and
// each call returns the same compiled expression.
func TestSet(t *testing.T) {
	var s Set
	a := s.MustCompile(`^a+$`)
	b := s.MustCompile(`b`)
	if s.Len() != 2 {
		t.Fatalf("Len = %d, want 2", s.Len())
	}
	first := a()
	if !first.MatchString("aaa") || first.MatchString("ab") {
		t.Fatalf("a() does not match as ^a+$")
	}
	if a() != first {
		t.Fatal("a() compiled its pattern twice")
	}
	s.CompileAll()
	if a() != first {
		t.Fatal("CompileAll compiled a compiled pattern again")
	}
	if got := b(); got == nil || got.String() != "b" {
		t.Fatalf("b() = %v, want the pattern b", got)
	}
}

// TestBadPatternPanicsWhenCompiled: a bad pattern panics like
// regexp.MustCompile, when it is compiled (a package's test of CompileAll
// catches it), not when it is declared.
func TestBadPatternPanicsWhenCompiled(t *testing.T) {
	var s Set
	bad := strings.Repeat("(", 1) // built, so that vet does not refuse it
	s.MustCompile(bad)
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("compiling a bad pattern did not panic")
		} else if msg := fmt.Sprint(r); !strings.Contains(msg, "missing closing )") {
			t.Fatalf("panic %q, want regexp.MustCompile's error", msg)
		}
	}()
	s.CompileAll()
}
