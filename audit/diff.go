package audit

import (
	"context"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
)

// ScanDiff finds secrets in the unified diff of path, like Scan, but reports
// each finding at the line of the file the diff line shows (DiffFileLines):
// the new file's line for added and context lines, the old file's for
// removed ones. Fingerprints and .gitleaksignore use that line, so an entry
// that ignores a finding in the file ignores it in the file's diff too.
// Start/End are offsets into diff.
func (s *Scanner) ScanDiff(ctx context.Context, path string, diff []byte) ([]pack.Finding, error) {
	text := string(diff)
	// The rules read the lines as the file has them: the +, - or space
	// that starts a hunk line becomes a space (offsets unchanged), so
	// `-DB_PASSWORD=…` and `+mysql -p…` read like the lines they are.
	raw, err := s.scanFragment(ctx, path, "", unmarkDiff(text), nil, s.inlineAllow)
	if err != nil {
		return nil, err
	}
	lines := DiffFileLines(text)
	at := func(l int) int {
		if l >= 1 && l <= len(lines) {
			return lines[l-1]
		}
		return 0
	}
	out := make([]pack.Finding, 0, len(raw))
	for _, r := range raw {
		line, end := at(r.Line), at(r.EndLine)
		if end < line {
			end = line
		}
		if s.ignore.ignored("", path, r.RuleID, line) {
			continue
		}
		out = append(out, pack.Finding{
			RuleID:      r.RuleID,
			Path:        path,
			StartLine:   line,
			EndLine:     end,
			Fingerprint: fingerprint("", path, r.RuleID, line),
			Start:       r.Start,
			End:         r.End,
		})
	}
	sortFindings(out)
	return out, nil
}

// unmarkDiff returns diff as the rules should read it: the marker byte (+,
// -, space) of every hunk line becomes a space, and the header lines
// (diff --git, index, ---/+++, modes, renames) and the ranges of hunk
// headers become spaces: they are names, which the scan of names covers,
// and blob ids, which are no secrets. Offsets and line breaks are kept.
func unmarkDiff(diff string) string {
	b := []byte(diff)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			b[i] = ' '
		}
	}
	inHunk := false
	oldLeft, newLeft := 0, 0
	for ls := 0; ls < len(b); {
		le := ls
		for le < len(b) && b[le] != '\n' {
			le++
		}
		line := diff[ls:le]
		switch {
		case strings.HasPrefix(line, "@@ -"):
			if _, oldCount, _, newCount, ok := hunkHeader(line); ok {
				inHunk, oldLeft, newLeft = true, oldCount, newCount
				end := strings.Index(line[2:], "@@") + 4 // through the closing @@
				blank(ls, ls+end)
			} else {
				blank(ls, le)
			}
		case inHunk && (oldLeft > 0 || newLeft > 0) && (le == ls || b[ls] == '+' || b[ls] == '-' || b[ls] == ' '):
			switch {
			case le == ls: // a context line that lost its space
				oldLeft--
				newLeft--
			case b[ls] == '+':
				newLeft--
			case b[ls] == '-':
				oldLeft--
			default:
				oldLeft--
				newLeft--
			}
			if le > ls {
				b[ls] = ' '
			}
		case strings.HasPrefix(line, `\`):
			blank(ls, le) // "\ No newline at end of file"
		default:
			inHunk = false
			if isDiffHeader(line) {
				blank(ls, le)
			} // anything else is read as it is
		}
		ls = le + 1
	}
	return string(b)
}

// diffHeaders start the header lines of a git unified diff.
var diffHeaders = []string{"diff --git ", "index ", "--- ", "+++ ", "new file mode ", "deleted file mode ", "old mode ",
	"new mode ", "similarity index ", "dissimilarity index ", "rename from ", "rename to ", "copy from ", "copy to ", "Binary files "}

func isDiffHeader(line string) bool {
	for _, h := range diffHeaders {
		if strings.HasPrefix(line, h) {
			return true
		}
	}
	return false
}

// DiffFileLines maps each line of a unified diff (index 0 is the diff's
// first line) to the line of the file it shows, from the hunk headers
// (@@ -a,b +c,d @@): a context or added line to its line in the new file, a
// removed line to its line in the old file, a "\ No newline" line to the
// line before it, and the header lines of a file or hunk (diff --git,
// index, ---, +++, @@) to the first line of the hunk that follows them (its
// new side, or its old side for a deletion); 0 when no hunk follows.
func DiffFileLines(diff string) []int {
	var out []int
	var pending []int // header lines waiting for their hunk
	inHunk := false
	oldLine, newLine, oldLeft, newLeft := 0, 0, 0, 0
	for i, line := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if a, b, c, d, ok := hunkHeader(line); ok {
			first := c
			if c == 0 && d == 0 {
				first = a
			}
			if first == 0 {
				first = 1
			}
			for _, p := range pending {
				out[p] = first
			}
			pending = pending[:0]
			out = append(out, first)
			inHunk, oldLine, newLine, oldLeft, newLeft = true, a, c, b, d
			if b == 0 {
				oldLine = a + 1
			}
			if d == 0 {
				newLine = c + 1
			}
			continue
		}
		if inHunk && (oldLeft > 0 || newLeft > 0 || strings.HasPrefix(line, `\`)) {
			switch {
			case strings.HasPrefix(line, "+") && newLeft > 0:
				out = append(out, newLine)
				newLine++
				newLeft--
				continue
			case strings.HasPrefix(line, "-") && oldLeft > 0:
				out = append(out, oldLine)
				oldLine++
				oldLeft--
				continue
			case strings.HasPrefix(line, " ") || line == "":
				out = append(out, newLine)
				newLine++
				oldLine++
				newLeft--
				oldLeft--
				continue
			case strings.HasPrefix(line, `\`):
				prev := 0
				if i > 0 {
					prev = out[i-1]
				}
				out = append(out, prev)
				continue
			}
		}
		inHunk = false
		pending = append(pending, len(out))
		out = append(out, 0)
	}
	return out
}

// hunkHeader is pack.ParseHunkHeader's ranges.
func hunkHeader(line string) (a, b, c, d int, ok bool) {
	a, b, c, d, _, ok = pack.ParseHunkHeader(line)
	return a, b, c, d, ok
}
