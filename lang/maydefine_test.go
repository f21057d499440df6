package lang

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestMayDefine(t *testing.T) {
	big := "package p\n\nfunc Name() {}\n" + strings.Repeat("// pad\n", extractMaxBytes/7)
	tests := []struct {
		name, path, text, word string
		want                   bool
	}{
		{"func", "p.go", "package p\n\nfunc Name() {}\n", "Name", true},
		{"method", "p.go", "package p\n\nfunc (r *T) Name() {}\n", "Name", true},
		{"generic receiver", "p.go", "package p\n\nfunc (r *T[K]) Name() {}\n", "Name", true},
		{"type", "p.go", "package p\n\ntype Name struct{}\n", "Name", true},
		{"grouped const after a doc comment ending in a dot", "p.go", "package p\n\nconst (\n\t// Name is one.\n\tName = 1\n)\n", "Name", true},
		{"second name of a var", "p.go", "package p\n\nvar a, Name = 1, 2\n", "Name", true},
		{"after a semicolon", "p.go", "package p\n\nconst a = 1.; const Name = 2\n", "Name", true},
		{"a block comment's end before it", "p.go", "package p\n\nfunc /* x. */ Name() {}\n", "Name", true},
		{"selector only", "p.go", "package p\n\nfunc f() { cmd.Name(); x. Name() }\n", "Name", false},
		{"inside longer words only", "p.go", "package p\n\nfunc PersistentName() {}\nfunc Name2() {}\nvar x_Name = 1\n", "Name", false},
		{"composite literal keys, labels and comment lines", "p.go", "package p\n\n// Name is not here.\nvar v = T{Name: 1}\nfunc f() {\nName:\n\tfor {}\n\t  // Name.\n}\n", "Name", false},
		{"a comment after a declaration", "p.go", "package p\n\nvar x = 1 // Name\nfunc Name() {}\n", "Name", true},
		{"a declaration after a raw string's last line", "p.go", "package p\n\nvar x = `\n// x`; func Name() {}\n", "Name", true},
		{"a declaration after a block comment's last line", "p.go", "package p\n\n/*\n// x */ func Name() {}\n", "Name", true},
		{"a declaration after a string holding //", "p.go", "package p\n\nvar u = \"http://x\"; const Name = 1\n", "Name", true},
		{"variadic type", "p.go", "package p\n\nfunc f(a ...Name) {}\n", "Name", false},
		{"selector across a line end may be anything", "p.go", "package p\n\nvar v = x.\n\tName\n", "Name", true},
		{"absent", "p.go", "package p\n", "Name", false},
		{"other languages always may", "a.py", "x.Name()", "Name", true},
		{"js: a method assigned", "r.js", "res.send = function send(body) {\n  return 1\n}\n", "send", true},
		{"js: calls and reads only", "r.js", "res.send(body);\napp.use(x)\nconst y = res.send\n", "send", false},
		{"js: a call starting a chain", "t.js", "request(app)\n  .get('/')\n  .expect(200, done)\n", "request", false},
		{"js: a called name assigned", "t.js", "var express = require('../')\nvar app = express()\n", "express", false},
		{"js: a class method", "c.js", "class A {\n  send(x) {\n    return x\n  }\n}\n", "send", true},
		{"js: an arrow", "a.js", "const f = async (a) => {\n  return a\n}\n", "f", true},
		{"js: an object's method", "o.js", "module.exports = {\n  send: function () {},\n}\n", "send", true},
		{"js: assigned through a dot on the next line", "o.js", "proto\n  .send = function () {}\n", "send", true},
		{"js: a comment between name and =", "o.js", "x.send /* c */ = function () {}\n", "send", true},
		{"ts: a function", "u.ts", "export function format(x: number): string {\n  return ''\n}\n", "format", true},
		{"ts: a generic function is not measured", "u.ts", "export function wrap<T>(x: T): T {\n  return x\n}\n", "wrap", false},
		{"js: a shebang line naming it", "s.js", "#!/usr/bin/env node send\nsend()\n", "send", false},
		{"js: a name no identifier is", "n.js", "const f = () => {}\n", "arrow function", false},
		{"js: the extractor's own name", "n.js", "x(() => {\n})\n", "arrow function", true},
		{"no extractor", "a.txt", "func Name() {}", "Name", false},
		{"over the extraction bound", "p.go", big, "Name", false},
		{"a name no Go identifier is", "p.go", "package p\n\nfunc f() { x.é() }\n", "é", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MayDefine(tt.path, tt.text, tt.word); got != tt.want {
				t.Errorf("MayDefine(%q) = %v, want %v", tt.word, got, tt.want)
			}
			defined := len(Defined(Extract(tt.path, tt.text).Symbols, tt.word)) > 0
			if !tt.want && defined {
				t.Errorf("Extract defines %q where MayDefine says it cannot", tt.word)
			}
			if js := langOf(tt.path) == LangJavaScript || langOf(tt.path) == LangTypeScript; js && defined != tt.want {
				t.Errorf("Extract defines %q: %v; MayDefine, exact for %s, says %v", tt.word, defined, tt.path, tt.want)
			}
		})
	}
}

// TestMayDefineOnThisModule holds MayDefine to Extract on real Go: every
// Go file of this module, every word in it. It also says how many
// extractions it spares (the point of it), without asserting a figure.
func TestMayDefineOnThisModule(t *testing.T) {
	word := regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	asked, spared := 0, 0
	files := eachModuleGoFile(t, func(p, text string) {
		f := Extract(p, text)
		seen := map[string]bool{}
		for _, w := range word.FindAllString(text, -1) {
			if seen[w] {
				continue
			}
			seen[w] = true
			asked++
			defined := len(Defined(f.Symbols, w)) > 0
			may := MayDefine(p, text, w)
			if defined && !may {
				t.Errorf("%s defines %q; MayDefine says it cannot", p, w)
			}
			if !may {
				spared++
			}
		}
	})
	t.Logf("%d files, %d (file, word) pairs, %d answered without extracting", files, asked, spared)
}

// eachModuleGoFile calls fn with every Go file of this module (hidden
// directories left out) and returns how many; it fails the test when it
// cannot read them or finds fewer than 100.
func eachModuleGoFile(t *testing.T, fn func(p, text string)) int {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fn(p, string(data))
		files++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files of the module; want them all", files)
	}
	return files
}

// TestMayDefineOnScripts holds MayDefine to Extract on every word of the
// TypeScript files under testdata, each read also as JavaScript: exact.
func TestMayDefineOnScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/summary_repo/web/src/*/*.ts")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("testdata/summary_repo/web/src/*.ts")
	files = append(files, more...)
	word := regexp.MustCompile(`[A-Za-z_$][A-Za-z0-9_$]*`)
	defined := 0
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, path := range []string{p, strings.TrimSuffix(p, ".ts") + ".js"} {
			f := Extract(path, text)
			for _, w := range word.FindAllString(text, -1) {
				d := len(Defined(f.Symbols, w)) > 0
				if d {
					defined++
				}
				if may := MayDefine(path, text, w); may != d {
					t.Errorf("%s: Extract defines %q: %v; MayDefine says %v", path, w, d, may)
				}
			}
		}
	}
	if len(files) < 3 || defined == 0 {
		t.Fatalf("%d files, %d defined words: the test tests nothing", len(files), defined)
	}
}

// FuzzMayDefineScript holds MayDefine to Extract on JavaScript a
// repository controls: exactly what Extract defines, on any text.
func FuzzMayDefineScript(f *testing.F) {
	f.Add("res.send = function send(body) {}\nres.json(x)\n", "send")
	f.Add("request(app)\n  .get('/')\nclass A { get(x) { } }\n", "get")
	f.Add("#!/usr/bin/env node\nconst f = async (a) => {\n}\nx.f(1)\n", "f")
	f.Add("request(app).get('/')\nconst g = x /* c */ => {}\nexpress()\n", "g")
	f.Fuzz(func(t *testing.T, text, name string) {
		for _, p := range []string{"p.js", "p.ts"} {
			may := MayDefine(p, text, name)
			if defined := len(Defined(Extract(p, text).Symbols, name)) > 0; may != defined {
				t.Fatalf("%s: Extract defines %q: %v; MayDefine says %v", p, name, defined, may)
			}
		}
	})
}

// FuzzMayDefine holds MayDefine to Extract on Go text a repository
// controls: where the text parses, a name Extract defines is one MayDefine
// says may be; on any text it never panics.
func FuzzMayDefine(f *testing.F) {
	f.Add("package p\n\nconst (\n\t// A is one.\n\tA = 1\n)\n\nfunc (r *T) B() { x.C() }\n", "A")
	f.Add("package p\n\nvar a, b = 1., 2\ntype T[K any] struct{}\n", "b")
	f.Add("package p\nfunc f(a ...T) { x.\nT() }\n", "T")
	f.Fuzz(func(t *testing.T, text, name string) {
		may := MayDefine("p.go", text, name)
		facts := Extract("p.go", text)
		if facts.ParseNote != "" {
			return // a parser's recovery is no declaration
		}
		if len(Defined(facts.Symbols, name)) > 0 && !may {
			t.Fatalf("Extract defines %q; MayDefine says it cannot", name)
		}
	})
}

// TestMayDefineOnCallShapes holds MayDefine to Extract where jsMayName
// passes over an occurrence before '(' (callWithoutBody) or '='
// (mayAssignFunction): a name in every combination of what may come
// before it, between it and what follows, and what follows — calls,
// methods and functions with what may be inside their parentheses and
// after them (comments, strings, brackets the lexer pairs its own way),
// assignments of functions, arrows and values, keys and typed names
// (name: function, name: T = () =>) — as JavaScript and
// TypeScript: exact.
func TestMayDefineOnCallShapes(t *testing.T) {
	befores := []string{"", "function ", "function* ", "function /* c */ ", "*", "async ", "get ", "static ", "new ",
		"x.", "x?.", "...", "x.\n", "...\n", "/* c */ ", "// c\n", "\n", "{ ", "}\n", "; ", ", ", "class A { ", "= ", "(", "return ", "const "}
	betweens := []string{"", " ", "\n", "/**/"}
	args := []string{"", "a", "a, b", "(a)", "a)", "(", "{(}", "({(})", "[(]", "'x'", "`t`", "[1]", "/re/", "a /* ) */", "a // )\n"}
	afters := []string{"", " {}", "\n{}", "\n\n\n{}", ".x", ";", " => {}", ": T {}", " -> {}", " throws {}", " where {}",
		")", " =", " = 1", "// c\n{}", "/* c */ {}", " + 1", "{}.x", "{}).x", " {} ) {}", "}{", " then", "\u00a0{}", "\t\v{}"}
	var follows []string
	for _, a := range args {
		for _, f := range afters {
			follows = append(follows, "("+a+")"+f)
		}
	}
	for _, eq := range []string{"=", "= ", "=\n", "=/* c */", "==", "===", "=>"} {
		for _, v := range []string{"function() {}", "function bar() {}", "function* () {}", "async () => {}", "async x => {}",
			"async function () {}", "(a) => {}", "(a): T => {}", "() => 1", "x => {}", "x\n=> {}", "x /* c */ => {}", "x // c\n=> {}", "x => 1", "asyncX => {}", "0=>{}", "1.5 => {}", ".5 => {}", "1e3 => {}",
			"'s' => {}", "] => {}", "x.y => {}", "1.5;", "0x1f;",
			"functional(1)", "require('x')", "1", "'s'", "`t`", "[]", "{}", "<T>(a) => {}", "new X()", "x", "x = () => {}", ""} {
			follows = append(follows, eq+v)
		}
	}
	for _, v := range []string{"function() {}", "() => {}", "x => {}", "Handler<T> = (a) => {}", "T = function() {}", "1"} {
		follows = append(follows, ": "+v, ":"+v)
	}
	n, defined, passed := 0, 0, 0
	for _, b := range befores {
		for _, m := range betweens {
			for _, f := range follows {
				text := "let y = 1\n" + b + "foo" + m + f + "\n"
				if strings.HasPrefix(b, "class") {
					text += "}\n"
				}
				if !jsMayName(text, "foo") {
					passed++
				}
				for _, p := range []string{"p.js", "p.ts"} {
					n++
					may := MayDefine(p, text, "foo")
					d := len(Defined(Extract(p, text).Symbols, "foo")) > 0
					if d {
						defined++
					}
					if may != d {
						t.Errorf("%s %q: Extract defines foo: %v; MayDefine says %v", p, text, d, may)
					}
				}
			}
		}
	}
	if defined < n/10 || passed*2 < n/10 {
		t.Fatalf("%d texts, foo defined in %d, passed over unlexed in %d: the shapes test little", n, defined, passed*2)
	}
	t.Logf("%d texts, foo defined in %d, passed over unlexed in %d", n, defined, passed*2)
}

// BenchmarkMayDefineHostileScript asks the JavaScript gate of a text made
// to make it slow: calls nested 50,000 deep (each occurrence's parentheses
// reach to the end; read from each '(' to the end, 500 KB took 21 s), and
// calls and assignments the gate passes over, each with a long run of
// blanks. A file's text is the repository's to choose: the gate must stay
// linear in it.
func BenchmarkMayDefineHostileScript(b *testing.B) {
	blanks := strings.Repeat(" ", 200)
	passed := strings.Repeat("foo(a"+blanks+")"+blanks+".x\nfoo"+blanks+"="+blanks+"bar;\n", 2000)
	nested := strings.Repeat("foo(", 50000) + strings.Repeat(")", 50000) + "."
	b.SetBytes(int64(len(passed) + len(nested)))
	for b.Loop() {
		if jsMayName(passed, "foo") {
			b.Fatal("the gate did not pass over the calls and assignments")
		}
		jsMayName(nested, "foo")
	}
}
