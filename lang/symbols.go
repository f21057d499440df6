package lang

import (
	"sort"
	"strings"
)

// Symbol kinds.
const (
	KindFunction = "function"
	KindMethod   = "method"
	KindType     = "type"
	KindClass    = "class"
	KindConst    = "const"
	KindVar      = "var"
)

// Symbol is one definition and the lines it spans (1-based, inclusive,
// with its doc comment where the language has one).
type Symbol struct {
	// Name is as the extractor qualifies it: "Repo.Open" for a method,
	// "Server" for a type.
	Name    string
	Kind    string
	Line    int
	EndLine int
}

// Short is the symbol's own name, without its receiver or class: what a
// caller writes.
func (s Symbol) Short() string {
	if i := strings.LastIndexByte(s.Name, '.'); i >= 0 {
		return s.Name[i+1:]
	}
	return s.Name
}

// symbolsOf completes and orders a file's symbols: the extractors that only
// measure functions contribute those as symbols.
func symbolsOf(f *Facts) []Symbol {
	out := f.Symbols
	if f.Lang != LangGo {
		for _, fn := range f.Funcs {
			kind := KindFunction
			if strings.Contains(fn.Name, ".") {
				kind = KindMethod
			}
			out = append(out, Symbol{Name: fn.Name, Kind: kind, Line: fn.Line, EndLine: fn.EndLine})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		if out[i].EndLine != out[j].EndLine {
			return out[i].EndLine > out[j].EndLine
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Enclosing returns the innermost symbol whose lines contain lo..hi, or
// false when the lines are outside every symbol (top-level code).
func Enclosing(syms []Symbol, lo, hi int) (Symbol, bool) {
	var best Symbol
	found := false
	for _, s := range syms {
		if s.Line <= lo && hi <= s.EndLine {
			if !found || s.EndLine-s.Line < best.EndLine-best.Line {
				best, found = s, true
			}
		}
	}
	return best, found
}

// Overlapping returns the symbols that share a line with lo..hi, outermost
// first (a method before the closures inside it).
func Overlapping(syms []Symbol, lo, hi int) []Symbol {
	var out []Symbol
	for _, s := range syms {
		if s.Line <= hi && lo <= s.EndLine {
			out = append(out, s)
		}
	}
	return out
}

// Defined returns the symbols whose short name is name.
func Defined(syms []Symbol, name string) []Symbol {
	var out []Symbol
	for _, s := range syms {
		if s.Short() == name {
			out = append(out, s)
		}
	}
	return out
}

// keywords are words of the supported languages that look like calls
// ("if (", "return (") but name nothing.
var keywords = set("if", "for", "while", "switch", "return", "func", "function", "def", "class", "catch",
	"elif", "else", "new", "typeof", "await", "async", "yield", "not", "and", "or", "in", "is", "fn",
	"match", "loop", "with", "assert", "print", "lambda", "sizeof", "go", "defer", "select", "case",
	"make", "len", "cap", "append", "panic", "recover", "copy", "delete", "new", "string", "int",
	"self", "this", "super", "range", "map", "chan", "struct", "interface", "import", "package",
	"from", "export", "const", "let", "var", "type", "pub", "impl", "use", "mod", "static",
	"public", "private", "protected", "void", "throw", "throws", "try", "except", "raise",
	"true", "false", "nil", "null", "None", "True", "False", "undefined", "require", "isinstance",
	"str", "dict", "list", "set", "tuple", "bool", "float", "byte", "rune", "error", "Some", "Ok", "Err",
	"vec", "format", "println")

// CalledNames returns the identifiers text calls or instantiates ("Open(",
// "repo.Load(", "new Server(") in order of first appearance, once each,
// without keywords and built-ins: the callees of changed lines.
func CalledNames(text string) []string {
	seen := map[string]bool{}
	var out []string
	for i := 0; i < len(text); {
		c := text[i]
		if !isIdentStart(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && isIdentPart(text[j]) {
			j++
		}
		word := text[i:j]
		k := j
		for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
			k++
		}
		// A call, a generic call ("Do[T](", "Vec::<T>::new(") or a
		// composite literal of a type ("Config{").
		if k < len(text) && (text[k] == '(' || text[k] == '{' && isUpper(word[0]) || text[k] == '[' && isUpper(word[0])) &&
			len(word) > 1 && !keywords[word] && !seen[word] {
			seen[word] = true
			out = append(out, word)
		}
		i = j
	}
	return out
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
