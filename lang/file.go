// Package lang is ctxpack's code understanding: per-language extraction of
// definitions, imports, routes and commands, import resolution and the
// relations between files, and project manifests. It reads file text and
// never the network; package pack decides what of it leaves.
package lang

import (
	"context"
	"errors"
	"path"
	"strings"
)

// File is one file of a tree as lang reads it. Read and Text are called
// only for files lang needs, so a caller can keep reading lazy.
type File struct {
	Path string
	Size int64
	// Regular is false for symlinks, submodules and other non-files.
	Regular bool
	Read    func(ctx context.Context) ([]byte, error)
	// Text is the file's text with its secrets already redacted: every
	// text BuildManifest takes from a file (names, versions, descriptions,
	// the purpose) comes from it, never from Read, since what it makes of
	// a text (a capped description, a paragraph with its markup removed)
	// can hold part of a secret that no scan of the result recognises. A
	// file without Text gives the manifest no text; ErrExcluded says the
	// text may not be used.
	Text func(ctx context.Context) ([]byte, error)
}

// ErrExcluded is what File.Text returns for a file whose text may not be
// used (its secret scan excluded it).
var ErrExcluded = errors.New("excluded")

// Redactor replaces the secrets in a text BuildManifest is about to cap
// (the purpose, a version): a cap inside a secret that only the derived
// text holds (a JSON escape decoded, markup removed) would leave a part no
// later scan recognises. An error means the text could not be checked.
type Redactor func(ctx context.Context, text string) (string, error)

// Manifest is seed 000's Manifest.
type Manifest struct {
	ProjectName      string       `json:"project_name"`
	ProjectType      string       `json:"project_type"`
	PurposeGuess     string       `json:"purpose_guess"`
	StructureSummary string       `json:"structure_summary"`
	Dependencies     []Dependency `json:"dependencies"`
	EntryPoints      []string     `json:"entry_points"`
	BuildSystem      string       `json:"build_system,omitempty"`
	TestFramework    string       `json:"test_framework,omitempty"`
}

// Dependency is seed 000's Dependency.
type Dependency struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Type    string `json:"type"`
	// Source is the manifest file that declares it.
	Source string `json:"source"`
}

// IsTestPath reports whether a path is a test file: Go _test.go, Python
// test_*.py/*_test.py, JS/TS .test./.spec., Java *Test(s).java, Ruby
// _spec.rb, or anything under test/, tests/, __tests__/, testdata/, spec/.
func IsTestPath(p string) bool {
	lower, base := strings.ToLower(p), strings.ToLower(path.Base(p))
	if strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py") ||
		strings.HasSuffix(base, "_test.py") || strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		strings.HasSuffix(base, "test.java") || strings.HasSuffix(base, "tests.java") || strings.HasSuffix(base, "_spec.rb") {
		return true
	}
	for _, dir := range []string{"test/", "tests/", "__tests__/", "testdata/", "spec/"} {
		if strings.HasPrefix(lower, dir) || strings.Contains(lower, "/"+dir) {
			return true
		}
	}
	return false
}

func set(items ...string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, it := range items {
		m[it] = true
	}
	return m
}

func ext(p string) string { return strings.ToLower(path.Ext(p)) }

// CountLines counts lines the way an editor shows them.
func CountLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// LanguageName names the language of a path for prose ("Go", "TypeScript");
// programming is false for markup and data languages.
func LanguageName(p string) (name string, programming, ok bool) {
	l, ok := mfLanguages[ext(p)]
	return l.name, l.project != "", ok
}

// IsProgrammingLanguage reports whether a language name (as LanguageName
// gives it) is a programming language.
func IsProgrammingLanguage(name string) bool {
	for _, l := range mfLanguages {
		if l.name == name {
			return l.project != ""
		}
	}
	return false
}

// Count is a name with a count.
type Count struct {
	Name string
	N    int
}

// TopCounts sorts counts largest first, ties by name.
func TopCounts(m map[string]int) []Count {
	var out []Count
	for _, c := range mfTop(m) {
		out = append(out, Count{c.name, c.n})
	}
	return out
}
