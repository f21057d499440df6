package lang

import "strings"

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
// comment. Other languages always may.
func MayDefine(p, text, name string) bool {
	switch {
	case langOf(p) == "" || len(text) > extractMaxBytes:
		return false
	case langOf(p) != LangGo || !asciiIdent(name):
		return true
	}
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(name)
		i = at + 1
		if at > 0 && asciiWordByte(text[at-1]) || end < len(text) && asciiWordByte(text[end]) {
			continue // part of a longer word
		}
		if !afterSelectorDot(text, at) && !beforeColon(text, end) && !onCommentLine(text, at) {
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
