package transparency

import (
	"fmt"
	"github.com/ctxpack/ctxpack/pack"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text helpers shared by the summary, read and render views. File names,
// rule ids and messages are user-controlled: every helper here turns them
// into text that cannot end a line, open a block or close a delimiter.

// viewOriginalSize formats the size of a file's original: a count of
// bytes, or why it is withheld (pack.WithheldSecret, …).
func viewOriginalSize(n *int64, withheld string) string {
	if n != nil {
		return viewCount(*n, "byte", "bytes")
	}
	return "withheld (" + viewVisible(rdOr(withheld, "unknown")) + ")"
}

// viewInt formats n with thousands separators: 1234567 → "1,234,567".
func viewInt[T int | int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	head := len(s) % 3
	if head > 0 {
		b.WriteString(s[:head])
	}
	for i := head; i < len(s); i += 3 {
		if b.Len() > 0 && !(neg && b.Len() == 1) {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// viewCount is "1 file" / "1,234 files".
func viewCount[T int | int64](n T, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return viewInt(n) + " " + many
}

// viewInvisible reports runes that change how text reads without being
// seen: bidirectional controls (Trojan Source), zero-width characters, line
// and paragraph separators, the soft hyphen and the BOM.
func viewInvisible(r rune) bool {
	switch {
	case r == 0xAD, r == 0x061C, r == 0x180E, r == 0xFEFF:
		return true
	case r >= 0x200B && r <= 0x200F:
		return true
	case r >= 0x2028 && r <= 0x202E:
		return true
	case r >= 0x2060 && r <= 0x2069:
		return true
	}
	return false
}

// viewVisible makes s one line of visible text: control characters, invalid
// UTF-8 and invisible format characters become Go-style escapes (\n, \x1b,
// \u202e), and a backslash is doubled so that an escape is never ambiguous
// with a name that contains one.
func viewVisible(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\\' || viewInvisible(r) || (r == utf8.RuneError && w == 1) {
			clean = false
			break
		}
		i += w
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case (r >= 0x80 && r < 0xa0) || viewInvisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return b.String()
}

// viewClip shortens s to about max runes, keeping its head and its tail (the
// end of a path says what kind of file it is) and saying how much was left
// out.
func viewClip(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if max <= 0 || n <= max {
		return s
	}
	tail := max / 4
	head := max - tail
	r := []rune(s)
	return string(r[:head]) + fmt.Sprintf("…[%s characters]…", viewInt(n-head-tail)) + string(r[n-tail:])
}

// viewLongestRun is the length of the longest run of c in s.
func viewLongestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			if run > longest {
				longest = run
			}
		} else {
			run = 0
		}
	}
	return longest
}

// viewCodeSpan renders s as one CommonMark code span on one line: the
// delimiter is longer than any backtick run in s, and a name that begins or
// ends with a backtick or a space is padded so that the span keeps it.
func viewCodeSpan(s string) string {
	v := viewVisible(s)
	fence := strings.Repeat("`", viewLongestRun(v, '`')+1)
	if v != "" && strings.Trim(v, " ") != "" && (v[0] == '`' || v[len(v)-1] == '`' || v[0] == ' ' || v[len(v)-1] == ' ') {
		v = " " + v + " "
	}
	if v == "" {
		v = " "
	}
	return fence + v + fence
}

// viewFence is a backtick code fence that no line of content can close: at
// least three backticks and longer than the longest backtick run in content.
func viewFence(content string) string {
	n := viewLongestRun(content, '`') + 1
	if n < 3 {
		n = 3
	}
	return strings.Repeat("`", n)
}

// viewFenceBlock renders content as a fenced code block. Content that does not
// end with a newline gets one before the closing fence and a marker line
// after it, so the original bytes can be told apart.
func viewFenceBlock(b *strings.Builder, content, lang string) {
	fence := viewFence(content)
	b.WriteString(fence)
	b.WriteString(lang)
	b.WriteByte('\n')
	b.WriteString(content)
	noEOL := content != "" && !strings.HasSuffix(content, "\n")
	if noEOL {
		b.WriteByte('\n')
	}
	b.WriteString(fence)
	b.WriteByte('\n')
	if noEOL {
		b.WriteString(viewNoEOL + "\n")
	}
}

// viewProseBlock renders a message (a commit or pull-request body) as a
// fenced block. Its final newline is not part of what it says (the intent
// trims messages), so no end-of-file marker follows it.
func viewProseBlock(b *strings.Builder, content, lang string) {
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	viewFenceBlock(b, content, lang)
}

// viewNoEOL follows a fenced block whose content has no final newline.
const viewNoEOL = `\ No newline at end of file`

// viewLang is a code-fence info string derived from a file name: the
// lower-case extension when it is short and plain, else nothing.
func viewLang(p string) string {
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(p)), ".")
	if ext == "" || len(ext) > 12 {
		return ""
	}
	for _, c := range ext {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '-') {
			return ""
		}
	}
	return ext
}

// viewShellQuote quotes s for a POSIX shell (single quotes).
func viewShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// viewShort is the first 7 characters of a commit or digest.
func viewShort(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// viewParagraphs renders text of blank-line-separated paragraphs (a
// Summary pack's description) under a list item: each paragraph one
// visible line (viewVisible), the paragraphs apart by a real blank line and
// indented into the item, none able to start a heading, quote or list.
func viewParagraphs(s string) string {
	var parts []string
	for _, para := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n\n") {
		para = strings.Trim(para, "\n")
		if strings.TrimSpace(para) == "" {
			continue
		}
		v := viewVisible(para)
		if len(parts) > 0 && viewBlockStart.MatchString(v) {
			v = "\\" + v
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, "\n\n  ")
}

// viewBlockStart is text that would start a block at the beginning of a
// line: a heading, quote, list item, table row or setext underline.
var viewBlockStart = regexp.MustCompile(`^(?:[#>+*=|-]|[0-9]+[.)])`)

// viewBudgetUse says how much of its ceilings a pack uses: characters (of
// the tier's cap, when one applies) and estimated tokens (of the token
// budget, when there is one). A ceiling of 0 is no ceiling and is not shown.
func viewBudgetUse(bu pack.Budget) string {
	s := viewCount(bu.UsedChars, "character", "characters")
	if bu.MaxChars > 0 {
		s = viewInt(bu.UsedChars) + " of " + viewInt(bu.MaxChars) + " characters"
	}
	s += " · ≈ " + viewInt(bu.EstimatedTokens)
	if bu.MaxTokens > 0 {
		s += " of " + viewInt(bu.MaxTokens)
	}
	s += " tokens"
	if bu.TokenEncoding != "" {
		s += " (" + viewVisible(bu.TokenEncoding) + ")"
	}
	return s
}
