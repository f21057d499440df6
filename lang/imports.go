package lang

import (
	"path"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// Resolver maps import specifiers to files of the repository. It knows only
// the packable files (never an excluded one) and their paths; Go module
// paths come from go.mod files.
type Resolver struct {
	files map[string]bool
	// dirs maps a directory ("" for the root) to its packable files, sorted.
	dirs map[string][]string
	// goMods are the Go modules, longest module path first.
	goMods []goModule
	// suffixes maps "a/b/C.java" path suffixes to Java files.
	suffixes map[string][]string
	// cargo are the directories holding a Cargo.toml.
	cargo []string
	// list, when set, lists a directory's files on demand: the resolver
	// then knows only what it has looked at (NewLazyResolver).
	list   func(dir string) []string
	listed map[string]bool
}

type goModule struct {
	dir, path string
}

// NewResolver builds a resolver over the packable files. goMod returns the
// text of a go.mod file ("" when it cannot).
func NewResolver(paths []string, goMod func(p string) string) *Resolver {
	r := &Resolver{files: make(map[string]bool, len(paths)), dirs: map[string][]string{}, suffixes: map[string][]string{}}
	for _, p := range paths {
		r.files[p] = true
		d := DirOf(p)
		r.dirs[d] = append(r.dirs[d], p)
		base := path.Base(p)
		switch {
		case base == "go.mod":
			if mp := modfile.ModulePath([]byte(goMod(p))); mp != "" {
				r.goMods = append(r.goMods, goModule{d, mp})
			}
		case base == "Cargo.toml":
			r.cargo = append(r.cargo, d)
		case strings.HasSuffix(p, ".java"):
			parts := strings.Split(p, "/")
			for i := range parts {
				suf := strings.Join(parts[i:], "/")
				r.suffixes[suf] = append(r.suffixes[suf], p)
			}
		}
	}
	for d := range r.dirs {
		sort.Strings(r.dirs[d])
	}
	r.sortModules()
	return r
}

// DirOf is the directory of a path, "" for the root.
func DirOf(p string) string {
	d := path.Dir(p)
	if d == "." {
		return ""
	}
	return d
}

func joinDir(dir, rel string) string {
	if dir == "" {
		return path.Clean(rel)
	}
	return path.Clean(dir + "/" + rel)
}

// Unit is what an import resolves to: a Go package (a directory, key
// "dir/") or one file (key = its path), with the files it stands for.
type Unit struct {
	Key   string
	Files []string
}

// Resolve returns the in-repository units the file from imports, sorted by
// key, once each.
func (r *Resolver) Resolve(from string, f *Facts) []Unit {
	if f == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []Unit
	add := func(u Unit) {
		if u.Key == "" || len(u.Files) == 0 || seen[u.Key] || u.Key == from {
			return
		}
		seen[u.Key] = true
		out = append(out, u)
	}
	file := func(p string) {
		if r.has(p) && p != from {
			add(Unit{p, []string{p}})
		}
	}
	for _, ref := range f.refs {
		switch f.Lang {
		case LangGo:
			add(r.goPackage(ref.spec))
		case LangJavaScript, LangTypeScript:
			if p := r.jsFile(DirOf(from), ref.spec); p != "" {
				file(p)
			}
		case LangPython:
			for _, p := range r.pyFiles(from, ref) {
				file(p)
			}
		case LangRust:
			for _, p := range r.rustFiles(from, ref) {
				file(p)
			}
		case LangJava:
			for _, p := range r.javaFiles(ref.spec) {
				file(p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// goPackage resolves a Go import path through the module paths.
func (r *Resolver) goPackage(imp string) Unit {
	for _, m := range r.goMods {
		var rel string
		switch {
		case imp == m.path:
			rel = ""
		case strings.HasPrefix(imp, m.path+"/"):
			rel = imp[len(m.path)+1:]
		default:
			continue
		}
		dir := m.dir
		if rel != "" {
			dir = joinDir(m.dir, rel)
		}
		var files []string
		for _, p := range r.dir(dir) {
			if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				files = append(files, p)
			}
		}
		key := dir + "/"
		if dir == "" {
			key = "./"
		}
		return Unit{key, files}
	}
	return Unit{}
}

var jsExts = []string{".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts", ".vue", ".svelte", ".json"}

// jsFile resolves a relative JavaScript/TypeScript specifier.
func (r *Resolver) jsFile(dir, spec string) string {
	if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") && spec != "." && spec != ".." {
		return ""
	}
	spec, _, _ = strings.Cut(spec, "?")
	base := joinDir(dir, spec)
	if strings.HasPrefix(base, "../") || base == ".." {
		return ""
	}
	if r.has(base) {
		return base
	}
	// TypeScript allows "./x.js" for x.ts.
	for _, js := range []string{".js", ".jsx", ".mjs", ".cjs"} {
		if strings.HasSuffix(base, js) {
			stem := strings.TrimSuffix(base, js)
			for _, e := range []string{".ts", ".tsx", ".mts", ".cts"} {
				if r.has(stem + e) {
					return stem + e
				}
			}
		}
	}
	for _, e := range jsExts {
		if r.has(base + e) {
			return base + e
		}
	}
	for _, e := range jsExts {
		if p := joinDir(base, "index"+e); r.has(p) {
			return p
		}
	}
	return ""
}

// pyFiles resolves a Python import: relative imports from the file's
// package, absolute ones from the root or src/.
func (r *Resolver) pyFiles(from string, ref importRef) []string {
	mod := strings.TrimLeft(ref.spec, ".")
	var bases []string
	if ref.level > 0 {
		d := DirOf(from)
		for i := 1; i < ref.level; i++ {
			if d == "" {
				return nil
			}
			d = DirOf(d)
		}
		bases = []string{d}
	} else {
		bases = []string{"", "src"}
	}
	modPath := strings.ReplaceAll(mod, ".", "/")
	var out []string
	for _, b := range bases {
		join := func(rel string) string {
			if b == "" {
				return rel
			}
			if rel == "" {
				return b
			}
			return b + "/" + rel
		}
		found := false
		// from pkg import sub: sub may be a module of pkg.
		for _, n := range ref.names {
			for _, c := range []string{join(pathJoin(modPath, n)) + ".py", join(pathJoin(modPath, n)) + "/__init__.py"} {
				if r.has(c) {
					out = append(out, c)
					found = true
				}
			}
		}
		if modPath != "" {
			for _, c := range []string{join(modPath) + ".py", join(modPath) + "/__init__.py"} {
				if r.has(c) {
					out = append(out, c)
					found = true
					break
				}
			}
		} else if !found && ref.level > 0 {
			if c := join("__init__.py"); r.has(c) {
				out = append(out, c)
				found = true
			}
		}
		if found {
			break
		}
	}
	return out
}

func pathJoin(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}

// rustFiles resolves "mod x;" and crate::/super::/self:: paths.
func (r *Resolver) rustFiles(from string, ref importRef) []string {
	dir := DirOf(from)
	base := path.Base(from)
	// The directory of the file's child modules.
	modDir := dir
	if base != "main.rs" && base != "lib.rs" && base != "mod.rs" {
		modDir = joinDir(dir, strings.TrimSuffix(base, ".rs"))
	}
	try := func(d string, segs []string) string {
		// The longest prefix of segs that names a module file.
		for n := len(segs); n > 0; n-- {
			rel := strings.Join(segs[:n], "/")
			for _, c := range []string{pathJoin(d, rel) + ".rs", pathJoin(d, rel) + "/mod.rs"} {
				c = strings.TrimPrefix(c, "/")
				if r.has(c) {
					return c
				}
			}
		}
		return ""
	}
	if ref.rustMod {
		if p := try(modDir, []string{strings.TrimPrefix(ref.spec, "mod ")}); p != "" {
			return []string{p}
		}
		return nil
	}
	segs := strings.Split(ref.spec, "::")
	if len(segs) < 2 {
		return nil
	}
	var root string
	switch segs[0] {
	case "crate":
		root = "src"
		for _, c := range r.cargo {
			if c == "" || strings.HasPrefix(from, c+"/") {
				root = pathJoin(c, "src")
				break
			}
		}
	case "self":
		root = modDir
	case "super":
		root = dir
		if base == "mod.rs" {
			root = DirOf(dir)
		}
	default:
		return nil
	}
	var clean []string
	for _, s := range segs[1:] {
		if s == "*" || s == "self" {
			continue
		}
		clean = append(clean, s)
	}
	if p := try(root, clean); p != "" && p != from {
		return []string{p}
	}
	return nil
}

// javaFiles resolves a Java import by the file path its name implies.
func (r *Resolver) javaFiles(imp string) []string {
	parts := strings.Split(imp, ".")
	if len(parts) < 2 {
		return nil
	}
	if parts[len(parts)-1] == "*" {
		dirSuffix := strings.Join(parts[:len(parts)-1], "/")
		var out []string
		for d, files := range r.dirs {
			if d == dirSuffix || strings.HasSuffix(d, "/"+dirSuffix) {
				for _, p := range files {
					if strings.HasSuffix(p, ".java") {
						out = append(out, p)
					}
				}
			}
		}
		sort.Strings(out)
		return out
	}
	// a.b.C or a.b.C.member (static import): try the longest name first.
	for n := len(parts); n >= 2; n-- {
		if files := r.suffixes[strings.Join(parts[:n], "/")+".java"]; len(files) > 0 {
			return files
		}
	}
	return nil
}

// Graph is the in-repository import graph of the packable files.
type Graph struct {
	// out maps a file to the units it imports.
	Out map[string][]Unit
	// in maps a unit key to the (non-test) files importing it, sorted.
	In map[string][]string
	// units maps a unit key to its files.
	Units map[string][]string
	Edges int
}

// BuildGraph resolves the imports of every file with facts.
func BuildGraph(r *Resolver, paths []string, facts func(p string) *Facts) *Graph {
	g := &Graph{Out: map[string][]Unit{}, In: map[string][]string{}, Units: map[string][]string{}}
	for _, p := range paths {
		us := r.Resolve(p, facts(p))
		if len(us) == 0 {
			continue
		}
		g.Out[p] = us
		test := IsTestPath(p)
		for _, u := range us {
			g.Units[u.Key] = u.Files
			g.Edges++
			if !test {
				g.In[u.Key] = append(g.In[u.Key], p)
			}
		}
	}
	for k := range g.In {
		sort.Strings(g.In[k])
	}
	return g
}

// RelatedFiles returns the files the changed files import, in the order of the
// changed files and, for each, of the units it imports.
func RelatedFiles(changed []string, imports func(p string) []Unit) []string {
	isChanged := make(map[string]bool, len(changed))
	for _, c := range changed {
		isChanged[c] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range changed {
		for _, u := range imports(c) {
			for _, p := range u.Files {
				if !seen[p] && !isChanged[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// DirFiles returns the resolver's files directly in dir ("" for the root), sorted.
func (r *Resolver) DirFiles(dir string) []string { return r.dir(dir) }

// GoModule is a Go module of the repository: its directory and module path.
type GoModule struct{ Dir, Path string }

// GoModules returns the Go modules, longest module path first.
func (r *Resolver) GoModules() []GoModule {
	out := make([]GoModule, len(r.goMods))
	for i, m := range r.goMods {
		out[i] = GoModule{m.dir, m.path}
	}
	return out
}

// NewLazyResolver builds a resolver that lists directories only as imports
// need them (a change in a large tree resolves its own imports without
// listing the tree). known are paths already at hand; list returns the
// files directly in a directory; goMod the text of a go.mod file. The Go
// modules and Cargo crates are found in the directories of known and their
// ancestors. Java imports, which resolve by path suffix anywhere, are not
// resolved this way.
func NewLazyResolver(known []string, list func(dir string) []string, goMod func(p string) string) *Resolver {
	r := NewResolver(known, goMod)
	r.list, r.listed = list, map[string]bool{}
	dirs := map[string]bool{"": true}
	for _, p := range known {
		for d := DirOf(p); d != ""; d = DirOf(d) {
			dirs[d] = true
		}
	}
	var all []string
	for d := range dirs {
		all = append(all, d)
	}
	sort.Strings(all)
	for _, d := range all {
		for _, p := range r.dir(d) {
			switch path.Base(p) {
			case "go.mod":
				if mp := modfile.ModulePath([]byte(goMod(p))); mp != "" && !r.hasModule(d) {
					r.goMods = append(r.goMods, goModule{d, mp})
				}
			case "Cargo.toml":
				if !slices.Contains(r.cargo, d) {
					r.cargo = append(r.cargo, d)
				}
			}
		}
	}
	r.sortModules()
	return r
}

// sortModules orders the modules longest path first, so that the first
// module whose path prefixes an import is the most specific one.
func (r *Resolver) sortModules() {
	sort.Slice(r.goMods, func(i, j int) bool {
		if len(r.goMods[i].path) != len(r.goMods[j].path) {
			return len(r.goMods[i].path) > len(r.goMods[j].path)
		}
		return r.goMods[i].dir < r.goMods[j].dir
	})
	sort.Slice(r.cargo, func(i, j int) bool { return len(r.cargo[i]) > len(r.cargo[j]) })
}

func (r *Resolver) hasModule(dir string) bool {
	for _, m := range r.goMods {
		if m.dir == dir {
			return true
		}
	}
	return false
}

// has reports whether p is a file the resolver knows, listing its
// directory first when the resolver is lazy.
func (r *Resolver) has(p string) bool {
	if r.files[p] {
		return true
	}
	if r.list == nil {
		return false
	}
	r.dir(DirOf(p))
	return r.files[p]
}

// dir returns the files directly in d, sorted, listing it first when the
// resolver is lazy.
func (r *Resolver) dir(d string) []string {
	if r.list != nil && !r.listed[d] {
		r.listed[d] = true
		for _, p := range r.list(d) {
			if !r.files[p] {
				r.files[p] = true
				r.dirs[d] = append(r.dirs[d], p)
			}
		}
		sort.Strings(r.dirs[d])
	}
	return r.dirs[d]
}
