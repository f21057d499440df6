package pack

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"github.com/ctxpack/ctxpack/internal/workers"
)

// A diff shows lines of both versions of a file: added lines of the new
// one, removed lines of the old one, context lines of both, and after each
// hunk's line ranges a heading, a line of the file above the hunk. A secret
// that spans lines (a private key) has its first and last lines far from
// an edit in its middle: the diff's own text holds neither, and no scan of
// the diff alone finds it. So what a diff shows is read against a scan of
// each whole version (DiffSecrets), and every part of a secret of either
// version is redacted wherever the diff shows it.

// DiffSide is one version of a changed file as its diff shows it: its
// bytes, and the secrets a scan of all of them found (byte spans of Text).
type DiffSide struct {
	Text     string
	Findings []Finding
}

// DiffSecret is a span of a diff's text that shows part of a secret of one
// of its sides.
type DiffSecret struct {
	Start, End int
	Finding    Finding
	// Old is set for a secret of the old side.
	Old bool
}

// DiffSecrets returns the spans of diff, a unified diff of old to new (nil:
// the side is absent, an added or a deleted file), that show part of a
// secret of either side: the secret's part of each added, removed or
// context line inside it, and of each hunk heading that is the start of a
// line inside one. ok is false when the diff is not a diff of these sides:
// a hunk line that is not the line of its side at its number, a line of an
// absent side, a hunk that does not read as one. Then nothing can be said
// of what it shows, and it may not leave.
func DiffSecrets(diff string, old, new *DiffSide) (secrets []DiffSecret, ok bool) {
	sides := [2]*sideLines{indexSide(old, true), indexSide(new, false)}
	from := hunkStart(diff, 0)
	if from < 0 {
		return nil, true // a file header alone: names, which the scan of names covers
	}
	var out []DiffSecret
	// show records the secrets of line n of side s that the diff line
	// content, at offset at of the diff, shows.
	show := func(s *sideLines, n int, content string, at int) bool {
		if s == nil {
			return false
		}
		text, start, found := s.line(n)
		if !found || text != content {
			return false
		}
		out = s.secretsOf(out, n, start, len(text), at)
		return true
	}
	oldLine, newLine, oldLeft, newLeft := 0, 0, 0, 0
	for pos := from; pos < len(diff); {
		end := strings.IndexByte(diff[pos:], '\n')
		if end < 0 {
			end = len(diff)
		} else {
			end += pos
		}
		line := diff[pos:end]
		switch {
		case oldLeft == 0 && newLeft == 0 && strings.HasPrefix(line, "@@ "):
			a, b, c, d, heading, parsed := ParseHunkHeader(line)
			if !parsed {
				return nil, false
			}
			oldLine, oldLeft, newLine, newLeft = a, b, c, d
			if h := line[heading:]; h != "" {
				for _, s := range sides {
					out = s.headingSecrets(out, h, pos+heading)
				}
			}
		case strings.HasPrefix(line, `\`):
			// "\ No newline at end of file", after the line it speaks of.
		case line == "" || oldLeft == 0 && newLeft == 0:
			return nil, false // text past a hunk's lines
		case line[0] == '+' && newLeft > 0:
			if !show(sides[1], newLine, line[1:], pos+1) {
				return nil, false
			}
			newLine++
			newLeft--
		case line[0] == '-' && oldLeft > 0:
			if !show(sides[0], oldLine, line[1:], pos+1) {
				return nil, false
			}
			oldLine++
			oldLeft--
		case line[0] == ' ' && oldLeft > 0 && newLeft > 0:
			if !show(sides[0], oldLine, line[1:], pos+1) || !show(sides[1], newLine, line[1:], pos+1) {
				return nil, false
			}
			oldLine++
			newLine++
			oldLeft--
			newLeft--
		default:
			return nil, false
		}
		pos = end + 1
	}
	if oldLeft > 0 || newLeft > 0 {
		return nil, false // a hunk cut short
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.End != b.End {
			return a.End < b.End
		}
		if a.Old != b.Old {
			return !a.Old
		}
		if a.Finding.RuleID != b.Finding.RuleID {
			return a.Finding.RuleID < b.Finding.RuleID
		}
		return a.Finding.Start < b.Finding.Start
	})
	return out, true
}

// sideLines indexes a side's text by line and its findings by the lines
// they cover.
type sideLines struct {
	text     string
	findings []Finding
	old      bool
	// starts are the offsets of the lines' starts, and one past the end.
	starts []int
	// covers lists, for each line a finding covers, the findings' indexes.
	covers map[int][]int
}

func indexSide(s *DiffSide, old bool) *sideLines {
	if s == nil {
		return nil
	}
	t := s.Text
	sl := &sideLines{text: t, findings: s.Findings, old: old, starts: make([]int, 0, strings.Count(t, "\n")+2)}
	for at := 0; at < len(t); {
		sl.starts = append(sl.starts, at)
		i := strings.IndexByte(t[at:], '\n')
		if i < 0 {
			break
		}
		at += i + 1
	}
	sl.starts = append(sl.starts, len(t))
	sl.covers = map[int][]int{}
	for i, f := range s.Findings {
		start, end := max(f.Start, 0), min(f.End, len(t))
		if start >= end {
			continue
		}
		for n := sl.lineAt(start); n <= sl.lineAt(end-1); n++ {
			sl.covers[n] = append(sl.covers[n], i)
		}
	}
	return sl
}

// lineAt is the 1-based line holding offset at.
func (s *sideLines) lineAt(at int) int {
	return sort.Search(len(s.starts)-1, func(i int) bool { return s.starts[i+1] > at }) + 1
}

// line returns line n without its line break, and its offset.
func (s *sideLines) line(n int) (string, int, bool) {
	if n < 1 || n >= len(s.starts) {
		return "", 0, false
	}
	start, end := s.starts[n-1], s.starts[n]
	if end > start && s.text[end-1] == '\n' {
		end--
	}
	return s.text[start:end], start, true
}

// secretsOf appends the secrets' parts of the first width bytes of line n
// (at offset start of the side's text) as shown at offset at of a diff.
func (s *sideLines) secretsOf(out []DiffSecret, n, start, width, at int) []DiffSecret {
	for _, i := range s.covers[n] {
		f := s.findings[i]
		from, to := max(f.Start, start), min(f.End, start+width)
		if from < to {
			out = append(out, DiffSecret{Start: at + from - start, End: at + to - start, Finding: f, Old: s.old})
		}
	}
	return out
}

// headingSecrets appends the secrets a hunk heading h (at offset at of the
// diff) shows. A heading is a line above the hunk, which git may cut
// short and trim (its function-name heuristic): every line inside a
// secret that starts with h may be the one it shows.
func (s *sideLines) headingSecrets(out []DiffSecret, h string, at int) []DiffSecret {
	if s == nil {
		return out
	}
	for n := range s.covers {
		if text, start, _ := s.line(n); strings.HasPrefix(text, h) {
			out = s.secretsOf(out, n, start, len(h), at)
		}
	}
	return out
}

// changeSides are the scanned versions of a changed file that its diff
// shows (nil: the diff shows none of that side), or why they could not be
// had.
type changeSides struct {
	old, new *DiffSide
	why      Reason
}

// scanChangeSides reads the versions of each changed file whose diff may
// leave, on every core, into b.sides: the new side is its entry's text and
// findings, scanned as the snapshot's files are; the old side is read from
// the change and scanned whole (ScanWithSum: a blob scanned before, as the
// new side of an earlier pack, is a scan cache hit). Only changed files are
// read, each once; not those of a diff withheld whole for its size
// (bounded false: see changes).
func (b *builder) scanChangeSides(ctx context.Context, byPath map[string]*entry, bounded bool) error {
	if b.sides == nil {
		b.sides = map[string]*changeSides{}
	}
	var todo []*Change
	for i := range b.snap.Changes {
		c := &b.snap.Changes[i]
		if _, done := b.sides[c.Path]; done || c.Binary || c.Diff == "" || b.pathWithheld(c, byPath) != "" {
			continue
		}
		if !bounded && int64(len(c.Diff)) > b.pol.Limits.MaxContentBytes {
			continue
		}
		todo = append(todo, c)
	}
	got := make([]*changeSides, len(todo))
	err := workers.Each(ctx, len(todo), runtime.NumCPU(), func(ctx context.Context, i int) error {
		s, err := b.changeSides(ctx, todo[i], byPath[todo[i].Path])
		got[i] = s
		return err
	})
	if err != nil {
		return err
	}
	for i, c := range todo {
		b.sides[c.Path] = got[i]
	}
	return nil
}

// changeSides reads and scans the sides of c's diff; e is the entry of its
// new side.
func (b *builder) changeSides(ctx context.Context, c *Change, e *entry) (*changeSides, error) {
	s := &changeSides{}
	if hunkStart(c.Diff, 0) < 0 {
		return s, nil // no line of either side
	}
	if c.Status != "deleted" {
		var err error
		if s.new, s.why, err = b.newSide(ctx, c, e); err != nil || s.why != "" {
			return s, err
		}
	}
	if c.Status == "added" {
		return s, nil
	}
	old := c.Old
	if old == nil || old.Read == nil {
		s.why = ReasonUnscanned
		return s, nil
	}
	if old.Size > hardFileCap {
		s.why = ReasonSizeLimit
		return s, nil
	}
	p := c.OldPath
	if p == "" {
		p = c.Path
	}
	data, err := old.Read(ctx)
	var unavailable *Unavailable
	if errors.As(err, &unavailable) {
		s.why = unavailable.Reason
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s before the change: %w", p, err)
	}
	s.old, err = b.scanSide(ctx, p, data)
	return s, err
}

// newSide is the new version of c as scanned with the snapshot's files: its
// entry's text and findings, when that text is the file's bytes, which the
// diff shows; else the bytes, read and scanned again. A file never scanned
// (never read: over the read cap, not in the snapshot) has no side to show.
func (b *builder) newSide(ctx context.Context, c *Change, e *entry) (*DiffSide, Reason, error) {
	if e == nil {
		return nil, ReasonUnscanned, nil
	}
	if err := b.scanEntry(ctx, e); err != nil {
		return nil, "", err
	}
	if !e.scanned {
		if e.row.Reason == ReasonSizeLimit {
			return nil, ReasonSizeLimit, nil
		}
		return nil, ReasonUnscanned, nil
	}
	if e.originalSum != nil {
		return &DiffSide{Text: e.original, Findings: e.findings}, "", nil
	}
	data, err := e.file.Read(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", c.Path, err)
	}
	side, err := b.scanSide(ctx, c.Path, data)
	return side, "", err
}

// scanSide scans the whole of data, a version of the file at p.
func (b *builder) scanSide(ctx context.Context, p string, data []byte) (*DiffSide, error) {
	side, err := ScanDiffSide(ctx, b.opts.Scanner, p, data)
	if err != nil {
		return nil, fmt.Errorf("secret scan of %s: %w", p, err)
	}
	return side, nil
}

// ScanDiffSide scans the whole of data, a version of the file at p, for
// DiffSecrets (ScanWithSum: a version scanned before is a cache hit). The
// side's text is data itself, which the caller does not change after.
func ScanDiffSide(ctx context.Context, sc SecretScanner, p string, data []byte) (*DiffSide, error) {
	sum := sha256.Sum256(data)
	fs, err := ScanWithSum(ctx, sc, p, data, &sum)
	if err != nil {
		return nil, err
	}
	return &DiffSide{Text: unsafe.String(unsafe.SliceData(data), len(data)), Findings: fs}, nil
}

// addFinding appends f to fs unless a finding of its rule at its line is
// there already (the diff's own scan found it too).
func addFinding(fs []Finding, f Finding) []Finding {
	for _, g := range fs {
		if g.RuleID == f.RuleID && g.StartLine == f.StartLine {
			return fs
		}
	}
	return append(fs, f)
}
