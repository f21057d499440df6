// Package lazyre compiles a package's regular expressions when they are
// first used, or all at once on another goroutine, instead of in the
// package's init: every process runs every init before main, one after the
// other, whatever command it runs (audit's and lang's ~60 patterns were
// ~1.2 ms of each start).
package lazyre

import (
	"regexp"
	"slices"
	"sync"
)

// Set is a package's patterns.
type Set struct {
	mu  sync.Mutex
	all []func() *regexp.Regexp
}

// MustCompile returns a function that compiles pattern the first time it is
// called (panicking as regexp.MustCompile does on a bad pattern, which a
// test calling CompileAll finds) and returns the same *regexp.Regexp each
// time.
func (s *Set) MustCompile(pattern string) func() *regexp.Regexp {
	f := sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
	s.mu.Lock()
	s.all = append(s.all, f)
	s.mu.Unlock()
	return f
}

// CompileAll compiles every pattern of the set not compiled yet.
func (s *Set) CompileAll() {
	s.mu.Lock()
	all := slices.Clone(s.all)
	s.mu.Unlock()
	for _, f := range all {
		f()
	}
}

// Len is the number of patterns in the set.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.all)
}
