package lang

import (
	"strings"
	"sync"
)

// MayDefine reports whether Extract(p, text) may list a symbol whose short
// name is name (Defined finds it), without extracting: false only when it
// cannot. A caller looking for a definition among the files that mention
// a name skips extracting most of them: in Go, a file that calls
// cmd.Flags() holds "Flags" only after a '.', and parsing it only to find
// no "Flags" declared was most of a range's callee lookup (hugo: 18 files
// parsed for two names).
//
// It is exact where Extract extracts nothing (no extractor for p's
// language, a text over the extraction bound). For Go it is sound on any
// text that parses (FuzzMayDefine holds it to Extract): Go's symbols are
// the names its top-level declarations declare, and such a name is a word
// of its own (no letter, digit or _ of the same word beside it), that no
// '.' precedes and no ':' follows on its line, on a line that is not a
// comment. For JavaScript and TypeScript it is exact (jsSiteNames). Other
// languages always may.
func MayDefine(p, text, name string) bool {
	return Definer(p, text)(name)
}

// Definer returns MayDefine(p, text, ·): one text asked about several
// names does the work they share once (a JavaScript text is lexed on the
// first name its occurrences leave open, and only then).
func Definer(p, text string) func(name string) bool {
	switch {
	case langOf(p) == "" || len(text) > extractMaxBytes:
		return func(string) bool { return false }
	case langOf(p) == LangJavaScript || langOf(p) == LangTypeScript:
		names := sync.OnceValue(func() map[string]bool { return jsSiteNames(text) })
		return func(name string) bool {
			if jsIdent(name) && !jsMayName(text, name) {
				return false
			}
			return names()[name]
		}
	case langOf(p) != LangGo:
		return func(string) bool { return true }
	}
	return func(name string) bool { return goMayDefine(text, name) }
}

// goMayDefine is MayDefine for Go (and any name outside Go's identifiers:
// always may).
func goMayDefine(text, name string) bool {
	if !asciiIdent(name) {
		return true
	}
	return anyWord(text, name, asciiWordByte, func(at, end int) bool {
		return !afterSelectorDot(text, at) && !beforeColon(text, end) && !onCommentLine(text, at)
	})
}

// anyWord reports whether may holds of an occurrence of name in text that
// is a word of its own: no byte of inWord beside it. at and end are the
// occurrence's bounds.
func anyWord(text, name string, inWord func(byte) bool, may func(at, end int) bool) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(name)
		i = at + 1
		if at > 0 && inWord(text[at-1]) || end < len(text) && inWord(text[end]) {
			continue // part of a longer word
		}
		if may(at, end) {
			return true
		}
	}
}

// afterSelectorDot reports whether the word at text[at:] follows a '.' on
// its line, spaces and tabs between: a selector (x.Name, x. Name, f().Name)
// or a variadic type (...Name), never a declared name, which follows
// func, type, var, const, a receiver's ')', a group's '(', a ',' or a ';'.
// A '.' ending the line before (x.\nName, legal Go) is not looked for: it
// may as well end a comment or a float ("1."), a declaration after it.
func afterSelectorDot(text string, at int) bool {
	k := at - 1
	for k >= 0 && (text[k] == ' ' || text[k] == '\t') {
		k--
	}
	return k >= 0 && text[k] == '.'
}

// beforeColon reports whether a ':' follows text[:end] on its line, spaces
// and tabs between: a composite literal's key (Name: v), a label, a short
// variable declaration (name := v) or a slice bound, never a declared
// name, which a type, a '(', a '[', a '=', a ',' or the line's end follows.
func beforeColon(text string, end int) bool {
	k := end
	for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
		k++
	}
	return k < len(text) && text[k] == ':'
}

// onCommentLine reports whether the line holding text[at] starts, after
// spaces and tabs, with "//" and holds no '`' or "*/": a comment to its
// end, or a line inside a raw string or a block comment that does not end
// there, where nothing is declared. (A raw string's or a block comment's
// last line can start with "//" and end in a declaration: "// x`; func
// Name() {}".)
func onCommentLine(text string, at int) bool {
	k := strings.LastIndexByte(text[:at], '\n') + 1
	for k < at && (text[k] == ' ' || text[k] == '\t') {
		k++
	}
	if !strings.HasPrefix(text[k:], "//") {
		return false
	}
	line := text[k:]
	if e := strings.IndexByte(line, '\n'); e >= 0 {
		line = line[:e]
	}
	return !strings.Contains(line, "`") && !strings.Contains(line, "*/")
}

func asciiWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// asciiIdent reports whether s is a non-empty ASCII identifier.
func asciiIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !asciiWordByte(s[i]) {
			return false
		}
	}
	return true
}

// jsSiteNames is the short names of the symbols Extract lists for a
// JavaScript or TypeScript text: the functions jsFuncSites names, found
// without measuring them. Whole extractions (complexity measures, routes,
// signals) of express's test files were ~7 ms of a range's callee lookup:
// they call request(app) and express() and define neither. Definer asks
// it only of a text whose occurrences of the name leave it open
// (jsMayName).
func jsSiteNames(text string) map[string]bool {
	text, _ = jsText(text)
	names := map[string]bool{}
	for _, site := range jsFuncSites(newStream(lex(text, lexOpts{js: true}))) {
		names[(Symbol{Name: site.name}).Short()] = true
	}
	return names
}

// jsMayName reports whether text holds an occurrence of the identifier
// name that may be a name jsFuncs gives, which answers most files without
// lexing them. Each such name is an identifier token of its own that the
// token '(', '=' or ':' follows: a name after "function" (or its '*') or a
// method's name, before its parameters and, after them, its body; or a
// name before the '=' or ':' a function or an arrow is assigned with. So
// an occurrence is passed over when what follows it, after the lexer's
// blanks and line ends, starts none of those tokens (a '/' may start a
// comment before one): a property read or an operand (express.static,
// name === x), or the text's end; or when what its '=' assigns is no
// function (mayAssignFunction: request = require('supertest')). One that
// '(' follows is passed over when a '.' precedes it on its line (spaces
// and tabs between: the token before it is ".", "?." or "...", never a
// method's name or "function"), or when its parentheses are a call's
// (callWithoutBody: request(app), expect(200)).
func jsMayName(text, name string) bool {
	return anyWord(text, name, isIdentPart, func(at, end int) bool {
		k := skipJSBlanks(text, end)
		if k == len(text) {
			return false
		}
		switch text[k] {
		case ':', '/':
			return true
		case '=':
			return mayAssignFunction(text, k)
		case '(':
			return !afterSelectorDot(text, at) && !callWithoutBody(text, k)
		}
		return false
	})
}

// callWithoutBody reports whether the '(' at text[open], which follows a
// name, opens parentheses that no function body follows (a call:
// request(app).get("/")), so that jsFuncSites gives no name there: a name
// before '(' is a function's (after "function", or a method's) only when
// the lexer's body (tstream.body) follows its parentheses, whose first
// token is then '{', ':', "->", "=>", throws or where. It answers only
// where it pairs the parentheses as the lexer does: with nothing between
// them but what the lexer reads as names, numbers and punctuation other
// than brackets (no quote, template, '/' of a comment or a regular
// expression, brace or bracket, which the lexer reads or pairs its own
// way: a '}' may leave the '(' without its ')'); else false, as when it
// cannot tell. Nor with parentheses inside (expect(f(x))): each call reads
// the text from its '(' to the next one or the ')', so that the calls for
// all the occurrences in a text read it once between them; a text the
// repository writes as foo(foo(foo(… would otherwise be read again from
// each (500 KB: 21 s).
func callWithoutBody(text string, open int) bool {
	for i := open + 1; i < len(text); i++ {
		switch text[i] {
		case ')':
			j := skipJSBlanks(text, i+1)
			return j == len(text) || strings.IndexByte("{:-=tw/", text[j]) < 0
		case '(', '\'', '"', '`', '/', '{', '}', '[', ']':
			return false
		}
	}
	return false // no ')': the lexer's pairing is not read here
}

// mayAssignFunction reports whether the '=' at text[eq], after a name,
// may be the token "=" before a function or an arrow jsFuncSites names by
// that name: "function" or "async" after it, or any one token and then
// "=>" (an arrow's parameter, as the lexer reads it: a name, a number,
// anything), or a '/' that may start a comment between them. Not "==",
// "===" or "=>", nor a name or a number that something else follows
// (request = require('supertest'), n = 1;): where the token after the
// '=' is another, it may.
func mayAssignFunction(text string, eq int) bool {
	if eq+1 < len(text) && (text[eq+1] == '=' || text[eq+1] == '>') {
		return false
	}
	k := skipJSBlanks(text, eq+1)
	if k == len(text) {
		return false
	}
	end := k
	switch c := text[k]; {
	case isIdentStart(c):
		for end < len(text) && isIdentPart(text[end]) {
			end++
		}
		if w := text[k:end]; w == "function" || w == "async" {
			return true
		}
	case c >= '0' && c <= '9':
		end = numberEnd(text, k)
	default:
		return true
	}
	rest := text[skipJSBlanks(text, end):]
	return strings.HasPrefix(rest, "=>") || strings.HasPrefix(rest, "/")
}

// skipJSBlanks is the offset of the first byte from text[k:] that the
// lexer does not skip between tokens (len(text) when there is none).
func skipJSBlanks(text string, k int) int {
	for k < len(text) && isLexSpace(text[k]) {
		k++
	}
	return k
}

// jsIdent reports whether s is one identifier token of the JavaScript lexer.
func jsIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentPart(s[i]) {
			return false
		}
	}
	return true
}
