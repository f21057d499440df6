package lang

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"html"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	toml "github.com/pelletier/go-toml/v2"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// Dependency types of seed 000.
const (
	DepRuntime = "runtime"
	DepDev     = "dev"
	DepPeer    = "peer"
)

// Project types BuildManifest reports besides the language ones.
const (
	ProjectMixed   = "mixed"
	ProjectUnknown = "unknown"
)

const (
	// mfMaxManifestBytes: a manifest larger than this is not read.
	mfMaxManifestBytes = 1 << 20
	// mfMaxReadmeBytes: a README larger than this is not read; of a smaller
	// one only the first mfReadmeScanBytes are looked at.
	mfMaxReadmeBytes  = 4 << 20
	mfReadmeScanBytes = 64 << 10
	// mfMaxManifestFiles bounds how many manifest files are read.
	mfMaxManifestFiles = 64
	// mfMaxManifestDepth is how deep below the root manifests are looked for
	// (directories: 2 means a/b/package.json).
	mfMaxManifestDepth = 2
	// mfMaxDependencies bounds the dependency list; root manifests come first.
	mfMaxDependencies = 300
	// mfMaxEntryReads bounds how many Go files are read to confirm package main.
	mfMaxEntryReads = 64
	// mfMaxEntryDepth is how deep main.go and __main__.py are looked for.
	mfMaxEntryDepth = 3
	// mfMaxPurpose is the cap of purpose_guess in characters (runes).
	mfMaxPurpose = 300
	// mfMaxVersion caps a dependency version string.
	mfMaxVersion = 100
)

// mfKindOrder is the precedence of project kinds wherever one must be
// chosen among several (project name, build system, test framework,
// description).
var mfKindOrder = []string{"go", "node", "python", "rust", "java"}

// mfManifestKinds maps a manifest file name to the project kind it declares.
var mfManifestKinds = map[string]string{
	"go.mod":               "go",
	"package.json":         "node",
	"pyproject.toml":       "python",
	"setup.py":             "python",
	"setup.cfg":            "python",
	"Pipfile":              "python",
	"requirements.txt":     "python",
	"requirements-dev.txt": "python",
	"Cargo.toml":           "rust",
	"pom.xml":              "java",
	"build.gradle":         "java",
	"build.gradle.kts":     "java",
}

// mfSkipDirs are directories whose manifests and sources are not the
// project's own: dependency, build-output and fixture trees. Hidden
// directories are skipped too.
var mfSkipDirs = map[string]bool{
	"node_modules": true, "vendor": true, "third_party": true, "testdata": true,
	"venv": true, "env": true, "__pypackages__": true, "dist": true, "target": true,
}

// BuildManifest derives seed 000's Manifest from the snapshot's files. It reads
// only the few manifest files it needs (their text via File.Text; Go files
// it only classifies via File.Read) and never fails on a malformed manifest
// file: a file that does not parse is noted in the returned notes slice
// (e.g. "package.json: not valid JSON: ...") and skipped.
//
// redact, when set, is handed every text before it is capped (a nil redact
// caps texts as they are); a text it cannot check is left out.
//
// Only files for which included returns true are read (a nil included reads
// nothing). A context error from Read stops all further reading; what was read
// so far is still used. The result depends only on the inputs: everything is
// sorted, and the notes are sorted too.
func BuildManifest(ctx context.Context, repoName string, files []File, included func(path string) bool, redact Redactor) (Manifest, []string) {
	r := &mfReader{ctx: ctx, included: included, redact: redact, byPath: make(map[string]*File, len(files))}
	for i := range files {
		if _, dup := r.byPath[files[i].Path]; !dup {
			r.byPath[files[i].Path] = &files[i]
		}
	}
	r.paths = make([]string, 0, len(r.byPath))
	for p := range r.byPath {
		r.paths = append(r.paths, p)
	}
	slices.Sort(r.paths)

	infos := r.manifests()
	rootKinds, kindManifests := mfKinds(infos)

	m := Manifest{Dependencies: []Dependency{}, EntryPoints: []string{}}
	switch {
	case len(rootKinds) == 1:
		m.ProjectType = rootKinds[0]
	case len(rootKinds) > 1:
		m.ProjectType = ProjectMixed
	default:
		m.ProjectType = mfProjectTypeByExtension(r.paths)
	}
	m.ProjectName = mfProjectName(infos, repoName)
	m.Dependencies = r.dependencies(infos)
	m.EntryPoints = r.entryPoints(infos)
	m.BuildSystem = r.buildSystem(infos, rootKinds)
	m.TestFramework = r.testFramework(infos, rootKinds)
	m.PurposeGuess = mfCapWords(r.redacted(r.purpose(infos), mfMaxPurpose), mfMaxPurpose)
	m.StructureSummary = mfStructure(r.paths, m.ProjectType, kindManifests)

	notes := slices.Compact(slices.Sorted(slices.Values(r.notes)))
	if notes == nil {
		notes = []string{}
	}
	return m, notes
}

// mfReader reads files for BuildManifest: only included ones, bounded, and
// not at all once the context is done.
type mfReader struct {
	ctx      context.Context
	included func(string) bool
	redact   Redactor
	byPath   map[string]*File
	paths    []string // sorted
	notes    []string
	stopped  bool
	// goReads counts Go files read to confirm package main.
	goReads int
}

func (r *mfReader) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *mfReader) exists(p string) bool {
	_, ok := r.byPath[p]
	return ok
}

// redacted is s, its secrets replaced when it is longer than max runes
// (about to be capped); "" when they could not be looked for.
func (r *mfReader) redacted(s string, max int) string {
	if r.redact == nil || utf8.RuneCountInString(s) <= max {
		return s
	}
	out, err := r.redact(r.ctx, s)
	if err != nil {
		r.note("manifest: a text could not be checked for secrets and is left out")
		return ""
	}
	return out
}

// text returns the text of p with its secrets redacted (File.Text), or
// false as read does.
func (r *mfReader) text(p string, limit int64) ([]byte, bool) {
	return r.readWith(p, limit, true, func(f *File) func(context.Context) ([]byte, error) { return f.Text })
}

// read returns the content of p as stored (File.Read), for classifying it
// only, or false when p is absent, not a regular file, not included, larger
// than limit, unreadable or the context is done. noteSkip adds a note when
// an existing file is skipped.
func (r *mfReader) read(p string, limit int64, noteSkip bool) ([]byte, bool) {
	return r.readWith(p, limit, noteSkip, func(f *File) func(context.Context) ([]byte, error) { return f.Read })
}

func (r *mfReader) readWith(p string, limit int64, noteSkip bool, how func(*File) func(context.Context) ([]byte, error)) ([]byte, bool) {
	if r.stopped {
		return nil, false
	}
	if err := r.ctx.Err(); err != nil {
		r.stop(err)
		return nil, false
	}
	f := r.byPath[p]
	if f == nil || how(f) == nil || !f.Regular {
		return nil, false
	}
	if r.included == nil || !r.included(p) {
		if noteSkip {
			r.note("%s: excluded, not read", p)
		}
		return nil, false
	}
	if limit > 0 && f.Size > limit {
		if noteSkip {
			r.note("%s: %d bytes, over the %d-byte limit, not read", p, f.Size, limit)
		}
		return nil, false
	}
	data, err := how(f)(r.ctx)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || r.ctx.Err() != nil {
			r.stop(err)
			return nil, false
		}
		if errors.Is(err, ErrExcluded) {
			if noteSkip {
				r.note("%s: excluded, not read", p)
			}
			return nil, false
		}
		if noteSkip {
			r.note("%s: cannot read: %v", p, err)
		}
		return nil, false
	}
	if limit > 0 && int64(len(data)) > limit {
		if noteSkip {
			r.note("%s: %d bytes, over the %d-byte limit, not read", p, len(data), limit)
		}
		return nil, false
	}
	return data, true
}

func (r *mfReader) stop(err error) {
	if !r.stopped {
		r.stopped = true
		r.note("manifest: stopped reading files: %v", err)
	}
}

// mfInfo is what one manifest file says.
type mfInfo struct {
	path  string
	dir   string // "" at the root
	base  string
	depth int
	kind  string

	read        bool // parsed successfully
	name        string
	description string
	deps        []Dependency
	// entries are paths relative to the repository root; only those present
	// in the snapshot become entry points.
	entries []string
	// buildSystem is what this manifest says about building (python, node).
	buildSystem string
	// pytest is set when pyproject.toml configures pytest.
	pytest bool
}

// mfSkipped reports whether a path lies in a directory that is not the
// project's own (dependencies, build output, fixtures, hidden directories).
func mfSkipped(p string) bool {
	dirs := strings.Split(p, "/")
	for _, d := range dirs[:len(dirs)-1] {
		if mfSkipDirs[d] || strings.HasPrefix(d, ".") {
			return true
		}
	}
	return false
}

func mfDepth(p string) int { return strings.Count(p, "/") }

func mfDir(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// mfJoin joins a path given in a manifest to the manifest's directory; it
// returns "" for paths that leave the repository.
func mfJoin(dir, rel string) string {
	rel = strings.TrimSpace(rel)
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") {
		return ""
	}
	p := path.Clean(path.Join(dir, rel))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	return p
}

// manifests finds, reads and parses the manifest files: root first, then
// subdirectories up to mfMaxManifestDepth, by path.
func (r *mfReader) manifests() []*mfInfo {
	var infos []*mfInfo
	for _, p := range r.paths {
		base := path.Base(p)
		kind, ok := mfManifestKinds[base]
		if !ok || mfDepth(p) > mfMaxManifestDepth || mfSkipped(p) {
			continue
		}
		infos = append(infos, &mfInfo{path: p, dir: mfDir(p), base: base, depth: mfDepth(p), kind: kind})
	}
	slices.SortStableFunc(infos, func(a, b *mfInfo) int {
		return cmp.Or(cmp.Compare(a.depth, b.depth), cmp.Compare(a.path, b.path))
	})
	reads := 0
	for _, in := range infos {
		switch in.base {
		case "setup.py", "setup.cfg", "build.gradle", "build.gradle.kts":
			continue // declare a kind; not parsed
		}
		if reads == mfMaxManifestFiles {
			r.note("manifest: more than %d manifest files; %s and later ones not read", mfMaxManifestFiles, in.path)
			break
		}
		reads++
		data, ok := r.text(in.path, mfMaxManifestBytes)
		if !ok {
			continue
		}
		var err error
		switch in.base {
		case "go.mod":
			err = r.parseGoMod(in, data)
		case "package.json":
			err = r.parsePackageJSON(in, data)
		case "pyproject.toml":
			err = r.parsePyproject(in, data)
		case "Pipfile":
			err = r.parsePipfile(in, data)
		case "requirements.txt":
			err = r.parseRequirements(in, data, DepRuntime)
		case "requirements-dev.txt":
			err = r.parseRequirements(in, data, DepDev)
		case "Cargo.toml":
			err = r.parseCargo(in, data)
		case "pom.xml":
			err = r.parsePom(in, data)
		}
		if err != nil {
			r.note("%s: %v", in.path, err)
			in.deps, in.entries = nil, nil
			continue
		}
		in.read = true
	}
	return infos
}

// mfKinds returns the kinds declared at the root (or, when the root declares
// none, anywhere up to mfMaxManifestDepth) in mfKindOrder, and the manifest
// paths that declare them.
func mfKinds(infos []*mfInfo) ([]string, []string) {
	var scope []*mfInfo
	for _, in := range infos {
		if in.depth == 0 {
			scope = append(scope, in)
		}
	}
	if len(scope) == 0 {
		scope = infos
	}
	seen := map[string]bool{}
	var paths []string
	for _, in := range scope {
		seen[in.kind] = true
		paths = append(paths, in.path+" ("+in.kind+")")
	}
	var kinds []string
	for _, k := range mfKindOrder {
		if seen[k] {
			kinds = append(kinds, k)
		}
	}
	return kinds, paths
}

// mfOrderedKinds is mfKindOrder with the given kinds first.
func mfOrderedKinds(first []string) []string {
	out := slices.Clone(first)
	for _, k := range mfKindOrder {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func mfProjectName(infos []*mfInfo, repoName string) string {
	for _, k := range mfKindOrder {
		for _, in := range infos {
			if in.depth == 0 && in.kind == k && in.name != "" {
				return in.name
			}
		}
	}
	return repoName
}

// ---- go.mod ----

func (r *mfReader) parseGoMod(in *mfInfo, data []byte) error {
	f, err := modfile.Parse(in.path, data, nil)
	if err != nil {
		// A go.mod from a newer Go may use directives this parser does not
		// know; the lax parser still reads module and require.
		lax, laxErr := modfile.ParseLax(in.path, data, nil)
		if laxErr != nil {
			return fmt.Errorf("not a valid go.mod: %v", err)
		}
		r.note("%s: read leniently: %v", in.path, err)
		f = lax
	}
	if f.Module != nil {
		in.name = mfGoModuleName(f.Module.Mod.Path)
	}
	in.buildSystem = "go"
	for _, req := range f.Require {
		// Indirect requirements are the dependencies' dependencies: not
		// what the project chose, and usually many; they are left out.
		if req.Indirect {
			continue
		}
		in.deps = append(in.deps, Dependency{Name: req.Mod.Path, Version: req.Mod.Version, Type: DepRuntime, Source: in.path})
	}
	return nil
}

// mfGoModuleName is the last element of a module path without its major
// version suffix: github.com/a/b/v2 → b, gopkg.in/yaml.v3 → yaml.
func mfGoModuleName(p string) string {
	if prefix, _, ok := module.SplitPathVersion(p); ok && prefix != "" {
		p = prefix
	}
	return path.Base(p)
}

// ---- package.json ----

func (r *mfReader) parsePackageJSON(in *mfInfo, data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return errors.New("not a JSON object")
		}
		return fmt.Errorf("not valid JSON: %v", err)
	}
	in.name = mfJSONString(top["name"])
	in.description = mfJSONString(top["description"])
	for _, sec := range []struct{ key, typ string }{
		{"dependencies", DepRuntime},
		{"optionalDependencies", DepRuntime},
		{"devDependencies", DepDev},
		{"peerDependencies", DepPeer},
	} {
		raw, ok := top[sec.key]
		if !ok {
			continue
		}
		deps, isObj := mfJSONStringMap(raw)
		if !isObj {
			r.note("%s: %s is not an object", in.path, sec.key)
			continue
		}
		for _, name := range mfSortedKeys(deps) {
			in.deps = append(in.deps, Dependency{Name: name, Version: deps[name], Type: sec.typ, Source: in.path})
		}
	}
	if main := mfJSONString(top["main"]); main != "" {
		in.entries = append(in.entries, mfNodeFile(in.dir, main)...)
	}
	if bin := mfJSONString(top["bin"]); bin != "" {
		in.entries = append(in.entries, mfNodeFile(in.dir, bin)...)
	} else if bins, ok := mfJSONStringMap(top["bin"]); ok {
		for _, name := range mfSortedKeys(bins) {
			in.entries = append(in.entries, mfNodeFile(in.dir, bins[name])...)
		}
	}
	if scripts, ok := mfJSONStringMap(top["scripts"]); ok {
		for _, tok := range strings.Fields(scripts["start"]) {
			if mfNodeSource(tok) {
				in.entries = append(in.entries, mfNodeFile(in.dir, tok)...)
			}
		}
	}
	// packageManager ("pnpm@9.1.0") names the tool when there is no lockfile.
	if pm := mfJSONString(top["packageManager"]); pm != "" {
		if name, _, _ := strings.Cut(pm, "@"); slices.Contains([]string{"npm", "yarn", "pnpm", "bun"}, name) {
			in.buildSystem = name
		}
	}
	return nil
}

// mfNodeFile is a path named by package.json, with the extensions Node would
// try when it has none.
func mfNodeFile(dir, rel string) []string {
	p := mfJoin(dir, rel)
	if p == "" {
		return nil
	}
	if path.Ext(p) != "" {
		return []string{p}
	}
	return []string{p + ".js", p + "/index.js", p}
}

func mfNodeSource(tok string) bool {
	switch path.Ext(tok) {
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx":
		return true
	}
	return false
}

func mfJSONString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// mfJSONStringMap decodes an object, keeping its string values; ok is false
// when raw is not an object.
func mfJSONStringMap(raw json.RawMessage) (map[string]string, bool) {
	var obj map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil, false
	}
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		}
	}
	return out, true
}

func mfSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ---- TOML helpers ----

func mfTOML(data []byte) (map[string]any, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not valid TOML: %v", err)
	}
	return doc, nil
}

// mfTable walks nested tables; nil when a key is missing or not a table.
func mfTable(v any, keys ...string) map[string]any {
	for _, k := range keys {
		t, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = t[k]
	}
	t, _ := v.(map[string]any)
	return t
}

func mfStr(v any) string {
	s, _ := v.(string)
	return strings.TrimSpace(s)
}

func mfStrList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// ---- Python ----

// mfDevGroups are optional-dependency (extras) group names that hold
// development tools rather than optional runtime features.
var mfDevGroups = map[string]bool{
	"dev": true, "develop": true, "development": true, "test": true, "tests": true,
	"testing": true, "lint": true, "linting": true, "docs": true, "doc": true,
	"typing": true, "types": true, "style": true, "qa": true, "ci": true,
}

func (r *mfReader) parsePyproject(in *mfInfo, data []byte) error {
	doc, err := mfTOML(data)
	if err != nil {
		return err
	}
	bad := 0
	addPEP508 := func(specs []string, typ string) {
		for _, s := range specs {
			name, ver, ok := mfParsePEP508(s)
			if !ok {
				bad++
				continue
			}
			in.deps = append(in.deps, Dependency{Name: name, Version: ver, Type: typ, Source: in.path})
		}
	}

	project := mfTable(doc, "project")
	in.name = mfStr(project["name"])
	in.description = mfStr(project["description"])
	addPEP508(mfStrList(project["dependencies"]), DepRuntime)
	extras := mfTable(project, "optional-dependencies")
	for _, group := range mfSortedKeys(extras) {
		typ := DepRuntime // an extra is an optional runtime feature…
		if mfDevGroups[strings.ToLower(group)] {
			typ = DepDev // …unless it is named like a development group
		}
		addPEP508(mfStrList(extras[group]), typ)
	}
	// PEP 735 dependency groups are never installed with the package.
	groups := mfTable(doc, "dependency-groups")
	for _, group := range mfSortedKeys(groups) {
		addPEP508(mfStrList(groups[group]), DepDev)
	}
	scripts := mfTable(project, "scripts")
	for _, name := range mfSortedKeys(scripts) {
		in.entries = append(in.entries, mfPythonModuleFiles(in.dir, mfStr(scripts[name]))...)
	}

	poetry := mfTable(doc, "tool", "poetry")
	if poetry != nil {
		if in.name == "" {
			in.name = mfStr(poetry["name"])
		}
		if in.description == "" {
			in.description = mfStr(poetry["description"])
		}
		in.deps = append(in.deps, mfPoetryDeps(mfTable(poetry, "dependencies"), DepRuntime, in.path)...)
		in.deps = append(in.deps, mfPoetryDeps(mfTable(poetry, "dev-dependencies"), DepDev, in.path)...)
		pgroups := mfTable(poetry, "group")
		for _, g := range mfSortedKeys(pgroups) {
			typ := DepDev
			if g == "main" {
				typ = DepRuntime
			}
			in.deps = append(in.deps, mfPoetryDeps(mfTable(pgroups, g, "dependencies"), typ, in.path)...)
		}
		pscripts := mfTable(poetry, "scripts")
		for _, name := range mfSortedKeys(pscripts) {
			ref := mfStr(pscripts[name])
			if ref == "" {
				ref = mfStr(mfTable(pscripts, name)["callable"])
			}
			in.entries = append(in.entries, mfPythonModuleFiles(in.dir, ref)...)
		}
	}
	if bad > 0 {
		r.note("%s: %d dependency %s not understood, skipped", in.path, bad, mfPlural(bad, "entry", "entries"))
	}
	if mfTable(doc, "tool", "pytest") != nil {
		in.pytest = true
	}

	backend := mfStr(mfTable(doc, "build-system")["build-backend"])
	switch {
	case poetry != nil || strings.Contains(backend, "poetry") || r.exists(mfJoin(in.dir, "poetry.lock")):
		in.buildSystem = "poetry"
	case strings.HasPrefix(backend, "hatchling") || mfTable(doc, "tool", "hatch") != nil:
		in.buildSystem = "hatch"
	case strings.HasPrefix(backend, "flit"):
		in.buildSystem = "flit"
	case strings.HasPrefix(backend, "pdm"):
		in.buildSystem = "pdm"
	case strings.HasPrefix(backend, "maturin"):
		in.buildSystem = "maturin"
	case r.exists(mfJoin(in.dir, "uv.lock")):
		in.buildSystem = "uv"
	case strings.HasPrefix(backend, "setuptools"):
		in.buildSystem = "setuptools"
	}
	return nil
}

// mfPoetryDeps reads a poetry dependency table: name = "^1.2",
// name = {version = "^1.2", …} or a list of such tables.
func mfPoetryDeps(t map[string]any, typ, source string) []Dependency {
	var out []Dependency
	for _, name := range mfSortedKeys(t) {
		if strings.EqualFold(name, "python") {
			continue // the interpreter constraint, not a package
		}
		var versions []string
		switch v := t[name].(type) {
		case string:
			versions = append(versions, v)
		case map[string]any:
			versions = append(versions, mfStr(v["version"]))
		case []any:
			for _, e := range v {
				if s := mfStr(mfTable(e)["version"]); s != "" && !slices.Contains(versions, s) {
					versions = append(versions, s)
				}
			}
		}
		out = append(out, Dependency{Name: name, Version: strings.TrimSpace(strings.Join(versions, " || ")), Type: typ, Source: source})
	}
	return out
}

// mfPythonModuleFiles maps an entry-point reference "pkg.cli:main" to the
// files that may hold it, relative to the repository root.
func mfPythonModuleFiles(dir, ref string) []string {
	mod, _, _ := strings.Cut(ref, ":")
	mod = strings.TrimSpace(mod)
	if mod == "" || strings.ContainsAny(mod, "/\\ ") {
		return nil
	}
	rel := strings.ReplaceAll(mod, ".", "/")
	var out []string
	for _, root := range []string{"", "src/"} {
		out = append(out, mfJoin(dir, root+rel+".py"), mfJoin(dir, root+rel+"/__init__.py"), mfJoin(dir, root+rel+"/__main__.py"))
	}
	return out
}

func (r *mfReader) parsePipfile(in *mfInfo, data []byte) error {
	doc, err := mfTOML(data)
	if err != nil {
		return err
	}
	in.deps = append(in.deps, mfPoetryDeps(mfTable(doc, "packages"), DepRuntime, in.path)...)
	in.deps = append(in.deps, mfPoetryDeps(mfTable(doc, "dev-packages"), DepDev, in.path)...)
	in.buildSystem = "pipenv"
	return nil
}

var (
	mfPEP508Name = regexps.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*(.*)$`)
	mfSpaces     = regexps.MustCompile(`\s+`)
)

// mfParsePEP508 reads "name[extras] (spec) ; marker" into a name and a
// version specifier. A direct reference ("name @ url") yields no version:
// URLs may carry credentials and are not a version.
func mfParsePEP508(s string) (name, version string, ok bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	m := mfPEP508Name().FindStringSubmatch(s)
	if m == nil {
		return "", "", false
	}
	rest := strings.TrimSpace(m[3])
	if strings.HasPrefix(rest, "@") {
		return m[1], "", len(strings.TrimSpace(rest[1:])) > 0
	}
	if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") {
		rest = strings.TrimSpace(rest[1 : len(rest)-1])
	}
	if rest != "" && !strings.ContainsAny(rest[:1], "=<>!~") {
		return "", "", false
	}
	return m[1], mfSpaces().ReplaceAllString(rest, ""), true
}

// parseRequirements reads a pip requirements file: one PEP 508 requirement a
// line; comments, options (-r, -e, -c, --index-url …), URLs and local paths
// are skipped; included files (-r) are not followed.
func (r *mfReader) parseRequirements(in *mfInfo, data []byte, typ string) error {
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return errors.New("not a text file")
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	bad, firstBad := 0, 0
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + lines[i]
		}
		if j := mfCommentStart(line); j >= 0 {
			line = line[:j]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "-") {
			continue
		}
		if j := strings.Index(line, " -"); j >= 0 {
			line = strings.TrimSpace(line[:j]) // per-requirement options: --hash=…
		}
		name, ver, ok := mfParsePEP508(line)
		if !ok {
			if strings.Contains(line, "://") || strings.ContainsAny(line[:1], "./~") {
				continue // a URL or local path requirement
			}
			if bad == 0 {
				firstBad = start
			}
			bad++
			continue
		}
		in.deps = append(in.deps, Dependency{Name: name, Version: ver, Type: typ, Source: in.path})
	}
	if bad > 0 {
		r.note("%s: %d %s not understood (first at line %d), skipped", in.path, bad, mfPlural(bad, "line", "lines"), firstBad)
	}
	in.buildSystem = "pip"
	return nil
}

// mfCommentStart is where a pip comment starts: '#' at the start of the line
// or after whitespace.
func mfCommentStart(line string) int {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			return i
		}
	}
	return -1
}

// ---- Cargo.toml ----

func (r *mfReader) parseCargo(in *mfInfo, data []byte) error {
	doc, err := mfTOML(data)
	if err != nil {
		return err
	}
	pkg := mfTable(doc, "package")
	in.name = mfStr(pkg["name"])
	in.description = mfStr(pkg["description"])
	sections := []struct{ key, typ string }{
		{"dependencies", DepRuntime},
		{"dev-dependencies", DepDev},
		// Build dependencies run at compile time only, like dev tools.
		{"build-dependencies", DepDev},
	}
	add := func(t map[string]any, typ string) {
		for _, name := range mfSortedKeys(t) {
			var ver string
			switch v := t[name].(type) {
			case string:
				ver = v
			case map[string]any:
				ver = mfStr(v["version"]) // path, git or workspace = true: no version
			}
			in.deps = append(in.deps, Dependency{Name: name, Version: strings.TrimSpace(ver), Type: typ, Source: in.path})
		}
	}
	for _, sec := range sections {
		add(mfTable(doc, sec.key), sec.typ)
	}
	targets := mfTable(doc, "target")
	for _, cfg := range mfSortedKeys(targets) {
		for _, sec := range sections {
			add(mfTable(targets, cfg, sec.key), sec.typ)
		}
	}
	// A workspace root pins its members' shared dependencies.
	add(mfTable(doc, "workspace", "dependencies"), DepRuntime)

	if pkg != nil {
		in.entries = append(in.entries, mfJoin(in.dir, "src/main.rs"))
	}
	bins, _ := doc["bin"].([]any)
	for _, b := range bins {
		t := mfTable(b)
		if p := mfStr(t["path"]); p != "" {
			in.entries = append(in.entries, mfJoin(in.dir, p))
		} else if name := mfStr(t["name"]); name != "" && !strings.ContainsAny(name, "/\\") {
			in.entries = append(in.entries, mfJoin(in.dir, "src/bin/"+name+".rs"), mfJoin(in.dir, "src/bin/"+name+"/main.rs"))
		}
	}
	in.buildSystem = "cargo"
	return nil
}

// ---- pom.xml ----

type mfPom struct {
	XMLName      xml.Name `xml:"project"`
	ArtifactID   string   `xml:"artifactId"`
	Description  string   `xml:"description"`
	Dependencies []struct {
		GroupID    string `xml:"groupId"`
		ArtifactID string `xml:"artifactId"`
		Version    string `xml:"version"`
		Scope      string `xml:"scope"`
	} `xml:"dependencies>dependency"`
}

func (r *mfReader) parsePom(in *mfInfo, data []byte) error {
	var pom mfPom
	if err := xml.Unmarshal(data, &pom); err != nil {
		return fmt.Errorf("not valid XML: %v", err)
	}
	in.name = strings.TrimSpace(pom.ArtifactID)
	in.description = strings.Join(strings.Fields(pom.Description), " ")
	for _, d := range pom.Dependencies {
		name := strings.TrimSpace(d.GroupID) + ":" + strings.TrimSpace(d.ArtifactID)
		if strings.TrimSpace(d.ArtifactID) == "" {
			continue
		}
		typ := DepRuntime
		if strings.TrimSpace(d.Scope) == "test" {
			typ = DepDev
		}
		in.deps = append(in.deps, Dependency{Name: name, Version: strings.TrimSpace(d.Version), Type: typ, Source: in.path})
	}
	in.buildSystem = "maven"
	return nil
}

// ---- dependencies ----

var mfTypeRank = map[string]int{DepRuntime: 0, DepDev: 1, DepPeer: 2}

// mfUserinfo matches the credentials part of a URL.
var mfUserinfo = regexps.MustCompile(`://[^/@\s]*@`)

func (r *mfReader) cleanVersion(v string) string {
	v = r.redacted(strings.TrimSpace(mfUserinfo().ReplaceAllString(v, "://")), mfMaxVersion)
	if utf8.RuneCountInString(v) > mfMaxVersion {
		v = string([]rune(v)[:mfMaxVersion-1]) + "…"
	}
	return v
}

// dependencies merges the manifests' dependencies: root manifests first, then
// by source path, type (runtime, dev, peer) and name; an exact repeat of
// (source, type, name) is kept once.
func (r *mfReader) dependencies(infos []*mfInfo) []Dependency {
	var deps []Dependency
	for _, in := range infos {
		for _, d := range in.deps {
			d.Name = strings.TrimSpace(d.Name)
			if d.Name == "" {
				continue
			}
			d.Version = r.cleanVersion(d.Version)
			deps = append(deps, d)
		}
	}
	slices.SortFunc(deps, func(a, b Dependency) int {
		return cmp.Or(
			cmp.Compare(min(mfDepth(a.Source), 1), min(mfDepth(b.Source), 1)),
			cmp.Compare(a.Source, b.Source),
			cmp.Compare(mfTypeRank[a.Type], mfTypeRank[b.Type]),
			cmp.Compare(a.Name, b.Name),
			cmp.Compare(a.Version, b.Version),
		)
	})
	deps = slices.CompactFunc(deps, func(a, b Dependency) bool {
		return a.Source == b.Source && a.Type == b.Type && a.Name == b.Name
	})
	if len(deps) > mfMaxDependencies {
		r.note("manifest: %d dependencies, only the first %d listed", len(deps), mfMaxDependencies)
		deps = deps[:mfMaxDependencies]
	}
	if deps == nil {
		deps = []Dependency{}
	}
	return slices.Clip(deps)
}

// ---- entry points ----

var (
	mfFuncMain  = regexps.MustCompile(`(?m)^func main\(\)`)
	mfRootEntry = map[string]bool{
		"manage.py": true, "app.py": true, "main.py": true,
		"index.js": true, "server.js": true, "index.ts": true, "server.ts": true,
	}
)

func (r *mfReader) entryPoints(infos []*mfInfo) []string {
	found := map[string]bool{}
	for _, in := range infos {
		for _, p := range in.entries {
			if p != "" && r.exists(p) {
				found[p] = true
			}
		}
	}
	// cmd/<name>/ directories that hold a main.go.
	cmdMain := map[string]bool{}
	for _, p := range r.paths {
		if path.Base(p) == "main.go" {
			cmdMain[mfDir(p)] = true
		}
	}
	for _, p := range r.paths {
		base := path.Base(p)
		dir := mfDir(p)
		d := mfDepth(p)
		if mfSkipped(p) || mfInExamples(p) {
			continue
		}
		switch {
		case base == "main.go" && d <= mfMaxEntryDepth:
			if r.goPackageMain(p, false) {
				found[p] = true
			}
		case strings.HasSuffix(base, ".go") && !strings.HasSuffix(base, "_test.go") &&
			d == 2 && strings.HasPrefix(p, "cmd/") && !cmdMain[dir]:
			// cmd/<name>/<name>.go: the command's main file when it has no main.go.
			if r.goPackageMain(p, true) {
				found[p] = true
				cmdMain[dir] = true
			}
		case base == "__main__.py" && d <= mfMaxEntryDepth:
			found[p] = true
		case mfRootEntry[base] && (dir == "" || dir == "src"):
			found[p] = true
		case d == 2 && strings.HasPrefix(p, "src/bin/") && strings.HasSuffix(base, ".rs"),
			d == 3 && strings.HasPrefix(p, "src/bin/") && base == "main.rs":
			found[p] = true // Cargo's automatic binaries
		}
	}
	out := mfSortedKeys(found)
	if out == nil {
		out = []string{}
	}
	return out
}

// mfInExamples reports whether p lies in an examples directory: its mains
// are demonstrations, not the project's entry points.
func mfInExamples(p string) bool {
	dirs := strings.Split(p, "/")
	for _, d := range dirs[:len(dirs)-1] {
		switch d {
		case "example", "examples", "_examples":
			return true
		}
	}
	return false
}

// goPackageMain reports whether the Go file p is in package main (and, with
// needFunc, declares func main). A main.go that may not be read is taken as
// an entry point by its name.
func (r *mfReader) goPackageMain(p string, needFunc bool) bool {
	if r.goReads >= mfMaxEntryReads {
		return !needFunc
	}
	r.goReads++
	data, ok := r.read(p, mfMaxManifestBytes, false)
	if !ok {
		return !needFunc
	}
	f, err := parser.ParseFile(token.NewFileSet(), p, data, parser.PackageClauseOnly)
	if err != nil || f.Name == nil || f.Name.Name != "main" {
		return false
	}
	return !needFunc || mfFuncMain().Match(data)
}

// ---- build system and tests ----

func (r *mfReader) buildSystem(infos []*mfInfo, rootKinds []string) string {
	rootFile := func(names ...string) bool {
		for _, n := range names {
			if r.exists(n) {
				return true
			}
		}
		return false
	}
	hasMake := rootFile("Makefile", "makefile", "GNUmakefile")
	// With several root manifests a Makefile is what ties them together.
	if len(rootKinds) > 1 && hasMake {
		return "make"
	}
	for _, k := range rootKinds {
		if bs := r.kindBuildSystem(infos, k); bs != "" {
			return bs
		}
	}
	switch {
	case hasMake:
		return "make"
	case rootFile("CMakeLists.txt"):
		return "cmake"
	}
	return ""
}

// kindBuildSystem is the build system of the first manifest directory (root
// first) of kind k.
func (r *mfReader) kindBuildSystem(infos []*mfInfo, k string) string {
	first := ""
	found := false
	for _, in := range infos {
		if in.kind == k {
			first, found = in.dir, true
			break
		}
	}
	if !found {
		return ""
	}
	if k == "node" {
		// The lockfile names the package manager.
		for _, lock := range []struct{ file, tool string }{
			{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"bun.lockb", "bun"}, {"bun.lock", "bun"}, {"package-lock.json", "npm"},
		} {
			if r.exists(mfJoin(first, lock.file)) {
				return lock.tool
			}
		}
	}
	var names []string
	for _, in := range infos {
		if in.kind == k && in.dir == first {
			names = append(names, in.base)
			if in.buildSystem != "" && (k != "python" || in.base == "pyproject.toml") {
				return in.buildSystem
			}
		}
	}
	switch k {
	case "go":
		return "go"
	case "node":
		return "npm"
	case "rust":
		return "cargo"
	case "java":
		if slices.Contains(names, "pom.xml") {
			return "maven"
		}
		return "gradle"
	case "python":
		switch {
		case r.exists(mfJoin(first, "poetry.lock")):
			return "poetry"
		case r.exists(mfJoin(first, "uv.lock")):
			return "uv"
		case slices.Contains(names, "setup.py") || slices.Contains(names, "setup.cfg"):
			return "setuptools"
		case slices.Contains(names, "Pipfile"):
			return "pipenv"
		}
		return "pip"
	}
	return ""
}

// mfNodeTests are the JavaScript test runners looked for, in this order.
var mfNodeTests = []string{"vitest", "jest", "mocha", "jasmine", "ava"}

func (r *mfReader) testFramework(infos []*mfInfo, rootKinds []string) string {
	depNames := map[string]map[string]bool{} // kind → names
	for _, in := range infos {
		for _, d := range in.deps {
			if depNames[in.kind] == nil {
				depNames[in.kind] = map[string]bool{}
			}
			depNames[in.kind][strings.ToLower(d.Name)] = true
		}
	}
	var goTests, pyConf, javaTests bool
	for _, p := range r.paths {
		if mfSkipped(p) {
			continue
		}
		base := path.Base(p)
		switch {
		case strings.HasSuffix(base, "_test.go"):
			goTests = true
		case base == "pytest.ini" || base == "conftest.py":
			pyConf = true
		case strings.HasPrefix(p, "src/test/java/") || strings.Contains(p, "/src/test/java/"):
			javaTests = true
		}
	}
	hasKind := map[string]bool{}
	for _, in := range infos {
		hasKind[in.kind] = true
	}
	for _, k := range mfOrderedKinds(rootKinds) {
		switch k {
		case "go":
			if goTests {
				return "go test"
			}
		case "node":
			for _, t := range mfNodeTests {
				if depNames["node"][t] {
					return t
				}
			}
		case "python":
			if depNames["python"]["pytest"] || pyConf || slices.ContainsFunc(infos, func(in *mfInfo) bool { return in.pytest }) {
				return "pytest"
			}
		case "rust":
			if hasKind["rust"] {
				return "cargo test"
			}
		case "java":
			for name := range depNames["java"] {
				if strings.Contains(name, "testng") {
					return "testng"
				}
			}
			for name := range depNames["java"] {
				if strings.Contains(name, "junit") {
					return "junit"
				}
			}
			if hasKind["java"] && javaTests {
				return "junit"
			}
		}
	}
	return ""
}

// ---- purpose ----

func (r *mfReader) purpose(infos []*mfInfo) string {
	type readme struct {
		path string
		rank int
	}
	var cands []readme
	for _, p := range r.paths {
		if strings.Contains(p, "/") {
			continue
		}
		lower := strings.ToLower(p)
		for i, name := range []string{"readme.md", "readme.markdown", "readme.rst", "readme.txt", "readme"} {
			if lower == name {
				cands = append(cands, readme{p, i})
			}
		}
	}
	slices.SortFunc(cands, func(a, b readme) int { return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.path, b.path)) })
	// A README's descriptive paragraph wins; a root manifest's description
	// comes before a README's short or HTML-only text.
	fallback := ""
	for _, c := range cands {
		data, ok := r.text(c.path, mfMaxReadmeBytes)
		if !ok {
			continue
		}
		if len(data) > mfReadmeScanBytes {
			data = data[:mfReadmeScanBytes]
		}
		text := strings.ToValidUTF8(string(data), "\uFFFD")
		best, short := mfReadmePurpose(text, strings.HasSuffix(strings.ToLower(c.path), ".rst"))
		if best != "" {
			return best
		}
		fallback = cmp.Or(fallback, short)
	}
	for _, k := range mfKindOrder {
		for _, in := range infos {
			if in.depth == 0 && in.kind == k && in.description != "" {
				return strings.Join(strings.Fields(in.description), " ")
			}
		}
	}
	return fallback
}

var (
	mfHTMLComment  = regexps.MustCompile(`(?s)<!--.*?-->`)
	mfATXHeading   = regexps.MustCompile(`^(#{1,6})(\s|$)`)
	mfListItem     = regexps.MustCompile(`^([-*+]|\d{1,9}[.)])(\s|$)`)
	mfRefDef       = regexps.MustCompile(`^\[[^\]]+\]:\s*\S`)
	mfRSTField     = regexps.MustCompile(`^:[^:\s][^:]*:(\s|$)`)
	mfHTMLHeading  = regexps.MustCompile(`(?i)<h[1-6][\s>]`)
	mfImage        = regexps.MustCompile(`!\[[^\]]*\]\([^)]*\)|!\[[^\]]*\]\[[^\]]*\]`)
	mfEmptyLink    = regexps.MustCompile(`\[\s*\]\([^)]*\)|\[\s*\]\[[^\]]*\]`)
	mfLink         = regexps.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	mfRefLink      = regexps.MustCompile(`\[([^\]]+)\]\[[^\]]*\]`)
	mfFootnote     = regexps.MustCompile(`\[\^[^\]]*\]`)
	mfAutolink     = regexps.MustCompile(`<((?:https?|mailto|ftp):[^>\s]+)>`)
	mfTag          = regexps.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>`)
	mfRSTLink      = regexps.MustCompile("`([^`<]+?)\\s*<[^>]*>`_{1,2}")
	mfRSTRole      = regexps.MustCompile(":[A-Za-z][\\w:.+-]*:`([^`]+)`")
	mfRSTSubst     = regexps.MustCompile(`\|[^|\s][^|]*[^|\s]?\|_{0,2}`)
	mfRSTRef       = regexps.MustCompile("`([^`]+)`_{1,2}")
	mfInlineCode   = regexps.MustCompile("`+([^`]+?)`+")
	mfBold         = regexps.MustCompile(`\*\*([^*]+)\*\*|__([^_]+)__`)
	mfItalicStar   = regexps.MustCompile(`(^|[^\w*])\*([^*\s](?:[^*]*[^*\s])?)\*([^\w*]|$)`)
	mfItalicUnder  = regexps.MustCompile(`(^|[^\w])_([^_\s](?:[^_]*[^_\s])?)_([^\w]|$)`)
	mfStrike       = regexps.MustCompile(`~~([^~]+)~~`)
	mfDecorPunct   = "=-`:'\"~^_*+#<>"
	mfAlertMarker  = regexps.MustCompile(`^\[![A-Za-z]+\]`)
	mfLinkOnlyLine = regexps.MustCompile(`\[[^\]]*\]\([^)]*\)|\[[^\]]*\]\[[^\]]*\]`)
)

// mfReadmeParagraph returns the README's first descriptive paragraph
// (markdown or, with rst, reStructuredText) as plain text capped at 300
// characters, or, when it has none, its first short one (see mfReadmePurpose).
func mfReadmeParagraph(text string, rst bool) string {
	best, fallback := mfReadmePurpose(text, rst)
	return mfCapWords(cmp.Or(best, fallback), mfMaxPurpose)
}

// mfReadmePurpose finds the first descriptive paragraph of a README. It
// skips front matter, headings, badges and images, HTML blocks and HTML-only
// lines, HTML comments, code fences and indented code, lists, tables, link
// definitions, rst directives and navigation lines ("Docs | Blog"); whole
// sections whose heading is not about what the project is (Installation,
// License, Sponsors, Table of contents, a release announcement…); and
// paragraphs that announce a release ("v2 is out", "We're excited…",
// "NEWS: …") or only point elsewhere ("Visit x.io for the full
// documentation"). Links become their text, emphasis and inline code marks
// are removed.
//
// best is the first such paragraph of at least mfMinPurposeWords words.
// fallback, when there is no best, is the first shorter one, else the text
// of the first HTML block that passes the same filters; both are "" when
// there is none. Both are whole: the caller caps them at mfMaxPurpose.
func mfReadmePurpose(text string, rst bool) (best, fallback string) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.TrimPrefix(text, "\uFEFF")
	text = mfHTMLComment().ReplaceAllString(text, "")
	lines := strings.Split(text, "\n")
	refs := map[string]bool{} // labels of link reference definitions
	for _, l := range lines {
		if m := mfRefDefLabel().FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			refs[strings.ToLower(m[1])] = true
		}
	}
	i := 0
	if !rst && len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for j := 1; j < len(lines) && j < 100; j++ {
			if t := strings.TrimSpace(lines[j]); t == "---" || t == "..." {
				i = j + 1
				break
			}
		}
	}
	var short, htmlText string
	var para []string
	// skipLevel > 0: inside a section that is skipped, until a heading of
	// this level or higher (or a thematic break).
	skipLevel := 0
	heading := func(level int, title string) {
		if skipLevel > 0 && level > skipLevel {
			return
		}
		skipLevel = 0
		if mfSkipSection(mfCleanProse(title, rst)) {
			skipLevel = level
		}
	}
	// consider judges a paragraph; it returns the paragraph when it is the answer.
	consider := func(raw string, html bool) string {
		if skipLevel > 0 {
			return ""
		}
		s := mfCleanProse(mfShortcutRefs(raw, refs), rst)
		if !mfHasWord(s) || mfNavigation(s) || mfNotDescriptive(s) {
			return ""
		}
		// Judged as it will read capped; returned whole, for the caller
		// to redact before it caps.
		switch {
		case html:
			if htmlText == "" {
				htmlText = s
			}
		case mfWords(mfCapWords(s, mfMaxPurpose)) >= mfMinPurposeWords:
			return s
		case short == "":
			short = s
		}
		return ""
	}
	flush := func() string {
		if len(para) == 0 {
			return ""
		}
		s := consider(strings.Join(para, " "), false)
		para = nil
		return s
	}
	var fenceChar byte
	fenceLen := 0
	inDirective := false
	inAlert := false
	var htmlBlock []string // lines of the HTML block being read
	htmlLevel := 0         // its heading level when it opens with <h1>…<h6>
	endHTML := func() {
		if htmlBlock == nil {
			return
		}
		body := strings.Join(htmlBlock, " ")
		if htmlLevel > 0 {
			heading(htmlLevel, body)
		} else {
			consider(body, true)
		}
		htmlBlock, htmlLevel = nil, 0
	}
	for ; i < len(lines); i++ {
		raw := strings.TrimRight(lines[i], " \t")
		t := strings.TrimSpace(raw)
		if fenceLen > 0 {
			if c, n := mfFence(t); c == fenceChar && n >= fenceLen && strings.Trim(t, string(c)) == "" {
				fenceLen = 0
			}
			continue
		}
		if htmlBlock != nil {
			if t != "" {
				htmlBlock = append(htmlBlock, t)
				continue
			}
			endHTML()
		}
		if c, n := mfFence(t); n > 0 && (!rst || c == '`') && !strings.HasPrefix(raw, "    ") {
			if s := flush(); s != "" {
				return s, ""
			}
			fenceChar, fenceLen = c, n
			continue
		}
		if inDirective {
			if t == "" || raw[0] == ' ' || raw[0] == '\t' {
				continue
			}
			inDirective = false
		}
		if t == "" {
			if s := flush(); s != "" {
				return s, ""
			}
			continue
		}
		if rst && (strings.HasPrefix(raw, ".. ") || raw == "..") {
			if s := flush(); s != "" {
				return s, ""
			}
			inDirective = true
			continue
		}
		indented := strings.HasPrefix(raw, "    ") || strings.HasPrefix(raw, "\t") || (rst && (raw[0] == ' '))
		if indented && len(para) == 0 {
			continue // code block, literal block or block quote
		}
		if c, ok := mfDecoration(t); ok {
			switch {
			case len(para) > 0 && (rst || c == '=' || c == '-'):
				// An underlined (setext / rst) heading.
				level := 2
				if c == '=' || rst {
					level = 1
				}
				heading(level, strings.Join(para, " "))
				para = nil
			case rst:
				// An rst overline.
			default:
				// A thematic break ends a skipped section, as the next
				// heading would.
				if s := flush(); s != "" {
					return s, ""
				}
				skipLevel = 0
			}
			continue
		}
		if !rst {
			quoted := strings.HasPrefix(t, ">")
			if !quoted {
				inAlert = false
			}
			for strings.HasPrefix(t, ">") {
				t = strings.TrimSpace(t[1:])
			}
			if inAlert {
				continue // the body of a GitHub alert (> [!NOTE]) is no description
			}
			if t == "" || mfAlertMarker().MatchString(t) {
				if s := flush(); s != "" {
					return s, ""
				}
				inAlert = quoted && t != ""
				continue
			}
		}
		if m := mfHTMLBlockStart().FindStringSubmatch(t); m != nil && !rst {
			if s := flush(); s != "" {
				return s, ""
			}
			htmlBlock = []string{t}
			if tag := strings.ToLower(m[1]); len(tag) == 2 && tag[0] == 'h' && tag[1] >= '1' && tag[1] <= '6' {
				htmlLevel = int(tag[1] - '0')
			}
			continue
		}
		if m := mfATXHeading().FindStringSubmatch(t); m != nil && !rst {
			if s := flush(); s != "" {
				return s, ""
			}
			heading(len(m[1]), strings.TrimRight(strings.TrimSpace(t[len(m[0]):]), "# "))
			continue
		}
		nonProse := mfListItem().MatchString(t) ||
			strings.HasPrefix(t, "|") ||
			mfRefDef().MatchString(t) ||
			(rst && mfRSTField().MatchString(t)) ||
			mfHTMLHeading().MatchString(t)
		if !nonProse && len(para) == 0 {
			// Badges, images, navigation links or HTML without text.
			bare := mfTag().ReplaceAllString(mfLinkOnlyLine().ReplaceAllString(mfImage().ReplaceAllString(t, ""), ""), "")
			if rst {
				bare = mfRSTSubst().ReplaceAllString(bare, "")
			}
			nonProse = !mfHasWord(bare)
		}
		if nonProse {
			if s := flush(); s != "" {
				return s, ""
			}
			continue
		}
		para = append(para, t)
	}
	endHTML()
	if s := flush(); s != "" {
		return s, ""
	}
	return "", cmp.Or(short, htmlText)
}

// mfMinPurposeWords is the fewest words a descriptive paragraph has; a
// shorter one ("Contents", "Why choose it?") is taken only when there is
// nothing longer.
const mfMinPurposeWords = 4

var (
	mfRefDefLabel    = regexps.MustCompile(`^\[([^\]^][^\]]*)\]:\s*\S`)
	mfLabelledURL    = regexps.MustCompile(`^[^:]{1,40}:\s*\S+://\S+$`)
	mfShortcutRef    = regexps.MustCompile(`\[([^\[\]]+)\]`)
	mfHTMLBlockStart = regexps.MustCompile(`(?i)^</?(address|article|aside|blockquote|body|center|details|dialog|dd|div|dl|dt|figcaption|figure|footer|form|h[1-6]|header|hr|html|iframe|legend|li|main|nav|ol|p|picture|section|summary|table|tbody|td|tfoot|th|thead|title|tr|ul)(\s|/?>|$)`)
	// mfSkipHeading matches the titles of README sections that do not say
	// what the project is.
	mfSkipHeading = regexps.MustCompile(`(?i)^(table of contents|contents|toc|install|installation|installing|setup|getting started|quick ?start|usage|examples?|license|licence|licensing|contributing|contributors?|contributions?|how to contribute|sponsors?|sponsorship|backers|supporters|donate|donations?|funding|support|changelog|change ?log|news|release notes|releases?|what'?s new|requirements|prerequisites|build|building|testing|tests|development|security|code of conduct|acknowledge?ments|credits|authors|maintainers|team|status|badges|documentation|docs|links|community|faq|roadmap|benchmarks?)\b`)
	// mfAnnouncement matches a release announcement: in a heading or as the
	// first sentence of a paragraph.
	mfAnnouncement = regexps.MustCompile(`(?i)(\bv?\d+(\.\d+)+\S*\s+(is|has\s+been)\s+(now\s+)?(officially\s+)?(out|available|released|here|live)\b|\b(version|release)\s+\S+\s+(is|has\s+been)\s+(now\s+)?(out|available|released|here|live)\b|\bis\s+(now\s+)?out\b|\b(has\s+been|just|is\s+now)\s+released\b|^announc(ing|ement)\b|\bwe(\s+are|'re|’re)\s+(very\s+|so\s+)?(excited|happy|pleased|thrilled|proud|glad|delighted)\b|\brelease\s+announcement\b|^(this|the\s+latest|the\s+new)\s+release\b|^(news|update|announcement|breaking|important|notice|note|attention|warning|caution|heads[- ]up|psa|deprecated|deprecation( notice)?)\s*[:!])`)
	// mfPointer matches a sentence that only sends the reader elsewhere.
	mfPointer = regexps.MustCompile(`(?i)^(please\s+)?(visit|see|read|check\s+out|go\s+to|head\s+(over\s+)?to|refer\s+to|browse|find|look\s+at|for\s+(the\s+)?(full|complete|more|detailed|latest)?\s*(documentation|docs|details|information|info|examples|guides?))\b.*\b(documentation|docs|website|site|guides?|examples|tutorials?|wiki|homepage|home page|blog|details|information|info|manual|reference)\b`)
)

// mfShortcutRefs turns markdown's shortcut and collapsed reference links
// ("[WSGI]", "[WSGI][]") whose label is defined in the document into their
// text; other bracketed text stays as written.
func mfShortcutRefs(s string, refs map[string]bool) string {
	if len(refs) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range mfShortcutRef().FindAllStringIndex(s, -1) {
		label := s[m[0]+1 : m[1]-1]
		// "[text](url)", "[text][ref]", "![alt]" are links and images, not
		// shortcut references; mfCleanProse handles them.
		full := m[1] < len(s) && (s[m[1]] == '(' || s[m[1]] == '[' && !strings.HasPrefix(s[m[1]:], "[]"))
		if full || m[0] > 0 && (s[m[0]-1] == ']' || s[m[0]-1] == '!') || !refs[strings.ToLower(label)] {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(label)
		last = m[1]
		if strings.HasPrefix(s[last:], "[]") {
			last += 2
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// mfSkipSection reports whether a section under this heading is skipped.
func mfSkipSection(title string) bool {
	t := strings.TrimLeftFunc(title, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) })
	return mfSkipHeading().MatchString(t) || mfAnnouncement().MatchString(t)
}

// mfNotDescriptive reports a paragraph whose first sentence announces a
// release or only points elsewhere.
func mfNotDescriptive(s string) bool {
	first := mfFirstSentence(strings.TrimLeftFunc(s, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }))
	return mfAnnouncement().MatchString(first) || mfPointer().MatchString(first) || mfLabelledURL().MatchString(s)
}

// mfFirstSentence is s up to its first sentence end (". ", "! ", "? ").
func mfFirstSentence(s string) string {
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i+1] == ' ' {
			return s[:i+1]
		}
	}
	return s
}

// mfNavigation reports a line of short items separated by "|", "•" or "·"
// (language switchers, link bars).
func mfNavigation(s string) bool {
	parts := strings.FieldsFunc(s, func(c rune) bool { return c == '|' || c == '•' || c == '·' })
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if mfWords(p) > 4 {
			return false
		}
	}
	return true
}

// mfWords counts the words of s that hold a letter or digit.
func mfWords(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		if mfHasWord(w) {
			n++
		}
	}
	return n
}

// mfFence returns the fence character and run length when t opens or closes a
// code fence.
func mfFence(t string) (byte, int) {
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return 0, 0
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return 0, 0
	}
	return t[0], n
}

// mfDecoration reports a line made of one repeated punctuation character: a
// heading underline or a thematic break.
func mfDecoration(t string) (byte, bool) {
	if len(t) < 2 || !strings.ContainsRune(mfDecorPunct, rune(t[0])) {
		return 0, false
	}
	for i := 1; i < len(t); i++ {
		if t[i] != t[0] {
			return 0, false
		}
	}
	return t[0], true
}

func mfHasWord(s string) bool {
	for _, c := range s {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			return true
		}
	}
	return false
}

// mfCleanProse turns one paragraph of markdown or rst into plain text.
func mfCleanProse(s string, rst bool) string {
	if rst {
		s = mfRSTLink().ReplaceAllString(s, "$1")
		s = mfRSTRole().ReplaceAllString(s, "$1")
		s = mfRSTSubst().ReplaceAllString(s, "")
		s = mfRSTRef().ReplaceAllString(s, "$1")
	}
	s = mfImage().ReplaceAllString(s, "")
	s = mfEmptyLink().ReplaceAllString(s, "")
	s = mfLink().ReplaceAllString(s, "$1")
	s = mfRefLink().ReplaceAllString(s, "$1")
	s = mfFootnote().ReplaceAllString(s, "")
	s = mfAutolink().ReplaceAllString(s, "$1")
	s = mfTag().ReplaceAllString(s, "")
	s = mfInlineCode().ReplaceAllString(s, "$1")
	s = mfBold().ReplaceAllString(s, "$1$2")
	for range 2 { // adjacent matches share a boundary character
		s = mfItalicStar().ReplaceAllString(s, "$1$2$3")
		s = mfItalicUnder().ReplaceAllString(s, "$1$2$3")
	}
	s = mfStrike().ReplaceAllString(s, "$1")
	s = strings.ReplaceAll(s, "\\\n", " ")
	s = html.UnescapeString(s)
	s = mfBackslashEscape(s)
	return strings.Join(strings.Fields(s), " ")
}

// mfBackslashEscape removes markdown's backslash escapes (\* → *) and hard
// line-break backslashes.
func mfBackslashEscape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_{}[]()#+-.!<>|~", s[i+1]) >= 0 {
			i++
		} else if s[i] == '\\' && (i+1 == len(s) || s[i+1] == ' ') {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mfCapWords caps s at max runes, cutting at a word boundary and ending with
// "…" (the ellipsis counts towards max).
func mfCapWords(s string, max int) string {
	rs := []rune(s)
	if len(rs) <= max {
		return s
	}
	cut := rs[:max-1]
	for j := len(cut) - 1; j > max/2; j-- {
		if unicode.IsSpace(cut[j]) {
			cut = cut[:j]
			break
		}
	}
	out := strings.TrimRightFunc(string(cut), func(c rune) bool {
		return unicode.IsSpace(c) || strings.ContainsRune(",;:-–—([{/", c)
	})
	return out + "…"
}

// ---- structure ----

// mfLanguages maps a lower-case extension to a language name and, for
// programming languages, the project type it suggests.
var mfLanguages = map[string]struct{ name, project string }{
	".go": {"Go", "go"},
	".js": {"JavaScript", "node"}, ".mjs": {"JavaScript", "node"}, ".cjs": {"JavaScript", "node"}, ".jsx": {"JavaScript", "node"},
	".ts": {"TypeScript", "node"}, ".tsx": {"TypeScript", "node"}, ".mts": {"TypeScript", "node"}, ".cts": {"TypeScript", "node"},
	".vue": {"Vue", "node"}, ".svelte": {"Svelte", "node"},
	".py": {"Python", "python"}, ".pyi": {"Python", "python"},
	".rs":   {"Rust", "rust"},
	".java": {"Java", "java"}, ".kt": {"Kotlin", "kotlin"}, ".kts": {"Kotlin", "kotlin"}, ".scala": {"Scala", "scala"},
	".rb": {"Ruby", "ruby"}, ".php": {"PHP", "php"}, ".cs": {"C#", "dotnet"}, ".fs": {"F#", "dotnet"},
	".c": {"C", "c"}, ".h": {"C", "c"},
	".cc": {"C++", "cpp"}, ".cpp": {"C++", "cpp"}, ".cxx": {"C++", "cpp"}, ".hpp": {"C++", "cpp"}, ".hh": {"C++", "cpp"},
	".m": {"Objective-C", "objc"}, ".swift": {"Swift", "swift"}, ".dart": {"Dart", "dart"},
	".ex": {"Elixir", "elixir"}, ".exs": {"Elixir", "elixir"}, ".erl": {"Erlang", "erlang"},
	".hs": {"Haskell", "haskell"}, ".lua": {"Lua", "lua"}, ".pl": {"Perl", "perl"}, ".pm": {"Perl", "perl"},
	".r": {"R", "r"}, ".jl": {"Julia", "julia"}, ".zig": {"Zig", "zig"}, ".clj": {"Clojure", "clojure"},
	".sh": {"Shell", "shell"}, ".bash": {"Shell", "shell"}, ".zsh": {"Shell", "shell"}, ".ps1": {"PowerShell", "powershell"},
	".tf": {"HCL", "terraform"}, ".sql": {"SQL", ""}, ".proto": {"Protocol Buffers", ""},
	".html": {"HTML", ""}, ".htm": {"HTML", ""}, ".css": {"CSS", ""}, ".scss": {"SCSS", ""}, ".sass": {"Sass", ""}, ".less": {"Less", ""},
	".md": {"Markdown", ""}, ".markdown": {"Markdown", ""}, ".rst": {"reStructuredText", ""},
	".json": {"JSON", ""}, ".yaml": {"YAML", ""}, ".yml": {"YAML", ""}, ".toml": {"TOML", ""}, ".xml": {"XML", ""},
}

type mfCount struct {
	name string
	n    int
}

// mfTop sorts counts largest first, ties by name.
func mfTop(m map[string]int) []mfCount {
	out := make([]mfCount, 0, len(m))
	for _, k := range mfSortedKeys(m) {
		out = append(out, mfCount{k, m[k]})
	}
	slices.SortStableFunc(out, func(a, b mfCount) int { return cmp.Compare(b.n, a.n) })
	return out
}

// mfLanguageCounts counts the project's own files (not dependency trees) by
// language.
func mfLanguageCounts(paths []string, projectTypes bool) map[string]int {
	counts := map[string]int{}
	for _, p := range paths {
		if mfSkipped(p) {
			continue
		}
		lang, ok := mfLanguages[strings.ToLower(path.Ext(p))]
		if !ok {
			continue
		}
		if projectTypes {
			if lang.project != "" {
				counts[lang.project]++
			}
		} else {
			counts[lang.name]++
		}
	}
	return counts
}

func mfProjectTypeByExtension(paths []string) string {
	if top := mfTop(mfLanguageCounts(paths, true)); len(top) > 0 {
		return top[0].name
	}
	return ProjectUnknown
}

func mfPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// mfStructure describes the tree in one or two sentences.
func mfStructure(paths []string, projectType string, kindManifests []string) string {
	if len(paths) == 0 {
		return "The tree is empty."
	}
	dirs := map[string]bool{}
	top := map[string]int{}
	rootFiles := 0
	for _, p := range paths {
		if !strings.Contains(p, "/") {
			rootFiles++
			continue
		}
		first, _, _ := strings.Cut(p, "/")
		top[first+"/"]++
		for d := mfDir(p); d != ""; d = mfDir(d) {
			dirs[d] = true
		}
	}
	var b strings.Builder
	if projectType == ProjectMixed {
		fmt.Fprintf(&b, "Mixed project (%s) with ", strings.Join(kindManifests, ", "))
	}
	fmt.Fprintf(&b, "%d %s", len(paths), mfPlural(len(paths), "file", "files"))
	if len(dirs) == 0 {
		b.WriteString(", all at the root.")
	} else {
		fmt.Fprintf(&b, " in %d %s; top-level directories by file count: ", len(dirs), mfPlural(len(dirs), "directory", "directories"))
		counts := mfTop(top)
		for i, c := range counts {
			if i == 8 {
				fmt.Fprintf(&b, ", and %d more", len(counts)-8)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (%d)", c.name, c.n)
		}
		if rootFiles > 0 {
			fmt.Fprintf(&b, "; %d %s at the root", rootFiles, mfPlural(rootFiles, "file", "files"))
		}
		b.WriteString(".")
	}
	if langs := mfTop(mfLanguageCounts(paths, false)); len(langs) > 0 {
		b.WriteString(" Languages by file count: ")
		for i, c := range langs {
			if i == 5 {
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (%d)", c.name, c.n)
		}
		b.WriteString(".")
	}
	return b.String()
}
