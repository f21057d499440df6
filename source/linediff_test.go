package source

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// editLines applies n random line edits (insert, delete, replace,
// duplicate, move to the end) to text, with lines drawn from pool.
func editLines(r *rand.Rand, text string, n int, pool []string) string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for range n {
		i := 0
		if len(lines) > 0 {
			i = r.IntN(len(lines))
		}
		l := pool[r.IntN(len(pool))]
		switch k := r.IntN(5); {
		case k == 0 || len(lines) == 0:
			lines = append(lines[:i], append([]string{l}, lines[i:]...)...)
		case k == 1:
			lines = append(lines[:i], lines[i+1:]...)
		case k == 2:
			lines[i] = l
		case k == 3:
			lines = append(lines[:i], append([]string{lines[i]}, lines[i:]...)...)
		default:
			moved := lines[i]
			lines = append(append(lines[:i], lines[i+1:]...), moved)
		}
	}
	out := strings.Join(lines, "")
	if r.IntN(4) == 0 {
		out = strings.TrimSuffix(out, "\n") // a last line without '\n'
	}
	return out
}

// checkLineDiff reports whether the diffs came from trimmed texts. It
// also holds fileDiff's linesOnly (the history scan's) to the whole diff:
// the same counts and added lines, without the unified diff.
func checkLineDiff(t *testing.T, old, new string) bool {
	t.Helper()
	got, trimmed := trimmedLineDiff(old, new)
	if want := diff.Do(old, new); !reflect.DeepEqual(got, want) {
		t.Fatalf("lineDiff differs from diff.Do\nold: %.300q\nnew: %.300q\n got %v\nwant %v", old, new, got, want)
	}
	from := &side{path: "f", mode: filemode.Regular, text: old, loaded: true}
	to := &side{path: "f", mode: filemode.Regular, text: new, loaded: true}
	zero := ObjectID(strings.Repeat("0", 40))
	whole, wholeLines := fileDiff(from, to, zero, false)
	lines, linesLines := fileDiff(from, to, zero, true)
	whole.Diff = ""
	// linesOnly reads each side as a pack would (historyText): a text it
	// reads as it is gives the whole diff's lines; another, lines of the
	// text it reads, numbered in it.
	oldText, oldOK := historyText(old)
	newText, newOK := historyText(new)
	if oldOK && newOK && oldText == old && newText == new {
		if !reflect.DeepEqual(lines, whole) || !reflect.DeepEqual(linesLines, wholeLines) {
			t.Fatalf("fileDiff's linesOnly differs from the whole diff\nold: %.300q\nnew: %.300q\n got %+v %v\nwant %+v %v", old, new, lines, linesLines, whole, wholeLines)
		}
	} else {
		numbered := strings.Split(newText, "\n")
		for _, l := range linesLines {
			if !newOK || l.Number < 1 || l.Number > len(numbered) || numbered[l.Number-1] != l.Text {
				t.Fatalf("fileDiff's linesOnly adds %+v, not a line of the text read\nold: %.300q\nnew: %.300q", l, old, new)
			}
		}
	}
	for _, maxLines := range []int{1, 4} {
		checkBoundedLineDiff(t, old, new, maxLines)
	}
	return trimmed
}

// checkBoundedLineDiff holds middleLineDiff under a bound of lines (a
// middle over it is taken as replaced whole) to what its diffs must be:
// both texts rebuilt from them, with no fewer lines inserted than diff.Do
// inserts — the history scans more lines, never fewer.
func checkBoundedLineDiff(t *testing.T, old, new string, maxLines int) {
	t.Helper()
	count := func(text string) int {
		n := strings.Count(text, "\n")
		if !strings.HasSuffix(text, "\n") {
			n++
		}
		return n
	}
	diffs, from, to := middleLineDiff(old, new, maxLines)
	rebuiltOld, rebuiltNew := old[:from], old[:from]
	inserted := map[int]bool{}
	line := 1 + strings.Count(old[:from], "\n")
	for _, d := range diffs {
		n := count(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			rebuiltOld, rebuiltNew, line = rebuiltOld+d.Text, rebuiltNew+d.Text, line+n
		case diffmatchpatch.DiffDelete:
			rebuiltOld += d.Text
		case diffmatchpatch.DiffInsert:
			for i := range n {
				inserted[line+i] = true
			}
			rebuiltNew, line = rebuiltNew+d.Text, line+n
		}
	}
	if rebuiltOld+old[to:] != old || rebuiltNew+old[to:] != new {
		t.Fatalf("middleLineDiff(max %d lines) does not rebuild the texts\nold: %.300q\nnew: %.300q\ndiffs %v from %d to %d", maxLines, old, new, diffs, from, to)
	}
	doInserted := 0
	for _, d := range diff.Do(old, new) {
		if d.Type == diffmatchpatch.DiffInsert && d.Text != "" {
			doInserted += count(d.Text)
		}
	}
	if len(inserted) < doInserted {
		t.Fatalf("middleLineDiff(max %d lines) inserts %d lines, diff.Do %d\nold: %.300q\nnew: %.300q", maxLines, len(inserted), doInserted, old, new)
	}
}

// TestLineDiffIsDiffDo: lineDiff gives diff.Do's diffs on small hand-made
// cases (repeated lines next to the change, where the clean-up slides an
// edit), on random edits of repetitive texts, and on the files of this
// repository's recent commits.
func TestLineDiffIsDiffDo(t *testing.T) {
	cases := [][2]string{
		{"", ""}, {"", "a\n"}, {"a\n", ""}, {"a", "a\n"}, {"a\n", "a"}, {"a\nb", "a\nbc"},
		{"a\nb\n", "a\nx\na\nb\n"}, {"x\na\n", "x\na\na\n"}, {"a\na\na\n", "a\na\na\na\n"},
		{"a\nb\na\nb\n", "a\nb\na\nb\na\nb\n"}, {"k\nk\nk\nk\nk\nk\nk\nk\nz\n", "k\nk\nk\nk\nk\nk\nk\nk\nk\nz\n"},
		{"head\n" + strings.Repeat("same\n", 50) + "tail", "head\n" + strings.Repeat("same\n", 51) + "tail"},
	}
	for _, c := range cases {
		checkLineDiff(t, c[0], c[1])
	}
	r := rand.New(rand.NewPCG(1, 2))
	pool := []string{"a\n", "b\n", "\n", "}\n", "x := 1\n", "// note\n", "a", "b"}
	trimmed := 0
	for i := range 3000 {
		var b strings.Builder
		for range r.IntN(60 + i%3*100) {
			b.WriteString(pool[r.IntN(len(pool)-2)])
		}
		old := b.String()
		if checkLineDiff(t, old, editLines(r, old, 1+r.IntN(4), pool)) {
			trimmed++
		}
	}
	// A changelog: a line added at its top, the rest of it left out.
	log := "# History\n\n" + strings.Repeat("* fix a thing\n* bump a dependency\n\n", 500)
	if !checkLineDiff(t, log, strings.Replace(log, "\n\n", "\n\n* new entry\n", 1)) {
		t.Error("a line added to a long file was diffed over the whole file")
	}
	if trimmed < 500 {
		t.Errorf("only %d of 3000 random edits diffed on trimmed texts", trimmed)
	}
	// Real files: each file of this repository's last commits against its
	// previous version.
	out, err := exec.Command("git", "-C", "..", "log", "-n", "40", "--format=%H", "--no-merges").Output()
	if err != nil {
		t.Skipf("git log: %v", err) // a source archive without history
	}
	pairs := 0
	for _, c := range strings.Fields(string(out)) {
		names, err := exec.Command("git", "-C", "..", "diff", "--name-only", "--diff-filter=M", c+"~1", c).Output()
		if err != nil {
			continue
		}
		for _, name := range strings.Fields(string(names)) {
			old, err1 := exec.Command("git", "-C", "..", "show", c+"~1:"+name).Output()
			new, err2 := exec.Command("git", "-C", "..", "show", c+":"+name).Output()
			if err1 != nil || err2 != nil || len(old) > 1<<20 {
				continue
			}
			checkLineDiff(t, string(old), string(new))
			pairs++
		}
	}
	t.Logf("%d real file versions compared", pairs)
}

// FuzzLineDiff diffs two versions of a file a repository controls, the
// second an edit of the first: lineDiff gives exactly diff.Do's diffs.
func FuzzLineDiff(f *testing.F) {
	f.Add("a\nb\nc\n", uint64(1), uint8(2))
	f.Add("x\na\n", uint64(7), uint8(1))
	f.Add(strings.Repeat("k\n", 30)+"z", uint64(3), uint8(5))
	f.Fuzz(func(t *testing.T, old string, seed uint64, edits uint8) {
		if len(old) > 4096 {
			return
		}
		r := rand.New(rand.NewPCG(seed, seed>>7))
		pool := append(strings.SplitAfter(old, "\n"), "a\n", "\n", "q")
		checkLineDiff(t, old, editLines(r, old, 1+int(edits%8), pool))
	})
}

// TestSharedLinesAcrossBlocks holds sharedLines, which compares whole
// blocks before bytes, to a byte-by-byte reference: texts of up to ten
// blocks, edited at every byte.
func TestSharedLinesAcrossBlocks(t *testing.T) {
	reference := func(old, new string) (int, int) {
		p := 0
		for p < min(len(old), len(new)) && old[p] == new[p] {
			p++
		}
		if p == len(old) && p == len(new) {
			return p, 0
		}
		p = strings.LastIndexByte(old[:p], '\n') + 1
		o, w := old[p:], new[p:]
		c := 0
		for c < min(len(o), len(w)) && o[len(o)-1-c] == w[len(w)-1-c] {
			c++
		}
		for ; c > 0; c-- {
			if i, j := len(o)-c, len(w)-c; (i == 0 || o[i-1] == '\n') && (j == 0 || w[j-1] == '\n') {
				break
			}
		}
		return p, c
	}
	r := rand.New(rand.NewPCG(1, 2))
	line := func() string { // random letters: no repeats for a shift to hide behind
		b := make([]byte, r.IntN(17), 17)
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return string(append(b, '\n'))
	}
	checked := 0
	for _, size := range []int{0, 1, sharedBlock - 1, sharedBlock, sharedBlock + 1, 3 * sharedBlock, 10 * sharedBlock} {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(line())
		}
		old := b.String()
		for at := 0; at <= len(old); at++ {
			for _, edit := range []string{"", "x", "\n", "zz\n", line() + line()} {
				for _, cut := range []int{0, 1} { // replace a byte, or only insert
					if at+cut > len(old) {
						continue
					}
					new := old[:at] + edit + old[at+cut:]
					gotP, gotS := sharedLines(old, new)
					wantP, wantS := reference(old, new)
					if gotP != wantP || gotS != wantS {
						t.Fatalf("sharedLines(%d bytes, edit %q at %d) = %d, %d; byte by byte %d, %d", len(old), edit, at, gotP, gotS, wantP, wantS)
					}
					checked++
				}
			}
		}
	}
	if checked < 10000 {
		t.Fatalf("checked %d cases; want the whole table", checked)
	}
}

// TestDiffOfAHugeFile: the per-commit scan diffs a side of up to its blob
// limit (100 MiB), and a pack diffs what a change brings. A file of more
// lines than diff.Do can map to runes (~1.1 million) is diffed without a
// panic, every line added, and a middle of more lines than maxDiffLines
// is not handed to Myers' diff (minutes, or hours, for a file rewritten
// whole) but taken as replaced: every new line of it added, even those
// Myers' diff would have matched.
func TestDiffOfAHugeFile(t *testing.T) {
	var b strings.Builder
	for i := range 1_200_000 {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	huge := b.String()
	zero := ObjectID(strings.Repeat("0", 40))
	to := &side{path: "f", mode: filemode.Regular, text: huge, loaded: true}
	for _, linesOnly := range []bool{true, false} {
		ch, lines := fileDiff(nil, to, zero, linesOnly)
		if ch.Added != 1_200_000 || len(lines) != 1_200_000 || lines[1_199_999] != (pack.Line{Number: 1_200_000, Text: "l1199999"}) {
			t.Fatalf("linesOnly %v: added %d, %d lines, the last %+v", linesOnly, ch.Added, len(lines), lines[len(lines)-1])
		}
	}
	// 60,000 lines, every other one changed from the second on: Myers'
	// diff would keep the 29,999 others; a middle over maxDiffLines is
	// replaced whole.
	var old, cur strings.Builder
	for i := range 60_000 {
		fmt.Fprintf(&cur, "l%d\n", i)
		if i%2 == 1 {
			fmt.Fprintf(&old, "o%d\n", i)
		} else {
			fmt.Fprintf(&old, "l%d\n", i)
		}
	}
	from := &side{path: "f", mode: filemode.Regular, text: old.String(), loaded: true}
	to = &side{path: "f", mode: filemode.Regular, text: cur.String(), loaded: true}
	for _, linesOnly := range []bool{true, false} {
		ch, lines := fileDiff(from, to, zero, linesOnly)
		if ch.Added != 59_999 || ch.Deleted != 59_999 || len(lines) != 59_999 {
			t.Fatalf("linesOnly %v: %d added, %d deleted, %d lines; want the middle replaced, 59,999 each", linesOnly, ch.Added, ch.Deleted, len(lines))
		}
	}
}
