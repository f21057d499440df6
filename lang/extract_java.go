package lang

import (
	"strings"
)

var springMappings = map[string]string{
	"GetMapping": "GET", "PostMapping": "POST", "PutMapping": "PUT", "DeleteMapping": "DELETE",
	"PatchMapping": "PATCH", "RequestMapping": "",
}

var javaTypeKinds = set("class", "interface", "enum", "record")

var javaNotMethods = set("if", "for", "while", "switch", "catch", "synchronized", "return", "new", "throw",
	"else", "try", "do", "assert", "case", "super", "this")

func extractJava(p, text string, f *Facts) {
	s := newStream(lex(text, lexOpts{java: true}))
	t := s.t
	type jtype struct {
		name      string
		open, end int
		public    bool
		prefix    []string // class-level @RequestMapping paths
	}
	var types []*jtype
	typeAt := func(i int) *jtype {
		for k := len(types) - 1; k >= 0; k-- {
			if i > types[k].open && i < types[k].end && t[i].depth == t[types[k].open].depth+1 {
				return types[k]
			}
		}
		return nil
	}
	for i := 0; i < len(t); i++ {
		x := t[i]
		switch {
		case x.kind == tIdent && x.text == "package" && x.depth == 0 && !s.punct(i-1, "."):
			name, _ := javaDotted(s, i+1)
			f.Package = name
		case x.kind == tIdent && x.text == "import" && x.depth == 0:
			j := i + 1
			if s.ident(j, "static") {
				j++
			}
			name, _ := javaDotted(s, j)
			if name != "" {
				f.addImport(importRef{spec: name})
			}
		case x.kind == tIdent && javaTypeKinds[x.text] && s.isName(i+1) && !s.punct(i-1, ".") && !s.punct(i+1, "("):
			if x.text == "record" && !s.punct(i+2, "(") && !s.punct(i+2, "<") {
				continue // "record" used as a name
			}
			kind := x.text
			if s.punct(i-1, "@") {
				kind = "@interface"
			}
			open := -1
			for j := i + 2; j < len(t); j++ {
				if s.punct(j, "{") {
					open = j
					break
				}
				if s.punct(j, ";") {
					break
				}
				if s.punct(j, "(") {
					j = s.close(j)
				}
			}
			if open < 0 {
				continue
			}
			start := s.stmtStart(i)
			jt := &jtype{name: t[i+1].text, open: open, end: s.close(open), public: javaHasModifier(s, start, i, "public")}
			if outer := typeAt(i); outer != nil {
				jt.name = outer.name + "." + jt.name
			}
			for _, a := range javaAnnotations(s, start, i) {
				if a.name == "RequestMapping" {
					jt.prefix = a.paths
				}
				if a.name == "SpringBootApplication" {
					f.framework("spring-boot")
				}
			}
			types = append(types, jt)
			if jt.public && (x.depth == 0 || typeAt(i) != nil && typeAt(i).public) {
				f.Exports = append(f.Exports, kind+" "+jt.name)
			}
		case x.kind == tIdent && s.punct(i+1, "(") && !javaNotMethods[x.text] && !s.punct(i-1, ".") && !s.ident(i-1, "new"):
			jt := typeAt(i)
			if jt == nil {
				continue
			}
			// A declaration has a type (or type parameters) before the name.
			if !(s.isName(i-1) || s.punct(i-1, ">") || s.punct(i-1, "]")) || javaNotMethods[t[i-1].text] {
				if !(x.text == lastSegment(jt.name)) { // constructors have no type
					continue
				}
			}
			closeP := s.close(i + 1)
			open := s.body(closeP)
			start := s.stmtStart(i)
			public := javaHasModifier(s, start, i, "public")
			if x.text == "main" && public && javaHasModifier(s, start, i, "static") && s.ident(i-1, "void") {
				f.Main, f.MainLine = true, x.line
			}
			if open >= 0 {
				f.Funcs = append(f.Funcs, s.fn(jt.name+"."+x.text, i, open, cBranch))
			}
			if public && jt.public && x.text != lastSegment(jt.name) {
				f.Exports = append(f.Exports, "method "+jt.name+"."+x.text)
			}
			for _, a := range javaAnnotations(s, start, i) {
				m, ok := springMappings[a.name]
				if !ok {
					continue
				}
				methods := []string{m}
				if m == "" {
					methods = a.methods
					if len(methods) == 0 {
						methods = []string{"ANY"}
					}
				}
				paths := a.paths
				if len(paths) == 0 {
					paths = []string{""}
				}
				prefixes := jt.prefix
				if len(prefixes) == 0 {
					prefixes = []string{""}
				}
				for _, pre := range prefixes {
					for _, pth := range paths {
						full := joinRoute(pre, pth)
						if full == "" {
							full = "/"
						}
						for _, mm := range methods {
							f.Routes = append(f.Routes, Route{Method: mm, Path: full, Handler: lastSegment(jt.name) + "." + x.text, Line: a.line, Framework: "spring"})
						}
					}
				}
			}
		}
		javaSignal(s, i, f)
	}
	for _, imp := range f.Imports {
		if strings.HasPrefix(imp, "org.springframework") {
			f.framework("spring")
		}
		if strings.HasPrefix(imp, "picocli") {
			f.framework("picocli")
		}
	}
	s.loopSignals(f)
}

func lastSegment(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// javaDotted reads "a.b.C" or "a.b.*" at i.
func javaDotted(s *tstream, i int) (string, int) {
	var b strings.Builder
	for i < len(s.t) {
		if s.isName(i) {
			b.WriteString(s.t[i].text)
		} else if s.punct(i, "*") {
			b.WriteString("*")
		} else {
			break
		}
		if !s.punct(i+1, ".") {
			i++
			break
		}
		b.WriteString(".")
		i += 2
	}
	return b.String(), i
}

// javaHasModifier reports whether the identifier mod appears among the
// modifiers between start and i (annotations skipped).
func javaHasModifier(s *tstream, start, i int, mod string) bool {
	for j := start; j < i; j++ {
		if s.punct(j, "@") {
			j++ // the annotation's name
			for s.punct(j+1, ".") && s.isName(j+2) {
				j += 2
			}
			if s.punct(j+1, "(") {
				j = s.close(j + 1)
			}
			continue
		}
		if s.ident(j, mod) {
			return true
		}
	}
	return false
}

type javaAnnotation struct {
	name    string
	line    int
	paths   []string
	methods []string
}

// javaAnnotations returns the annotations between start and i with their
// path (value/path) and method (RequestMethod.X) arguments.
func javaAnnotations(s *tstream, start, i int) []javaAnnotation {
	var out []javaAnnotation
	for j := start; j < i; j++ {
		if !s.punct(j, "@") || !s.isName(j+1) {
			continue
		}
		k := j + 1
		for s.punct(k+1, ".") && s.isName(k+2) {
			k += 2
		}
		a := javaAnnotation{name: s.t[k].text, line: s.t[j].line}
		if s.punct(k+1, "(") {
			end := s.close(k + 1)
			key := "value"
			for m := k + 2; m < end; m++ {
				if s.isName(m) && s.punct(m+1, "=") {
					key = s.t[m].text
					continue
				}
				if v, ok := s.str(m); ok && (key == "value" || key == "path") {
					a.paths = append(a.paths, v)
				}
				if key == "method" && s.ident(m, "RequestMethod") && s.punct(m+1, ".") && s.isName(m+2) {
					a.methods = append(a.methods, s.t[m+2].text)
				}
			}
			j = end
		} else {
			j = k
		}
		out = append(out, a)
	}
	return out
}

// javaSignal records security indicators at token i.
func javaSignal(s *tstream, i int, f *Facts) {
	t := s.t
	x := t[i]
	switch x.kind {
	case tIdent:
		switch x.text {
		case "exec":
			if s.punct(i-1, ".") && s.punct(i-2, ")") && s.ident(i-4, "getRuntime") {
				f.signal(SignalSecurity, x.line, "runs an OS command (Runtime.exec)")
			}
		case "ProcessBuilder":
			if s.ident(i-1, "new") {
				f.signal(SignalSecurity, x.line, "runs an OS command (ProcessBuilder)")
			}
		case "ObjectInputStream":
			if s.ident(i-1, "new") {
				f.signal(SignalSecurity, x.line, "deserializes Java objects (ObjectInputStream)")
			}
		case "getInstance":
			if s.ident(i-2, "MessageDigest") && s.punct(i+1, "(") {
				if v, ok := s.str(i + 2); ok {
					u := strings.ToUpper(v)
					if u == "MD5" || u == "SHA-1" || u == "SHA1" {
						f.signal(SignalSecurity, x.line, "uses a weak hash (MessageDigest \""+v+"\")")
					}
				}
			}
		case "NoopHostnameVerifier", "ALLOW_ALL_HOSTNAME_VERIFIER":
			f.signal(SignalSecurity, x.line, "disables TLS hostname verification ("+x.text+")")
		}
	case tString:
		if isSQL(x.text) && (s.punct(i+1, "+") && !isLiteral(t, i+2) || s.punct(i-1, "+") && !isLiteral(t, i-2) || s.punct(i+1, "+=")) {
			f.signal(SignalSecurity, x.line, "builds SQL by string concatenation")
		}
	}
}
