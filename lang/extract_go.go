package lang

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"unicode/utf8"
)

// sqlRe matches a string that is (the start of) a SQL statement.
var sqlRe = regexps.MustCompile(`(?is)\b(select\s.*\bfrom\b|insert\s+into\b|update\s+\S+\s+set\b|delete\s+from\b|where\s+\w+\s*(=|like|in)\s*$)`)

// sqlWords are the words one of which every match of sqlRe holds.
var sqlWords = []string{"select", "insert", "update", "delete", "where"}

// isSQL is sqlRe().MatchString(s), the pattern run only on a string that
// holds one of sqlWords in any case: it ran on every string literal of
// every file extracted (express's range: 4 of its 12 ms extracting 60
// JavaScript files). A string with a byte over ASCII goes to the pattern
// as it is: (?i) folds 'ſ' to 's' and the Kelvin sign to 'k'.
func isSQL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return sqlRe().MatchString(s)
		}
	}
	for _, w := range sqlWords {
		if containsFoldASCII(s, w) {
			return sqlRe().MatchString(s)
		}
	}
	return false
}

// containsFoldASCII reports whether s holds w (lower-case ASCII) in any
// ASCII case.
func containsFoldASCII(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i]|0x20 != w[0] {
			continue
		}
		j := 1
		for j < len(w) && s[i+j]|0x20 == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// goRouterImports maps import paths to the framework names of the HTTP
// routers and CLI libraries the Go extractor recognizes.
var goRouterImports = map[string]string{
	"net/http":                            "net/http",
	"github.com/gin-gonic/gin":            "gin",
	"github.com/labstack/echo":            "echo",
	"github.com/go-chi/chi":               "chi",
	"github.com/gorilla/mux":              "gorilla/mux",
	"github.com/gofiber/fiber":            "fiber",
	"github.com/spf13/cobra":              "cobra",
	"github.com/julienschmidt/httprouter": "httprouter",
	"github.com/alecthomas/kingpin":       "kingpin",
	"gopkg.in/alecthomas/kingpin":         "kingpin",
	"github.com/urfave/cli":               "urfave/cli",
	"gopkg.in/urfave/cli":                 "urfave/cli",
}

// goFramework returns the framework of an import path, allowing a /vN or
// gopkg.in .vN suffix.
func goFramework(imp string) string {
	if fw, ok := goRouterImports[imp]; ok {
		return fw
	}
	// A major version suffix: /v5, or gopkg.in's .v2.
	for _, sep := range []string{"/v", ".v"} {
		if i := strings.LastIndex(imp, sep); i > 0 {
			if _, err := strconv.Atoi(imp[i+2:]); err == nil {
				return goRouterImports[imp[:i]]
			}
		}
	}
	return ""
}

// goRouteMethods are router methods named after an HTTP method (gin, echo,
// fiber use upper case; chi and fiber title case).
var goRouteMethods = map[string]string{
	"GET": "GET", "POST": "POST", "PUT": "PUT", "DELETE": "DELETE", "PATCH": "PATCH", "HEAD": "HEAD", "OPTIONS": "OPTIONS",
	"Get": "GET", "Post": "POST", "Put": "PUT", "Delete": "DELETE", "Patch": "PATCH", "Head": "HEAD", "Options": "OPTIONS",
	"Connect": "CONNECT", "Trace": "TRACE", "Any": "ANY", "All": "ANY",
}

func extractGo(p, text string, f *Facts) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, p, text, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		f.ParseNote = "Go syntax error: " + capRunes(firstLine(err.Error()), 160)
	}
	if file == nil {
		return
	}
	line := func(pos token.Pos) int { return fset.Position(pos).Line }
	if file.Name != nil {
		f.Package = file.Name.Name
	}
	if file.Doc != nil {
		f.Doc = firstSentence(file.Doc.Text())
	}
	routers := false
	imported := map[string]bool{}     // names the imports bind
	importPath := map[string]string{} // name an import binds → its path
	cli := map[string]string{}        // CLI framework → the name its import binds
	for _, spec := range file.Imports {
		imp, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		f.addImport(importRef{spec: imp})
		name := goImportName(spec, imp)
		imported[name] = true
		importPath[name] = imp
		// A Go import is used (the compiler rejects unused ones), so the
		// import is the evidence of the framework.
		if fw := goFramework(imp); fw != "" {
			f.framework(fw)
			if goCLIFrameworks[fw] {
				cli[fw] = name
			} else {
				routers = true
			}
		}
		switch imp {
		case "crypto/md5", "crypto/sha1", "crypto/des", "crypto/rc4":
			f.signal(SignalSecurity, line(spec.Pos()), "imports "+imp+" (weak cryptography)")
		case "unsafe":
			f.signal(SignalSecurity, line(spec.Pos()), "imports unsafe (memory safety bypass)")
		}
	}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			recv := goRecvType(d)
			if recv == "" {
				if ast.IsExported(name) {
					f.Exports = append(f.Exports, "func "+name)
				}
				if name == "main" && f.Package == "main" {
					f.Main, f.MainLine = true, line(d.Pos())
				}
			} else {
				if ast.IsExported(name) && ast.IsExported(recv) {
					f.Exports = append(f.Exports, "method "+recv+"."+name)
				}
				name = recv + "." + name
			}
			start := d.Pos()
			if d.Doc != nil {
				start = d.Doc.Pos()
			}
			kind := KindFunction
			if recv != "" {
				kind = KindMethod
			}
			f.Symbols = append(f.Symbols, Symbol{Name: name, Kind: kind, Line: line(start), EndLine: line(d.End())})
			if d.Body != nil {
				fn := Func{Name: name, Line: line(d.Pos()), EndLine: line(d.End()), Complexity: goComplexity(d.Body)}
				fn.MaxNesting = goLoops(d.Body, 0, f, line)
				f.Funcs = append(f.Funcs, fn)
				if d.Name.Name != "init" {
					goPerFunction(d, f, line)
				}
			}
		case *ast.GenDecl:
			kind := ""
			switch d.Tok {
			case token.TYPE:
				kind = "type"
			case token.CONST:
				kind = "const"
			case token.VAR:
				kind = "var"
			}
			if kind == "" {
				continue
			}
			for _, s := range d.Specs {
				goSpecSymbols(d, s, kind, f, line)
				switch s := s.(type) {
				case *ast.TypeSpec:
					if ast.IsExported(s.Name.Name) {
						f.Exports = append(f.Exports, kind+" "+s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if ast.IsExported(n.Name) {
							f.Exports = append(f.Exports, kind+" "+n.Name)
						}
					}
				}
			}
		}
	}
	goSignals(file, f, line)
	if routers {
		w := &goRouteWalker{f: f, line: line, handled: map[ast.Node]bool{}, fws: map[string]string{}, imports: importPath}
		w.walk(file, map[string]string{})
	}
	goCobra(file, f)
	if name, ok := cli["kingpin"]; ok {
		goKingpin(file, f, name, imported)
	}
	if name, ok := cli["urfave/cli"]; ok {
		goUrfave(file, f, name)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// goRecvType is the receiver's type name of a method, "" for a function.
func goRecvType(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

// goComplexity is the cyclomatic complexity of a body: 1 + branches.
func goComplexity(body ast.Node) int {
	n := 1
	ast.Inspect(body, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// goLoops returns the deepest loop nesting under n and records loops nested
// three or more deep and defers inside loops.
func goLoops(n ast.Node, depth int, f *Facts, line func(token.Pos) int) int {
	max := depth
	ast.Inspect(n, func(x ast.Node) bool {
		if x == n {
			return true
		}
		var body *ast.BlockStmt
		switch x := x.(type) {
		case *ast.ForStmt:
			body = x.Body
		case *ast.RangeStmt:
			body = x.Body
		case *ast.FuncLit:
			if d := goLoops(x.Body, 0, f, line); d > max {
				max = d
			}
			return false
		case *ast.DeferStmt:
			if depth > 0 {
				f.signal(SignalPerformance, line(x.Pos()), "defer inside a loop (runs only when the function returns)")
			}
			return true
		default:
			return true
		}
		if depth+1 == 3 {
			f.signal(SignalPerformance, line(x.Pos()), "loops nested 3 deep")
		}
		if d := goLoops(body, depth+1, f, line); d > max {
			max = d
		}
		return false
	})
	return max
}

// goPerFunction records per-call costs inside function bodies.
func goPerFunction(d *ast.FuncDecl, f *Facts, line func(token.Pos) int) {
	ast.Inspect(d.Body, func(x ast.Node) bool {
		call, ok := x.(*ast.CallExpr)
		if !ok {
			return true
		}
		if pkg, fn := goCallee(call); pkg == "regexp" && (fn == "MustCompile" || fn == "Compile" || fn == "MatchString") {
			f.signal(SignalPerformance, line(call.Pos()), "compiles a regular expression on every call of "+goFuncName(d)+" (regexp."+fn+")")
		}
		return true
	})
}

func goFuncName(d *ast.FuncDecl) string {
	if r := goRecvType(d); r != "" {
		return r + "." + d.Name.Name
	}
	return d.Name.Name
}

// goCallee returns X and Sel of a call of the form X.Sel(...) with X an identifier.
func goCallee(call *ast.CallExpr) (string, string) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	if id, ok := sel.X.(*ast.Ident); ok {
		return id.Name, sel.Sel.Name
	}
	return "", sel.Sel.Name
}

func goString(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// goSignals finds security indicators anywhere in the file.
func goSignals(file *ast.File, f *Facts, line func(token.Pos) int) {
	seen := map[ast.Node]bool{}
	ast.Inspect(file, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.BinaryExpr:
			if x.Op != token.ADD || seen[x] {
				return true
			}
			var ops []ast.Expr
			var flat func(e ast.Expr)
			flat = func(e ast.Expr) {
				if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.ADD {
					seen[b] = true
					flat(b.X)
					flat(b.Y)
					return
				}
				ops = append(ops, e)
			}
			flat(x)
			sql, dynamic := false, false
			for _, o := range ops {
				if s, ok := goString(o); ok {
					if isSQL(s) {
						sql = true
					}
				} else if _, lit := o.(*ast.BasicLit); !lit {
					dynamic = true
				}
			}
			if sql && dynamic {
				f.signal(SignalSecurity, line(x.Pos()), "builds SQL by string concatenation")
			}
		case *ast.CallExpr:
			pkg, fn := goCallee(x)
			switch {
			case pkg == "fmt" && (fn == "Sprintf" || fn == "Fprintf") && len(x.Args) > 1:
				arg := x.Args[0]
				if fn == "Fprintf" {
					arg = x.Args[1]
				}
				if s, ok := goString(arg); ok && isSQL(s) && strings.ContainsAny(s, "%") {
					f.signal(SignalSecurity, line(x.Pos()), "builds SQL with fmt."+fn)
				}
			case pkg == "exec" && (fn == "Command" || fn == "CommandContext"):
				args := x.Args
				if fn == "CommandContext" && len(args) > 0 {
					args = args[1:]
				}
				if len(args) == 0 {
					break
				}
				name, lit := goString(args[0])
				switch {
				case lit && (name == "sh" || name == "bash" || name == "/bin/sh" || name == "/bin/bash" || name == "cmd" || name == "powershell"):
					f.signal(SignalSecurity, line(x.Pos()), "runs a shell command (exec."+fn+" "+strconv.Quote(name)+")")
				case !lit:
					f.signal(SignalSecurity, line(x.Pos()), "runs a command whose name is computed at run time (exec."+fn+")")
				}
			case pkg == "template" && fn == "HTML" && len(x.Args) == 1:
				if _, ok := goString(x.Args[0]); !ok {
					f.signal(SignalSecurity, line(x.Pos()), "marks dynamic content as safe HTML (template.HTML)")
				}
			}
		case *ast.KeyValueExpr:
			if k, ok := x.Key.(*ast.Ident); ok && k.Name == "InsecureSkipVerify" {
				if v, ok := x.Value.(*ast.Ident); ok && v.Name == "true" {
					f.signal(SignalSecurity, line(x.Pos()), "disables TLS certificate verification (InsecureSkipVerify: true)")
				}
			}
		}
		return true
	})
}

// goRouteWalker finds route registrations, following router groups and
// sub-routers by variable name within a scope.
type goRouteWalker struct {
	f       *Facts
	line    func(token.Pos) int
	handled map[ast.Node]bool
	// fws maps router variables to their framework, from their constructor
	// or declared type.
	fws map[string]string
	// imports maps the names the file's imports bind to their paths.
	imports map[string]string
}

// goRouterPkgs maps package names to frameworks, for router constructors.
var goRouterPkgs = map[string]string{"http": "net/http", "chi": "chi", "gin": "gin", "echo": "echo", "mux": "gorilla/mux", "fiber": "fiber", "httprouter": "httprouter"}

// note records the framework of a variable assigned from a router
// constructor (chi.NewRouter(), http.NewServeMux()) or from another router.
func (w *goRouteWalker) note(name string, rhs ast.Expr) {
	call, ok := rhs.(*ast.CallExpr)
	if !ok {
		return
	}
	base, links := chain(call)
	if fw, ok := w.fws[base]; ok {
		w.fws[name] = fw
		return
	}
	if len(links) == 0 {
		return
	}
	switch links[0].name {
	case "NewServeMux", "NewRouter", "New", "Default":
		if fw, ok := goRouterPkgs[base]; ok {
			w.fws[name] = fw
		} else if imp, ok := w.imports[base]; ok {
			// A router of a package the extractor does not know: its
			// import path is the evidence.
			w.fws[name] = imp
		}
	}
}

// params records the framework of router parameters from their declared
// type: r *gin.Engine, r chi.Router, or r *route.Router of a package the
// extractor does not know (labelled with its import path).
func (w *goRouteWalker) params(ft *ast.FuncType) {
	if ft == nil || ft.Params == nil {
		return
	}
	for _, field := range ft.Params.List {
		t := field.Type
		if st, ok := t.(*ast.StarExpr); ok {
			t = st.X
		}
		sel, ok := t.(*ast.SelectorExpr)
		if !ok {
			continue
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			continue
		}
		imp, ok := w.imports[pkg.Name]
		if !ok {
			continue
		}
		typ := sel.Sel.Name
		fw := goFramework(imp)
		switch {
		case fw != "" && !goCLIFrameworks[fw]:
			// gin.Engine, gin.RouterGroup, echo.Group, chi.Router, fiber.App…,
			// not http.Request or gin.Context.
			if !strings.Contains(typ, "Router") && !strings.Contains(typ, "Mux") && !strings.Contains(typ, "Routes") &&
				typ != "Engine" && typ != "Group" && typ != "Echo" && typ != "App" {
				continue
			}
		case strings.Contains(typ, "Router") || strings.Contains(typ, "Mux"):
			fw = imp
		default:
			continue
		}
		for _, n := range field.Names {
			w.fws[n.Name] = fw
		}
	}
}

// chainLink is one call of a method chain r.A(..).B(..).
type chainLink struct {
	name string
	call *ast.CallExpr
}

// chain flattens r.A(x).B(y) into its base identifier and links, innermost first.
func chain(call *ast.CallExpr) (string, []chainLink) {
	var links []chainLink
	var e ast.Expr = call
	for {
		c, ok := e.(*ast.CallExpr)
		if !ok {
			break
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok {
			return "", nil
		}
		links = append([]chainLink{{sel.Sel.Name, c}}, links...)
		e = sel.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name, links
	}
	return "", links
}

func joinRoute(prefix, p string) string {
	if prefix == "" {
		return p
	}
	if p == "" || p == "/" {
		return prefix
	}
	return strings.TrimSuffix(prefix, "/") + "/" + strings.TrimPrefix(p, "/")
}

// prefixOf returns the route prefix an expression denotes (a group or
// sub-router call, or a variable holding one).
func (w *goRouteWalker) prefixOf(e ast.Expr, scope map[string]string) (string, bool) {
	switch x := e.(type) {
	case *ast.Ident:
		p, ok := scope[x.Name]
		return p, ok
	case *ast.CallExpr:
		base, links := chain(x)
		prefix := scope[base]
		grouped := false
		for _, l := range links {
			switch l.name {
			case "Group", "PathPrefix", "Route":
				if len(l.call.Args) > 0 {
					if s, ok := goString(l.call.Args[0]); ok {
						prefix = joinRoute(prefix, s)
						grouped = true
					}
				}
			case "Subrouter", "With", "Use":
			default:
				return "", false
			}
		}
		return prefix, grouped
	}
	return "", false
}

func (w *goRouteWalker) walk(n ast.Node, scope map[string]string) {
	ast.Inspect(n, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.AssignStmt:
			for i, lhs := range x.Lhs {
				id, ok := lhs.(*ast.Ident)
				if !ok || i >= len(x.Rhs) {
					continue
				}
				if p, ok := w.prefixOf(x.Rhs[i], scope); ok {
					scope[id.Name] = p
				}
				w.note(id.Name, x.Rhs[i])
			}
		case *ast.ValueSpec:
			for i, id := range x.Names {
				if i < len(x.Values) {
					if p, ok := w.prefixOf(x.Values[i], scope); ok {
						scope[id.Name] = p
					}
					w.note(id.Name, x.Values[i])
				}
			}
		case *ast.FuncDecl:
			w.params(x.Type)
		case *ast.FuncLit:
			w.params(x.Type)
		case *ast.CallExpr:
			if w.handled[x] {
				return true
			}
			return w.call(x, scope)
		}
		return true
	})
}

// call handles one call expression; it returns false when it walked the
// call's function literal itself (chi's Route and Group).
func (w *goRouteWalker) call(call *ast.CallExpr, scope map[string]string) bool {
	base, links := chain(call)
	if len(links) == 0 {
		return true
	}
	for _, l := range links[:len(links)-1] {
		w.handled[l.call] = true
	}
	prefix := scope[base]
	var methods []string
	var route *Route
	for _, l := range links {
		args := l.call.Args
		switch l.name {
		case "Group", "Route":
			// chi: r.Route("/p", func(r chi.Router) {...}); r.Group(func(r chi.Router) {...})
			sub := prefix
			var fn *ast.FuncLit
			if len(args) == 2 {
				if s, ok := goString(args[0]); ok {
					sub = joinRoute(prefix, s)
				}
				fn, _ = args[1].(*ast.FuncLit)
			} else if len(args) == 1 {
				fn, _ = args[0].(*ast.FuncLit)
			}
			if fn != nil && len(fn.Type.Params.List) == 1 && len(fn.Type.Params.List[0].Names) == 1 {
				inner := make(map[string]string, len(scope)+1)
				for k, v := range scope {
					inner[k] = v
				}
				param := fn.Type.Params.List[0].Names[0].Name
				inner[param] = sub
				if fw, ok := w.fws[base]; ok {
					w.fws[param] = fw
				}
				w.walk(fn.Body, inner)
				return false
			}
			if len(args) > 0 {
				if s, ok := goString(args[0]); ok {
					prefix = joinRoute(prefix, s)
				}
			}
		case "PathPrefix":
			if len(args) > 0 {
				if s, ok := goString(args[0]); ok {
					prefix = joinRoute(prefix, s)
				}
			}
		case "Subrouter", "With", "Use", "Name", "Schemes", "Host", "Headers", "Queries":
		case "Methods":
			for _, a := range args {
				if s, ok := goString(a); ok {
					methods = append(methods, strings.ToUpper(s))
				}
			}
		case "HandlerFunc", "Handler":
			if route != nil && len(args) == 1 {
				route.Handler = goHandlerName(args[0])
			}
		case "HandleFunc", "Handle", "Path", "Mount", "Method", "MethodFunc":
			if r := w.routeOf(base, l.name, args, prefix); r != nil {
				route = r
			}
		default:
			if m, ok := goRouteMethods[l.name]; ok {
				if r := w.methodRoute(base, m, args, prefix); r != nil {
					route = r
				}
			}
		}
	}
	if route == nil {
		return true
	}
	if len(methods) == 0 {
		w.f.Routes = append(w.f.Routes, *route)
		return true
	}
	for _, m := range methods {
		r := *route
		r.Method = m
		w.f.Routes = append(w.f.Routes, r)
	}
	return true
}

// frameworkOf is the framework of a route registered on base: the
// variable's constructor or type, the package itself, or the file's router
// import. methodStyle routes (r.Get("/p", h)) are not net/http's API: on a
// router of unknown origin in a file whose only router import is net/http
// the framework is "" (not identified).
func (w *goRouteWalker) frameworkOf(base string, methodStyle bool) string {
	if fw, ok := w.fws[base]; ok {
		return fw
	}
	if fw, ok := goRouterPkgs[base]; ok {
		return fw
	}
	fw := w.framework()
	if fw == "net/http" && methodStyle {
		return ""
	}
	return fw
}

func (w *goRouteWalker) framework() string {
	for _, fw := range []string{"gin", "echo", "chi", "gorilla/mux", "fiber", "httprouter"} {
		for _, x := range w.f.Frameworks {
			if x == fw {
				return fw
			}
		}
	}
	return "net/http"
}

func goHandlerName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			return id.Name + "." + x.Sel.Name
		}
		return x.Sel.Name
	case *ast.FuncLit:
		return "func literal"
	case *ast.CallExpr:
		return goHandlerName(x.Fun) + "(…)"
	}
	return ""
}

// routeOf handles HandleFunc/Handle (net/http, mux, chi), gin's
// Handle(method, path), chi's Method(method, path) and Mount.
func (w *goRouteWalker) routeOf(base, name string, args []ast.Expr, prefix string) *Route {
	if len(args) == 0 {
		return nil
	}
	first, ok := goString(args[0])
	if !ok {
		return nil
	}
	method, p := "ANY", first
	rest := args[1:]
	if len(args) > 1 && (name == "Handle" || name == "Method" || name == "MethodFunc") {
		if s, ok := goString(args[1]); ok {
			method, p, rest = strings.ToUpper(first), s, args[2:]
		}
	}
	if name == "Mount" {
		method = "MOUNT"
	}
	if name == "HandleFunc" || name == "Handle" {
		// Go 1.22 patterns: "GET /path" or "POST example.com/path".
		if m, rest, ok := strings.Cut(p, " "); ok && m == strings.ToUpper(m) && m != "" {
			method, p = m, strings.TrimSpace(rest)
		}
	}
	if !strings.HasPrefix(p, "/") && !(name == "Path" && p == "") {
		if i := strings.IndexByte(p, '/'); i <= 0 || strings.Contains(p, "://") {
			return nil // not a path (a host-only pattern or a URL)
		}
	}
	r := &Route{Method: method, Path: joinRoute(prefix, p), Line: w.line(args[0].Pos()), Framework: w.frameworkOf(base, false)}
	if len(rest) > 0 {
		r.Handler = goHandlerName(rest[len(rest)-1])
	}
	return r
}

// methodRoute handles r.GET("/p", h) and friends.
func (w *goRouteWalker) methodRoute(base, method string, args []ast.Expr, prefix string) *Route {
	if base == "http" || len(args) < 2 {
		return nil // http.Get(url) is a client call
	}
	p, ok := goString(args[0])
	if !ok || !strings.HasPrefix(p, "/") && p != "" {
		return nil
	}
	r := &Route{Method: method, Path: joinRoute(prefix, p), Line: w.line(args[0].Pos()), Framework: w.frameworkOf(base, true)}
	if r.Path == "" {
		r.Path = "/"
	}
	r.Handler = goHandlerName(args[len(args)-1])
	return r
}

// goCobra finds &cobra.Command{Use: "name …", Short: "…"} literals.
func goCobra(file *ast.File, f *Facts) {
	ast.Inspect(file, func(x ast.Node) bool {
		lit, ok := x.(*ast.CompositeLit)
		if !ok {
			return true
		}
		sel, ok := lit.Type.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Command" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "cobra" {
			return true
		}
		var use, short string
		eachField(lit, func(key string, v ast.Expr) {
			switch key {
			case "Use":
				use, _ = goString(v)
			case "Short":
				short, _ = goString(v)
			}
		})
		name, _, _ := strings.Cut(strings.TrimSpace(use), " ")
		if name == "" {
			return true
		}
		cmd := name
		if short != "" {
			cmd += ": " + capRunes(strings.TrimSpace(short), 120)
		}
		f.Commands = append(f.Commands, cmd)
		return true
	})
}

// goSpecSymbols records the symbols one spec of a type, const or var
// declaration defines: a lone spec spans its whole declaration (with its
// doc comment), a spec of a grouped declaration its own lines.
func goSpecSymbols(d *ast.GenDecl, s ast.Spec, kind string, f *Facts, line func(token.Pos) int) {
	start, end := s.Pos(), s.End()
	if !d.Lparen.IsValid() {
		start, end = d.Pos(), d.End()
		if d.Doc != nil {
			start = d.Doc.Pos()
		}
	}
	switch s := s.(type) {
	case *ast.TypeSpec:
		f.Symbols = append(f.Symbols, Symbol{Name: s.Name.Name, Kind: KindType, Line: line(start), EndLine: line(end)})
	case *ast.ValueSpec:
		for _, n := range s.Names {
			if n.Name != "_" {
				f.Symbols = append(f.Symbols, Symbol{Name: n.Name, Kind: kind, Line: line(start), EndLine: line(end)})
			}
		}
	}
}

// eachField calls f with the field name and value of each `Name: value`
// element of a composite literal.
func eachField(lit *ast.CompositeLit, f func(key string, v ast.Expr)) {
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok {
				f(k.Name, kv.Value)
			}
		}
	}
}
