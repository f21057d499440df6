package lang

import (
	"strings"
)

var rustFrameworks = map[string]string{
	"axum": "axum", "actix_web": "actix-web", "rocket": "rocket", "warp": "warp", "clap": "clap",
	"tokio": "tokio", "hyper": "hyper", "tonic": "tonic",
}

var rustRouteMethods = map[string]string{
	"get": "GET", "post": "POST", "put": "PUT", "delete": "DELETE", "patch": "PATCH",
	"head": "HEAD", "options": "OPTIONS", "trace": "TRACE", "any": "ANY",
}

var rustItemKinds = set("fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union", "use", "macro")

func extractRust(p, text string, f *Facts) {
	if strings.HasPrefix(strings.TrimSpace(text), "//!") || strings.HasPrefix(strings.TrimSpace(text), "/*!") {
		f.Doc = leadingDoc(text)
	}
	s := newStream(lex(text, lexOpts{rust: true}))
	t := s.t
	// impl blocks: the type whose methods are inside, for names.
	type impl struct {
		name      string
		open, end int
		trait     bool
	}
	var impls []impl
	for i := 0; i < len(t); i++ {
		if !s.ident(i, "impl") || s.punct(i-1, ".") {
			continue
		}
		j := i + 1
		if s.punct(j, "<") {
			j = skipAngles(s, j)
		}
		name, trait := "", false
		for ; j < len(t); j++ {
			if s.punct(j, "{") {
				break
			}
			if s.punct(j, ";") {
				j = -1
				break
			}
			if s.ident(j, "for") {
				trait = true
				name = ""
				continue
			}
			if s.ident(j, "where") {
				for j < len(t) && !s.punct(j, "{") {
					j++
				}
				break
			}
			if s.punct(j, "<") {
				j = skipAngles(s, j) - 1
				continue
			}
			if s.isName(j) && name == "" && !s.ident(j, "dyn") && !s.ident(j, "mut") {
				name = t[j].text
			} else if s.punct(j, "::") {
				name = ""
			}
		}
		if j > 0 && j < len(t) {
			impls = append(impls, impl{name, j, s.close(j), trait})
		}
	}
	implOf := func(i int) *impl {
		for k := len(impls) - 1; k >= 0; k-- {
			if i > impls[k].open && i < impls[k].end && t[i].depth == t[impls[k].open].depth+1 {
				return &impls[k]
			}
		}
		return nil
	}
	macroExport := false
	for i := 0; i < len(t); i++ {
		x := t[i]
		if x.kind == tPunct && x.text == "#" && s.punct(i+1, "[") {
			end := s.close(i + 1)
			if s.ident(i+2, "macro_export") {
				macroExport = true
			}
			rustAttrRoute(s, i+2, end, f)
			i = end
			continue
		}
		if x.kind != tIdent {
			continue
		}
		switch x.text {
		case "use":
			if s.punct(i-1, "::") || s.punct(i-1, ".") {
				continue
			}
			end := i + 1
			for end < len(t) && !s.punct(end, ";") {
				end++
			}
			paths := rustUseTree(s, i+1, end)
			for _, u := range paths {
				f.addImport(importRef{spec: u})
			}
			if s.ident(i-1, "pub") && x.depth == 0 {
				for _, u := range paths {
					f.Exports = append(f.Exports, "use "+u)
				}
			}
			i = end
		case "mod":
			if s.isName(i+1) && s.punct(i+2, ";") {
				f.addImport(importRef{spec: "mod " + t[i+1].text, rustMod: true})
			}
		case "extern":
			if s.ident(i+1, "crate") && s.isName(i+2) {
				f.addImport(importRef{spec: t[i+2].text})
			}
		case "fn":
			if !s.isName(i + 1) {
				continue
			}
			name := t[i+1].text
			im := implOf(i)
			qual := name
			if im != nil && im.name != "" {
				qual = im.name + "::" + name
			}
			if name == "main" && x.depth == 0 {
				f.Main, f.MainLine = true, x.line
			}
			j := i + 2
			if s.punct(j, "<") {
				j = skipAngles(s, j)
			}
			if s.punct(j, "(") {
				if open := s.body(s.close(j)); open >= 0 {
					f.Funcs = append(f.Funcs, s.fn(qual, i+1, open, rustBranch))
				}
			}
			if im != nil && !im.trait && rustPublic(s, i) {
				f.Exports = append(f.Exports, "fn "+qual)
			}
		case "unsafe":
			if s.punct(i+1, "{") {
				f.signal(SignalSecurity, x.line, "unsafe block")
			} else if s.ident(i+1, "fn") || s.ident(i+1, "impl") {
				f.signal(SignalSecurity, x.line, "unsafe "+t[i+1].text)
			}
		case "macro_rules":
			if s.punct(i+1, "!") && s.isName(i+2) && macroExport {
				f.Exports = append(f.Exports, "macro "+t[i+2].text)
				macroExport = false
			}
		case "format":
			if s.punct(i+1, "!") && s.punct(i+2, "(") {
				if v, ok := s.str(i + 3); ok && isSQL(v) && strings.Contains(v, "{") {
					f.signal(SignalSecurity, x.line, "builds SQL with format!")
				}
			}
		case "Command":
			if s.punct(i+1, "::") && s.ident(i+2, "new") && s.punct(i+3, "(") {
				v, ok := s.str(i + 4)
				switch {
				case ok && (v == "sh" || v == "bash" || v == "cmd" || v == "powershell"):
					f.signal(SignalSecurity, x.line, "runs a shell command (Command::new(\""+v+"\"))")
				case !ok:
					f.signal(SignalSecurity, x.line, "runs a command whose name is computed at run time (Command::new)")
				}
			}
		case "danger_accept_invalid_certs", "danger_accept_invalid_hostnames":
			if s.punct(i+1, "(") && s.ident(i+2, "true") {
				f.signal(SignalSecurity, x.line, "disables TLS certificate verification ("+x.text+"(true))")
			}
		case "route", "resource":
			if s.punct(i-1, ".") || s.punct(i-1, "::") {
				rustRouteCall(s, i, f)
			}
		case "nest":
			if s.punct(i-1, ".") && s.punct(i+1, "(") {
				if v, ok := s.str(i + 2); ok {
					f.Routes = append(f.Routes, Route{Method: "MOUNT", Path: v, Line: x.line, Framework: "axum"})
				}
			}
		}
		// Public items at the top level (and in inline modules).
		if x.text == "pub" && !s.punct(i+1, "(") && implOf(i) == nil {
			j := i + 1
			for j < len(t) && (s.ident(j, "async") || s.ident(j, "unsafe") || s.ident(j, "extern") || s.ident(j, "const") && s.ident(j+1, "fn") || t[j].kind == tString) {
				j++
			}
			if s.isName(j) && rustItemKinds[t[j].text] && t[j].text != "use" && s.isName(j+1) {
				f.Exports = append(f.Exports, t[j].text+" "+t[j+1].text)
			}
		}
	}
	for _, imp := range f.Imports {
		root, _, _ := strings.Cut(imp, "::")
		if fw := rustFrameworks[root]; fw != "" {
			f.framework(fw)
		}
	}
	s.loopSignals(f)
}

// rustPublic reports whether the fn at i is declared plain pub (not
// pub(crate)).
func rustPublic(s *tstream, i int) bool {
	for j := i - 1; j >= 0 && j > i-5; j-- {
		if s.ident(j, "pub") {
			return !s.punct(j+1, "(")
		}
		if !(s.ident(j, "async") || s.ident(j, "unsafe") || s.ident(j, "const") || s.ident(j, "extern") || s.t[j].kind == tString) {
			if s.punct(j, ")") && s.pair[j] >= 0 && s.ident(s.pair[j]-1, "pub") {
				return false
			}
			return false
		}
	}
	return false
}

// skipAngles returns the index after the ">" closing the "<" at i.
func skipAngles(s *tstream, i int) int {
	nest := 0
	for j := i; j < len(s.t); j++ {
		if s.t[j].kind != tPunct {
			continue
		}
		switch s.t[j].text {
		case "<":
			nest++
		case ">":
			nest--
		case ">>":
			nest -= 2
		case "->":
		case "{", ";":
			return j
		}
		if nest <= 0 {
			return j + 1
		}
	}
	return len(s.t)
}

// rustUseTree expands a use tree "a::b::{c, d::e as f, *}" into paths.
func rustUseTree(s *tstream, start, end int) []string {
	var out []string
	var walk func(prefix string, i, end int)
	walk = func(prefix string, i, end int) {
		cur := prefix
		for i < end {
			switch {
			case s.punct(i, "{"):
				close := s.close(i)
				walk(cur, i+1, close)
				cur = prefix
				i = close + 1
			case s.punct(i, ","):
				if cur != prefix {
					out = append(out, cur)
				}
				cur = prefix
				i++
			case s.ident(i, "as"):
				i += 2
			case s.punct(i, "::"):
				i++
			case s.punct(i, "*"):
				cur = joinPath(cur, "*")
				i++
			case s.isName(i):
				cur = joinPath(cur, s.t[i].text)
				i++
			default:
				i++
			}
		}
		if cur != prefix {
			out = append(out, cur)
		}
	}
	walk("", start, end)
	return out
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "::" + b
}

// rustBranch counts decision points: if, while, for, match arms, && and ||.
func rustBranch(s *tstream, k int) bool {
	t := s.t[k]
	switch t.kind {
	case tIdent:
		switch t.text {
		case "if", "while", "for":
			return !s.punct(k-1, ".")
		}
	case tPunct:
		switch t.text {
		case "&&", "||", "=>":
			return true
		}
	}
	return false
}

// rustAttrRoute handles #[get("/p")], #[post(…)], #[route("/p", method = "GET")].
func rustAttrRoute(s *tstream, i, end int, f *Facts) {
	t := s.t
	if !s.isName(i) || !s.punct(i+1, "(") {
		return
	}
	name := t[i].text
	p, ok := s.str(i + 2)
	if !ok {
		return
	}
	var methods []string
	if m, ok := rustRouteMethods[name]; ok {
		methods = []string{m}
	} else if name == "route" {
		for j := i + 3; j < end; j++ {
			if s.ident(j, "method") && s.punct(j+1, "=") {
				if v, ok := s.str(j + 2); ok {
					methods = append(methods, strings.ToUpper(v))
				}
			}
		}
		if len(methods) == 0 {
			methods = []string{"ANY"}
		}
	} else {
		return
	}
	// The handler is the next fn.
	h := ""
	for j := end + 1; j < len(t) && j < end+60; j++ {
		if s.ident(j, "fn") && s.isName(j+1) {
			h = t[j+1].text
			break
		}
	}
	fw := "actix-web"
	for _, imp := range f.Imports {
		if strings.HasPrefix(imp, "rocket") {
			fw = "rocket"
		}
	}
	for _, m := range methods {
		f.Routes = append(f.Routes, Route{Method: m, Path: p, Handler: h, Line: t[i].line, Framework: fw})
	}
}

// rustRouteCall handles axum's .route("/p", get(h).post(h2)), actix's
// .route("/p", web::get().to(h)) and web::resource("/p").route(web::post().to(h)).
func rustRouteCall(s *tstream, i int, f *Facts) {
	t := s.t
	if !s.punct(i+1, "(") {
		return
	}
	args := s.callArgs(i + 1)
	if len(args) == 0 {
		return
	}
	resource := t[i].text == "resource"
	p, hasPath := s.str(args[0][0])
	if !hasPath || args[0][1]-args[0][0] != 1 {
		if resource {
			return
		}
		// web::resource("/p").route(web::get().to(h)): the path is on the resource.
		p = ""
		for j := i - 2; j >= 0 && j > i-40; j-- {
			if s.punct(j, ")") && s.pair[j] >= 0 {
				o := s.pair[j]
				if s.ident(o-1, "resource") {
					p, hasPath = s.str(o + 1)
					break
				}
				j = o
				continue
			}
			if s.punct(j, ";") || s.punct(j, "{") {
				break
			}
		}
		if !hasPath {
			return
		}
		rustMethods(s, i+2, s.close(i+1), p, f)
		return
	}
	if resource {
		return // the methods come with the chained .route(…) calls
	}
	if len(args) < 2 {
		return
	}
	rustMethods(s, args[1][0], args[1][1], p, f)
}

// rustMethods records a route for each method-router call in [from, to).
func rustMethods(s *tstream, from, to int, p string, f *Facts) {
	t := s.t
	first := len(f.Routes)
	for j := from; j < to; j++ {
		if !s.isName(j) || !s.punct(j+1, "(") {
			continue
		}
		if m, ok := rustRouteMethods[t[j].text]; ok && !(s.punct(j-1, ".") && !s.punct(j-2, ")")) {
			r := Route{Method: m, Path: p, Line: t[j].line, Framework: "axum"}
			if s.punct(j-1, "::") && s.ident(j-2, "web") {
				r.Framework = "actix-web"
			} else if s.isName(j+2) && s.punct(j+3, ")") {
				r.Handler = t[j+2].text
			}
			f.Routes = append(f.Routes, r)
		}
		if t[j].text == "to" && s.punct(j-1, ".") && s.isName(j+2) && len(f.Routes) > first {
			f.Routes[len(f.Routes)-1].Handler = t[j+2].text
		}
	}
}
