package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
)

// Ref is a place in the packed commit: path:start-end (or path:line).
type Ref struct {
	Path      string
	StartLine int
	EndLine   int
}

func (r Ref) String() string {
	if r.StartLine == r.EndLine {
		return fmt.Sprintf("%s:%d", r.Path, r.StartLine)
	}
	return fmt.Sprintf("%s:%d-%d", r.Path, r.StartLine, r.EndLine)
}

// maxLine bounds a ref's line numbers (no file of a pack has more lines).
const maxLine = 10_000_000

// ParseRef reads path:start-end or path:line. The path is a clean relative
// slash path (no leading /, no .. element, no backslash); it may hold
// colons, the line range being after the last one.
func ParseRef(s string) (Ref, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return Ref{}, errors.New("not path:start-end")
	}
	p, lines := s[:i], s[i+1:]
	a, b, isRange := strings.Cut(lines, "-")
	start, err := parseLine(a)
	if err != nil {
		return Ref{}, err
	}
	end := start
	if isRange {
		if end, err = parseLine(b); err != nil {
			return Ref{}, err
		}
	}
	if end < start {
		return Ref{}, fmt.Errorf("the range ends (%d) before it starts (%d)", end, start)
	}
	if err := checkRefPath(p); err != nil {
		return Ref{}, err
	}
	return Ref{Path: p, StartLine: start, EndLine: end}, nil
}

func parseLine(s string) (int, error) {
	if s == "" || len(s) > 8 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.New("lines must be whole numbers (path:start-end)")
	}
	n, _ := strconv.Atoi(s)
	if n < 1 || n > maxLine {
		return 0, fmt.Errorf("line %d is out of 1..%d", n, maxLine)
	}
	return n, nil
}

func checkRefPath(p string) error {
	switch {
	case p == "":
		return errors.New("the path is empty")
	case strings.HasPrefix(p, "/"), strings.Contains(p, `\`), strings.ContainsRune(p, 0):
		return errors.New("the path must be relative to the repository, with / separators")
	case path.Clean(p) != p, p == "..", strings.HasPrefix(p, "../"):
		return errors.New("the path must be clean (no ., .. or empty elements)")
	}
	return nil
}

// Reasons a ref does not resolve (finalize_validation.invalid_refs[].reason).
const (
	RefMalformed     = "malformed"
	RefNoPack        = "no_pack"
	RefPathNotFound  = "path_not_found"
	RefOutOfRange    = "line_out_of_range"
	RefChanged       = "content_changed"
	RefUnverifiable  = "unverifiable_without_repository"
	RefUnresolvable  = "unresolvable"
	RefBinary        = "binary_file"
	maxInvalidRefs   = 100
	maxChangedListed = 50
)

// InvalidRef is one ref that does not resolve.
type InvalidRef struct {
	Section   string `json:"section"`
	Pointer   string `json:"pointer"`
	Ref       string `json:"ref"`
	Path      string `json:"path,omitempty"`
	StartLine int    `json:"start_line,omitempty"`
	EndLine   int    `json:"end_line,omitempty"`
	Reason    string `json:"reason"`
	Detail    string `json:"detail"`
}

// ErrFileNotFound is returned by Files for a path absent at the commit.
var ErrFileNotFound = fs.ErrNotExist

// Files reads the repository a pack describes.
type Files interface {
	// ReadFile returns path's bytes at commit, or in the work tree when
	// commit is "". A path absent there is ErrFileNotFound (wrapped).
	ReadFile(ctx context.Context, commit, path string) ([]byte, error)
}

// packLines are the file lines a pack carries for one path, as sent.
type packLines struct {
	text       map[int]string // file line -> sent text
	redacted   map[int]bool   // file lines whose sent text was redacted
	stale      bool           // an item's content does not match its sha256
	comparable bool           // the sent text is the file's bytes (UTF-8, not transcoded)
}

// linesOf maps the content items of p for path onto file lines. An item's
// id names the first and last line it sends (path:start:end); a truncated
// item sends a head and a tail around pack.TruncationMarker. Lines whose
// place cannot be known for certain (a line cut short) are left out.
func linesOf(p *pack.Pack, file string) *packLines {
	var out *packLines
	for _, group := range [][]pack.Item{p.KeyFiles, p.Contents} {
		for i := range group {
			it := &group[i]
			if it.Path != file {
				continue
			}
			if out == nil {
				out = &packLines{text: map[int]string{}, redacted: map[int]bool{}, comparable: true}
			}
			sum := sha256.Sum256([]byte(it.Content))
			if hex.EncodeToString(sum[:]) != it.SHA256 {
				out.stale = true
			}
			if it.Encoding != "" && !strings.EqualFold(it.Encoding, "utf-8") {
				out.comparable = false
			}
			start, end, ok := itemRange(it)
			if !ok {
				continue
			}
			redactedContent := map[int]bool{}
			for _, r := range it.Redactions {
				redactedContent[r.Line] = true
			}
			put := func(contentLine, fileLine int, text string) {
				out.text[fileLine] = text
				if redactedContent[contentLine] {
					out.redacted[fileLine] = true
				}
			}
			if contentLines := splitLines(it.Content); !it.Truncated || len(contentLines) == end-start+1 {
				// The whole file, or a region of it: line for line.
				for j, l := range contentLines {
					if start+j <= end {
						put(j+1, start+j, l)
					}
				}
				continue
			}
			k := strings.Index(it.Content, pack.TruncationMarker)
			if k < 0 {
				continue
			}
			head, tail := it.Content[:k], it.Content[k+len(pack.TruncationMarker):]
			if !strings.HasSuffix(head, "\n") && head != "" {
				continue // cut inside a line: the places of the tail are unknown
			}
			hl := splitLines(head)
			for j, l := range hl {
				put(j+1, start+j, l)
			}
			tl := splitLines(tail)
			// The sent content has the head lines, an empty line and the
			// marker line, then the tail; the tail's first line may be cut.
			firstTailContent := len(hl) + 3
			for j := 1; j < len(tl); j++ {
				put(firstTailContent+j, end-len(tl)+1+j, tl[j])
			}
		}
	}
	// A diff shows the new file's lines around each change.
	for _, c := range p.Changes {
		if c.Path != file || c.Diff == "" {
			continue
		}
		if out == nil {
			out = &packLines{text: map[int]string{}, redacted: map[int]bool{}, comparable: true}
		}
		redactedDiff := map[int]bool{}
		for _, r := range c.Redactions {
			redactedDiff[r.Line] = true
		}
		text, diffLine := pack.DiffLines(c.Diff)
		for l, t := range text {
			if _, ok := out.text[l]; !ok {
				out.text[l] = t
				out.redacted[l] = redactedDiff[diffLine[l]]
			}
		}
	}
	return out
}

// itemRange reads the line range from an item id path:start:end.
func itemRange(it *pack.Item) (int, int, bool) {
	rest, ok := strings.CutPrefix(it.ID, it.Path+":")
	if !ok {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, 0, false
	}
	start, err1 := strconv.Atoi(a)
	end, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || start < 1 || end < start {
		return 0, 0, false
	}
	return start, end, true
}

// splitLines splits text into lines as an editor shows them: a final
// newline ends the last line, it does not start another; a CR before it is
// part of the line ending.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// packHasPath reports whether p mentions path at all (content, change or
// file index).
func packHasPath(p *pack.Pack, file string) bool {
	for _, c := range p.Changes {
		if c.Path == file {
			return c.Status != "deleted"
		}
	}
	for _, e := range p.FileIndex {
		if e.Path == file {
			return true
		}
	}
	return false
}

// resolveRef checks one ref against the entry's pack and, when files is
// set, the repository: the path is there at the pack's commit (the work
// tree for a work-tree pack), the lines are in range, and every line the
// pack sent for the range is what the file has there (redacted lines
// aside). Without the repository, the pack must carry every line of the
// range. It returns "" and "" when the ref resolves.
func resolveRef(ctx context.Context, p *pack.Pack, files Files, r Ref) (reason, detail string) {
	carried := linesOf(p, r.Path)
	if carried != nil && carried.stale {
		return RefChanged, "the stored pack's content for this path does not match its sha256"
	}
	if files == nil {
		if carried == nil {
			if packHasPath(p, r.Path) {
				return RefUnverifiable, "the pack lists the path but carries none of its lines; serve the store inside the repository to check it"
			}
			return RefPathNotFound, "the path is not in the pack"
		}
		for l := r.StartLine; l <= r.EndLine; l++ {
			if _, ok := carried.text[l]; !ok {
				return RefUnverifiable, fmt.Sprintf("line %d is not among the lines the pack carries; serve the store inside the repository to check it", l)
			}
		}
		return "", ""
	}
	commit := p.Source.Head
	if p.Source.Dirty {
		commit = ""
	}
	data, err := files.ReadFile(ctx, commit, r.Path)
	if errors.Is(err, ErrFileNotFound) {
		if commit == "" {
			return RefPathNotFound, "the path is not in the work tree"
		}
		return RefPathNotFound, "the path is not in commit " + short(commit)
	}
	if err != nil {
		return RefUnresolvable, err.Error()
	}
	if isBinary(data) {
		return RefBinary, "the file is binary: refs name lines of text files"
	}
	lines := splitLines(string(data))
	if r.EndLine > len(lines) {
		return RefOutOfRange, fmt.Sprintf("the file has %d lines", len(lines))
	}
	if carried == nil || !carried.comparable {
		return "", ""
	}
	for l := r.StartLine; l <= r.EndLine; l++ {
		sent, ok := carried.text[l]
		if !ok || carried.redacted[l] {
			continue
		}
		if sent != lines[l-1] {
			return RefChanged, fmt.Sprintf("line %d differs between the pack and the source", l)
		}
	}
	return "", ""
}

func isBinary(data []byte) bool {
	n := min(len(data), 8000)
	return strings.IndexByte(string(data[:n]), 0) >= 0
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
