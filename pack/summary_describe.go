package pack

import (
	"fmt"
	"github.com/ctxpack/ctxpack/lang"
	"path"
	"sort"
	"strings"
)

// Thresholds of the risk hotspots.
const (
	hotFuncLines    = 80   // a function this long is a complexity indicator
	hotComplexity   = 15   // cyclomatic complexity
	hotFileLines    = 1000 // a file this long
	hotFanIn        = 5    // imported by this many files
	hotFanOut       = 10   // imports this many in-repo units
	maxListed       = 40   // exports, dependencies listed per file
	maxNotable      = 12   // notable code lines per file
	maxIndicators   = 8    // indicators per hotspot
	maxRoutesListed = 60   // routes and commands per entrypoint
	snippetWidth    = 160  // characters of a quoted code line
)

// langName names the language of a path for prose ("Go", "TypeScript").
func langName(p string) string {
	if name, _, ok := lang.LanguageName(p); ok {
		return name
	}
	switch strings.ToLower(path.Base(p)) {
	case "go.mod":
		return "Go module"
	case "go.sum":
		return "Go checksum"
	case "dockerfile":
		return "Dockerfile"
	case "makefile":
		return "Makefile"
	}
	return ""
}

// capList keeps at most n entries and says how many more there were.
func capList(in []string, n int) []string {
	if len(in) <= n {
		return append([]string{}, in...)
	}
	out := append([]string{}, in[:n]...)
	return append(out, fmt.Sprintf("… and %s more", th(len(in)-n)))
}

// kindCounts counts exports by their kind word ("func", "class"…).
func kindCounts(exports []string) string {
	counts := map[string]int{}
	var order []string
	for _, e := range exports {
		kind, _, ok := strings.Cut(e, " ")
		if !ok || kind == "default" || kind == "*" {
			kind = "name"
		}
		if counts[kind] == 0 {
			order = append(order, kind)
		}
		counts[kind]++
	}
	var parts []string
	for _, k := range order {
		word := k
		switch k {
		case "func", "fn", "def":
			word = "function"
		case "async":
			word = "async function"
		case "name":
			word = "binding"
		case "use":
			word = "re-export"
		}
		parts = append(parts, count(counts[k], word, pluralWord(word)))
	}
	return strings.Join(parts, ", ")
}

func pluralWord(w string) string {
	switch {
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "x"), strings.HasSuffix(w, "ch"):
		return w + "es"
	case strings.HasSuffix(w, "y") && !strings.HasSuffix(w, "ey"):
		return w[:len(w)-1] + "ies"
	}
	return w + "s"
}

// changeNote describes a change in a few words: "modified, +12/-3 lines".
func changeNote(c *Change) string {
	s := c.Status
	if c.OldPath != "" {
		s += " from " + c.OldPath
	}
	if c.Binary {
		return s + ", binary"
	}
	return fmt.Sprintf("%s, +%s/-%s lines", s, th(c.Added), th(c.Deleted))
}

// routeFrameworks joins the frameworks of routes; a route whose framework
// the extractor found no evidence for has none.
func routeFrameworks(routes []lang.Route) string {
	var fws []string
	unknown := false
	for _, r := range routes {
		if r.Framework == "" {
			unknown = true
		} else {
			fws = append(fws, r.Framework)
		}
	}
	out := lang.SortedSet(fws)
	if unknown {
		out = append(out, "framework not identified")
	}
	return strings.Join(out, ", ")
}

// describeFile builds the KeyFileSummary of one packable file. Everything
// in it is derived from the file's (redacted) text and facts.
func (sb *summaryBuilder) describeFile(e *entry, f *lang.Facts, ch *Change) KeyFileSummary {
	p := e.file.Path
	k := KeyFileSummary{Path: p, Category: e.index.Category, Exports: []string{}, Dependencies: []string{}, NotableCode: []string{}}
	var parts []string
	if ch != nil {
		parts = append(parts, "Changed: "+changeNote(ch)+".")
	}
	language := langName(p)
	if language == "" {
		language = "Text"
	}
	desc := language + " file"
	if f.Package != "" && (f.Lang == lang.LangGo || f.Lang == lang.LangJava) {
		desc += " (package " + f.Package + ")"
	}
	// No byte count: a file's size may be withheld (withhold.go), and the
	// file index carries it when it is not.
	desc += fmt.Sprintf(", %s.", count(f.Lines, "line", "lines"))
	parts = append(parts, desc)
	if f.Doc != "" {
		parts = append(parts, "Doc: "+f.Doc)
	}
	if f.Main {
		parts = append(parts, fmt.Sprintf("Program entry point (line %s).", th(f.MainLine)))
	}
	if len(f.Exports) > 0 {
		what := "Exports"
		if f.TopLevel {
			what = "Defines"
		}
		parts = append(parts, what+" "+kindCounts(f.Exports)+".")
	}
	if len(f.Routes) > 0 {
		parts = append(parts, fmt.Sprintf("Registers %s (%s).", count(len(f.Routes), "HTTP route", "HTTP routes"), routeFrameworks(f.Routes)))
	}
	if len(f.Commands) > 0 {
		parts = append(parts, fmt.Sprintf("Declares %s.", count(len(f.Commands), "CLI command", "CLI commands")))
	}
	if f.Lang != "" {
		local := len(sb.graph.Out[p])
		in := sb.fanIn(p)
		s := fmt.Sprintf("Imports %s", count(len(f.Imports), "module", "modules"))
		if local > 0 {
			s += fmt.Sprintf(" (%s in this repository)", th(local))
		}
		if in > 0 {
			s += fmt.Sprintf("; imported by %s", count(in, "file", "files"))
		}
		parts = append(parts, s+".")
	}
	if big := largestFunc(f.Funcs); big != nil {
		parts = append(parts, fmt.Sprintf("Largest function: %s (%s, complexity %s).", big.Name, count(big.Lines(), "line", "lines"), th(big.Complexity)))
	}
	if f.ParseNote != "" {
		parts = append(parts, "Partial analysis: "+f.ParseNote+".")
	}
	k.Summary = strings.Join(parts, " ")
	k.Exports = capList(f.Exports, maxListed)
	k.Dependencies = capList(f.Imports, maxListed)

	var notable []string
	for _, s := range f.Signals {
		notable = append(notable, fmt.Sprintf("line %s: %s: %s", th(s.Line), s.What, lang.LineText(e.analysis, s.Line, snippetWidth)))
	}
	for _, r := range f.Routes {
		n := fmt.Sprintf("line %s: %s", th(r.Line), r.String())
		if r.Handler != "" {
			n += " → " + r.Handler
		}
		notable = append(notable, n)
	}
	for _, fn := range f.Funcs {
		if fn.Lines() >= hotFuncLines || fn.Complexity >= hotComplexity {
			notable = append(notable, fmt.Sprintf("function %s: lines %s–%s (%s), cyclomatic complexity %s",
				fn.Name, th(fn.Line), th(fn.EndLine), count(fn.Lines(), "line", "lines"), th(fn.Complexity)))
		}
	}
	if f.Lang == "" {
		for _, l := range lang.FirstLines(e.analysis, 6, snippetWidth) {
			notable = append(notable, fmt.Sprintf("line %s: %s", th(l.N), l.Text))
		}
	}
	k.NotableCode = capList(notable, maxNotable)
	return k
}

func largestFunc(fs []lang.Func) *lang.Func {
	var best *lang.Func
	for i := range fs {
		if best == nil || fs[i].Lines() > best.Lines() {
			best = &fs[i]
		}
	}
	return best
}

// entrypoints finds the programs, servers and libraries of the repository.
func (sb *summaryBuilder) entrypoints() []Entrypoint {
	var out []Entrypoint
	covered := map[string]bool{} // files whose routes/commands are listed
	programs := map[string]bool{}
	manifestListed := map[string]bool{}
	// Go main packages: one entry per directory, routes and commands of the package.
	goMainDirs := map[string]string{}
	for _, p := range sb.paths {
		f := sb.facts[p]
		if f != nil && f.Lang == lang.LangGo && f.Main && !lang.IsTestPath(p) {
			if _, ok := goMainDirs[lang.DirOf(p)]; !ok {
				goMainDirs[lang.DirOf(p)] = p
			}
		}
	}
	for _, p := range sb.paths {
		f := sb.facts[p]
		if f == nil || lang.IsTestPath(p) {
			continue
		}
		switch {
		case f.Lang == lang.LangGo && f.Main && goMainDirs[lang.DirOf(p)] == p:
			dir := lang.DirOf(p)
			var routes []lang.Route
			var cmds []string
			fws := map[string]bool{}
			for _, q := range sb.resolver.DirFiles(dir) {
				if g := sb.facts[q]; g != nil && g.Lang == lang.LangGo && !lang.IsTestPath(q) {
					routes = append(routes, g.Routes...)
					cmds = append(cmds, g.Commands...)
					for _, fw := range g.Frameworks {
						fws[fw] = true
					}
					covered[q] = true
				}
			}
			where := "the repository root"
			if dir != "" {
				where = dir + "/"
			}
			desc := fmt.Sprintf("Go program (package main in %s), func main at line %s", where, th(f.MainLine))
			out = append(out, sb.entry(p, desc, routes, cmds, true))
			programs[p] = true
		case f.Main && f.Lang != lang.LangGo:
			programs[p] = true
			covered[p] = true
			desc := fmt.Sprintf("%s program entry at line %s", langName(p), th(f.MainLine))
			switch {
			case f.Lang == lang.LangPython && path.Base(p) == "__main__.py":
				desc = "Python package entry (__main__.py, run with python -m)"
			case f.Lang == lang.LangPython:
				desc = fmt.Sprintf("Python script (if __name__ == \"__main__\" at line %s)", th(f.MainLine))
			case f.Lang == lang.LangJavaScript || f.Lang == lang.LangTypeScript:
				if f.MainLine == 1 {
					desc = langName(p) + " executable script (shebang)"
				} else {
					desc = fmt.Sprintf("%s script run directly (require.main === module at line %s)", langName(p), th(f.MainLine))
				}
			case f.Lang == lang.LangRust:
				desc = fmt.Sprintf("Rust binary, fn main at line %s", th(f.MainLine))
			case f.Lang == lang.LangJava:
				desc = fmt.Sprintf("Java program, public static void main at line %s", th(f.MainLine))
				if lang.HasFramework(f, "spring-boot") {
					desc = fmt.Sprintf("Spring Boot application, main at line %s", th(f.MainLine))
				}
			}
			ep := sb.entry(p, desc, f.Routes, f.Commands, true)
			if f.Lang == lang.LangPython && len(f.Commands) == 0 && ep.Type == "cli" && path.Base(p) != "__main__.py" && !lang.HasFramework(f, "argparse") && !lang.HasFramework(f, "click") && !lang.HasFramework(f, "typer") {
				ep.Type = "script"
			}
			if lang.HasFramework(f, "spring-boot") && ep.Type == "cli" {
				ep.Type = "web"
			}
			out = append(out, ep)
		}
	}
	// Files registering routes or commands that no program above lists.
	for _, p := range sb.paths {
		f := sb.facts[p]
		if f == nil || covered[p] || lang.IsTestPath(p) || len(f.Routes) == 0 && len(f.Commands) == 0 {
			continue
		}
		covered[p] = true
		var desc string
		if len(f.Routes) > 0 {
			desc = fmt.Sprintf("Registers %s with %s", count(len(f.Routes), "HTTP route", "HTTP routes"), routeFrameworks(f.Routes))
			if len(f.Commands) > 0 {
				desc += fmt.Sprintf(" and declares %s", count(len(f.Commands), "CLI command", "CLI commands"))
			}
		} else {
			desc = fmt.Sprintf("Declares %s (%s)", count(len(f.Commands), "CLI command", "CLI commands"), strings.Join(f.Frameworks, ", "))
		}
		out = append(out, sb.entry(p, desc, f.Routes, f.Commands, false))
	}
	// The manifest's entry points not found above.
	listed := map[string]bool{}
	for _, ep := range out {
		listed[ep.Path] = true
	}
	for _, p := range sb.manifest.EntryPoints {
		if listed[p] || sb.entries[p] == nil {
			continue
		}
		listed[p] = true
		manifestListed[p] = true
		typ := "script"
		if f := sb.facts[p]; f != nil && f.Lang == lang.LangGo {
			typ = "cli"
		}
		out = append(out, Entrypoint{Path: p, Type: typ, Description: "Listed as an entry point by the project manifest"})
	}
	// Libraries: when nothing of the project's own runs (only examples,
	// docs or tests do), the package roots.
	own := false
	for _, e := range out {
		own = own || sb.kind(e.Path) == ""
	}
	if !own {
		out = append(out, sb.libraries()...)
	}
	// The project's own first (examples, docs and tests after), then
	// programs, route and command files, the manifest's and the libraries;
	// by path within each (the order is the priority when parts must be
	// dropped).
	peripheral := map[string]bool{}
	for _, e := range out {
		peripheral[e.Path] = sb.kind(e.Path) != ""
	}
	rank := func(e Entrypoint) int {
		switch {
		case programs[e.Path]:
			return 0
		case e.Type == "library":
			return 3
		case manifestListed[e.Path]:
			return 2
		}
		return 1
	}
	sort.SliceStable(out, func(i, j int) bool {
		if pi, pj := peripheral[out[i].Path], peripheral[out[j].Path]; pi != pj {
			return pj
		}
		if ri, rj := rank(out[i]), rank(out[j]); ri != rj {
			return ri < rj
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// entry builds an entrypoint with its type from what it registers.
func (sb *summaryBuilder) entry(p, desc string, routes []lang.Route, cmds []string, program bool) Entrypoint {
	ep := Entrypoint{Path: p, Description: desc}
	var list []string
	seen := map[string]bool{}
	api := 0
	for _, r := range routes {
		s := r.String()
		if !seen[s] {
			seen[s] = true
			list = append(list, s)
		}
		if strings.HasPrefix(r.Path, "/api") || len(r.Path) > 2 && r.Path[1] == 'v' && r.Path[2] >= '0' && r.Path[2] <= '9' || r.Framework == "fastapi" {
			api++
		}
	}
	if len(routes) > 0 && program {
		ep.Description += fmt.Sprintf("; %s (%s)", count(len(list), "HTTP route", "HTTP routes"), routeFrameworks(routes))
	}
	if len(cmds) > 0 && program {
		ep.Description += "; " + count(len(cmds), "CLI command", "CLI commands")
	}
	for _, c := range cmds {
		s := "command " + c
		if !seen[s] {
			seen[s] = true
			list = append(list, s)
		}
	}
	switch {
	case len(routes) > 0 && api*2 >= len(routes):
		ep.Type = "api"
	case len(routes) > 0:
		ep.Type = "web"
	case program || len(cmds) > 0:
		ep.Type = "cli"
	default:
		ep.Type = "library"
	}
	if len(list) > 0 {
		ep.RoutesOrCommands = capList(list, maxRoutesListed)
	}
	return ep
}

// libraries lists package roots when the repository has no program.
func (sb *summaryBuilder) libraries() []Entrypoint {
	var out []Entrypoint
	for _, m := range sb.resolver.GoModules() {
		if p := sb.goPackageFile(m.Dir); p != "" {
			out = append(out, Entrypoint{Path: p, Type: "library", Description: "Go package " + m.Path + " (module root)"})
		}
	}
	for _, p := range sb.paths {
		base := path.Base(p)
		d := depth(p)
		switch {
		case base == "lib.rs" && (d == 1 && strings.HasPrefix(p, "src/") || strings.HasSuffix(p, "/src/lib.rs")):
			out = append(out, Entrypoint{Path: p, Type: "library", Description: "Rust library crate root"})
		case base == "__init__.py" && (d == 1 || d == 2 && strings.HasPrefix(p, "src/")) && !lang.IsTestPath(p):
			out = append(out, Entrypoint{Path: p, Type: "library", Description: "Python package " + path.Base(lang.DirOf(p))})
		case (base == "index.ts" || base == "index.js" || base == "index.mjs") && (d == 0 || d == 1 && strings.HasPrefix(p, "src/")):
			out = append(out, Entrypoint{Path: p, Type: "library", Description: langName(p) + " package entry module"})
		}
	}
	return out
}

// hotspots derives the risk hotspots with their numeric indicators. They
// are about the project's code: tests, fixtures, docs, changelogs,
// lockfiles, generated and vendored files never are one (notCode);
// examples come after the rest. Complexity, coupling and performance are
// measured on source code only; a configuration file is a hotspot only for
// the secrets redacted from it.
func (sb *summaryBuilder) hotspots() []RiskHotspot {
	type scored struct {
		h          RiskHotspot
		changed    bool
		peripheral bool
		score      int
	}
	var all []scored
	add := func(p, typ, desc string, ind []string, score int) {
		all = append(all, scored{RiskHotspot{Path: p, RiskType: typ, Description: desc, Indicators: capList(ind, maxIndicators)},
			sb.changed[p], sb.kind(p) == pathExample, score})
	}
	for _, p := range sb.paths {
		e := sb.entries[p]
		f := sb.facts[p]
		if k := sb.kind(p); k != "" && k != pathExample {
			continue
		}
		_, source, _ := lang.LanguageName(p)
		// Secrets redacted from this file: a security indicator even in config files.
		var sec []string
		if e.row.Redactions > 0 {
			sec = append(sec, fmt.Sprintf("%s redacted before packing (rules: %s)", count(e.row.Redactions, "secret", "secrets"), strings.Join(e.row.RuleIDs, ", ")))
		}
		if f == nil || !source {
			if len(sec) > 0 {
				add(p, "security", fmt.Sprintf("holds %s (redacted)", count(e.row.Redactions, "secret", "secrets")), sec, 10*len(sec))
			}
			continue
		}
		var perf []string
		kinds := map[string]int{}
		for _, s := range f.Signals {
			ind := fmt.Sprintf("%s at line %s", s.What, th(s.Line))
			if s.Kind == lang.SignalSecurity {
				sec = append(sec, ind)
				k, _, _ := strings.Cut(s.What, " (")
				kinds[k]++
			} else {
				perf = append(perf, ind)
			}
		}
		if ops := len(sec) - min(e.row.Redactions, 1); ops > 0 || e.row.Redactions > 0 {
			var what []string
			for _, k := range sortedKeys(kinds) {
				what = append(what, fmt.Sprintf("%s ×%s", k, th(kinds[k])))
			}
			var desc []string
			if ops > 0 {
				d := count(ops, "security-sensitive operation", "security-sensitive operations")
				if len(what) > 0 {
					d += ": " + strings.Join(what, "; ")
				}
				desc = append(desc, d)
			}
			if e.row.Redactions > 0 {
				desc = append(desc, fmt.Sprintf("holds %s (redacted)", count(e.row.Redactions, "secret", "secrets")))
			}
			add(p, "security", strings.Join(desc, "; "), sec, 10*len(sec))
		}
		var cx []string
		maxLines, nLong := 0, 0
		for _, fn := range f.Funcs {
			long, complex := fn.Lines() >= hotFuncLines, fn.Complexity >= hotComplexity
			if long {
				cx = append(cx, fmt.Sprintf("function %s is %s (lines %s–%s)", fn.Name, count(fn.Lines(), "line", "lines"), th(fn.Line), th(fn.EndLine)))
			}
			if complex {
				cx = append(cx, fmt.Sprintf("function %s has cyclomatic complexity %s", fn.Name, th(fn.Complexity)))
			}
			if long || complex {
				nLong++
				maxLines = max(maxLines, fn.Lines())
			}
		}
		if f.Lines >= hotFileLines {
			cx = append([]string{fmt.Sprintf("file is %s", count(f.Lines, "line", "lines"))}, cx...)
		}
		if len(cx) > 0 {
			desc := fmt.Sprintf("%s over %s lines or complexity %s", count(nLong, "function", "functions"), th(hotFuncLines), th(hotComplexity))
			if nLong == 0 {
				desc = fmt.Sprintf("large file (%s)", count(f.Lines, "line", "lines"))
			}
			add(p, "complexity", desc, cx, max(maxLines, f.Lines/10))
		}
		if len(perf) > 0 {
			add(p, "performance", count(len(perf), "performance indicator", "performance indicators"), perf, len(perf))
		}
		if out := len(sb.graph.Out[p]); out >= hotFanOut {
			add(p, "coupling", fmt.Sprintf("imports %s of this repository", count(out, "module", "modules")),
				[]string{fmt.Sprintf("imports %s in-repo modules (fan-out)", th(out))}, out)
		}
	}
	// Fan-in per unit (a Go package or a file).
	for _, key := range sortedKeys(sb.graph.In) {
		in := sb.graph.In[key]
		if len(in) < hotFanIn {
			continue
		}
		if k := sb.kind(key); k != "" && k != pathExample {
			continue
		}
		dirs := map[string]bool{}
		for _, p := range in {
			dirs[lang.DirOf(p)] = true
		}
		p := key
		desc := fmt.Sprintf("imported by %s", count(len(in), "file", "files"))
		if strings.HasSuffix(key, "/") {
			desc = fmt.Sprintf("Go package (%s) %s", count(len(sb.graph.Units[key]), "file", "files"), desc)
		}
		ind := []string{fmt.Sprintf("imported by %s in %s (fan-in)", count(len(in), "file", "files"), count(len(dirs), "directory", "directories"))}
		add(p, "coupling", desc, ind, len(in))
		if sb.changed[strings.TrimSuffix(key, "/")] {
			all[len(all)-1].changed = true
		}
	}
	rank := map[string]int{"security": 0, "complexity": 1, "coupling": 2, "performance": 3}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.changed != b.changed {
			return a.changed
		}
		if a.peripheral != b.peripheral {
			return b.peripheral
		}
		if rank[a.h.RiskType] != rank[b.h.RiskType] {
			return rank[a.h.RiskType] < rank[b.h.RiskType]
		}
		if a.score != b.score {
			return a.score > b.score
		}
		return a.h.Path < b.h.Path
	})
	out := make([]RiskHotspot, len(all))
	for i, s := range all {
		out[i] = s.h
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// fanIn is the number of (non-test) files importing p's unit.
func (sb *summaryBuilder) fanIn(p string) int {
	return len(sb.graph.In[sb.unitKey(p)])
}

// repoSummary builds seed 000's RepoSummary from the manifest, the
// structure and the facts.
func (sb *summaryBuilder) repoSummary(eps []Entrypoint, hots []RiskHotspot) *RepoSummary {
	m := sb.manifest
	rs := &RepoSummary{KeyTechnologies: []string{}, NotablePatterns: []string{}, PotentialConcerns: []string{}}

	// Languages by lines of the packable files.
	type langUse struct {
		name         string
		files, lines int
	}
	langs := map[string]*langUse{}
	totalLines := 0
	for _, p := range sb.paths {
		name := langName(p)
		f := sb.facts[p]
		if name == "" || f == nil {
			continue
		}
		l := langs[name]
		if l == nil {
			l = &langUse{name: name}
			langs[name] = l
		}
		l.files++
		l.lines += f.Lines
		totalLines += f.Lines
	}
	var byLines []*langUse
	for _, l := range langs {
		byLines = append(byLines, l)
	}
	sort.Slice(byLines, func(i, j int) bool {
		if byLines[i].lines != byLines[j].lines {
			return byLines[i].lines > byLines[j].lines
		}
		return byLines[i].name < byLines[j].name
	})
	programming := lang.IsProgrammingLanguage

	// Paragraph 1: what it is.
	var p1 strings.Builder
	typ := projectLabel[m.ProjectType]
	if typ == "" {
		typ = m.ProjectType
	}
	if typ == "" || typ == lang.ProjectUnknown {
		typ = "software"
	}
	fmt.Fprintf(&p1, "%s is %s %s project", m.ProjectName, article(typ), typ)
	if m.BuildSystem != "" {
		fmt.Fprintf(&p1, " built with %s", m.BuildSystem)
	}
	if m.TestFramework != "" {
		fmt.Fprintf(&p1, ", tested with %s", m.TestFramework)
	}
	p1.WriteString(".")
	if m.PurposeGuess != "" {
		p1.WriteString(" " + m.PurposeGuess)
		if !strings.HasSuffix(m.PurposeGuess, ".") && !strings.HasSuffix(m.PurposeGuess, "…") {
			p1.WriteString(".")
		}
	}
	if len(m.Dependencies) > 0 {
		fmt.Fprintf(&p1, " It declares %s.", count(len(m.Dependencies), "dependency", "dependencies"))
	}

	// Paragraph 2: the code.
	var p2 strings.Builder
	fmt.Fprintf(&p2, "The tree has %s; %s can be packed (%s of analyzable code and text)",
		count(len(sb.b.entries), "file", "files"), th(len(sb.paths)), count(totalLines, "line", "lines"))
	if ex := len(sb.b.entries) - len(sb.paths); ex > 0 {
		fmt.Fprintf(&p2, " and %s excluded", th(ex))
	}
	p2.WriteString(".")
	if len(byLines) > 0 {
		p2.WriteString(" By lines: ")
		for i, l := range byLines {
			if i == 6 {
				fmt.Fprintf(&p2, ", and %s more", count(len(byLines)-6, "language", "languages"))
				break
			}
			if i > 0 {
				p2.WriteString(", ")
			}
			fmt.Fprintf(&p2, "%s %s in %s", l.name, count(l.lines, "line", "lines"), count(l.files, "file", "files"))
		}
		p2.WriteString(".")
	}
	routes, cmds := 0, 0
	for _, p := range sb.paths {
		if f := sb.facts[p]; f != nil && !lang.IsTestPath(p) {
			routes += len(f.Routes)
			cmds += len(f.Commands)
		}
	}
	if len(eps) > 0 {
		types := map[string]int{}
		for _, ep := range eps {
			types[ep.Type]++
		}
		var ts []string
		for _, k := range sortedKeys(types) {
			ts = append(ts, fmt.Sprintf("%s %s", th(types[k]), k))
		}
		fmt.Fprintf(&p2, " Entry points: %s (%s).", th(len(eps)), strings.Join(ts, ", "))
	}
	if routes > 0 || cmds > 0 {
		fmt.Fprintf(&p2, " It registers %s and declares %s.", count(routes, "HTTP route", "HTTP routes"), count(cmds, "CLI command", "CLI commands"))
	}

	// Paragraph 3: structure, coupling, risks and the change.
	var p3 strings.Builder
	fmt.Fprintf(&p3, "Import graph: %s between files of this repository", count(sb.graph.Edges, "resolved import", "resolved imports"))
	if top := sb.mostImported(); top != "" {
		fmt.Fprintf(&p3, "; most imported: %s (by %s)", top, count(len(sb.graph.In[top]), "file", "files"))
	}
	p3.WriteString(".")
	riskCounts := map[string]int{}
	for _, h := range hots {
		riskCounts[h.RiskType]++
	}
	if len(hots) > 0 {
		var rc []string
		for _, k := range []string{"security", "complexity", "coupling", "performance"} {
			if riskCounts[k] > 0 {
				rc = append(rc, fmt.Sprintf("%s %s", th(riskCounts[k]), k))
			}
		}
		fmt.Fprintf(&p3, " Risk hotspots: %s.", strings.Join(rc, ", "))
	}
	if len(sb.b.snap.Changes) > 0 {
		added, deleted := 0, 0
		var names []string
		for _, c := range sb.b.snap.Changes {
			added += c.Added
			deleted += c.Deleted
			names = append(names, c.Path)
		}
		fmt.Fprintf(&p3, " This %s changes %s (+%s/-%s lines): %s.", sb.changeWord(), count(len(names), "file", "files"), th(added), th(deleted), strings.Join(capList(names, 10), ", "))
	}
	rs.Description = p1.String() + "\n\n" + p2.String() + "\n\n" + p3.String()
	rs.ArchitecturePattern = sb.architecture(eps)

	// Key technologies: languages, then frameworks by use.
	for i, l := range byLines {
		if i < 5 && programming(l.name) {
			rs.KeyTechnologies = append(rs.KeyTechnologies, l.name)
		}
	}
	fwCount := map[string]int{}
	for _, p := range sb.paths {
		if f := sb.facts[p]; f != nil {
			for _, fw := range f.Frameworks {
				fwCount[fw]++
			}
		}
	}
	for _, c := range lang.TopCounts(fwCount) {
		rs.KeyTechnologies = append(rs.KeyTechnologies, c.Name)
	}
	if m.BuildSystem != "" {
		rs.KeyTechnologies = append(rs.KeyTechnologies, m.BuildSystem+" (build)")
	}
	if m.TestFramework != "" {
		rs.KeyTechnologies = append(rs.KeyTechnologies, m.TestFramework+" (tests)")
	}
	rs.KeyTechnologies = lang.Dedupe(rs.KeyTechnologies)

	// Notable patterns.
	if routes > 0 {
		rs.NotablePatterns = append(rs.NotablePatterns, fmt.Sprintf("HTTP server: %s in %s", count(routes, "route", "routes"), count(sb.filesWith(func(f *lang.Facts) bool { return len(f.Routes) > 0 }), "file", "files")))
	}
	if cmds > 0 {
		rs.NotablePatterns = append(rs.NotablePatterns, fmt.Sprintf("command-line interface: %s", count(cmds, "command", "commands")))
	}
	mains := 0
	for _, ep := range eps {
		if ep.Type == "cli" || ep.Type == "script" {
			mains++
		}
	}
	if mains > 1 {
		rs.NotablePatterns = append(rs.NotablePatterns, fmt.Sprintf("%s programs or scripts", th(mains)))
	}
	tests := 0
	for _, p := range sb.paths {
		if sb.entries[p].index.Category == CatTest {
			tests++
		}
	}
	if tests > 0 {
		rs.NotablePatterns = append(rs.NotablePatterns, fmt.Sprintf("tests: %s", count(tests, "test file", "test files")))
	}
	if sb.graph.Edges > 0 {
		rs.NotablePatterns = append(rs.NotablePatterns, fmt.Sprintf("modular code: %s of this repository's files import %s of its modules", th(len(sb.graph.Out)), th(len(sb.graph.Units))))
	}
	for _, dir := range []string{"migrations", "db/migrations", "migrate"} {
		if n := sb.filesUnder(dir); n > 0 {
			rs.NotablePatterns = append(rs.NotablePatterns, fmt.Sprintf("database migrations: %s in %s/", count(n, "file", "files"), dir))
			break
		}
	}
	if n := sb.filesUnder(".github/workflows"); n > 0 {
		rs.NotablePatterns = append(rs.NotablePatterns, fmt.Sprintf("CI: %s in .github/workflows/", count(n, "workflow", "workflows")))
	}
	for _, e := range sb.b.entries {
		if strings.EqualFold(path.Base(e.file.Path), "dockerfile") {
			rs.NotablePatterns = append(rs.NotablePatterns, "containerized: Dockerfile at "+e.file.Path)
			break
		}
	}

	// Potential concerns.
	if riskCounts["security"] > 0 {
		n := 0
		for _, h := range hots {
			if h.RiskType == "security" {
				n += len(h.Indicators)
			}
		}
		rs.PotentialConcerns = append(rs.PotentialConcerns, fmt.Sprintf("%s in %s", count(n, "security indicator", "security indicators"), count(riskCounts["security"], "file", "files")))
	}
	long := 0
	for _, p := range sb.paths {
		if f := sb.facts[p]; f != nil && !lang.IsTestPath(p) {
			for _, fn := range f.Funcs {
				if fn.Lines() >= hotFuncLines {
					long++
				}
			}
		}
	}
	if long > 0 {
		rs.PotentialConcerns = append(rs.PotentialConcerns, fmt.Sprintf("%s over %s lines", count(long, "function", "functions"), th(hotFuncLines)))
	}
	secretFiles, secrets := 0, 0
	for _, p := range sb.paths {
		if r := sb.entries[p].row.Redactions; r > 0 {
			secretFiles++
			secrets += r
		}
	}
	if secrets > 0 {
		rs.PotentialConcerns = append(rs.PotentialConcerns, fmt.Sprintf("%s redacted in %s", count(secrets, "secret", "secrets"), count(secretFiles, "file", "files")))
	}
	creds := 0
	for _, e := range sb.b.entries {
		if e.row.Reason == ReasonCredentials {
			creds++
		}
	}
	if creds > 0 {
		rs.PotentialConcerns = append(rs.PotentialConcerns, fmt.Sprintf("%s excluded as credentials", count(creds, "file", "files")))
	}
	if tests == 0 && len(sb.paths) > 0 && totalLines > 0 {
		rs.PotentialConcerns = append(rs.PotentialConcerns, "no test files found")
	}
	partial := 0
	for _, p := range sb.paths {
		if f := sb.facts[p]; f != nil && f.ParseNote != "" {
			partial++
		}
	}
	if partial > 0 {
		rs.PotentialConcerns = append(rs.PotentialConcerns, fmt.Sprintf("%s only partly analyzed (syntax errors or size)", count(partial, "file", "files")))
	}
	return rs
}

// projectLabel names the manifest's project types in prose.
var projectLabel = map[string]string{
	"go": "Go", "node": "Node.js", "python": "Python", "rust": "Rust", "java": "Java",
	"kotlin": "Kotlin", "ruby": "Ruby", "php": "PHP", "dotnet": ".NET", "c": "C", "cpp": "C++",
	lang.ProjectMixed: "multi-language",
}

func article(w string) string {
	if w != "" && strings.ContainsRune("AEIOUaeiou", rune(w[0])) {
		return "an"
	}
	return "a"
}

func (sb *summaryBuilder) changeWord() string {
	switch sb.b.snap.Source.Trigger {
	case "worktree":
		return "working tree"
	case "commit":
		return "commit"
	}
	return "change"
}

func (sb *summaryBuilder) mostImported() string {
	best := ""
	for _, k := range sortedKeys(sb.graph.In) {
		if best == "" || len(sb.graph.In[k]) > len(sb.graph.In[best]) {
			best = k
		}
	}
	return best
}

func (sb *summaryBuilder) filesWith(pred func(*lang.Facts) bool) int {
	n := 0
	for _, p := range sb.paths {
		if f := sb.facts[p]; f != nil && !lang.IsTestPath(p) && pred(f) {
			n++
		}
	}
	return n
}

func (sb *summaryBuilder) filesUnder(dir string) int {
	n := 0
	for _, e := range sb.b.entries {
		if strings.HasPrefix(e.file.Path, dir+"/") || strings.Contains(e.file.Path, "/"+dir+"/") {
			n++
		}
	}
	return n
}

// architecture names the structure from directory names and entry points,
// with the evidence. Examples, docs and tests are not the structure.
func (sb *summaryBuilder) architecture(eps []Entrypoint) string {
	top := map[string]int{}
	dirNames := map[string]bool{}
	for _, e := range sb.b.entries {
		p := e.file.Path
		if first, _, ok := strings.Cut(p, "/"); ok {
			top[first]++
		}
		if sb.kind(p) != "" {
			continue
		}
		for _, d := range strings.Split(lang.DirOf(p), "/") {
			if d != "" {
				dirNames[strings.ToLower(d)] = true
			}
		}
	}
	programs := 0
	programDirs := map[string]bool{}
	var own []Entrypoint
	for _, ep := range eps {
		if sb.kind(ep.Path) == "" {
			own = append(own, ep)
		}
	}
	eps = own
	for _, ep := range eps {
		if ep.Type != "library" {
			programs++
			first, _, _ := strings.Cut(ep.Path, "/")
			programDirs[first] = true
		}
	}
	has := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if dirNames[n] {
				out = append(out, n+"/")
			}
		}
		return out
	}
	// Several deployables under services/ or apps/: microservices.
	for _, root := range []string{"services", "apps"} {
		if top[root] > 0 {
			sub := map[string]bool{}
			for _, ep := range eps {
				if strings.HasPrefix(ep.Path, root+"/") {
					parts := strings.SplitN(ep.Path, "/", 3)
					if len(parts) == 3 {
						sub[parts[1]] = true
					}
				}
			}
			if len(sub) >= 2 {
				return fmt.Sprintf("microservices (%s under %s/)", count(len(sub), "service", "services"), root)
			}
		}
	}
	if top["packages"] > 0 {
		n := 0
		for _, e := range sb.b.entries {
			parts := strings.Split(e.file.Path, "/")
			if len(parts) == 3 && parts[0] == "packages" && parts[2] == "package.json" {
				n++
			}
		}
		if n >= 2 {
			return fmt.Sprintf("monorepo (%s under packages/)", count(n, "package", "packages"))
		}
	}
	if mvc := has("models", "views", "controllers"); len(mvc) == 3 {
		return "MVC (" + strings.Join(mvc, ", ") + ")"
	}
	if l := has("handlers", "services", "repositories", "repository", "controllers", "domain"); len(l) >= 2 {
		return "layered (" + strings.Join(l, ", ") + ")"
	}
	if top["cmd"] > 0 && (top["internal"] > 0 || top["pkg"] > 0) {
		return fmt.Sprintf("Go standard layout (cmd/, %s) with %s", strings.Join(has("internal", "pkg"), ", "), count(programs, "entry point", "entry points"))
	}
	switch {
	case programs == 0:
		return "library (no program entry point found)"
	case programs == 1:
		kind := eps[0].Type
		for _, ep := range eps {
			if ep.Type != "library" {
				kind = ep.Type
			}
		}
		switch kind {
		case "api", "web":
			return "monolithic web service (one server entry point)"
		default:
			return "single program (" + kind + ")"
		}
	}
	return fmt.Sprintf("multiple entry points (%s in %s)", th(programs), count(len(programDirs), "top-level directory", "top-level directories"))
}
