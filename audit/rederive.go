package audit

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/lang"
	"github.com/ctxpack/ctxpack/pack"
)

// With the repository at hand the audit re-derives what a pack sends from
// the blobs instead of trusting its blob ids (a forged item can keep the
// blob id of the file it misquotes, and a file holding a secret publishes
// none): an item is lines start..end of its file, decoded as its encoding
// says, with each secret replaced by [REDACTED:<rule>]; a whole file over
// max_file_bytes keeps its head and tail around pack.TruncationMarker. A
// diff is the repository's own diff of the file, whole or cut the ways a
// builder cuts it (some hunks, head and tail around the marker), with the
// same placeholders.
//
// A placeholder stands for at least one character of the original: the
// text around it must be the original's. So an item can only be a
// faithful, possibly redacted or truncated, copy of its lines; what a
// placeholder hides is not checked to be a secret.

// gap is what a wildcard of a sent text may stand for.
type gap int

const (
	gapRedacted  gap = iota // a placeholder: one character or more
	gapTruncated            // a truncation marker: anything, nothing included
)

// pattern is a sent text read as literal runs of the original with a
// wildcard between each two: lits[i], gaps[i], lits[i+1], …
type pattern struct {
	lits []string
	gaps []gap
}

// span is a byte range of a sent text.
type wildSpan struct {
	start, end int
	kind       gap
}

// placeholders finds the [REDACTED:<rule>] spans of s.
func placeholders(s string) []wildSpan {
	var out []wildSpan
	for i := 0; ; {
		j := strings.Index(s[i:], redactionMarker)
		if j < 0 {
			return out
		}
		start := i + j
		k := strings.IndexAny(s[start:], "]\n")
		if k < 0 || s[start+k] != ']' {
			i = start + len(redactionMarker) // not a placeholder: literal text
			continue
		}
		out = append(out, wildSpan{start, start + k + 1, gapRedacted})
		i = start + k + 1
	}
}

// markers finds the truncation markers of s that lie outside placeholders.
func markers(s string, reds []wildSpan) []wildSpan {
	var out []wildSpan
	for i := 0; ; {
		j := strings.Index(s[i:], pack.TruncationMarker)
		if j < 0 {
			return out
		}
		m := wildSpan{i + j, i + j + len(pack.TruncationMarker), gapTruncated}
		inside := false
		for _, r := range reds {
			if r.start < m.end && m.start < r.end {
				inside = true
			}
		}
		if !inside {
			out = append(out, m)
		}
		i = m.start + 1
	}
}

// compile reads s as a pattern with the given wildcards (sorted, disjoint).
func compile(s string, wilds []wildSpan) pattern {
	var p pattern
	last := 0
	for _, w := range wilds {
		p.lits = append(p.lits, s[last:w.start])
		p.gaps = append(p.gaps, w.kind)
		last = w.end
	}
	p.lits = append(p.lits, s[last:])
	return p
}

// merge sorts two disjoint span lists into one.
func merge(a, b []wildSpan) []wildSpan {
	out := make([]wildSpan, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || i < len(a) && a[i].start < b[j].start {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	return out
}

// matches reports whether the pattern matches all of t. Literal runs are
// placed leftmost, which is optimal when wildcards only bound their length
// from below.
func (p pattern) matches(t string) bool { return p.place(t, nil) }

// place is matches that also appends to at, when set, where each literal
// run lies in t (a run of literal text of t the sent text shows).
func (p pattern) place(t string, at *[][2]int) bool {
	note := func(from, to int) {
		if at != nil && from < to {
			*at = append(*at, [2]int{from, to})
		}
	}
	if len(p.gaps) == 0 {
		note(0, len(t))
		return p.lits[0] == t
	}
	if !strings.HasPrefix(t, p.lits[0]) {
		return false
	}
	note(0, len(p.lits[0]))
	pos := len(p.lits[0])
	minGap := func(g gap) int {
		if g == gapRedacted {
			return 1
		}
		return 0
	}
	last := len(p.lits) - 1
	for i := 1; i < last; i++ {
		from := pos + minGap(p.gaps[i-1])
		if from > len(t) {
			return false
		}
		j := strings.Index(t[from:], p.lits[i])
		if j < 0 {
			return false
		}
		note(from+j, from+j+len(p.lits[i]))
		pos = from + j + len(p.lits[i])
	}
	end := len(t) - len(p.lits[last])
	if end < pos+minGap(p.gaps[last-1]) || !strings.HasSuffix(t, p.lits[last]) {
		return false
	}
	note(end, len(t))
	return true
}

// maxMarkerTries bounds the markers of an item tried as its cut (each try
// reads the whole item): a file of its own holds a few at most.
const maxMarkerTries = 64

// sentMatches reports whether sent is original with secrets replaced by
// placeholders; when truncatable, also with one truncation marker standing
// for a cut (the marker may be literal text of the original too, so each
// is tried).
func sentMatches(sent, original string, truncatable bool) bool {
	reds := placeholders(sent)
	if compile(sent, reds).matches(original) {
		return true
	}
	if !truncatable {
		return false
	}
	ms := markers(sent, reds)
	if len(ms) > maxMarkerTries {
		return false // fail closed: no builder output has that many
	}
	for _, m := range ms {
		if compile(sent, merge(reds, []wildSpan{m})).matches(original) {
			return true
		}
	}
	return false
}

// firstDifference is the 1-based line of sent where it first differs from
// original, skipping lines with a placeholder or marker: a hint for the
// message, which never quotes either text.
func firstDifference(sent, original string) int {
	s, o := strings.SplitAfter(sent, "\n"), strings.SplitAfter(original, "\n")
	for i := range s {
		if strings.Contains(s[i], redactionMarker) || strings.Contains(s[i], strings.Trim(pack.TruncationMarker, "\n")) {
			continue
		}
		if i >= len(o) || s[i] != o[i] {
			return i + 1
		}
	}
	return len(s)
}

// itemLines is the line range an item's id names, checked against its path
// and its start_line/end_line.
func itemLines(it *pack.Item) (int, int, error) {
	rest, endText, ok1 := cutLast(it.ID, ":")
	idPath, startText, ok2 := cutLast(rest, ":")
	start, err1 := strconv.Atoi(startText)
	end, err2 := strconv.Atoi(endText)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || idPath != it.Path {
		return 0, 0, fmt.Errorf("its id does not read path:start_line:end_line for its path")
	}
	if (it.StartLine != 0 || it.EndLine != 0) && (it.StartLine != start || it.EndLine != end) {
		return 0, 0, fmt.Errorf("its id names lines %d–%d, start_line/end_line say %d–%d", start, end, it.StartLine, it.EndLine)
	}
	return start, end, nil
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// cutLines returns lines start..end (1-based, inclusive, each with its
// newline) of text, as a builder cuts a region.
func cutLines(text string, start, end int) string {
	lo := 0
	for line := 1; line < start; line++ {
		i := strings.IndexByte(text[lo:], '\n')
		if i < 0 {
			return ""
		}
		lo += i + 1
	}
	hi := lo
	for line := start; line <= end; line++ {
		i := strings.IndexByte(text[hi:], '\n')
		if i < 0 {
			return text[lo:]
		}
		hi += i + 1
	}
	return text[lo:hi]
}

// rederiveItem checks an item against its file's bytes; it returns what is
// wrong, "" when the item is a faithful copy of the lines its id names.
func rederiveItem(it *pack.Item, data []byte) string {
	text, err := pack.DecodeText(data, it.Encoding)
	if err != nil {
		return fmt.Sprintf("the file cannot be read as the item's encoding says: %v", err)
	}
	start, end, err := itemLines(it)
	if err != nil {
		return err.Error()
	}
	n := lang.CountLines(text)
	switch {
	case n == 0 && (start != 0 || end != 0):
		return fmt.Sprintf("the file is empty but the item names lines %d–%d", start, end)
	case n > 0 && (start < 1 || start > end || end > n):
		return fmt.Sprintf("the item names lines %d–%d of a file of %d lines", start, end, n)
	}
	original := cutLines(text, start, end)
	// Only a whole file is cut around a truncation marker.
	if sentMatches(it.Content, original, start <= 1 && end == n) {
		return ""
	}
	return fmt.Sprintf("the content is not lines %d–%d of the file (first difference at line %d of the item)", start, end, firstDifference(it.Content, original))
}

// rederiveDiff checks the diff of a change in the pack against the
// repository's diff of the same change; it returns what is wrong, "" when
// it holds.
func rederiveDiff(c *pack.Change, repoDiff string) string {
	problem, _ := rederiveDiffSecrets(c, repoDiff, nil)
	return problem
}

// rederiveDiffSecrets is rederiveDiff that also finds, when the diff holds,
// the first of secrets (spans of repoDiff that show part of a secret of
// the file, pack.DiffSecrets) whose text the diff sends as it is: a part
// of the repository's diff that the sent diff shows as literal text, not
// behind a placeholder or a truncation marker.
func rederiveDiffSecrets(c *pack.Change, repoDiff string, secrets []pack.DiffSecret) (string, *pack.DiffSecret) {
	sent := c.Diff
	spans := make([][2]int, len(secrets))
	for i, s := range secrets {
		spans[i] = [2]int{s.Start, s.End}
	}
	want := repoDiff
	if header, _ := pack.DiffHunks(sent); !strings.HasPrefix(header, "index ") && !strings.Contains(header, "\nindex ") {
		// A file holding a secret does not name its blobs. The index line
		// is in the file header, before every span.
		var dropped int
		if want, dropped = pack.DropIndexLine(want); dropped > 0 {
			for i := range spans {
				spans[i][0] -= len(repoDiff) - len(want)
				spans[i][1] -= len(repoDiff) - len(want)
			}
		}
	}
	want = jsonTextSpans(want, spans)
	var shown [][2]int // the literal runs of want the sent diff shows
	exposed := func() *pack.DiffSecret {
		for i, sp := range spans {
			if sp[0] >= sp[1] {
				continue
			}
			// shown is sorted and disjoint: the first run ending after the
			// span's start is the only one that can overlap it first.
			k := sort.Search(len(shown), func(k int) bool { return shown[k][1] > sp[0] })
			if k < len(shown) && shown[k][0] < sp[1] {
				return &secrets[i]
			}
		}
		return nil
	}
	// A bounded diff keeps head and tail around a marker, a Summary pack's
	// its first hunks before one: either way pieces of the repository's
	// diff, in order.
	reds := placeholders(sent)
	if cuts := markers(sent, reds); len(cuts) > 0 {
		switch {
		case !c.DiffTruncated:
			return "the diff holds a truncation marker but does not say it is truncated", nil
		case len(cuts) > 2:
			return fmt.Sprintf("the diff holds %d truncation markers; a builder cuts a diff at most twice", len(cuts)), nil
		case !compile(sent, merge(reds, cuts)).place(want, &shown):
			return "the diff is not the repository's diff of the file, cut around the truncation marker", nil
		}
		return "", exposed()
	}
	// A change pack keeps some hunks, each whole.
	header, hunks := pack.DiffHunks(sent)
	wantHeader, wantHunks := pack.DiffHunks(want)
	if !sentMatches(header, wantHeader, false) {
		return "the diff's file header is not the repository's", nil
	}
	// Where each of the repository's hunks starts in want.
	starts := make([]int, len(wantHunks))
	at := len(wantHeader)
	for i, h := range wantHunks {
		starts[i] = at
		at += len(h)
	}
	next := 0
	for i, h := range hunks {
		at := hunkIndex(wantHunks[next:], hunkRanges(h))
		if at < 0 {
			return fmt.Sprintf("hunk %d of the diff (%s) is not a hunk of the repository's diff, in order", i+1, hunkRanges(h)), nil
		}
		var placed [][2]int
		if !compile(h, placeholders(h)).place(wantHunks[next+at], &placed) {
			return fmt.Sprintf("hunk %d of the diff (%s) differs from the repository's", i+1, hunkRanges(h)), nil
		}
		for _, r := range placed {
			shown = append(shown, [2]int{starts[next+at] + r[0], starts[next+at] + r[1]})
		}
		next += at + 1
	}
	return "", exposed()
}

// hunkRanges is the "@@ -a,b +c,d @@" of a hunk's header line.
func hunkRanges(h string) string {
	first, _, _ := strings.Cut(h, "\n")
	if i := strings.Index(first[min(2, len(first)):], "@@"); i >= 0 {
		return first[:i+4]
	}
	return first
}

func hunkIndex(hunks []string, ranges string) int {
	for i, h := range hunks {
		if hunkRanges(h) == ranges {
			return i
		}
	}
	return -1
}

// jsonTextSpans is s as a pack carries it: encoding/json replaces each
// byte that is not valid UTF-8 with U+FFFD (a diff holds the file's raw
// bytes). spans, byte ranges of s, are moved to the same text in the
// result (a character cut by a span is in it whole).
func jsonTextSpans(s string, spans [][2]int) string {
	if utf8.ValidString(s) {
		return s
	}
	// from[i] and to[i] are where the character holding byte i of s
	// starts and ends in the result.
	var from, to []int
	if len(spans) > 0 {
		from, to = make([]int, len(s)), make([]int, len(s))
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		start := b.Len()
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		for k := 0; k < size && from != nil; k++ {
			from[i+k], to[i+k] = start, b.Len()
		}
		i += size
	}
	for i, sp := range spans {
		start, end := min(max(sp[0], 0), len(s)), min(max(sp[1], 0), len(s))
		if start >= end {
			spans[i] = [2]int{b.Len(), b.Len()}
			continue
		}
		spans[i] = [2]int{from[start], to[end-1]}
	}
	return b.String()
}
