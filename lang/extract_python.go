package lang

import (
	"cmp"
	"path"
	"strings"
)

// ptok is a Python token. indent is the indentation of its logical line and
// bol marks the first token of a logical line.
type ptok struct {
	kind    tkind
	bol     bool
	fstr    bool // an f-string
	indent  int32
	line    int
	endLine int
	text    string
}

// lexPython tokenizes Python: comments, strings with prefixes and triple
// quotes, explicit and implicit line joining. It never fails.
func lexPython(src string) []ptok {
	var toks []ptok
	line, parens := 1, 0
	bol, indent := true, 0
	i, n := 0, len(src)
	col := 0 // column of i when at the start of a line
	atLineStart := true
	toks = make([]ptok, 0, len(src)/3)
	emit := func(k tkind, text, prefix string, l, end int) {
		toks = append(toks, ptok{kind: k, text: text, fstr: strings.ContainsAny(prefix, "fF"), line: l, endLine: end, indent: int32(indent), bol: bol})
		bol = false
	}
	for i < n {
		c := src[i]
		if atLineStart {
			col = 0
			for i < n && (src[i] == ' ' || src[i] == '\t' || src[i] == '\f') {
				if src[i] == '\t' {
					col = (col/8 + 1) * 8
				} else {
					col++
				}
				i++
			}
			atLineStart = false
			if i < n && src[i] != '\n' && src[i] != '\r' && src[i] != '#' && parens == 0 && bol {
				indent = col
			}
			continue
		}
		switch {
		case c == '\n':
			line++
			i++
			atLineStart = true
			if parens == 0 && len(toks) > 0 {
				bol = true
			}
		case c == '\\' && i+1 < n && (src[i+1] == '\n' || src[i+1] == '\r'):
			// Explicit line joining: the next line continues this one.
			i++
			if src[i] == '\r' {
				i++
			}
			if i < n && src[i] == '\n' {
				i++
			}
			line++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '#':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			j, text, nl := scanPyString(src, i)
			emit(tString, text, "", line, line+nl)
			line += nl
			i = j
		case isIdentStart(c):
			start := i
			for i < n && isIdentPart(src[i]) {
				i++
			}
			word := src[start:i]
			if i < n && (src[i] == '"' || src[i] == '\'') && len(word) <= 2 && isStringPrefix(word) {
				j, text, nl := scanPyString(src, i)
				emit(tString, text, word, line, line+nl)
				line += nl
				i = j
				continue
			}
			emit(tIdent, word, "", line, line)
		case c >= '0' && c <= '9' || c == '.' && i+1 < n && src[i+1] >= '0' && src[i+1] <= '9':
			start := i
			for i < n && (isIdentPart(src[i]) || src[i] == '.') {
				i++
			}
			emit(tNumber, src[start:i], "", line, line)
		default:
			p := string(c)
			for _, op := range []string{"**=", "//=", ">>=", "<<=", "...", "->", ":=", "==", "!=", "<=", ">=", "**", "//", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="} {
				if strings.HasPrefix(src[i:], op) {
					p = op
					break
				}
			}
			switch p {
			case "(", "[", "{":
				parens++
			case ")", "]", "}":
				if parens > 0 {
					parens--
				}
			}
			emit(tPunct, src[i:i+len(p)], "", line, line)
			i += len(p)
		}
	}
	return toks
}

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "u", "b", "f", "br", "rb", "fr", "rf", "t", "tr", "rt":
		return true
	}
	return false
}

// scanPyString scans a (possibly triple-quoted) string at src[i]. Single-
// quoted strings end at an unescaped newline.
func scanPyString(src string, i int) (int, string, int) {
	q := src[i]
	triple := strings.HasPrefix(src[i:], strings.Repeat(string(q), 3))
	if !triple {
		return scanQuoted(src, i, q, false)
	}
	closer := strings.Repeat(string(q), 3)
	j := i + 3
	for j < len(src) {
		if src[j] == '\\' {
			j += 2
			continue
		}
		if strings.HasPrefix(src[j:], closer) {
			text := src[i+3 : j]
			return j + 3, text, strings.Count(text, "\n")
		}
		j++
	}
	text := src[i+3:]
	return len(src), text, strings.Count(text, "\n")
}

type pyStream struct {
	t []ptok
}

func (s *pyStream) punct(i int, p string) bool {
	return i >= 0 && i < len(s.t) && s.t[i].kind == tPunct && s.t[i].text == p
}

func (s *pyStream) ident(i int, w string) bool {
	return i >= 0 && i < len(s.t) && s.t[i].kind == tIdent && s.t[i].text == w
}

func (s *pyStream) isName(i int) bool { return i >= 0 && i < len(s.t) && s.t[i].kind == tIdent }

func (s *pyStream) str(i int) (string, bool) {
	if i < 0 || i >= len(s.t) || s.t[i].kind != tString || s.t[i].fstr {
		return "", false
	}
	return s.t[i].text, true
}

// close returns the index of the bracket closing the one at i.
func (s *pyStream) close(i int) int {
	open := s.t[i].text
	closeB := ")"
	switch open {
	case "[":
		closeB = "]"
	case "{":
		closeB = "}"
	}
	nest := 0
	for j := i; j < len(s.t); j++ {
		if s.t[j].kind != tPunct {
			continue
		}
		switch s.t[j].text {
		case open:
			nest++
		case closeB:
			nest--
			if nest == 0 {
				return j
			}
		}
	}
	return len(s.t) - 1
}

// lineEnd returns the index of the last token of the logical line at i.
func (s *pyStream) lineEnd(i int) int {
	j := i + 1
	for j < len(s.t) && !s.t[j].bol {
		j++
	}
	return j - 1
}

// dotted reads a dotted name at i ("a.b.c"), returning it and the next index.
func (s *pyStream) dotted(i int) (string, int) {
	var parts []string
	for s.isName(i) {
		parts = append(parts, s.t[i].text)
		if !s.punct(i+1, ".") || !s.isName(i+2) {
			i++
			break
		}
		i += 2
	}
	return strings.Join(parts, "."), i
}

var pyRouteMethods = map[string]string{
	"get": "GET", "post": "POST", "put": "PUT", "delete": "DELETE", "patch": "PATCH",
	"options": "OPTIONS", "head": "HEAD", "websocket": "WS",
}

var pyFrameworks = map[string]string{
	"fastapi": "fastapi", "flask": "flask", "django": "django", "starlette": "starlette",
	"click": "click", "typer": "typer", "argparse": "argparse", "aiohttp": "aiohttp", "tornado": "tornado",
}

func extractPython(p, text string, f *Facts) {
	s := &pyStream{t: lexPython(text)}
	t := s.t
	if path.Base(p) == "__main__.py" {
		f.Main, f.MainLine = true, 1
	}
	if len(t) > 0 && t[0].kind == tString && t[0].bol {
		f.Doc = firstSentence(t[0].text)
	}
	var all []string
	hasAll := false
	var topLevel []string
	prefixes := map[string]string{} // router variable → url prefix
	ctors := map[string]string{}    // router variable → its constructor (Flask, APIRouter…)
	bound := map[string]string{}    // name an import binds → the imported module's root
	inImport := make([]bool, len(t))
	used := map[string]bool{} // module roots whose imported names the code uses
	dec := &pyDecorated{groups: map[string]string{}}
	var decorators []int // indexes of "@" of pending decorators
	type scope struct {
		name   string
		indent int32
		class  bool
	}
	var scopes []scope
	var loops []int32 // indents of enclosing loops
	for i := 0; i < len(t); i++ {
		x := t[i]
		if x.bol {
			for len(scopes) > 0 && x.indent <= scopes[len(scopes)-1].indent {
				scopes = scopes[:len(scopes)-1]
			}
			for len(loops) > 0 && x.indent <= loops[len(loops)-1] {
				loops = loops[:len(loops)-1]
			}
			if !s.punct(i, "@") && !(s.ident(i, "def") || s.ident(i, "async") || s.ident(i, "class")) {
				decorators = decorators[:0]
			}
		}
		if x.kind == tPunct && x.text == "@" && x.bol {
			decorators = append(decorators, i)
			continue
		}
		pySignal(s, i, f)
		if x.kind != tIdent {
			continue
		}
		switch {
		case x.bol && x.text == "import":
			markImport(inImport, i, s.lineEnd(i))
			for j := i + 1; j <= s.lineEnd(i); {
				name, next := s.dotted(j)
				if name == "" {
					break
				}
				f.addImport(importRef{spec: name})
				root, _, _ := strings.Cut(name, ".")
				bound[root] = root
				j = next
				if s.ident(j, "as") {
					if s.isName(j + 1) {
						bound[t[j+1].text] = root
					}
					j += 2
				}
				if !s.punct(j, ",") {
					break
				}
				j++
			}
		case x.bol && x.text == "from":
			j := i + 1
			level := 0
			for s.punct(j, ".") || s.punct(j, "...") {
				level += len(t[j].text)
				j++
			}
			mod := ""
			if !s.ident(j, "import") {
				mod, j = s.dotted(j)
			}
			if !s.ident(j, "import") {
				continue
			}
			j++
			var names []string
			end := s.lineEnd(i)
			markImport(inImport, i, end)
			root, _, _ := strings.Cut(mod, ".")
			for ; j <= end; j++ {
				if s.isName(j) && !s.ident(j, "as") && !s.ident(j-1, "as") {
					names = append(names, t[j].text)
					if level == 0 {
						if s.ident(j+1, "as") && s.isName(j+2) {
							bound[t[j+2].text] = root
						} else {
							bound[t[j].text] = root
						}
					}
				}
				if s.punct(j, "*") && level == 0 {
					used[root] = true // a star import: its names are not known
				}
			}
			f.addImport(importRef{spec: strings.Repeat(".", level) + mod, names: names, level: level})
		case x.bol && (x.text == "def" || x.text == "async" && s.ident(i+1, "def")):
			d := i
			if x.text == "async" {
				d++
			}
			if !s.isName(d + 1) {
				continue
			}
			name := t[d+1].text
			qual := name
			if len(scopes) > 0 && scopes[len(scopes)-1].class {
				qual = scopes[len(scopes)-1].name + "." + name
			}
			if x.indent == 0 && !strings.HasPrefix(name, "_") {
				kind := "def "
				if x.text == "async" {
					kind = "async def "
				}
				topLevel = append(topLevel, kind+name)
			}
			dec.decorators(s, decorators, i, name, prefixes)
			decorators = decorators[:0]
			f.Funcs = append(f.Funcs, pyFunc(s, i, qual))
			scopes = append(scopes, scope{name, x.indent, false})
		case x.bol && x.text == "class" && s.isName(i+1):
			name := t[i+1].text
			if x.indent == 0 && !strings.HasPrefix(name, "_") {
				topLevel = append(topLevel, "class "+name)
			}
			decorators = decorators[:0]
			cls := pyFunc(s, i, name)
			f.Symbols = append(f.Symbols, Symbol{Name: name, Kind: KindClass, Line: cls.Line, EndLine: cls.EndLine})
			scopes = append(scopes, scope{name, x.indent, true})
		case x.bol && x.indent == 0 && x.text == "if" && s.ident(i+1, "__name__") && s.punct(i+2, "=="):
			if m, ok := s.str(i + 3); ok && m == "__main__" {
				f.Main, f.MainLine = true, x.line
			}
		case x.bol && x.indent == 0 && x.text == "__all__" && (s.punct(i+1, "=") || s.punct(i+1, "+=")):
			hasAll = true
			for j := i + 2; j <= s.lineEnd(i); j++ {
				if v, ok := s.str(j); ok {
					all = append(all, v)
				}
			}
		case x.bol && x.indent == 0 && s.punct(i+1, "=") && isUpperName(x.text):
			topLevel = append(topLevel, "const "+x.text)
		case x.bol && (x.text == "for" || x.text == "while"):
			loops = append(loops, x.indent)
			if len(loops) == 3 {
				f.signal(SignalPerformance, x.line, "loops nested 3 deep")
			}
		}
		// Router objects with a prefix: APIRouter(prefix="/x"), Blueprint(…, url_prefix="/x").
		if x.bol && s.punct(i+1, "=") && s.isName(i+2) && s.punct(i+3, "(") {
			switch t[i+2].text {
			case "APIRouter", "Blueprint", "FastAPI", "Flask", "Router":
				prefixes[x.text] = ""
				ctors[x.text] = t[i+2].text
				end := s.close(i + 3)
				for j := i + 4; j < end; j++ {
					if (s.ident(j, "prefix") || s.ident(j, "url_prefix")) && s.punct(j+1, "=") {
						if v, ok := s.str(j + 2); ok {
							prefixes[x.text] = v
						}
					}
				}
			}
		}
	}
	if hasAll {
		f.Exports = append(f.Exports, all...)
	} else {
		f.Exports = append(f.Exports, topLevel...)
		f.TopLevel = true
	}
	// A framework label needs its import and a use of what the import
	// binds (a call, a decorator, a base class…).
	for i, x := range t {
		if x.kind == tIdent && !inImport[i] && !s.punct(i-1, ".") {
			if root, ok := bound[x.text]; ok {
				used[root] = true
			}
		}
	}
	for _, imp := range f.Imports {
		root, _, _ := strings.Cut(strings.TrimLeft(imp, "."), ".")
		if fw := pyFrameworks[root]; fw != "" && !strings.HasPrefix(imp, ".") && used[root] {
			f.framework(fw)
		}
	}
	dec.resolve(f, ctors)
	if HasFramework(f, "django") {
		pyDjangoRoutes(s, f)
	}
	if HasFramework(f, "argparse") {
		pyArgparse(s, f)
	}
}

// markImport marks the tokens from..to as part of an import statement.
func markImport(in []bool, from, to int) {
	for k := from; k <= to && k < len(in); k++ {
		in[k] = true
	}
}

// pyArgparse finds argparse subcommands: sub.add_parser("name", help="…")
// on the result of parser.add_subparsers(). A parser assigned to a
// variable is the parent of the subcommands added under it, so nested ones
// get their full name ("db migrate").
func pyArgparse(s *pyStream, f *Facts) {
	t := s.t
	parsers := map[string]string{} // parser variable → its command's full name
	subs := map[string]string{}    // subparsers variable → the full name of its parser
	for i := range t {
		if !s.punct(i-1, ".") || !s.punct(i+1, "(") || !s.isName(i-2) {
			continue
		}
		recv := t[i-2].text
		// "x = recv.add_…(" assigns the result to x.
		target := ""
		if s.punct(i-3, "=") && s.isName(i-4) && t[i-4].bol {
			target = t[i-4].text
		}
		switch t[i].text {
		case "add_subparsers":
			if target != "" {
				subs[target] = parsers[recv]
			}
		case "add_parser":
			name, ok := s.str(i + 2)
			if !ok || strings.TrimSpace(name) == "" {
				continue
			}
			full := strings.TrimSpace(subs[recv] + " " + name)
			help := ""
			end := s.close(i + 1)
			for j := i + 3; j < end; j++ {
				if s.ident(j, "help") && s.punct(j+1, "=") {
					help, _ = s.str(j + 2)
				}
			}
			f.Commands = append(f.Commands, commandWithHelp(full, help))
			if target != "" {
				parsers[target] = full
			}
		}
	}
}

func isUpperName(w string) bool {
	if w == "" || w[0] == '_' {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// pyFunc measures the def at i: its end is the last token before the next
// logical line indented no deeper than the def.
func pyFunc(s *pyStream, i int, name string) Func {
	t := s.t
	ind := t[i].indent
	fn := Func{Name: name, Line: t[i].line, EndLine: t[i].endLine, Complexity: 1}
	// The body starts after the def's own logical line.
	j := s.lineEnd(i) + 1
	var loops []int32
	for ; j < len(t); j++ {
		x := t[j]
		if x.bol && x.indent <= ind {
			break
		}
		fn.EndLine = x.endLine
		if x.bol {
			for len(loops) > 0 && x.indent <= loops[len(loops)-1] {
				loops = loops[:len(loops)-1]
			}
			if x.kind == tIdent && (x.text == "for" || x.text == "while") {
				loops = append(loops, x.indent)
				if len(loops) > fn.MaxNesting {
					fn.MaxNesting = len(loops)
				}
			}
		}
		if x.kind == tIdent {
			switch x.text {
			case "if", "elif", "for", "while", "except", "and", "or":
				fn.Complexity++
			case "case":
				if x.bol {
					fn.Complexity++
				}
			}
		}
	}
	return fn
}

// pyDecorated collects the routes and commands that decorators declare;
// which framework they belong to is known only once the file's imports and
// their use are (resolve).
type pyDecorated struct {
	routes []pyRoute
	cmds   []pyCmd
	// groups maps a click group function to its full command name ("" for
	// the root group).
	groups map[string]string
}

type pyRoute struct {
	r       Route
	recv    string
	meth    string
	methods []string // explicit methods=[…]
}

type pyCmd struct {
	recv, name string
}

// decorators records the route and command decorators of the def whose
// line starts at d.
func (pd *pyDecorated) decorators(s *pyStream, decorators []int, d int, name string, prefixes map[string]string) {
	t := s.t
	for _, at := range decorators {
		obj, next := s.dotted(at + 1)
		if obj == "" {
			continue
		}
		recv, meth := "", obj
		if i := strings.LastIndexByte(obj, '.'); i >= 0 {
			recv, meth = obj[:i], obj[i+1:]
		}
		args := s.punct(next, "(")
		first := ""
		end := next
		if args {
			first, _ = s.str(next + 1)
			end = s.close(next)
		}
		kwarg := func(key string) string {
			for j := next + 1; j < end; j++ {
				if s.ident(j, key) && s.punct(j+1, "=") {
					v, _ := s.str(j + 2)
					return v
				}
			}
			return ""
		}
		switch {
		case recv != "" && pyRouteMethods[meth] != "" && args && strings.HasPrefix(first, "/"):
			pd.routes = append(pd.routes, pyRoute{r: Route{Method: pyRouteMethods[meth], Path: joinRoute(prefixes[recv], first), Handler: name, Line: t[at].line}, recv: recv, meth: meth})
		case recv != "" && (meth == "route" || meth == "api_route") && args && strings.HasPrefix(first, "/"):
			var methods []string
			for j := next + 1; j < end; j++ {
				if s.ident(j, "methods") && s.punct(j+1, "=") {
					for k := j + 2; k < end && !s.ident(k, "methods"); k++ {
						if v, ok := s.str(k); ok {
							methods = append(methods, strings.ToUpper(v))
						}
						if s.punct(k, "]") || s.punct(k, ")") {
							break
						}
					}
				}
			}
			pd.routes = append(pd.routes, pyRoute{r: Route{Path: joinRoute(prefixes[recv], first), Handler: name, Line: t[at].line}, recv: recv, meth: meth, methods: methods})
		case recv != "" && (meth == "command" || meth == "group"):
			cmd := cmp.Or(first, kwarg("name"), pyCommandName(name))
			parent := pd.groups[recv]
			full := strings.TrimSpace(parent + " " + cmd)
			if meth == "group" {
				if recv == "click" {
					pd.groups[name] = "" // the root group is the program itself
					continue
				}
				pd.groups[name] = full
			}
			help := cmp.Or(kwarg("help"), kwarg("short_help"), pyDocstring(s, d))
			pd.cmds = append(pd.cmds, pyCmd{recv: recv, name: commandWithHelp(full, help)})
		}
	}
}

// resolve adds the routes with the framework the evidence names, and the
// commands of click, typer or Flask's CLI.
func (pd *pyDecorated) resolve(f *Facts, ctors map[string]string) {
	flask, fastapi := HasFramework(f, "flask"), HasFramework(f, "fastapi")
	for _, pr := range pd.routes {
		r := pr.r
		root, _, _ := strings.Cut(pr.recv, ".")
		switch ctors[root] {
		case "Flask", "Blueprint":
			r.Framework = "flask"
		case "FastAPI", "APIRouter":
			r.Framework = "fastapi"
		default:
			switch {
			case flask && !fastapi:
				r.Framework = "flask"
			case fastapi && (!flask || pr.meth == "api_route"):
				r.Framework = "fastapi"
			}
		}
		if r.Method != "" {
			f.Routes = append(f.Routes, r)
			continue
		}
		methods := pr.methods
		if len(methods) == 0 {
			methods = []string{"GET"} // Flask's default
			if pr.meth == "api_route" {
				methods = []string{"ANY"}
			}
		}
		for _, m := range methods {
			r.Method = m
			f.Routes = append(f.Routes, r)
		}
	}
	cli := HasFramework(f, "click") || HasFramework(f, "typer")
	for _, c := range pd.cmds {
		// Flask's app.cli and blueprint.cli are click groups.
		if cli || flask && (strings.HasSuffix(c.recv, ".cli") || pd.isGroup(c.recv)) {
			f.Commands = append(f.Commands, c.name)
		}
	}
}

func (pd *pyDecorated) isGroup(name string) bool {
	_, ok := pd.groups[name]
	return ok
}

// pyCommandName is click's and typer's name for a command function:
// lower case, "_" as "-", without a _command, _cmd, _group or _grp suffix.
func pyCommandName(fn string) string {
	n := strings.ToLower(fn)
	for _, suf := range []string{"_command", "_cmd", "_group", "_grp"} {
		if strings.HasSuffix(n, suf) && len(n) > len(suf) {
			n = strings.TrimSuffix(n, suf)
			break
		}
	}
	return strings.ReplaceAll(strings.Trim(n, "_"), "_", "-")
}

// pyDocstring is the first sentence of the docstring of the def whose line
// starts at d.
func pyDocstring(s *pyStream, d int) string {
	j := s.lineEnd(d) + 1
	if j < len(s.t) && s.t[j].bol && s.t[j].kind == tString && !s.t[j].fstr && s.t[j].indent > s.t[d].indent {
		return firstSentence(s.t[j].text)
	}
	return ""
}

// pyDjangoRoutes finds path("route/", view) entries of urls.py.
func pyDjangoRoutes(s *pyStream, f *Facts) {
	t := s.t
	for i := range t {
		if !(s.ident(i, "path") || s.ident(i, "re_path")) || s.punct(i-1, ".") || !s.punct(i+1, "(") {
			continue
		}
		v, ok := s.str(i + 2)
		if !ok || !s.punct(i+3, ",") {
			continue
		}
		h, _ := s.dotted(i + 4)
		if s.ident(i+4, "include") {
			h = "include"
		}
		f.Routes = append(f.Routes, Route{Method: "ANY", Path: "/" + strings.TrimPrefix(v, "/"), Handler: h, Line: t[i].line, Framework: "django"})
	}
}

// pySignal records security indicators at token i.
func pySignal(s *pyStream, i int, f *Facts) {
	t := s.t
	x := t[i]
	prevDot := s.punct(i-1, ".")
	call := s.punct(i+1, "(")
	switch x.text {
	case "eval", "exec":
		if !prevDot && call {
			f.signal(SignalSecurity, x.line, "evaluates dynamic code ("+x.text+")")
		}
	case "system", "popen":
		if prevDot && s.ident(i-2, "os") && call {
			f.signal(SignalSecurity, x.line, "runs a shell command (os."+x.text+")")
		}
	case "shell":
		if s.punct(i+1, "=") && s.ident(i+2, "True") {
			f.signal(SignalSecurity, x.line, "runs a shell command (subprocess with shell=True)")
		}
	case "verify":
		if s.punct(i+1, "=") && s.ident(i+2, "False") {
			f.signal(SignalSecurity, x.line, "disables TLS certificate verification (verify=False)")
		}
	case "loads", "load":
		if prevDot && call && (s.ident(i-2, "pickle") || s.ident(i-2, "marshal") || s.ident(i-2, "cPickle") || s.ident(i-2, "dill")) {
			f.signal(SignalSecurity, x.line, "deserializes untrusted data ("+t[i-2].text+"."+x.text+")")
		}
		if prevDot && call && x.text == "load" && s.ident(i-2, "yaml") {
			safe := false
			end := s.close(i + 1)
			for j := i + 2; j < end; j++ {
				if s.ident(j, "SafeLoader") || s.ident(j, "CSafeLoader") || s.ident(j, "BaseLoader") {
					safe = true
				}
			}
			if !safe {
				f.signal(SignalSecurity, x.line, "deserializes YAML without SafeLoader (yaml.load)")
			}
		}
	case "md5", "sha1":
		if prevDot && s.ident(i-2, "hashlib") && call {
			f.signal(SignalSecurity, x.line, "uses a weak hash (hashlib."+x.text+")")
		}
	case "debug":
		if s.punct(i+1, "=") && s.ident(i+2, "True") && s.inCall(i, "run") {
			f.signal(SignalSecurity, x.line, "runs the server in debug mode (debug=True)")
		}
	}
	if x.kind == tString && isSQL(x.text) {
		switch {
		case x.fstr && strings.Contains(x.text, "{"):
			f.signal(SignalSecurity, x.line, "builds SQL in an f-string")
		case s.punct(i+1, "%") && !s.isLit(i+2) || s.punct(i+1, "+") && !s.isLit(i+2) || s.punct(i-1, "+") && !s.isLit(i-2):
			f.signal(SignalSecurity, x.line, "builds SQL by string formatting")
		case s.punct(i+1, ".") && s.ident(i+2, "format"):
			f.signal(SignalSecurity, x.line, "builds SQL with str.format")
		}
	}
}

func (s *pyStream) isLit(i int) bool {
	return i >= 0 && i < len(s.t) && (s.t[i].kind == tString && !s.t[i].fstr || s.t[i].kind == tNumber)
}

// inCall reports whether token i is inside the argument list of a call to a
// function or method named name.
func (s *pyStream) inCall(i int, name string) bool {
	nest := 0
	for j := i - 1; j >= 0 && j > i-200; j-- {
		if s.t[j].kind != tPunct {
			continue
		}
		switch s.t[j].text {
		case ")", "]", "}":
			nest++
		case "(", "[", "{":
			if nest == 0 {
				return s.t[j].text == "(" && s.ident(j-1, name)
			}
			nest--
		}
	}
	return false
}
