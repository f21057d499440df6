package transparency

import (
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// GitHub-flavoured markdown escaping for the reviewer summary.
//
// One approach, everywhere: a user-controlled string (a path, a rule id, a
// message) is first made one visible line (viewVisible), then every ASCII
// punctuation character that markdown, HTML or GitHub's autolinkers give a
// meaning to is written as a numeric character reference. CommonMark treats
// a character reference as a literal character, never as markup, so no
// emphasis, link, image, table cell, tag, autolink (`www.`, `scheme:`) or
// math span can start, and the raw text holds no `<`, `](`, `@` or `#`.
//
// Paths are wrapped in an HTML <code> element, inside which GitHub links no
// @mention and no #123 (its reference filters skip code elements), and the
// copied text is the exact name. Plain text (messages, notes) has no such
// element around it, so there a zero-width joiner (U+200D, written as
// &#8205;) follows every @ and # and the dash of GH-, which breaks GitHub's
// mention and issue-reference patterns.

// ghPunct are the ASCII characters written as character references. Kept
// literal: letters, digits, space, '/', '-' and ',' (none of them starts
// markup in the middle of a line, and the output stays readable).
var ghPunct = func() [128]bool {
	var t [128]bool
	for _, c := range "!\"#$%&'()*+.:;<=>?@[\\]^_`{|}~" {
		t[c] = true
	}
	return t
}()

const ghZWJ = "&#8205;"

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
	for i, r := range v {
		if r < 128 && ghPunct[r] {
			b.WriteString("&#")
			b.WriteString(strconv.Itoa(int(r)))
			b.WriteByte(';')
		} else {
			b.WriteRune(r)
		}
		if code {
			continue
		}
		// Break what GitHub links in plain text: @name, #123, GH-123,
		// scheme://… and www.… (the joiner is invisible).
		switch {
		case r == '@', r == '#':
			b.WriteString(ghZWJ)
		case r == '-' && i >= 2 && at(i-2, "gh-"):
			b.WriteString(ghZWJ)
		case r == ':' && at(i+1, "//"):
			b.WriteString(ghZWJ)
		case (r == 'w' || r == 'W') && i >= 2 && at(i-2, "www.") && (i < 3 || !ghWordRune(v[i-3])):
			b.WriteString(ghZWJ)
		}
	}
	return b.String()
}

func ghWordRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
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
