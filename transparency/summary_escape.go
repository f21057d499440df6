package transparency

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// GitHub-flavoured markdown escaping for the reviewer summary.
//
// A user-controlled string (a path, a rule id, a message) is first made one
// visible line (viewVisible), then only what GitHub would read as markup is
// neutralised, so the raw comment stays readable as plain text (go.sum:12
// stays go.sum:12):
//
//   - HTML-significant characters: < and > as &lt; and &gt;, & as &amp;
//     where it could start a character reference;
//   - markdown punctuation with a backslash: backslash, backtick, [ ], *, ~,
//     $ (math), | (a table cell), and _ where it could open or close
//     emphasis (not inside a word: snake_case stays);
//   - what autolinkers take: the ':' of "://" and the '.' of "www." get a
//     backslash, which splits the text GitHub scans;
//   - a leading #, >, +, -, = or "1." with a backslash (block syntax);
//   - outside code elements, a zero-width joiner (U+200D, invisible) after
//     every @ and # and the dash of GH-, which breaks GitHub's mention and
//     issue-reference patterns. Inside <code> GitHub links neither, and the
//     copied text is the exact name.

// ghBackslash are the ASCII characters always written with a backslash.
var ghBackslash = func() [128]bool {
	var t [128]bool
	for _, c := range "\\`[]*~$|" {
		t[c] = true
	}
	return t
}()

const ghZWJ = "\u200d"

func ghEscape(s string, code bool) string {
	v := []rune(viewVisible(s))
	var b strings.Builder
	b.Grow(len(v) + 16)
	at := func(i int, lit string) bool { // v[i:] starts with lit (ASCII, any case)
		for j := 0; j < len(lit); j++ {
			if i+j >= len(v) || v[i+j] >= 128 || (v[i+j]|0x20) != rune(lit[j]|0x20) {
				return false
			}
		}
		return true
	}
	word := func(i int) bool { return i >= 0 && i < len(v) && (unicode.IsLetter(v[i]) || unicode.IsDigit(v[i])) }
	lead := -1 // inside a code element nothing starts a line
	if !code {
		lead = ghLeading(v)
	}
	for i, r := range v {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>' && i != lead:
			b.WriteString("&gt;")
		case r == '&' && i+1 < len(v) && (v[i+1] == '#' || word(i+1)):
			b.WriteString("&amp;")
		case r < 128 && ghBackslash[r], i == lead,
			r == '_' && !(word(i-1) && word(i+1)),
			r == ':' && at(i+1, "//"),
			r == '.' && i >= 3 && at(i-3, "www") && (i < 4 || !ghWordRune(v[i-4])):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		if code {
			continue
		}
		switch {
		case r == '@', r == '#':
			b.WriteString(ghZWJ)
		case r == '-' && i >= 2 && at(i-2, "gh-"):
			b.WriteString(ghZWJ)
		}
	}
	return b.String()
}

// ghLeading returns the index of the character that would make v start a
// block when it begins a line — a quote (>), a heading (#… and a space), a
// list item (-, + or * and a space; 1. or 1) and a space), a setext
// underline or thematic break (only =, - or * and spaces) — or -1.
func ghLeading(v []rune) int {
	i := 0
	for i < len(v) && v[i] == ' ' {
		i++
	}
	if i == len(v) {
		return -1
	}
	spaceAfter := func(j int) bool { return j >= len(v) || v[j] == ' ' }
	switch v[i] {
	case '>':
		return i
	case '#':
		j := i
		for j < len(v) && v[j] == '#' {
			j++
		}
		if j-i <= 6 && spaceAfter(j) {
			return i
		}
	case '-', '+', '*':
		if spaceAfter(i + 1) {
			return i
		}
	}
	if strings.Trim(string(v[i:]), "=-* ") == "" {
		return i
	}
	j := i
	for j < len(v) && j-i < 10 && v[j] >= '0' && v[j] <= '9' {
		j++
	}
	if j > i && j < len(v) && (v[j] == '.' || v[j] == ')') && spaceAfter(j+1) {
		return j
	}
	return -1
}

func ghWordRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
}

// ghHTML renders s as text inside an HTML block (a <summary> line), where
// markdown is not parsed: HTML escaping, and the joiner after @ and #.
func ghHTML(s string) string {
	t := html.EscapeString(viewVisible(s))
	t = strings.ReplaceAll(t, "@", "@"+ghZWJ)
	return strings.ReplaceAll(t, "#", "#"+ghZWJ)
}

// ghCode renders s (a path, an id, a digest) as an HTML code element.
func ghCode(s string) string { return "<code>" + ghEscape(s, true) + "</code>" }

// ghText renders s as inert inline text.
func ghText(s string) string { return ghEscape(s, false) }

// ghLink renders an http(s) URL as an HTML link; anything else is dropped
// (no javascript:, no relative links, no markdown link syntax).
func ghLink(raw, label string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return ""
	}
	return `<a href="` + html.EscapeString(u.String()) + `">` + ghText(label) + `</a>`
}

var ghMarkerRE = regexp.MustCompile(`^<!--[ -~]*-->$`)

// ghMarker returns m when it is a one-line HTML comment that cannot end early,
// else a comment built from its visible, harmless characters.
func ghMarker(m string) string {
	m = strings.TrimSpace(m)
	if m == "" {
		return ""
	}
	if ghMarkerRE.MatchString(m) && !strings.Contains(m[4:len(m)-3], "--") && !strings.HasPrefix(m[4:], ">") && !strings.HasPrefix(m[4:], "->") {
		return m
	}
	inner := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":_./ ", r) {
			return r
		}
		return -1
	}, strings.TrimSuffix(strings.TrimPrefix(m, "<!--"), "-->"))
	return "<!-- " + strings.TrimSpace(inner) + " -->"
}
