package lang

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Languages the extractors understand.
const (
	LangGo         = "go"
	LangJavaScript = "javascript"
	LangTypeScript = "typescript"
	LangPython     = "python"
	LangRust       = "rust"
	LangJava       = "java"
)

// extractMaxBytes bounds the text an extractor parses; a larger file degrades
// to its size and first lines.
const extractMaxBytes = 2 << 20

// Facts is what the extractors derive from one file's text, deterministically
// and without running anything. All of it comes from file contents, so
// whatever of it is put into a pack is secret-scanned first.
type Facts struct {
	Lang string
	// Package is the Go or Java package, or the Python module path.
	Package string
	// Doc is the first sentence of the package or module documentation.
	Doc string
	// Imports are the import specifiers as written, in source order, once each.
	Imports []string
	// Exports are the exported (or, for scripts, top-level) definitions, in
	// source order, as "kind name" ("func Login", "class UserService"), or a
	// bare name for export lists.
	Exports []string
	// TopLevel says Exports lists top-level definitions (the file has no
	// explicit export list or statement).
	TopLevel bool
	// Routes are HTTP routes the file registers.
	Routes []Route
	// Commands are CLI commands the file declares (cobra, click, argparse…).
	Commands []string
	// Main is set when the file is a program entry (func main in package
	// main, if __name__ == "__main__", fn main, public static void main).
	Main     bool
	MainLine int
	// Frameworks are the web and CLI frameworks the file uses.
	Frameworks []string
	// Funcs are the function bodies found, with their size and complexity.
	Funcs []Func
	// Symbols are the definitions with their line ranges (functions,
	// methods, types, classes, constants), sorted by line: what a change
	// region is cut along.
	Symbols []Symbol
	// Signals are notable lines: security and performance indicators.
	Signals []Signal
	// Lines is the number of lines of the file.
	Lines int
	// ParseNote says why the extraction is partial (a syntax error), if it is.
	ParseNote string

	// imports with the structure the resolver needs (Python names, Rust mod).
	refs []importRef
}

// Route is one HTTP route registration.
type Route struct {
	Method    string // GET, POST, … or ANY
	Path      string
	Handler   string
	Line      int
	Framework string
}

func (r Route) String() string { return r.Method + " " + r.Path }

// Func is one function or method body.
type Func struct {
	Name       string
	Line       int
	EndLine    int
	Complexity int // cyclomatic: 1 + decision points
	MaxNesting int // deepest loop nesting inside
}

// Lines is the length of the function in lines.
func (f Func) Lines() int { return f.EndLine - f.Line + 1 }

// Signal kinds.
const (
	SignalSecurity    = "security"
	SignalPerformance = "performance"
)

// Signal is one notable line: a security or performance indicator.
type Signal struct {
	Kind string
	Line int
	// What says what the line does, e.g. "builds SQL by string concatenation".
	What string
}

// importRef is an import with what resolution needs.
type importRef struct {
	spec string
	// names are Python's "from X import a, b" names.
	names []string
	// rustMod marks a Rust "mod x;" declaration.
	rustMod bool
	// level is a Python relative import's dot count.
	level int
}

// langOf returns the extractor language of a path, "" for none.
func langOf(p string) string {
	switch ext(p) {
	case ".go":
		return LangGo
	case ".js", ".jsx", ".mjs", ".cjs":
		return LangJavaScript
	case ".ts", ".tsx", ".mts", ".cts":
		return LangTypeScript
	case ".py", ".pyi":
		return LangPython
	case ".rs":
		return LangRust
	case ".java":
		return LangJava
	}
	return ""
}

// Extract derives the facts of one file. It never fails: a file it cannot
// parse yields what could be found, with ParseNote set; a language it does
// not know yields only the line count.
func Extract(p, text string) *Facts {
	f := &Facts{Lang: langOf(p), Lines: CountLines(text)}
	if f.Lang == "" || len(text) > extractMaxBytes {
		if len(text) > extractMaxBytes && f.Lang != "" {
			f.ParseNote = "too large to analyze (" + strconv.Itoa(len(text)) + " bytes)"
		}
		f.Lang = ""
		return f
	}
	switch f.Lang {
	case LangGo:
		extractGo(p, text, f)
	case LangJavaScript, LangTypeScript:
		extractJS(p, text, f)
	case LangPython:
		extractPython(p, text, f)
	case LangRust:
		extractRust(p, text, f)
	case LangJava:
		extractJava(p, text, f)
	}
	clampLines(f)
	f.Symbols = symbolsOf(f)
	f.Imports = Dedupe(f.Imports)
	f.Frameworks = SortedSet(f.Frameworks)
	sortSignals(f)
	return f
}

// Imports is Extract(p, text).Imports, for a caller that needs nothing
// else of the file (a pack item names its file's imports): a Go file's
// import declarations are parsed alone (parser.ImportsOnly), not the
// whole file with its comments. A Go file that says import after its
// other declarations (a syntax error, which the whole parse still reads
// imports from) and every other language take Extract. Hugo's range
// names the imports of 8 files, two of 40 and 29 KB: ~5 ms of whole
// parses for them.
func Imports(p, text string) []string {
	if langOf(p) != LangGo || len(text) > extractMaxBytes {
		return Extract(p, text).Imports
	}
	fset := token.NewFileSet()
	file, _ := parser.ParseFile(fset, p, text, parser.ImportsOnly|parser.SkipObjectResolution)
	if file == nil || lateImport(fset, file, text) {
		return Extract(p, text).Imports
	}
	var out []string
	for _, spec := range file.Imports {
		if imp, err := strconv.Unquote(spec.Path.Value); err == nil && imp != "" {
			out = append(out, imp)
		}
	}
	return Dedupe(out)
}

// lateImport reports whether text has an import keyword after what the
// imports-only parse of file read.
func lateImport(fset *token.FileSet, file *ast.File, text string) bool {
	from := 0
	if n := len(file.Decls); n > 0 {
		from = fset.Position(file.Decls[n-1].End()).Offset
	} else if file.Name != nil {
		from = fset.Position(file.Name.End()).Offset
	}
	if from <= 0 || from > len(text) {
		return true // nothing known was read: let the whole parse decide
	}
	rest := text[from:]
	var sc scanner.Scanner
	sc.Init(token.NewFileSet().AddFile("", -1, len(rest)), []byte(rest), nil, 0)
	for {
		_, tok, _ := sc.Scan()
		switch tok {
		case token.EOF:
			return false
		case token.IMPORT:
			return true
		}
	}
}

// clampLines keeps every line range inside the file: a parser recovering
// from a syntax error reports positions past the end (or none), and the
// pack cuts regions along these ranges.
func clampLines(f *Facts) {
	last := max(f.Lines, 1)
	clamp := func(line, end *int) {
		*line = min(max(*line, 1), last)
		*end = min(max(*end, *line), last)
	}
	for i := range f.Symbols {
		clamp(&f.Symbols[i].Line, &f.Symbols[i].EndLine)
	}
	for i := range f.Funcs {
		clamp(&f.Funcs[i].Line, &f.Funcs[i].EndLine)
	}
	for i := range f.Signals {
		l := f.Signals[i].Line
		clamp(&f.Signals[i].Line, &l)
	}
	for i := range f.Routes {
		l := f.Routes[i].Line
		clamp(&f.Routes[i].Line, &l)
	}
	if f.Main {
		l := f.MainLine
		clamp(&f.MainLine, &l)
	}
}

// addImport records an import specifier and its reference.
func (f *Facts) addImport(r importRef) {
	if r.spec == "" && len(r.names) == 0 {
		return
	}
	f.Imports = append(f.Imports, r.spec)
	f.refs = append(f.refs, r)
}

func (f *Facts) signal(kind string, line int, what string) {
	f.Signals = append(f.Signals, Signal{Kind: kind, Line: line, What: what})
}

func (f *Facts) framework(name string) {
	for _, x := range f.Frameworks {
		if x == name {
			return
		}
	}
	f.Frameworks = append(f.Frameworks, name)
}

// sortSignals orders signals by line, then text, and drops duplicates.
func sortSignals(f *Facts) {
	sort.SliceStable(f.Signals, func(i, j int) bool {
		a, b := f.Signals[i], f.Signals[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.What < b.What
	})
	out := f.Signals[:0]
	for i, s := range f.Signals {
		if i > 0 && s == f.Signals[i-1] {
			continue
		}
		out = append(out, s)
	}
	f.Signals = out
}

func Dedupe(in []string) []string {
	if len(in) == 0 {
		return in
	}
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func SortedSet(in []string) []string {
	in = Dedupe(in)
	sort.Strings(in)
	return in
}

// FirstLines returns up to n non-blank lines of text, each capped at width
// runes, with their 1-based line numbers.
func FirstLines(text string, n, width int) []NumberedLine {
	var out []NumberedLine
	line := 0
	for len(text) > 0 && len(out) < n {
		line++
		var l string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			l, text = text[:i], text[i+1:]
		} else {
			l, text = text, ""
		}
		l = strings.TrimRight(l, " \t\r")
		if !strings.ContainsFunc(l, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			continue // blank, or only punctuation ("{", "*/")
		}
		out = append(out, NumberedLine{line, capRunes(l, width)})
	}
	return out
}

// NumberedLine is one line of text with its 1-based number.
type NumberedLine struct {
	N    int
	Text string
}

// LineText returns line n (1-based) of text, trimmed and capped.
func LineText(text string, n, width int) string {
	for i := 1; i < n; i++ {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			return ""
		}
		text = text[j+1:]
	}
	if j := strings.IndexByte(text, '\n'); j >= 0 {
		text = text[:j]
	}
	return capRunes(strings.TrimSpace(text), width)
}

// capRunes shortens s to at most n runes, ending with "…" when cut.
func capRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n-1; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// firstSentence returns the first sentence of a doc comment, capped.
func firstSentence(doc string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	for i := 0; i+1 < len(doc); i++ {
		if doc[i] == '.' && doc[i+1] == ' ' {
			doc = doc[:i+1]
			break
		}
	}
	return capRunes(doc, 200)
}

// leadingDoc returns the first sentence of the comment that opens a C-family
// file (after a shebang): a block comment or a run of line comments (Rust's
// //! included). A license or copyright header is not documentation.
func leadingDoc(text string) string {
	text = strings.TrimLeft(text, " \t\r\n\ufeff")
	if strings.HasPrefix(text, "#!") {
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = strings.TrimLeft(text[i+1:], " \t\r\n")
		}
	}
	var doc string
	switch {
	case strings.HasPrefix(text, "/*"):
		end := strings.Index(text[2:], "*/") // "/*/" does not close
		if end < 0 {
			return ""
		}
		var lines []string
		for _, l := range strings.Split(text[2:2+end], "\n") {
			l = strings.TrimSpace(l)
			l = strings.TrimLeft(l, "*!")
			lines = append(lines, strings.TrimSpace(l))
		}
		doc = strings.Join(lines, " ")
	case strings.HasPrefix(text, "//"):
		var lines []string
		for _, l := range strings.Split(text, "\n") {
			l = strings.TrimSpace(l)
			if !strings.HasPrefix(l, "//") {
				break
			}
			lines = append(lines, strings.TrimSpace(strings.TrimLeft(l, "/!")))
		}
		doc = strings.Join(lines, " ")
	}
	low := strings.ToLower(doc)
	if strings.Contains(low, "copyright") || strings.Contains(low, "license") || strings.Contains(low, "spdx") {
		return ""
	}
	return firstSentence(doc)
}
