package lang

import (
	"strings"
)

// jsFrameworks maps module specifiers to framework names.
var jsFrameworks = map[string]string{
	"express": "express", "@nestjs/common": "nestjs", "@nestjs/core": "nestjs", "fastify": "fastify",
	"koa": "koa", "koa-router": "koa", "@koa/router": "koa", "hono": "hono",
	"react": "react", "next": "next", "vue": "vue", "@angular/core": "angular", "svelte": "svelte",
	"commander": "commander", "yargs": "yargs",
}

var jsHTTPMethods = map[string]string{
	"get": "GET", "post": "POST", "put": "PUT", "delete": "DELETE", "patch": "PATCH",
	"options": "OPTIONS", "head": "HEAD", "all": "ANY", "use": "USE",
}

var nestMethods = map[string]string{
	"Get": "GET", "Post": "POST", "Put": "PUT", "Delete": "DELETE", "Patch": "PATCH",
	"Options": "OPTIONS", "Head": "HEAD", "All": "ANY",
}

// jsKeywords are words that can precede "(" without being a function name.
var jsKeywords = set("if", "for", "while", "switch", "catch", "return", "function", "new", "typeof",
	"await", "yield", "with", "do", "else", "in", "of", "delete", "void", "throw", "case", "super", "import", "require")

var jsModifiers = set("async", "static", "get", "set", "public", "private", "protected", "readonly",
	"override", "abstract", "declare", "export", "default", "*")

// jsText is text as the JavaScript extractor reads it: a first line
// starting with #! (a script's interpreter) blanked; shebang says whether
// it had one.
func jsText(text string) (_ string, shebang bool) {
	if !strings.HasPrefix(text, "#!") {
		return text, false
	}
	i := strings.IndexByte(text, '\n')
	if i < 0 {
		i = len(text)
	}
	return strings.Repeat(" ", i) + text[i:], true
}

func extractJS(p, text string, f *Facts) {
	text, shebang := jsText(text)
	if shebang {
		f.Main, f.MainLine = true, 1
	}
	f.Doc = leadingDoc(text)
	s := newStream(lex(text, lexOpts{js: true}))
	t := s.t
	routers := map[string]string{} // variable → route prefix ("" for the app itself)
	exported := false
	childProcess := false
	var topLevel []string
	for i := 0; i < len(t); i++ {
		x := t[i]
		if x.kind != tIdent {
			continue
		}
		prevDot := s.punct(i-1, ".") || s.punct(i-1, "?.")
		switch x.text {
		case "import":
			if prevDot {
				continue
			}
			if s.punct(i+1, "(") { // dynamic import("m")
				if m, ok := s.str(i + 2); ok {
					f.addImport(importRef{spec: m})
				}
				continue
			}
			if x.depth != 0 {
				continue
			}
			if m, ok := s.str(i + 1); ok { // import "m"
				f.addImport(importRef{spec: m})
				continue
			}
			for j := i + 1; j < len(t) && j < i+400; j++ {
				if s.punct(j, ";") || s.ident(j, "import") && t[j].line > x.line {
					break
				}
				if s.punct(j, "{") {
					j = s.close(j)
					continue
				}
				if s.ident(j, "from") {
					if m, ok := s.str(j + 1); ok {
						f.addImport(importRef{spec: m})
					}
					break
				}
				if s.ident(j, "require") && s.punct(j+1, "(") { // import x = require("m")
					break
				}
			}
		case "require":
			if s.punct(i+1, "(") && !prevDot {
				if m, ok := s.str(i + 2); ok && s.punct(i+3, ")") {
					f.addImport(importRef{spec: m})
				}
			}
		case "export":
			if x.depth != 0 || prevDot {
				continue
			}
			exported = true
			jsExport(s, i, f)
		case "module":
			// module.exports = …, module.exports.name = …
			if x.depth == 0 && !prevDot && s.punct(i+1, ".") && s.ident(i+2, "exports") {
				exported = true
				if s.punct(i+3, ".") && s.isName(i+4) {
					f.Exports = append(f.Exports, t[i+4].text)
				} else if s.punct(i+3, "=") {
					jsCommonJSExports(s, i+4, f)
				}
			}
		case "exports":
			if x.depth == 0 && !prevDot && s.punct(i+1, ".") && s.isName(i+2) && s.punct(i+3, "=") {
				exported = true
				f.Exports = append(f.Exports, t[i+2].text)
			}
		case "function", "class":
			if x.depth == 0 && !prevDot && s.isName(i+1) && !s.ident(i-1, "export") && !s.ident(i-1, "default") {
				topLevel = append(topLevel, map[string]string{"function": "function ", "class": "class "}[x.text]+t[i+1].text)
			}
		case "main":
			// require.main === module
			if prevDot && s.ident(i-2, "require") && (s.punct(i+1, "===") || s.punct(i+1, "==")) && s.ident(i+2, "module") {
				f.Main, f.MainLine = true, x.line
			}
		case "eval":
			if !prevDot && s.punct(i+1, "(") {
				f.signal(SignalSecurity, x.line, "evaluates dynamic code (eval)")
			}
		case "Function":
			if s.ident(i-1, "new") && s.punct(i+1, "(") {
				f.signal(SignalSecurity, x.line, "evaluates dynamic code (new Function)")
			}
		case "dangerouslySetInnerHTML":
			f.signal(SignalSecurity, x.line, "renders raw HTML (dangerouslySetInnerHTML)")
		case "innerHTML", "outerHTML":
			if prevDot && s.punct(i+1, "=") {
				f.signal(SignalSecurity, x.line, "assigns raw HTML ("+x.text+" =)")
			}
		case "rejectUnauthorized":
			if s.punct(i+1, ":") && s.ident(i+2, "false") {
				f.signal(SignalSecurity, x.line, "disables TLS certificate verification (rejectUnauthorized: false)")
			}
		case "NODE_TLS_REJECT_UNAUTHORIZED":
			if s.punct(i+1, "=") {
				f.signal(SignalSecurity, x.line, "disables TLS certificate verification (NODE_TLS_REJECT_UNAUTHORIZED)")
			}
		case "createHash":
			if s.punct(i+1, "(") {
				if a, ok := s.str(i + 2); ok && (strings.EqualFold(a, "md5") || strings.EqualFold(a, "sha1")) {
					f.signal(SignalSecurity, x.line, "uses a weak hash (createHash(\""+a+"\"))")
				}
			}
		case "exec", "execSync":
			if s.punct(i+1, "(") && childProcess {
				f.signal(SignalSecurity, x.line, "runs a shell command (child_process."+x.text+")")
			}
		}
		// Router variables: const app = express(), const r = express.Router(), new Router().
		if s.punct(i+1, "=") && (s.ident(i-1, "const") || s.ident(i-1, "let") || s.ident(i-1, "var") || s.punct(i-1, ".") && s.ident(i-2, "this")) {
			j := i + 2
			if s.ident(j, "new") {
				j++
			}
			switch {
			case s.ident(j, "express") && s.punct(j+1, "("),
				s.ident(j, "express") && s.punct(j+1, ".") && s.ident(j+2, "Router"),
				s.ident(j, "Router") && s.punct(j+1, "("),
				s.ident(j, "Fastify") || s.ident(j, "fastify") && s.punct(j+1, "("),
				s.ident(j, "Koa") || s.ident(j, "Hono"):
				routers[x.text] = ""
			}
		}
	}
	for _, imp := range f.Imports {
		if fw := jsFrameworks[imp]; fw != "" {
			f.framework(fw)
		}
		if imp == "child_process" || imp == "node:child_process" {
			childProcess = true
		}
	}
	if childProcess {
		// Calls seen before the imports were known.
		for i, x := range t {
			if (x.text == "exec" || x.text == "execSync") && x.kind == tIdent && s.punct(i+1, "(") {
				found := false
				for _, sg := range f.Signals {
					if sg.Line == x.line && strings.Contains(sg.What, "child_process") {
						found = true
					}
				}
				if !found {
					f.signal(SignalSecurity, x.line, "runs a shell command (child_process."+x.text+")")
				}
			}
		}
	}
	if !exported {
		f.Exports = append(f.Exports, topLevel...)
		f.TopLevel = true
	}
	web := false
	for _, fw := range f.Frameworks {
		switch fw {
		case "express", "fastify", "koa", "hono":
			web = true
		}
	}
	if web || len(routers) > 0 {
		jsRoutes(s, f, routers, web)
	}
	if HasFramework(f, "nestjs") {
		nestRoutes(s, f)
	}
	if HasFramework(f, "commander") || HasFramework(f, "yargs") {
		for i := range t {
			if s.ident(i, "command") && s.punct(i-1, ".") && s.punct(i+1, "(") {
				if c, ok := s.str(i + 2); ok {
					name, _, _ := strings.Cut(strings.TrimSpace(c), " ")
					if name != "" && name != "*" && name != "$0" {
						f.Commands = append(f.Commands, name)
					}
				}
			}
		}
	}
	jsFuncs(s, f)
	jsSQL(s, f)
	s.loopSignals(f)
	if len(f.Routes) > 0 {
		for i, x := range t {
			if x.kind == tIdent && strings.HasSuffix(x.text, "Sync") && s.punct(i+1, "(") && (strings.HasPrefix(x.text, "read") || strings.HasPrefix(x.text, "write") || strings.HasPrefix(x.text, "exec")) {
				f.signal(SignalPerformance, x.line, "blocks the event loop in a server ("+x.text+")")
			}
		}
	}
	sortSignals(f)
}

// HasFramework reports whether the file uses the named framework.
func HasFramework(f *Facts, name string) bool {
	for _, x := range f.Frameworks {
		if x == name {
			return true
		}
	}
	return false
}

// jsExport records what the export statement at i exports.
func jsExport(s *tstream, i int, f *Facts) {
	t := s.t
	j := i + 1
	for s.ident(j, "declare") {
		j++
	}
	switch {
	case s.ident(j, "default"):
		k := j + 1
		if s.ident(k, "async") {
			k++
		}
		if (s.ident(k, "function") || s.ident(k, "class")) && !s.punct(k+1, "(") {
			n := k + 1
			if s.punct(n, "*") {
				n++
			}
			if s.isName(n) && !s.ident(n, "extends") && !s.ident(n, "implements") {
				f.Exports = append(f.Exports, "default "+t[n].text)
				return
			}
		} else if s.isName(k) && (s.punct(k+1, ";") || k+1 >= len(t) || t[k+1].line > t[k].line) {
			f.Exports = append(f.Exports, "default "+t[k].text)
			return
		}
		f.Exports = append(f.Exports, "default")
	case s.punct(j, "="): // TypeScript: export = X
		f.Exports = append(f.Exports, "default")
	case s.punct(j, "*"):
		k := j + 1
		alias := ""
		if s.ident(k, "as") && s.isName(k+1) {
			alias = t[k+1].text
			k += 2
		}
		if s.ident(k, "from") {
			if m, ok := s.str(k + 1); ok {
				f.addImport(importRef{spec: m})
				if alias != "" {
					f.Exports = append(f.Exports, alias)
				} else {
					f.Exports = append(f.Exports, "* from "+m)
				}
			}
		}
	case s.punct(j, "{"):
		end := s.close(j)
		for k := j + 1; k < end; k++ {
			if !s.isName(k) || s.ident(k, "type") && s.isName(k+1) {
				continue
			}
			name := t[k].text
			if s.ident(k+1, "as") && k+2 < end {
				name = t[k+2].text
				k += 2
			}
			f.Exports = append(f.Exports, name)
			for k+1 < end && !s.punct(k+1, ",") {
				k++
			}
		}
		if s.ident(end+1, "from") {
			if m, ok := s.str(end + 2); ok {
				f.addImport(importRef{spec: m})
			}
		}
	case s.ident(j, "type") && s.punct(j+1, "{"): // export type { A } from
		jsExport(s, j, f)
	default:
		k := j
		for s.ident(k, "async") || s.ident(k, "abstract") || s.ident(k, "declare") {
			k++
		}
		if !s.isName(k) {
			return
		}
		kind := t[k].text
		switch kind {
		case "function":
			n := k + 1
			if s.punct(n, "*") {
				n++
			}
			if s.isName(n) {
				f.Exports = append(f.Exports, "function "+t[n].text)
			}
		case "class", "interface", "type", "enum", "namespace", "module":
			if s.isName(k + 1) {
				if kind == "module" {
					kind = "namespace"
				}
				f.Exports = append(f.Exports, kind+" "+t[k+1].text)
			}
		case "const", "let", "var":
			if s.ident(k+1, "enum") && s.isName(k+2) {
				f.Exports = append(f.Exports, "enum "+t[k+2].text)
				return
			}
			jsDeclarators(s, k+1, kind, f)
		}
	}
}

// jsDeclarators records the names of "const a = …, b = …" or a destructuring.
func jsDeclarators(s *tstream, k int, kind string, f *Facts) {
	t := s.t
	line := t[k-1].line
	for k < len(t) {
		switch {
		case s.punct(k, "{") || s.punct(k, "["):
			end := s.close(k)
			for m := k + 1; m < end; m++ {
				if s.isName(m) && (s.punct(m+1, ",") || m+1 == end || s.punct(m+1, "=")) && !s.punct(m-1, ":") || s.isName(m) && s.punct(m-1, ":") {
					f.Exports = append(f.Exports, kind+" "+t[m].text)
				}
				if s.punct(m, "{") || s.punct(m, "[") || s.punct(m, "(") {
					m = s.close(m)
				}
			}
			k = end + 1
		case s.isName(k):
			f.Exports = append(f.Exports, kind+" "+t[k].text)
			k++
		default:
			return
		}
		// Skip a type annotation (where "<…>" nests) to the initializer.
		if s.punct(k, ":") {
			angles := 0
			for k++; k < len(t); k++ {
				if s.punct(k, "<") {
					angles++
				} else if s.punct(k, ">") && angles > 0 {
					angles--
				} else if s.punct(k, "(") || s.punct(k, "[") || s.punct(k, "{") {
					k = s.close(k)
				} else if angles == 0 && (s.punct(k, "=") || s.punct(k, ",") || s.punct(k, ";")) {
					break
				}
			}
		}
		// Skip the initializer to the next "," at this nesting.
		for k < len(t) {
			if s.punct(k, ",") {
				k++
				break
			}
			if s.punct(k, ";") || s.punct(k, "}") || s.punct(k, ")") || t[k].line > line && t[k].depth == 0 && t[k].kind == tIdent &&
				(t[k].text == "export" || t[k].text == "import" || t[k].text == "const" || t[k].text == "let" || t[k].text == "var" || t[k].text == "function" || t[k].text == "class") {
				return
			}
			if s.punct(k, "(") || s.punct(k, "[") || s.punct(k, "{") {
				k = s.close(k)
			}
			k++
		}
	}
}

// jsCommonJSExports records module.exports = {a, b} / = X / = function x.
func jsCommonJSExports(s *tstream, k int, f *Facts) {
	t := s.t
	switch {
	case s.punct(k, "{"):
		end := s.close(k)
		for m := k + 1; m < end; m++ {
			if s.isName(m) && (s.punct(m-1, "{") || s.punct(m-1, ",")) {
				n := m
				if (t[m].text == "async" || t[m].text == "get" || t[m].text == "set") && s.isName(m+1) {
					n = m + 1
				}
				f.Exports = append(f.Exports, t[n].text)
			}
			if s.punct(m, "{") || s.punct(m, "[") || s.punct(m, "(") {
				m = s.close(m)
			}
		}
	case s.ident(k, "function") || s.ident(k, "class"):
		if s.isName(k+1) && !s.punct(k+1, "(") {
			f.Exports = append(f.Exports, "default "+t[k+1].text)
		} else {
			f.Exports = append(f.Exports, "default")
		}
	case s.isName(k) && !s.punct(k+1, "(") && !s.punct(k+1, "."):
		f.Exports = append(f.Exports, "default "+t[k].text)
	default:
		f.Exports = append(f.Exports, "default")
	}
}

// jsRoutes finds Express-style registrations: app.get("/p", …),
// router.route("/p").get(…).post(…), app.use("/api", router).
func jsRoutes(s *tstream, f *Facts, routers map[string]string, web bool) {
	t := s.t
	fw := "express"
	for _, x := range []string{"fastify", "koa", "hono"} {
		if HasFramework(f, x) {
			fw = x
		}
	}
	isRouter := func(name string) bool {
		if _, ok := routers[name]; ok {
			return true
		}
		if !web {
			return false
		}
		l := strings.ToLower(name)
		return l == "app" || l == "router" || l == "api" || l == "server" || l == "routes" || strings.HasSuffix(l, "router")
	}
	handler := func(open int, min int) string {
		args := s.callArgs(open)
		if len(args) < min {
			return ""
		}
		last := args[len(args)-1]
		if last[1]-last[0] == 1 && s.isName(last[0]) {
			return t[last[0]].text
		}
		if last[1]-last[0] == 3 && s.isName(last[0]) && s.punct(last[0]+1, ".") && s.isName(last[0]+2) {
			return t[last[0]].text + "." + t[last[0]+2].text
		}
		return ""
	}
	for i := 0; i+4 < len(t); i++ {
		if !s.isName(i) || s.punct(i-1, ".") || !s.punct(i+1, ".") || !s.isName(i+2) || !s.punct(i+3, "(") || !isRouter(t[i].text) {
			continue
		}
		name := t[i+2].text
		if name == "route" {
			p, ok := s.str(i + 4)
			if !ok {
				continue
			}
			j := s.close(i + 3)
			for s.punct(j+1, ".") && s.isName(j+2) && s.punct(j+3, "(") {
				if m, ok := jsHTTPMethods[t[j+2].text]; ok && m != "USE" {
					f.Routes = append(f.Routes, Route{Method: m, Path: joinRoute(routers[t[i].text], p), Handler: handler(j+3, 1), Line: t[j+2].line, Framework: fw})
				}
				j = s.close(j + 3)
			}
			continue
		}
		m, ok := jsHTTPMethods[name]
		if !ok {
			continue
		}
		p, ok := s.str(i + 4)
		if !ok || !(strings.HasPrefix(p, "/") || p == "*") {
			continue
		}
		if m == "GET" && len(s.callArgs(i+3)) < 2 {
			continue // app.get("setting") reads a setting
		}
		f.Routes = append(f.Routes, Route{Method: m, Path: joinRoute(routers[t[i].text], p), Handler: handler(i+3, 2), Line: t[i].line, Framework: fw})
	}
}

// nestRoutes finds NestJS @Controller("prefix") classes and their @Get(…)
// methods.
func nestRoutes(s *tstream, f *Facts) {
	t := s.t
	prefix := ""
	for i := 0; i+2 < len(t); i++ {
		if !s.punct(i, "@") || !s.isName(i+1) {
			continue
		}
		name := t[i+1].text
		arg := ""
		if s.punct(i+2, "(") {
			arg, _ = s.str(i + 3)
			if arg == "" && s.punct(i+3, "{") { // @Controller({ path: "x" })
				end := s.close(i + 3)
				for k := i + 4; k < end; k++ {
					if s.ident(k, "path") && s.punct(k+1, ":") {
						arg, _ = s.str(k + 2)
					}
				}
			}
		}
		if name == "Controller" {
			prefix = "/" + strings.Trim(arg, "/")
			continue
		}
		m, ok := nestMethods[name]
		if !ok || !s.punct(i+2, "(") {
			continue
		}
		p := prefix
		if arg != "" {
			p = joinRoute(prefix, "/"+strings.TrimPrefix(arg, "/"))
		}
		if p == "" {
			p = "/"
		}
		// The handler is the method name after the decorators.
		h := ""
		for k := s.close(i+2) + 1; k < len(t) && k < i+200; k++ {
			if s.punct(k, "@") {
				if s.punct(k+2, "(") {
					k = s.close(k + 2)
				} else {
					k++
				}
				continue
			}
			if s.isName(k) && s.punct(k+1, "(") && !jsModifiers[t[k].text] {
				h = t[k].text
				break
			}
		}
		f.Routes = append(f.Routes, Route{Method: m, Path: p, Handler: h, Line: t[i].line, Framework: "nestjs"})
	}
}

// jsFuncs measures the function bodies jsFuncSites finds.
func jsFuncs(s *tstream, f *Facts) {
	for _, site := range jsFuncSites(s) {
		f.Funcs = append(f.Funcs, s.fn(site.name, site.nameIdx, site.open, cBranch))
	}
}

// jsFuncSite is a function body: its name as jsFuncs gives it, the token
// naming it and the token opening its body.
type jsFuncSite struct {
	name          string
	nameIdx, open int
}

// jsFuncSites finds function bodies, in order, once each: declarations,
// methods, function expressions and arrow functions with block bodies.
func jsFuncSites(s *tstream) []jsFuncSite {
	t := s.t
	var sites []jsFuncSite
	seen := map[int]bool{}
	add := func(name string, nameIdx, open int) {
		if open < 0 || seen[open] {
			return
		}
		seen[open] = true
		sites = append(sites, jsFuncSite{name, nameIdx, open})
	}
	// The class whose body encloses a position, for method names.
	type class struct {
		name      string
		open, end int
	}
	var classes []class
	for i := 0; i+1 < len(t); i++ {
		if s.ident(i, "class") && s.isName(i+1) && !s.punct(i-1, ".") {
			for j := i + 2; j < len(t); j++ {
				if s.punct(j, "{") {
					classes = append(classes, class{t[i+1].text, j, s.close(j)})
					break
				}
				if s.punct(j, ";") {
					break
				}
				if s.punct(j, "(") {
					j = s.close(j)
				}
			}
		}
	}
	qualify := func(i int, name string) string {
		for k := len(classes) - 1; k >= 0; k-- {
			c := classes[k]
			if i > c.open && i < c.end && t[i].depth == t[c.open].depth+1 {
				return c.name + "." + name
			}
		}
		return name
	}
	for i := 0; i < len(t); i++ {
		x := t[i]
		switch {
		case x.kind == tIdent && x.text == "function":
			n := i + 1
			if s.punct(n, "*") {
				n++
			}
			name, nameIdx, paren := "", i, n
			if s.isName(n) {
				name, nameIdx, paren = t[n].text, n, n+1
			} else if s.punct(i-1, "=") && s.isName(i-2) || s.punct(i-1, ":") && s.isName(i-2) {
				name = t[i-2].text
			}
			if name == "" {
				name = "anonymous function"
			}
			if s.punct(paren, "(") {
				add(name, nameIdx, s.body(s.close(paren)))
			}
		case x.kind == tPunct && x.text == "=>":
			if !s.punct(i+1, "{") {
				continue
			}
			// Find the parameters: "(…)" or a single name before "=>".
			start := i - 1
			if !s.punct(start, ")") {
				// (a): T => {…}: find the parameter list before the return type.
				for k := i - 1; k >= 0 && k > i-30; k-- {
					if s.punct(k, ")") && s.punct(k+1, ":") {
						start = k
						break
					}
					if s.punct(k, ";") || s.punct(k, "{") || s.punct(k, "}") || s.punct(k, "=") {
						break
					}
				}
			}
			if s.punct(start, ")") && s.pair[start] >= 0 {
				start = s.pair[start]
			}
			if s.ident(start-1, "async") {
				start--
			}
			if start < 0 {
				start = i // "=>" opens the file: nothing names it
			}
			name := "arrow function"
			nameIdx := start
			if (s.punct(start-1, "=") || s.punct(start-1, ":")) && s.isName(start-2) {
				name, nameIdx = qualify(start-2, t[start-2].text), start-2
			} else if s.punct(start-1, "=") && s.punct(start-2, ">") {
				// const f: Handler<T> = (…) => {…}
				for k := start - 2; k >= 0 && k > start-40; k-- {
					if s.punct(k, ":") && s.isName(k-1) {
						name, nameIdx = t[k-1].text, k-1
						break
					}
				}
			}
			add(name, nameIdx, i+1)
		case x.kind == tIdent && s.punct(i+1, "(") && !jsKeywords[x.text] && !s.punct(i-1, "."):
			// A method: name(…) { at a statement position.
			prev := i - 1
			for prev >= 0 && t[prev].kind == tIdent && jsModifiers[t[prev].text] {
				prev--
			}
			if prev >= 0 && !(s.punct(prev, "{") || s.punct(prev, "}") || s.punct(prev, ";") || s.punct(prev, ",") || s.punct(prev, "*") || t[prev].line < x.line) {
				continue
			}
			if s.punct(prev, ",") && t[prev].depth == 0 {
				continue
			}
			closeP := s.close(i + 1)
			open := s.body(closeP)
			if open < 0 || s.punct(closeP+1, "=>") {
				continue
			}
			// Not a call followed by a block on the next statement.
			if t[open].line > t[closeP].line+1 && !s.punct(closeP+1, ":") {
				continue
			}
			add(qualify(i, x.text), i, open)
		}
	}
	return sites
}

// jsSQL finds SQL built by concatenation or template interpolation.
func jsSQL(s *tstream, f *Facts) {
	t := s.t
	for i, x := range t {
		switch x.kind {
		case tString:
			if !isSQL(x.text) {
				continue
			}
			if s.punct(i+1, "+") && !isLiteral(t, i+2) || s.punct(i-1, "+") && !isLiteral(t, i-2) || s.punct(i+1, "+=") {
				f.signal(SignalSecurity, x.line, "builds SQL by string concatenation")
			}
		case tTemplate:
			tagged := s.isName(i-1) && !jsKeywords[t[i-1].text] || s.punct(i-1, ")") || s.punct(i-1, "]")
			if x.subst && isSQL(x.text) && !tagged {
				f.signal(SignalSecurity, x.line, "builds SQL with template interpolation")
			}
		}
	}
}

func isLiteral(t []tok, i int) bool {
	return i >= 0 && i < len(t) && (t[i].kind == tString || t[i].kind == tNumber || t[i].kind == tTemplate && !t[i].subst)
}
