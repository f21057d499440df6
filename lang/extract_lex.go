package lang

import "strings"

// tkind is a token kind of the C-family lexer shared by the JavaScript,
// TypeScript, Java and Rust extractors.
type tkind uint8

const (
	tIdent tkind = iota + 1
	tString
	tTemplate // JavaScript template literal, whole (text = raw contents)
	tNumber
	tPunct
	tRegex
	tChar
	tLifetime
)

// tok is one token. depth is the number of braces enclosing it (a "{" and
// its matching "}" have the same depth).
type tok struct {
	kind tkind
	// subst is set on a template literal with ${…} substitutions.
	subst bool
	depth int32
	line  int
	text  string
}

type lexOpts struct {
	js   bool // template literals, regular expression literals
	rust bool // raw and byte strings, lifetimes, nested block comments
	java bool // text blocks
}

var puncts = []string{
	">>>=", "...", "===", "!==", "**=", "<<=", ">>=", "&&=", "||=", "??=",
	"=>", "::", "->", "&&", "||", "??", "?.", "==", "!=", "<=", ">=", "+=", "-=", "*=",
	"/=", "%=", "&=", "|=", "^=", "++", "--", "<<", "**",
}

// punctsByFirst lists the operators of puncts by their first byte, longest
// first as in puncts: lex looks only at those its byte can start.
var punctsByFirst = func() (t [256][]string) {
	for _, op := range puncts {
		t[op[0]] = append(t[op[0]], op)
	}
	return t
}()

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// isLexSpace reports whether lex skips c between tokens (a line end too).
func isLexSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\n'
}

// numberEnd is the end of the number lex reads from src[i]: name
// characters, and each '.' a digit follows.
func numberEnd(src string, i int) int {
	for i < len(src) && (isIdentPart(src[i]) || src[i] == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9') {
		i++
	}
	return i
}

// jsRegexKeywords are keywords after which a "/" starts a regular expression.
var jsRegexKeywords = set("return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw",
	"case", "do", "else", "yield", "await")

// lex tokenizes C-family source. It never fails: an unterminated string or
// comment ends at the end of the line or file. Single- and double-quoted
// strings end at a newline (except in Rust), which keeps a stray quote (an
// apostrophe in JSX text) from swallowing the rest of the file.
func lex(src string, o lexOpts) []tok {
	toks := make([]tok, 0, len(src)/4)
	line, depth := 1, 0
	i, n := 0, len(src)
	emit := func(k tkind, text string, l int) {
		toks = append(toks, tok{kind: k, text: text, line: l, depth: int32(depth)})
	}
	regexAllowed := func() bool {
		if len(toks) == 0 {
			return true
		}
		t := toks[len(toks)-1]
		switch t.kind {
		case tIdent:
			return jsRegexKeywords[t.text]
		case tPunct:
			return t.text != ")" && t.text != "]" && t.text != "}"
		}
		return false
	}
	for i < n {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case isLexSpace(c): // a line end is counted above
			i++
		case c == '/' && i+1 < n && src[i+1] == '/':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			i += 2
			nest := 1
			for i < n && nest > 0 {
				switch {
				case src[i] == '\n':
					line++
					i++
				case src[i] == '*' && i+1 < n && src[i+1] == '/':
					nest--
					i += 2
				case o.rust && src[i] == '/' && i+1 < n && src[i+1] == '*':
					nest++
					i += 2
				default:
					i++
				}
			}
		case isIdentStart(c):
			start := i
			for i < n && isIdentPart(src[i]) {
				i++
			}
			word := src[start:i]
			if o.rust && i < n && (src[i] == '"' || src[i] == '#' || src[i] == '\'') && (word == "r" || word == "b" || word == "br" || word == "rb" || word == "c" || word == "cr") {
				if src[i] == '\'' && word == "b" { // byte char b'x'
					j, text, nl := scanQuoted(src, i, '\'', false)
					emit(tChar, text, line)
					line += nl
					i = j
					continue
				}
				if strings.ContainsRune(word, 'r') {
					j, text, nl, ok := scanRawRust(src, i)
					if ok {
						emit(tString, text, line)
						line += nl
						i = j
						continue
					}
				} else if src[i] == '"' {
					j, text, nl := scanQuoted(src, i, '"', true)
					emit(tString, text, line)
					line += nl
					i = j
					continue
				}
			}
			emit(tIdent, word, line)
		case c >= '0' && c <= '9' || c == '.' && i+1 < n && src[i+1] >= '0' && src[i+1] <= '9':
			start := i
			i = numberEnd(src, i)
			emit(tNumber, src[start:i], line)
		case c == '"' && o.java && strings.HasPrefix(src[i:], `"""`):
			end := strings.Index(src[i+3:], `"""`)
			if end < 0 {
				end = n - i - 3
			}
			text := src[i+3 : i+3+end]
			emit(tString, text, line)
			line += strings.Count(text, "\n")
			i += 3 + end + 3
			if i > n {
				i = n
			}
		case c == '"':
			j, text, nl := scanQuoted(src, i, '"', o.rust)
			emit(tString, text, line)
			line += nl
			i = j
		case c == '\'':
			if o.rust {
				// 'a' and '\n' are chars; 'a (no closing quote) is a lifetime or label.
				if i+2 < n && src[i+1] != '\\' && !(i+2 < n && closesChar(src, i+1)) {
					j := i + 1
					for j < n && isIdentPart(src[j]) {
						j++
					}
					emit(tLifetime, src[i+1:j], line)
					i = j
					continue
				}
				j, text, nl := scanQuoted(src, i, '\'', false)
				emit(tChar, text, line)
				line += nl
				i = j
				continue
			}
			j, text, nl := scanQuoted(src, i, '\'', false)
			k := tString
			if o.java {
				k = tChar
			}
			emit(k, text, line)
			line += nl
			i = j
		case c == '`' && o.js:
			j, nl, subst := scanTemplate(src, i)
			toks = append(toks, tok{kind: tTemplate, text: src[i+1 : max(i+1, j-1)], line: line, depth: int32(depth), subst: subst})
			line += nl
			i = j
		case c == '/' && o.js && regexAllowed():
			j := i + 1
			inClass := false
			ok := false
			for j < n && src[j] != '\n' {
				if src[j] == '\\' {
					j += 2
					continue
				}
				if src[j] == '[' {
					inClass = true
				} else if src[j] == ']' {
					inClass = false
				} else if src[j] == '/' && !inClass {
					ok = true
					break
				}
				j++
			}
			if !ok {
				emit(tPunct, "/", line)
				i++
				continue
			}
			j++
			for j < n && isIdentPart(src[j]) {
				j++
			}
			emit(tRegex, src[i:j], line)
			i = j
		case c == '{':
			emit(tPunct, "{", line)
			depth++
			i++
		case c == '}':
			if depth > 0 {
				depth--
			}
			emit(tPunct, "}", line)
			i++
		default:
			n := 1
			for _, op := range punctsByFirst[c] {
				if strings.HasPrefix(src[i:], op) {
					n = len(op)
					break
				}
			}
			emit(tPunct, src[i:i+n], line)
			i += n
		}
	}
	return toks
}

// closesChar reports whether a Rust char literal starting after the quote at
// i-1 closes right after one character.
func closesChar(src string, i int) bool {
	j := i
	if j < len(src) && src[j] >= 0x80 {
		for j++; j < len(src) && src[j]&0xC0 == 0x80; j++ {
		}
	} else {
		j++
	}
	return j < len(src) && src[j] == '\''
}

// scanQuoted scans a quoted literal starting at src[i] == q. It returns the
// index after it, its contents (escapes kept as written) and the newlines it
// spans. Unless multiline, it ends at an unescaped newline.
func scanQuoted(src string, i int, q byte, multiline bool) (int, string, int) {
	j := i + 1
	nl := 0
	for j < len(src) {
		c := src[j]
		if c == '\\' && j+1 < len(src) {
			if src[j+1] == '\n' {
				nl++
			}
			j += 2
			continue
		}
		if c == q {
			return j + 1, src[i+1 : j], nl
		}
		if c == '\n' {
			if !multiline {
				return j, src[i+1 : j], nl
			}
			nl++
		}
		j++
	}
	return j, src[i+1 : min(j, len(src))], nl
}

// scanRawRust scans r"…", r#"…"#, br"…" starting at the quote or first #.
func scanRawRust(src string, i int) (int, string, int, bool) {
	hashes := 0
	for i+hashes < len(src) && src[i+hashes] == '#' {
		hashes++
	}
	if i+hashes >= len(src) || src[i+hashes] != '"' {
		return i, "", 0, false
	}
	start := i + hashes + 1
	closer := "\"" + strings.Repeat("#", hashes)
	end := strings.Index(src[start:], closer)
	if end < 0 {
		text := src[start:]
		return len(src), text, strings.Count(text, "\n"), true
	}
	text := src[start : start+end]
	return start + end + len(closer), text, strings.Count(text, "\n"), true
}

// scanTemplate scans a template literal starting at the backquote at i,
// including nested ${…} expressions (with their strings and templates). It
// returns the index after the closing backquote, the newlines spanned and
// whether there are substitutions.
func scanTemplate(src string, i int) (int, int, bool) {
	j := i + 1
	nl := 0
	subst := false
	for j < len(src) {
		c := src[j]
		switch {
		case c == '\\':
			if j+1 < len(src) && src[j+1] == '\n' {
				nl++
			}
			j += 2
		case c == '`':
			return j + 1, nl, subst
		case c == '$' && j+1 < len(src) && src[j+1] == '{':
			subst = true
			j += 2
			braces := 1
			for j < len(src) && braces > 0 {
				switch src[j] {
				case '{':
					braces++
					j++
				case '}':
					braces--
					j++
				case '\n':
					nl++
					j++
				case '`':
					k, n2, _ := scanTemplate(src, j)
					nl += n2
					j = k
				case '\'', '"':
					k, _, n2 := scanQuoted(src, j, src[j], false)
					nl += n2
					j = k
				default:
					j++
				}
			}
		case c == '\n':
			nl++
			j++
		default:
			j++
		}
	}
	return j, nl, subst
}

// tstream is a token slice with its bracket pairs precomputed.
type tstream struct {
	t    []tok
	pair []int // for "(", "[", "{" and their closers: the index of the other one; -1 otherwise
}

func newStream(t []tok) *tstream {
	s := &tstream{t: t, pair: make([]int, len(t))}
	var stack []int
	for i, x := range t {
		s.pair[i] = -1
		if x.kind != tPunct {
			continue
		}
		switch x.text {
		case "(", "[", "{":
			stack = append(stack, i)
		case ")", "]", "}":
			want := "("
			if x.text == "]" {
				want = "["
			} else if x.text == "}" {
				want = "{"
			}
			// Pop to the nearest matching opener; unmatched closers are ignored.
			for k := len(stack) - 1; k >= 0; k-- {
				if t[stack[k]].text == want {
					s.pair[stack[k]] = i
					s.pair[i] = stack[k]
					stack = stack[:k]
					break
				}
			}
		}
	}
	return s
}

// close returns the index of the closer of the bracket at i, or the last
// index when it is not closed.
func (s *tstream) close(i int) int {
	if i >= 0 && i < len(s.t) && s.pair[i] > i {
		return s.pair[i]
	}
	return len(s.t) - 1
}

func (s *tstream) punct(i int, p string) bool {
	return i >= 0 && i < len(s.t) && s.t[i].kind == tPunct && s.t[i].text == p
}

func (s *tstream) ident(i int, w string) bool {
	return i >= 0 && i < len(s.t) && s.t[i].kind == tIdent && s.t[i].text == w
}

// isName reports whether toks[i] is an identifier (any).
func (s *tstream) isName(i int) bool { return i >= 0 && i < len(s.t) && s.t[i].kind == tIdent }

// str reports whether t[i] is a string literal (or a template without
// substitutions) and returns its text.
func (s *tstream) str(i int) (string, bool) {
	if i < 0 || i >= len(s.t) {
		return "", false
	}
	t := s.t[i]
	if t.kind == tString || t.kind == tTemplate && !t.subst {
		return t.text, true
	}
	return "", false
}

// body finds a function body: starting after the parameter list closing at
// closeParen, it skips a return type (after ":" or "->", or Java's throws
// clause) and a JavaScript "=>" to the "{" that opens the body. It returns
// -1 when anything else comes first (a ";", an operator, a statement).
func (s *tstream) body(closeParen int) int {
	typeCtx := false
	for j := closeParen + 1; j < len(s.t); j++ {
		t := s.t[j]
		if t.kind == tIdent {
			if t.text == "throws" || t.text == "where" {
				typeCtx = true
				continue
			}
			if !typeCtx {
				return -1
			}
			continue
		}
		if t.kind != tPunct {
			if !typeCtx {
				return -1
			}
			continue
		}
		switch t.text {
		case "{":
			return j
		case "=>":
			if s.punct(j+1, "{") {
				return j + 1
			}
			return -1
		case ":", "->":
			typeCtx = true
		case ";", "}", "=", ")":
			return -1
		case "(", "[":
			if !typeCtx {
				return -1
			}
			j = s.close(j)
		default:
			if !typeCtx {
				return -1
			}
		}
	}
	return -1
}

// fn measures the function whose name is at nameIdx and whose body opens
// at open: lines, complexity (with branch) and loop nesting.
func (s *tstream) fn(name string, nameIdx, open int, branch func(s *tstream, k int) bool) Func {
	end := s.close(open)
	f := Func{Name: name, Line: s.t[nameIdx].line, EndLine: s.t[end].line, Complexity: 1}
	var loopEnds []int
	for k := open + 1; k < end; k++ {
		for len(loopEnds) > 0 && k > loopEnds[len(loopEnds)-1] {
			loopEnds = loopEnds[:len(loopEnds)-1]
		}
		if branch(s, k) {
			f.Complexity++
		}
		if b := s.loopBody(k); b > 0 {
			loopEnds = append(loopEnds, s.close(b))
			if len(loopEnds) > f.MaxNesting {
				f.MaxNesting = len(loopEnds)
			}
		}
	}
	return f
}

// loopBody returns the "{" of the body of a loop starting at k (for, while,
// loop), or -1.
func (s *tstream) loopBody(k int) int {
	t := &s.t[k]
	if t.kind != tIdent || t.text != "for" && t.text != "while" && t.text != "loop" {
		return -1
	}
	if s.punct(k-1, ".") || s.punct(k+1, ":") || s.punct(k+1, "=") {
		return -1 // a property or label, not a loop
	}
	b := k + 1
	for b < len(s.t) {
		if s.punct(b, "{") {
			return b
		}
		if s.punct(b, ";") || s.punct(b, "}") || s.punct(b, ")") {
			return -1
		}
		if s.punct(b, "(") || s.punct(b, "[") {
			b = s.close(b)
		}
		b++
	}
	return -1
}

// loopSignals records loops nested three deep.
func (s *tstream) loopSignals(f *Facts) {
	var loopEnds []int
	for k := range s.t {
		for len(loopEnds) > 0 && k > loopEnds[len(loopEnds)-1] {
			loopEnds = loopEnds[:len(loopEnds)-1]
		}
		if b := s.loopBody(k); b > 0 {
			loopEnds = append(loopEnds, s.close(b))
			if len(loopEnds) == 3 {
				f.signal(SignalPerformance, s.t[k].line, "loops nested 3 deep")
			}
		}
	}
}

// cBranch counts decision points of C-family languages: if, for, while,
// case, catch, &&, ||, ?? and the ternary ?.
func cBranch(s *tstream, k int) bool {
	t := &s.t[k]
	switch t.kind {
	case tIdent:
		switch t.text {
		case "if", "for", "while", "case", "catch":
			return !s.punct(k-1, ".")
		}
	case tPunct:
		switch t.text {
		case "&&", "||", "??":
			return true
		case "?":
			// Not TypeScript's optional marker (x?: T, x?) or (x?, …).
			return !(s.punct(k+1, ":") || s.punct(k+1, ")") || s.punct(k+1, ",") || s.punct(k+1, "="))
		}
	}
	return false
}

// stmtStart returns the index of the first token of the statement or
// declaration that contains i at its nesting: it walks back over balanced
// brackets to the previous ";", "{" or "}".
func (s *tstream) stmtStart(i int) int {
	j := i - 1
	for j >= 0 {
		t := s.t[j]
		if t.kind == tPunct {
			switch t.text {
			case ";", "{", "}":
				return j + 1
			case ")", "]":
				if s.pair[j] >= 0 {
					j = s.pair[j]
				}
			}
		}
		j--
	}
	return 0
}

// callArgs splits the arguments of the call whose "(" is at open into token
// ranges [start, end).
func (s *tstream) callArgs(open int) [][2]int {
	end := s.close(open)
	var out [][2]int
	start := open + 1
	for j := open + 1; j < end; j++ {
		if s.t[j].kind == tPunct {
			switch s.t[j].text {
			case "(", "[", "{":
				j = s.close(j)
			case ",":
				out = append(out, [2]int{start, j})
				start = j + 1
			}
		}
	}
	if start < end {
		out = append(out, [2]int{start, end})
	}
	return out
}
