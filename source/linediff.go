package source

import (
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// lineDiff is diff.Do(old, new), go-git's line diff, without hashing every
// line of a long file of which a change touched a few (a changelog that
// each commit of a range adds a line to: 13 diffs of a 120 KB file were
// 15% of a 14-commit range), and with a middle of more than maxDiffLines
// lines taken as replaced whole.
func lineDiff(old, new string) []diffmatchpatch.Diff {
	diffs, _ := trimmedLineDiff(old, new)
	return diffs
}

// trimmedLineDiff is lineDiff; trimmed says whether the diffs come from
// the trimmed texts.
//
// diff.Do maps each line to a rune, takes off the lines both sides share
// at their start (P) and end (S), diffs the rest and cleans the result up
// with P and S around it. The clean-up reads P's text only to ask whether
// an edit next to it ends with the whole of it (then it slides the edit
// over P, which leaves P no longer the first diff), and S's only to ask
// whether an edit starts with the whole of it (then S is no longer the
// last); otherwise it only adds text to them. So diff.Do over the last
// lines of P, the rest and the first lines of S gives diff.Do's diffs,
// with the lines left out added back to the first and last diffs, unless
// the kept part of P or S is no longer an equality at its end: then the
// whole texts are diffed. Keeping more lines than the middles have (no
// edit can hold more) leaves that to never happen
// (TestLineDiffIsDiffDo, FuzzLineDiff).
func trimmedLineDiff(old, new string) (diffs []diffmatchpatch.Diff, trimmed bool) {
	diffs, from, to := middleLineDiff(old, new, maxDiffLines)
	if from == 0 && to == len(old) {
		return diffs, false
	}
	if from > 0 {
		diffs[0].Text = old[:from] + diffs[0].Text
	}
	if last := len(diffs) - 1; to < len(old) {
		diffs[last].Text += old[to:]
	}
	return diffs, true
}

// middleLineDiff is trimmedLineDiff before the lines left out are added
// back: its diffs are of old[from:to] and the part of new between the
// same lines, old[:from] belongs before the first (an equality) and
// old[to:] after the last; from is 0 and to len(old) when the whole texts
// were diffed. What only counts lines (a commit's added lines) need not
// copy the lines left out into the first and last diffs.
//
// With maxLines above 0, a middle (the lines between those both sides
// share at their start and end) of more lines than that, both sides
// counted, is not diffed: it is taken as replaced whole, its old lines
// deleted and its new ones inserted (see maxDiffLines).
func middleLineDiff(old, new string, maxLines int) (diffs []diffmatchpatch.Diff, from, to int) {
	p, s := sharedLines(old, new)
	keep := strings.Count(old[p:len(old)-s], "\n") + strings.Count(new[p:len(new)-s], "\n") + 3
	if maxLines > 0 && keep-1 > maxLines { // a last line without '\n' on each side counted
		return replacedLines(old, new, p, s)
	}
	from = lastLinesAt(old[:p], keep)
	to = len(old) - s + firstLinesLen(old[len(old)-s:], keep)
	if from == 0 && to == len(old) {
		return diff.Do(old, new), 0, len(old)
	}
	diffs = diff.Do(old[from:to], new[from:len(new)-len(old)+to])
	last := len(diffs) - 1
	if from > 0 && (last < 0 || diffs[0].Type != diffmatchpatch.DiffEqual) ||
		to < len(old) && (last < 0 || diffs[last].Type != diffmatchpatch.DiffEqual) {
		return diff.Do(old, new), 0, len(old)
	}
	return diffs, from, to
}

// maxDiffLines bounds the lines (both sides) of the middle of a file a
// diff hands to Myers' diff (diff.Do), whose cost is the lines times the
// edit's size, with no bound of its own: a file rewritten whole took ~11 s
// for 40,000 lines against 40,000 others and ~66 s for 80,000 against
// 80,000 here, and a side of 100 MiB, which the per-commit scan reads,
// would take hours (and past ~1.1 million distinct lines, which
// diffmatchpatch maps to runes, it panics). A larger middle is taken as
// replaced whole: every one of its new lines counts as added, so the scan
// reads more lines than the edit added, never fewer, and the pack's diff
// shows the middle deleted and inserted (a diff of that size is cut to
// limits.max_file_bytes, or withheld, anyway).
const maxDiffLines = 100_000

// replacedLines is middleLineDiff's diffs of a middle (old[p:len(old)-s]
// and new[p:len(new)-s]) replaced whole, between the last shared line
// before it and the first after it, each an equality.
func replacedLines(old, new string, p, s int) (diffs []diffmatchpatch.Diff, from, to int) {
	from = lastLinesAt(old[:p], 1)
	to = len(old) - s + firstLinesLen(old[len(old)-s:], 1)
	for _, d := range []diffmatchpatch.Diff{
		{Type: diffmatchpatch.DiffEqual, Text: old[from:p]},
		{Type: diffmatchpatch.DiffDelete, Text: old[p : len(old)-s]},
		{Type: diffmatchpatch.DiffInsert, Text: new[p : len(new)-s]},
		{Type: diffmatchpatch.DiffEqual, Text: old[len(old)-s : to]},
	} {
		if d.Text != "" {
			diffs = append(diffs, d)
		}
	}
	return diffs, from, to
}

// sharedBlock is how many bytes sharedLines compares at once.
const sharedBlock = 128

// sharedLines returns the lengths in bytes of the whole lines old and new
// share at their start and, after those, at their end, as diff.Do splits
// lines (each with its '\n'; a last line without one is a line too).
func sharedLines(old, new string) (prefix, suffix int) {
	n := min(len(old), len(new))
	// Whole blocks first (a vectorised comparison each), then bytes: a
	// changelog that grows by a line at its top, diffed once a commit,
	// is mostly a common end compared byte by byte (express: 2 ms of a
	// 14-commit range).
	for prefix+sharedBlock <= n && old[prefix:prefix+sharedBlock] == new[prefix:prefix+sharedBlock] {
		prefix += sharedBlock
	}
	for prefix < n && old[prefix] == new[prefix] {
		prefix++
	}
	if prefix == len(old) && prefix == len(new) {
		return prefix, 0
	}
	// Back to the start of the line the sides differ in.
	prefix = strings.LastIndexByte(old[:prefix], '\n') + 1
	o, w := old[prefix:], new[prefix:]
	c, m := 0, min(len(o), len(w))
	for c+sharedBlock <= m && o[len(o)-c-sharedBlock:len(o)-c] == w[len(w)-c-sharedBlock:len(w)-c] {
		c += sharedBlock
	}
	for c < m && o[len(o)-1-c] == w[len(w)-1-c] {
		c++
	}
	// The longest common end that starts a line on both sides: at the
	// start of what is left of a side, or after a '\n'.
	for ; c > 0; c-- {
		i, j := len(o)-c, len(w)-c
		if (i == 0 || o[i-1] == '\n') && (j == 0 || w[j-1] == '\n') {
			break
		}
	}
	return prefix, c
}

// lastLinesAt is the offset in s (a run of whole lines) where its last n
// lines begin, 0 when it has no more.
func lastLinesAt(s string, n int) int {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		i = strings.LastIndexByte(s[:i-1], '\n') + 1
	}
	return i
}

// firstLinesLen is the length of the first n lines of s (whole lines, the
// last possibly without '\n'), len(s) when it has no more.
func firstLinesLen(s string, n int) int {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return len(s)
		}
		i += j + 1
	}
	return i
}
