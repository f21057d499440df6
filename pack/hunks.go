package pack

import (
	"strconv"
	"strings"
)

// hunk is one "@@" section of a unified diff.
type hunk struct {
	// text is the hunk as it appears in the diff: header line and body.
	text               string
	oldStart, oldLines int
	newStart, newLines int
	added, deleted     int
	// lo and hi are the new-side lines the hunk changes: the added lines,
	// or for a pure deletion the line the deletion sits before (0..0 when
	// the new side is empty).
	lo, hi int
	// line is the hunk's first line in the whole diff text (1-based).
	line int
}

// HunkSummary stands for a hunk of a change whose lines are not in the pack
// (the budget could not hold them): where it is and how big.
type HunkSummary struct {
	// Header is the hunk's line ranges, "@@ -a,b +c,d @@", without the
	// section heading a diff puts after them: that heading is a line of the
	// file, and the hunk's lines are exactly what the pack does not send.
	Header  string `json:"header"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	// Symbol is the definition the hunk changes, when known.
	Symbol string `json:"symbol,omitempty"`
}

// splitDiff splits a unified diff into its file header (the lines before
// the first hunk) and its hunks. A diff without hunks is all header.
func splitDiff(diff string) (string, []hunk) {
	i := hunkStart(diff, 0)
	if i < 0 {
		return diff, nil
	}
	header := diff[:i]
	line := strings.Count(header, "\n") + 1
	var hunks []hunk
	for i >= 0 {
		next := hunkStart(diff, i+1)
		end := len(diff)
		if next >= 0 {
			end = next
		}
		h := parseHunk(diff[i:end])
		h.line = line
		line += strings.Count(h.text, "\n")
		hunks = append(hunks, h)
		i = next
	}
	return header, hunks
}

// DiffHunks splits a unified diff as a change pack does: its file header
// (the lines before the first hunk) and each hunk's text, header line
// included.
func DiffHunks(diff string) (header string, hunks []string) {
	header, hs := splitDiff(diff)
	for _, h := range hs {
		hunks = append(hunks, h.text)
	}
	return header, hunks
}

// hunkStart finds the next line starting with "@@ " at or after from.
func hunkStart(diff string, from int) int {
	for from < len(diff) {
		if strings.HasPrefix(diff[from:], "@@ ") && (from == 0 || diff[from-1] == '\n') {
			return from
		}
		j := strings.IndexByte(diff[from:], '\n')
		if j < 0 {
			return -1
		}
		from += j + 1
	}
	return -1
}

// parseHunk reads a hunk's header and counts its lines.
func parseHunk(text string) hunk {
	h := hunk{text: text}
	first, body, _ := strings.Cut(text, "\n")
	if a, b, c, d, _, ok := ParseHunkHeader(first); ok {
		h.oldStart, h.oldLines, h.newStart, h.newLines = a, b, c, d
	}
	n := h.newStart
	if h.newLines == 0 && n == 0 {
		n = 1
	}
	for _, l := range strings.SplitAfter(body, "\n") {
		if l == "" {
			continue
		}
		switch l[0] {
		case '+':
			h.added++
			if h.lo == 0 {
				h.lo = n
			}
			h.hi = n
			n++
		case '-':
			h.deleted++
			if h.lo == 0 {
				h.lo, h.hi = n, n
			}
		case ' ':
			n++
		}
	}
	if h.newLines == 0 {
		h.lo, h.hi = 0, 0
	}
	return h
}

// rangeHeader is the hunk's "@@ -a,b +c,d @@" rebuilt from its numbers (a
// count of 1 omitted, as git writes it): never any text of the file.
func (h hunk) rangeHeader() string {
	r := func(start, n int) string {
		if n == 1 {
			return strconv.Itoa(start)
		}
		return strconv.Itoa(start) + "," + strconv.Itoa(n)
	}
	return "@@ -" + r(h.oldStart, h.oldLines) + " +" + r(h.newStart, h.newLines) + " @@"
}

// ParseHunkHeader reads a hunk header line, "@@ -a[,b] +c[,d] @@ heading"
// (a missing count is 1), and returns its ranges and the offset of its
// heading in line (len(line) when it has none).
func ParseHunkHeader(line string) (a, b, c, d, heading int, ok bool) {
	rest := strings.TrimPrefix(line, "@@ -")
	if len(rest) == len(line) {
		return
	}
	end := strings.Index(rest, " @@")
	if end < 0 {
		return
	}
	oldR, newR, found := strings.Cut(rest[:end], " +")
	if !found {
		return
	}
	var ok1, ok2 bool
	a, b, ok1 = countedRange(oldR)
	c, d, ok2 = countedRange(newR)
	heading = len(line) - len(rest) + end + len(" @@")
	if heading < len(line) && line[heading] == ' ' {
		heading++
	}
	return a, b, c, d, heading, ok1 && ok2
}

// countedRange parses "start[,count]" (a missing count is 1).
func countedRange(s string) (int, int, bool) {
	a, n, hasCount := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	count := 1
	if hasCount {
		if count, err = strconv.Atoi(n); err != nil || count < 0 {
			return 0, 0, false
		}
	}
	return start, count, true
}

// DiffLines maps a unified diff onto the new file: each new-side line it
// shows (context or added) by file line, and each such line's line in the
// diff text (for redactions, which are numbered by diff line).
func DiffLines(diff string) (text map[int]string, diffLine map[int]int) {
	text, diffLine = map[int]string{}, map[int]int{}
	_, hunks := splitDiff(diff)
	for _, h := range hunks {
		_, body, _ := strings.Cut(h.text, "\n")
		n, dl := h.newStart, h.line
		for _, l := range strings.SplitAfter(body, "\n") {
			dl++
			if l == "" {
				continue
			}
			switch l[0] {
			case '+', ' ':
				text[n] = strings.TrimSuffix(strings.TrimSuffix(l[1:], "\n"), "\r")
				diffLine[n] = dl
				n++
			}
		}
	}
	return text, diffLine
}
