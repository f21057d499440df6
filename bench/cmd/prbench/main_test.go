package main

import (
	"testing"

	"github.com/ctxpack/ctxpack/pack"
)

// The bench's boilerplate list is its own: it names what the issue says
// never rides along, including what the builder's list might miss.
func TestIsBoilerplate(t *testing.T) {
	for _, c := range []struct {
		path string
		want bool
	}{
		{"LICENSE", true}, {"LICENSE.txt", true}, {"LICENSE-APACHE", true}, {"CODE_OF_CONDUCT.md", true},
		{"CONTRIBUTING.md", true}, {"CHANGES.rst", true}, {"History.md", true}, {"SECURITY.md", true},
		{"go.sum", true}, {"uv.lock", true}, {"package-lock.json", true}, {"yarn.lock", true},
		{".golangci.yml", true}, {"codecov.yml", true}, {".goreleaser.yaml", true}, {".eslintrc.yml", true},
		{".npmrc", true}, {".pre-commit-config.yaml", true}, {"renovate.json", true}, {".promu.yml", true},
		{".github/workflows/ci.yml", true}, {".devcontainer/devcontainer.json", true}, {"SECURITY-INSIGHTS.yml", true},
		{"security.go", false}, {"changes_test.go", false}, {"license/check.go", false}, {"history/log.py", false},
		{"go.mod", false}, {"package.json", false}, {"Makefile", false}, {"README.md", false}, {"context.go", false},
		{"vite.config.js", false}, {"src/flask/app.py", false},
	} {
		if got := isBoilerplate(c.path); got != c.want {
			t.Errorf("isBoilerplate(%q) = %v, want %v", c.path, got, c.want)
		}
	}
	// What the bench must be able to catch: names that are not the
	// builder's predicate (were it to miss them, the bench would see them).
	independent := 0
	for _, p := range []string{"CONTRIBUTING.md", ".golangci.yml", "codecov.yml", ".github/workflows/ci.yml"} {
		if isBoilerplate(p) && !pack.IsBoilerplate(p) {
			independent++
		}
	}
	if independent == 0 {
		t.Errorf("the bench's list adds nothing to the builder's IsBoilerplate")
	}
}

// Added lines are a multiset: a line added three times needs three copies.
func TestAddedShareCountsRepeats(t *testing.T) {
	added := map[string][]string{"a.go": {"}", "}", "}", "return nil", "x := 1"}, "gone.bin": {"z"}}
	counts := func(path string, lines ...string) lineCounts {
		c := lineCounts{}
		for _, l := range lines {
			c.add(path, l)
		}
		return c
	}
	for _, c := range []struct {
		name              string
		inDiff, inContent lineCounts
		want              float64
	}{
		{"one copy of a repeated line", counts("a.go", "}", "return nil", "x := 1"), lineCounts{}, 3.0 / 5},
		{"every copy", counts("a.go", "}", "}", "}", "return nil", "x := 1"), lineCounts{}, 1},
		// A region repeating the hunk's lines does not count them twice.
		{"diff and region overlap", counts("a.go", "}", "return nil"), counts("a.go", "}", "return nil"), 2.0 / 5},
		{"region holds more", counts("a.go", "}"), counts("a.go", "}", "}", "}", "return nil", "x := 1"), 1},
	} {
		if got := addedShare(added, c.inDiff, c.inContent, map[string]bool{"gone.bin": true}); got != c.want {
			t.Errorf("%s: share %v, want %v", c.name, got, c.want)
		}
	}
}
