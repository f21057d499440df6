package lang

import (
	"go/ast"
	"path"
	"strconv"
	"strings"
)

// goCLIFrameworks are the CLI libraries whose commands goCLI finds.
var goCLIFrameworks = set("cobra", "kingpin", "urfave/cli")

// goImportName is the name an import binds in the file: its alias, else
// the last element of its path without a /vN or gopkg.in .vN suffix.
func goImportName(spec *ast.ImportSpec, imp string) string {
	if spec.Name != nil {
		return spec.Name.Name
	}
	base := path.Base(imp)
	if len(base) > 1 && base[0] == 'v' {
		if _, err := strconv.Atoi(base[1:]); err == nil {
			base = path.Base(path.Dir(imp))
		}
	}
	if i := strings.LastIndex(base, ".v"); i > 0 {
		if _, err := strconv.Atoi(base[i+2:]); err == nil {
			base = base[:i]
		}
	}
	return base
}

// commandWithHelp formats a command as the extractors list it (Go and
// Python alike): its full name ("check config"), then its help text when
// the code states it.
func commandWithHelp(name, help string) string {
	if help = strings.TrimSpace(help); help != "" {
		return name + ": " + capRunes(help, 120)
	}
	return name
}

// goKingpin finds kingpin commands: app.Command("name", "help") on an
// application or a parent command, and kingpin.Command(…) on the default
// application. A command assigned to a variable is the parent of the
// commands declared on it, so nested commands get their full name
// ("check config").
//
// Calls on another imported package (exec.Command) are not commands.
func goKingpin(file *ast.File, f *Facts, pkg string, imported map[string]bool) {
	paths := map[string]string{} // command variable → full command name
	handled := map[*ast.CallExpr]bool{}
	// visit records the commands of a call chain and returns the full name
	// of the last one ("" when the chain declares none).
	visit := func(call *ast.CallExpr) string {
		base, links := chain(call)
		if len(links) == 0 || base != pkg && imported[base] {
			return ""
		}
		for _, l := range links {
			handled[l.call] = true
		}
		parent := paths[base] // "" for the application, kingpin itself or an unknown receiver
		last := ""
		for _, l := range links {
			if l.name != "Command" || len(l.call.Args) == 0 {
				continue
			}
			name, ok := goString(l.call.Args[0])
			if !ok || strings.TrimSpace(name) == "" {
				continue
			}
			help := ""
			if len(l.call.Args) > 1 {
				help, _ = goString(l.call.Args[1])
			}
			full := strings.TrimSpace(parent + " " + name)
			f.Commands = append(f.Commands, commandWithHelp(full, help))
			parent, last = full, full
		}
		return last
	}
	assign := func(lhs ast.Expr, rhs ast.Expr) {
		id, ok := lhs.(*ast.Ident)
		call, ok2 := rhs.(*ast.CallExpr)
		if !ok || !ok2 || handled[call] {
			return
		}
		if full := visit(call); full != "" && id.Name != "_" {
			paths[id.Name] = full
		}
	}
	ast.Inspect(file, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.AssignStmt:
			if len(x.Lhs) == len(x.Rhs) {
				for i := range x.Lhs {
					assign(x.Lhs[i], x.Rhs[i])
				}
			}
		case *ast.ValueSpec:
			if len(x.Names) == len(x.Values) {
				for i := range x.Names {
					assign(x.Names[i], x.Values[i])
				}
			}
		case *ast.CallExpr:
			if !handled[x] {
				visit(x)
			}
		}
		return true
	})
}

// goUrfave finds urfave/cli commands: cli.Command{Name: "name", Usage:
// "help"} literals (with & or not), the elided literals of a []cli.Command
// or []*cli.Command, and their Subcommands (v2) or Commands (v3) with
// their full name ("db migrate").
func goUrfave(file *ast.File, f *Facts, pkg string) {
	isCommand := func(e ast.Expr) bool {
		if st, ok := e.(*ast.StarExpr); ok {
			e = st.X
		}
		sel, ok := e.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Command" {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == pkg
	}
	handled := map[*ast.CompositeLit]bool{}
	// elems returns the command literals of a []cli.Command literal.
	elems := func(lit *ast.CompositeLit) []*ast.CompositeLit {
		var out []*ast.CompositeLit
		for _, e := range lit.Elts {
			if u, ok := e.(*ast.UnaryExpr); ok {
				e = u.X
			}
			if c, ok := e.(*ast.CompositeLit); ok && (c.Type == nil || isCommand(c.Type)) {
				out = append(out, c)
			}
		}
		return out
	}
	var command func(lit *ast.CompositeLit, parent string)
	command = func(lit *ast.CompositeLit, parent string) {
		handled[lit] = true
		var name, usage string
		var subs []*ast.CompositeLit
		eachField(lit, func(key string, v ast.Expr) {
			switch key {
			case "Name":
				name, _ = goString(v)
			case "Usage":
				usage, _ = goString(v)
			case "Subcommands", "Commands":
				if arr, ok := v.(*ast.CompositeLit); ok {
					subs = append(subs, elems(arr)...)
				}
			}
		})
		full := parent
		if name = strings.TrimSpace(name); name != "" {
			full = strings.TrimSpace(parent + " " + name)
			f.Commands = append(f.Commands, commandWithHelp(full, usage))
		}
		for _, s := range subs {
			command(s, full)
		}
	}
	ast.Inspect(file, func(x ast.Node) bool {
		lit, ok := x.(*ast.CompositeLit)
		if !ok || handled[lit] {
			return true
		}
		switch t := lit.Type.(type) {
		case *ast.ArrayType:
			if isCommand(t.Elt) {
				for _, c := range elems(lit) {
					if !handled[c] {
						command(c, "")
					}
				}
			}
		default:
			if t != nil && isCommand(t) {
				command(lit, "")
			}
		}
		return true
	})
}
