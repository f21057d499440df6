package source

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// side is one side of a file change; a nil side is absent.
type side struct {
	path string
	// disk is the file's real path under the work tree when it differs
	// from path (a name that is not valid UTF-8).
	disk string
	mode filemode.FileMode
	id   ObjectID
	// text is the content, once loaded (shared with the blob memo: never
	// changed in place).
	text   string
	loaded bool
	// unavailable is set when the content could not be read (a partial
	// clone's blob its promisor could not provide): no diff is made.
	unavailable error
}

// contextLines is the number of unchanged lines around a change in a hunk.
const contextLines = 3

// fileDiff computes the change between two sides: status, line counts, the
// unified diff (unless linesOnly), and the lines the new side added
// (numbered in the new side). A nil from is an addition, a nil to a
// deletion. zero is the repository's all-zero object id (the absent side
// in the diff's index line). A commit's history scan reads only the added
// lines: express's range made 13 hunked diffs of a 120 KB changelog to
// throw them away.
func fileDiff(from, to *side, zero ObjectID, linesOnly bool) (pack.Change, []pack.Line) {
	ch := pack.Change{}
	switch {
	case from == nil:
		ch.Path, ch.Status = to.path, "added"
	case to == nil:
		ch.Path, ch.Status = from.path, "deleted"
	default:
		ch.Path, ch.Status = to.path, "modified"
		if from.path != to.path {
			ch.Status, ch.OldPath = "renamed", from.path
		}
		if isLink(from.mode) != isLink(to.mode) || (from.mode == filemode.Submodule) != (to.mode == filemode.Submodule) {
			ch.Status = "type-changed"
		}
	}
	if (from != nil && from.unavailable != nil) || (to != nil && to.unavailable != nil) {
		ch.DiffWithheld = pack.ReasonNotFetched
		return ch, nil
	}
	var oldText, newText string
	if from != nil {
		oldText = from.text
	}
	if to != nil {
		newText = to.text
	}
	var chunks []chunk
	var added []pack.Line
	ch.Binary = isBinary(oldText) || isBinary(newText)
	diffed := !ch.Binary
	if linesOnly {
		// The history scans the lines of what a pack would send: each side
		// as the pack reads it (UTF-16 with a BOM decoded), or as git does.
		// A new side that is binary to both adds no line; an old one, no
		// line the new side's can be matched to.
		var newOK, oldOK bool
		if newText, newOK = historyText(newText); newOK {
			if oldText, oldOK = historyText(oldText); !oldOK {
				oldText = ""
			}
		}
		diffed = newOK
	}
	if diffed {
		newLine := 1
		var diffs []diffmatchpatch.Diff
		if linesOnly {
			// The whole lines left out before the first diff only number
			// the rest.
			var from int
			diffs, from, _ = middleLineDiff(oldText, newText, maxDiffLines)
			newLine += strings.Count(oldText[:from], "\n")
		} else {
			diffs = lineDiff(oldText, newText)
		}
		for _, d := range diffs {
			if d.Text == "" {
				continue
			}
			n := strings.Count(d.Text, "\n")
			if !strings.HasSuffix(d.Text, "\n") {
				n++
			}
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				chunks = append(chunks, chunk{d.Text, opEqual})
				newLine += n
			case diffmatchpatch.DiffInsert:
				chunks = append(chunks, chunk{d.Text, opAdd})
				ch.Added += n
				text := strings.TrimSuffix(d.Text, "\n")
				if linesOnly && 2*len(text) < len(newText) {
					// A commit's lines are held until the history is
					// scanned: a few of a large file must not keep all
					// of it (a range of ten one-line edits of a 98 MiB
					// file: 2.3 → 0.9 GB at its peak).
					text = strings.Clone(text)
				}
				for i, l := range strings.Split(text, "\n") {
					added = append(added, pack.Line{Number: newLine + i, Text: l})
				}
				newLine += n
			case diffmatchpatch.DiffDelete:
				chunks = append(chunks, chunk{d.Text, opDelete})
				ch.Deleted += n
			}
		}
	}
	if linesOnly {
		return ch, added
	}
	var sb strings.Builder
	writeHeader(&sb, from, to, ch.Binary, zero)
	for _, h := range makeHunks(chunks, contextLines) {
		h.writeTo(&sb)
	}
	ch.Diff = sb.String()
	return ch, added
}

func isLink(m filemode.FileMode) bool { return m == filemode.Symlink }

// historyText is the text of a side the per-commit scan reads: the
// text a pack would cut items from (pack.TextOf), else, for content the
// pack reads as binary (control bytes) and git as text, the bytes git's
// diff would show; false when both read it as binary.
func historyText(text string) (string, bool) {
	if decoded, ok := pack.TextOf(text); ok {
		return decoded, true
	}
	return text, !isBinary(text)
}

// oldFile is a change's old side s (of commit at) as the builder reads it
// to scan what the diff shows of it (pack.Change.Old); nil when there is
// none. Its content is read again when asked for, from the memo or the
// object store: a range's old sides are not all held until then.
func (r *Repo) oldFile(s *side, at ObjectID) *pack.OldSide {
	if s == nil {
		return nil
	}
	f := &pack.OldSide{Blob: s.id.String(), Size: int64(len(s.text))}
	if s.mode == filemode.Submodule {
		text := s.text // not a blob: the line the diff shows
		f.Read = func(context.Context) ([]byte, error) { return []byte(text), nil }
		return f
	}
	p, id := s.path, s.id
	f.Read = func(ctx context.Context) ([]byte, error) {
		text, err := r.blob(ctx, id)
		var nf *NotFetchedError
		if errors.As(err, &nf) {
			return nil, notFetched(p, at, nf)
		}
		if err != nil {
			return nil, r.blobError(p, at, id, err)
		}
		return []byte(text), nil
	}
	return f
}

// binarySniff is how far git looks for a NUL to call a file binary.
const binarySniff = 8000

// isBinary uses git's own heuristic (a NUL in the first 8000 bytes), as
// go-git's binary.IsBinary does, without its reader and a call a byte
// (~1.5% of express's range, with a 4 KB buffer each time).
func isBinary(text string) bool {
	return strings.IndexByte(text[:min(len(text), binarySniff)], 0) >= 0
}

// The unified diff below writes exactly what go-git's UnifiedEncoder wrote
// for these changes (a differential test holds it to that), without its
// regular-expression line splitter, which was most of a large range's
// diff time.

type operation int

const (
	opEqual operation = iota
	opAdd
	opDelete
)

type chunk struct {
	content string
	op      operation
}

func writeHeader(sb *strings.Builder, from, to *side, isBinary bool, zero ObjectID) {
	var lines []string
	switch {
	case from != nil && to != nil:
		same := from.id == to.id
		lines = append(lines, fmt.Sprintf("diff --git a/%s b/%s", from.path, to.path))
		if from.mode != to.mode {
			lines = append(lines, fmt.Sprintf("old mode %o", from.mode), fmt.Sprintf("new mode %o", to.mode))
		}
		if from.path != to.path {
			lines = append(lines, "rename from "+from.path, "rename to "+to.path)
		}
		if from.mode != to.mode && !same {
			lines = append(lines, fmt.Sprintf("index %s..%s", from.id, to.id))
		} else if !same {
			lines = append(lines, fmt.Sprintf("index %s..%s %o", from.id, to.id, from.mode))
		}
		if !same {
			lines = pathLines(lines, "a/"+from.path, "b/"+to.path, isBinary)
		}
	case from == nil:
		lines = append(lines,
			fmt.Sprintf("diff --git a/%s b/%s", to.path, to.path),
			fmt.Sprintf("new file mode %o", to.mode),
			fmt.Sprintf("index %s..%s", zero, to.id))
		lines = pathLines(lines, "/dev/null", "b/"+to.path, isBinary)
	default:
		lines = append(lines,
			fmt.Sprintf("diff --git a/%s b/%s", from.path, from.path),
			fmt.Sprintf("deleted file mode %o", from.mode),
			fmt.Sprintf("index %s..%s", from.id, zero))
		lines = pathLines(lines, "a/"+from.path, "/dev/null", isBinary)
	}
	sb.WriteString(strings.Join(lines, "\n"))
	sb.WriteByte('\n')
}

func pathLines(lines []string, fromPath, toPath string, isBinary bool) []string {
	if isBinary {
		return append(lines, fmt.Sprintf("Binary files %s and %s differ", fromPath, toPath))
	}
	return append(lines, "--- "+fromPath, "+++ "+toPath)
}

// splitLines cuts s after every newline; a last line without one is kept.
func splitLines(s string) []string {
	out := make([]string, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

type hunk struct {
	fromLine, toLine, fromCount, toCount int
	ctxPrefix                            string
	ops                                  []hunkLine
}

type hunkLine struct {
	text string
	op   operation
}

func (h *hunk) add(op operation, lines ...string) {
	switch op {
	case opAdd:
		h.toCount += len(lines)
	case opDelete:
		h.fromCount += len(lines)
	default:
		h.toCount += len(lines)
		h.fromCount += len(lines)
	}
	for _, l := range lines {
		h.ops = append(h.ops, hunkLine{l, op})
	}
}

func (h *hunk) writeTo(sb *strings.Builder) {
	sb.WriteString("@@ -")
	sb.WriteString(strconv.Itoa(h.fromLine))
	if h.fromCount != 1 {
		sb.WriteByte(',')
		sb.WriteString(strconv.Itoa(h.fromCount))
	}
	sb.WriteString(" +")
	sb.WriteString(strconv.Itoa(h.toLine))
	if h.toCount != 1 {
		sb.WriteByte(',')
		sb.WriteString(strconv.Itoa(h.toCount))
	}
	sb.WriteString(" @@")
	if h.ctxPrefix != "" {
		sb.WriteByte(' ')
		sb.WriteString(h.ctxPrefix)
	}
	sb.WriteByte('\n')
	for _, l := range h.ops {
		sb.WriteByte(" +-"[l.op])
		if text, ok := strings.CutSuffix(l.text, "\n"); ok {
			sb.WriteString(text)
		} else {
			sb.WriteString(l.text + "\n\\ No newline at end of file")
		}
		sb.WriteByte('\n')
	}
}

// hunkMaker groups chunks into hunks with ctxLines of context, as go-git's
// hunksGenerator does.
type hunkMaker struct {
	fromLine, toLine            int
	ctxLines                    int
	chunks                      []chunk
	current                     *hunk
	hunks                       []*hunk
	beforeContext, afterContext []string
}

func makeHunks(chunks []chunk, ctxLines int) []*hunk {
	g := &hunkMaker{chunks: chunks, ctxLines: ctxLines}
	for i, c := range chunks {
		lines := splitLines(c.content)
		n := len(lines)
		switch c.op {
		case opEqual:
			g.fromLine += n
			g.toLine += n
			g.equalLines(lines, i)
		case opDelete:
			if n != 0 {
				g.fromLine++
			}
			g.startHunk(i, c.op)
			g.fromLine += n - 1
			g.current.add(c.op, lines...)
		case opAdd:
			if n != 0 {
				g.toLine++
			}
			g.startHunk(i, c.op)
			g.toLine += n - 1
			g.current.add(c.op, lines...)
		}
		if i == len(chunks)-1 && g.current != nil {
			g.hunks = append(g.hunks, g.current)
		}
	}
	return g.hunks
}

func (g *hunkMaker) startHunk(i int, op operation) {
	if g.current != nil {
		return
	}
	var ctxPrefix string
	before := len(g.beforeContext)
	if before > g.ctxLines {
		ctxPrefix = g.beforeContext[before-g.ctxLines-1]
		g.beforeContext = g.beforeContext[before-g.ctxLines:]
		before = g.ctxLines
	}
	g.current = &hunk{ctxPrefix: strings.TrimSuffix(ctxPrefix, "\n")}
	g.current.add(opEqual, g.beforeContext...)
	switch op {
	case opDelete:
		g.current.fromLine, g.current.toLine = g.lineNumbers(g.fromLine, g.toLine, before, i, opAdd)
	case opAdd:
		g.current.toLine, g.current.fromLine = g.lineNumbers(g.toLine, g.fromLine, before, i, opDelete)
	}
	g.beforeContext = nil
}

// lineNumbers is where a new hunk starts on each side.
func (g *hunkMaker) lineNumbers(la, lb, before, i int, op operation) (cla, clb int) {
	cla = la - before
	switch {
	case before != 0 && g.ctxLines != 0:
		if lb > g.ctxLines {
			clb = lb - g.ctxLines + 1
		} else {
			clb = 1
		}
	case g.ctxLines == 0:
		clb = lb
	case i != len(g.chunks)-1:
		if next := g.chunks[i+1]; next.op == op || next.op == opEqual {
			clb = lb + 1
		}
	}
	return cla, clb
}

func (g *hunkMaker) equalLines(lines []string, i int) {
	if g.current == nil {
		g.beforeContext = append(g.beforeContext, lines...)
		return
	}
	g.afterContext = append(g.afterContext, lines...)
	if len(g.afterContext) <= g.ctxLines*2 && i != len(g.chunks)-1 {
		g.current.add(opEqual, g.afterContext...)
		g.afterContext = nil
		return
	}
	n := min(g.ctxLines, len(g.afterContext))
	g.current.add(opEqual, g.afterContext[:n]...)
	g.hunks = append(g.hunks, g.current)
	g.current = nil
	g.beforeContext = g.afterContext[n:]
	g.afterContext = nil
}
