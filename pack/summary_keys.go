package pack

import (
	"path"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/lang"
)

// What a path is when it is not the project's own code (notCode).
const (
	pathTest      = "test"
	pathFixture   = "fixture"
	pathDocs      = "docs"
	pathExample   = "example"
	pathVendored  = "vendored"
	pathGenerated = "generated"
	pathChangelog = "boilerplate" // changelogs, licences, lockfiles (IsBoilerplate)
)

// dirKinds name the directories of what is not the project's own code.
// Singular names ("example", "doc", "demo") count only at the top level:
// deeper they are as often package names (com/example/…, internal/doc).
var (
	dirKinds = map[string]string{
		"vendor": pathVendored, "third_party": pathVendored, "third-party": pathVendored, "thirdparty": pathVendored,
		"node_modules": pathVendored, "bower_components": pathVendored,
		"fixtures": pathFixture, "__fixtures__": pathFixture, "__snapshots__": pathFixture, "testdata": pathFixture,
		"docs": pathDocs, "documentation": pathDocs,
		"examples": pathExample, "_examples": pathExample, "samples": pathExample, "demos": pathExample,
	}
	topDirKinds = map[string]string{"fixture": pathFixture, "doc": pathDocs, "example": pathExample, "sample": pathExample, "demo": pathExample}
)

// notCode says what a file is when it is not the project's own code:
// vendored code, fixtures and test data, tests, changelogs, licences and
// lockfiles, documentation, generated code or examples (in this order of
// precedence); "" for code and configuration. text (may be "") is checked
// for a "Code generated … DO NOT EDIT." marker. A path ending in "/" is a
// directory (a Go package) and is judged by its directories only.
func notCode(p, text string) string {
	isDir := strings.HasSuffix(p, "/")
	dir := lang.DirOf(p)
	if isDir {
		dir = strings.TrimSuffix(p, "/")
	}
	kinds := map[string]bool{}
	if dir != "" && dir != "." {
		for i, d := range strings.Split(strings.ToLower(dir), "/") {
			if k := dirKinds[d]; k != "" {
				kinds[k] = true
			} else if k := topDirKinds[d]; k != "" && i == 0 {
				kinds[k] = true
			}
		}
	}
	base := strings.ToLower(path.Base(p))
	switch {
	case kinds[pathVendored]:
		return pathVendored
	case kinds[pathFixture]:
		return pathFixture
	case lang.IsTestPath(p):
		return pathTest
	case !isDir && (IsBoilerplate(p) || strings.HasSuffix(base, ".lock")):
		return pathChangelog
	case kinds[pathDocs] || !isDir && docExts[ext(p)] && !configNames[base]:
		return pathDocs
	case !isDir && (isGeneratedPath(p) || generatedText(text)):
		return pathGenerated
	case kinds[pathExample]:
		return pathExample
	}
	return ""
}

// projectManifests are the root files that define a project (its name,
// language and dependencies): they lead the key files.
var projectManifests = set("go.mod", "package.json", "pyproject.toml", "setup.py", "setup.cfg", "cargo.toml",
	"pom.xml", "build.gradle", "build.gradle.kts", "gemfile", "composer.json", "mix.exs", "pubspec.yaml", "deno.json")

// Key file classes of a Summary pack, most central first.
const (
	keyManifest   = iota // a root project manifest
	keyRootConfig        // another root build or tool file (Makefile, Dockerfile…)
	keyReadme            // the root README
	keyEntrypoint        // a program, the manifest's entry point or a library root
	keyImported          // code other code of the repository imports
	keyNamed             // a file seed 000's table names (auth, routes, models…)
)

// keyCandidate is a file that may be a key file of a Summary pack.
type keyCandidate struct {
	e     *entry
	class int
	// sub orders an entry point: 0 for a program under a cmd/ directory or
	// near the root, or one that serves routes or commands; 1 for the rest
	// (generators, tools deep in the tree).
	sub   int
	order int // an entry point's position in the entrypoints' order
	fanIn int // files of the project's own code importing it
}

// summaryKeyFiles chooses the key files a Summary pack describes, by
// centrality rather than size: root manifests, the root README, the entry
// points (programs under cmd/ or near the root and route or command files
// before deeper tools, then in the entrypoints' order), then the code the
// repository imports most (a file's imported-by count, a Go package
// through its main file), then files seed 000's table names; within those
// classes by imported-by count, depth and path. Seed 000's
// limits apply (KeyFilesPerCategory, KeyFilesTotal). Changed files (they
// are described as such), tests, fixtures, docs, examples, vendored and
// generated code and boilerplate are never key files.
//
// It is the Summary pack's own ranking: Full and change packs keep
// keyLess (seed 000's table order, then size).
func (sb *summaryBuilder) summaryKeyFiles(eps []Entrypoint) []*entry {
	byPath := map[string]*keyCandidate{}
	var cands []*keyCandidate
	add := func(p string, class int) *keyCandidate {
		e := sb.entries[p]
		if e == nil || sb.changed[p] {
			return nil
		}
		if c := byPath[p]; c != nil {
			c.class = min(c.class, class)
			return c
		}
		c := &keyCandidate{e: e, class: class, fanIn: sb.coreFanIn(p)}
		byPath[p] = c
		cands = append(cands, c)
		return c
	}
	for _, p := range sb.paths {
		e := sb.entries[p]
		base := strings.ToLower(path.Base(p))
		root := !strings.Contains(p, "/")
		switch {
		case root && projectManifests[base]:
			add(p, keyManifest)
		case root && e.index.Category == CatConfig && e.importance == ImportanceCritical:
			add(p, keyRootConfig)
		case root && strings.HasPrefix(base, "readme"):
			add(p, keyReadme)
		}
	}
	for i, ep := range eps {
		if sb.kind(ep.Path) != "" {
			continue
		}
		if c := add(ep.Path, keyEntrypoint); c != nil && c.class == keyEntrypoint {
			c.order = i
			if !strings.Contains("/"+ep.Path, "/cmd/") && depth(ep.Path) > 1 && len(ep.RoutesOrCommands) == 0 {
				c.sub = 1
			}
		}
	}
	// Imported code: files, and Go packages through one file each.
	for _, key := range sortedKeys(sb.graph.In) {
		p := key
		if dir, ok := strings.CutSuffix(key, "/"); ok {
			if dir == "." {
				dir = ""
			}
			p = sb.goPackageFile(dir)
		}
		if p != "" && sb.coreFanIn(p) > 0 && sb.kind(p) == "" {
			add(p, keyImported)
		}
	}
	for _, p := range sb.paths {
		if e := sb.entries[p]; e.importance != "" && sb.kind(p) == "" {
			add(p, keyNamed)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.class != b.class {
			return a.class < b.class
		}
		if a.class == keyEntrypoint {
			if a.sub != b.sub {
				return a.sub < b.sub
			}
			return a.order < b.order
		}
		if a.fanIn != b.fanIn {
			return a.fanIn > b.fanIn
		}
		if da, db := depth(a.e.file.Path), depth(b.e.file.Path); da != db {
			return da < db
		}
		return a.e.file.Path < b.e.file.Path
	})
	perCat := map[Category]int{}
	var out []*entry
	for _, c := range cands {
		if len(out) >= KeyFilesTotal || perCat[c.e.index.Category] >= KeyFilesPerCategory {
			continue
		}
		perCat[c.e.index.Category]++
		out = append(out, c.e)
	}
	return out
}

// kind is notCode of a path of the tree (a file, or a Go package "dir/"),
// computed once per path.
func (sb *summaryBuilder) kind(p string) string {
	if k, ok := sb.kinds[p]; ok {
		return k
	}
	text := ""
	if e := sb.entries[p]; e != nil {
		text = e.analysis
	}
	k := notCode(p, text)
	if sb.kinds == nil {
		sb.kinds = map[string]string{}
	}
	sb.kinds[p] = k
	return k
}

// unitKey is the import graph's key of p's unit: the file itself, or for
// a Go file its package ("dir/", "./" for the root).
func (sb *summaryBuilder) unitKey(p string) string {
	if _, ok := sb.graph.In[p]; ok || !strings.HasSuffix(p, ".go") {
		return p
	}
	if d := lang.DirOf(p); d != "" {
		return d + "/"
	}
	return "./"
}

// coreFanIn counts the files of the project's own code (not tests,
// examples, docs…) that import p's unit.
func (sb *summaryBuilder) coreFanIn(p string) int {
	n := 0
	for _, q := range sb.graph.In[sb.unitKey(p)] {
		if sb.kind(q) == "" {
			n++
		}
	}
	return n
}

// goPackageFile is the file that stands for the Go package in dir ("" for
// the root): the one named after the package or its directory, else the
// one with the most exported names; doc.go only when there is no other.
func (sb *summaryBuilder) goPackageFile(dir string) string {
	best, bestRank, bestExports := "", 3, -1
	for _, p := range sb.resolver.DirFiles(dir) {
		f := sb.facts[p]
		if f == nil || f.Lang != lang.LangGo || lang.IsTestPath(p) || sb.entries[p] == nil {
			continue
		}
		stem := strings.TrimSuffix(path.Base(p), ".go")
		rank := 1
		switch {
		case stem == f.Package || dir != "" && stem == path.Base(dir):
			rank = 0
		case stem == "doc":
			rank = 2
		}
		if rank < bestRank || rank == bestRank && len(f.Exports) > bestExports {
			best, bestRank, bestExports = p, rank, len(f.Exports)
		}
	}
	return best
}
