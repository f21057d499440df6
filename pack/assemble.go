package pack

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/bits"
	"path"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/ctxpack/ctxpack/lang"
)

// changes bounds, scans and redacts the diffs of the changed files, and
// withholds the diff of any file whose content may not leave. Diffs are
// charged to the content budget first, in path order; one that does not fit
// what is left is withheld (size_limit) without being scanned.
//
// A change pack (bounded false) takes every diff whole: its budget decides
// hunk by hunk later. A diff over max_content_bytes is withheld unscanned,
// its hunks listed by header only.
func (b *builder) changes(ctx context.Context, bounded bool) ([]Change, int64, error) {
	byPath := map[string]*entry{}
	for _, e := range b.entries {
		byPath[e.file.Path] = e
	}
	if err := b.scanChangeSides(ctx, byPath, bounded); err != nil {
		return nil, 0, err
	}
	out := make([]Change, 0, len(b.snap.Changes))
	var total int64
	l := b.pol.Limits
	remaining := l.MaxContentBytes
	for i := range b.snap.Changes {
		c := b.snap.Changes[i]
		c.Redactions, c.Old = nil, nil
		withheld := b.pathWithheld(&c, byPath)
		if c.Binary {
			c.Diff = ""
		}
		if withheld != "" {
			c.Diff, c.DiffWithheld = "", withheld
			out = append(out, c)
			continue
		}
		if c.Diff == "" {
			out = append(out, c)
			continue
		}
		text, kept, truncated := c.Diff, []span{{0, len(c.Diff)}}, false
		if bounded {
			text, kept, truncated = truncate(c.Diff, l.MaxFileBytes, l.PreserveHeadLines, l.PreserveTailLines)
		} else if int64(len(text)) > l.MaxContentBytes {
			_, hunks := splitDiff(text)
			for _, h := range hunks {
				c.OmittedHunks = append(c.OmittedHunks, HunkSummary{Header: h.rangeHeader(), Added: h.added, Deleted: h.deleted})
			}
			c.Diff, c.DiffWithheld = "", ReasonSizeLimit
			out = append(out, c)
			continue
		}
		if bounded && int64(len(text)) > remaining {
			c.Diff, c.DiffWithheld = "", ReasonSizeLimit
			out = append(out, c)
			continue
		}
		// What the diff shows of a secret of either whole version of the
		// file (a line in the middle of a private key) is redacted where it
		// is sent; a diff that is not of the versions scanned is withheld.
		sides, ok := b.sides[c.Path]
		if !ok {
			var err error
			if sides, err = b.changeSides(ctx, &b.snap.Changes[i], byPath[c.Path]); err != nil {
				return nil, 0, err
			}
		}
		if sides.old != nil && len(sides.old.Findings) > 0 {
			b.markSecret(c.Path) // the diff's index line names the old blob
			b.markSecret(c.OldPath)
		}
		if sides.why != "" {
			c.Diff, c.DiffWithheld = "", sides.why
			out = append(out, c)
			continue
		}
		shown, ok := DiffSecrets(c.Diff, sides.old, sides.new)
		if !ok {
			c.Diff, c.DiffWithheld = "", ReasonUnscanned
			out = append(out, c)
			continue
		}
		// The whole diff is scanned too (its lines map to the file's), and
		// what is found is redacted where it is sent; a finding in a part
		// cut away was never sent.
		findings, spans, err := b.scanSentDiff(ctx, c.Path, c.Diff, kept)
		if err != nil {
			return nil, 0, fmt.Errorf("secret scan of the diff of %s: %w", c.Path, err)
		}
		for _, s := range shown {
			ms := mapSpan(kept, s.Start, s.End)
			for _, m := range ms {
				spans = append(spans, redactSpan{m.start, m.end, s.Finding.RuleID})
			}
			if len(ms) > 0 {
				findings = addFinding(findings, s.Finding)
			}
		}
		sent, reds, err := b.redactAllWith(ctx, b.diffScan(), c.Path, text, spans)
		if err != nil {
			return nil, 0, err
		}
		action := b.secretAction()
		for _, f := range append(findings, reds.extra...) {
			f.Path = c.Path
			b.secrets = append(b.secrets, SecretEvent{Finding: f, Where: "diff", Action: action})
		}
		if len(findings) > 0 || len(reds.extra) > 0 {
			b.markSecret(c.Path)
			b.markSecret(c.OldPath)
		}
		if len(findings) > 0 && action != SecretRedacted {
			c.Diff, c.DiffWithheld = "", ReasonCredentials
			out = append(out, c)
			continue
		}
		// A pack is text: a diff of a file in another encoding (Latin-1)
		// shows its bytes as git does, each byte that is not UTF-8 as
		// U+FFFD, as the pack's serialization would, so that the pack
		// decodes to what it was serialized from (its canonical form).
		sent = validUTF8(sent)
		if bounded && int64(len(sent)) > remaining { // the placeholders (or U+FFFDs) made it longer
			c.Diff, c.DiffWithheld = "", ReasonSizeLimit
			out = append(out, c)
			continue
		}
		c.Diff, c.DiffTruncated, c.Redactions = sent, truncated, reds.list
		total += int64(len(sent))
		remaining -= int64(len(sent))
		out = append(out, c)
	}
	return out, total, nil
}

// pathWithheld says why the diff of c may not leave by what its paths are
// (a name holding a secret, an excluded file), "" when it may.
func (b *builder) pathWithheld(c *Change, byPath map[string]*entry) Reason {
	for _, p := range []string{c.Path, c.OldPath} {
		if p == "" {
			continue
		}
		if b.nameWithheld(p) {
			return ReasonCredentials
		}
		if e, ok := byPath[p]; ok && e.row.Reason != "" && e.row.Reason != ReasonSizeLimit {
			return e.row.Reason
		} else if !ok {
			if r, _ := b.exclude.Reason(p); r != "" {
				return r
			}
		}
	}
	return ""
}

// prioritize orders the content candidates: changed files (primary), then key
// files, then files the changed files import, then the rest.
func (b *builder) prioritize() []*entry {
	changed := map[string]bool{}
	var changedPaths []string
	for _, c := range b.snap.Changes {
		if c.Status != "deleted" {
			changed[c.Path] = true
			changedPaths = append(changedPaths, c.Path)
		}
	}
	var primary, keys, rest []*entry
	for _, e := range b.entries {
		if e.row.Reason != "" {
			continue
		}
		e.role = RoleRelated
		if changed[e.file.Path] {
			e.role = RolePrimary
			primary = append(primary, e)
		} else if e.importance != "" {
			keys = append(keys, e)
		} else {
			rest = append(rest, e)
		}
	}
	// Key files are chosen among all candidates (a changed file may be one),
	// under seed 000's limits and ordering.
	var all []*entry
	all = append(append(all, primary...), keys...)
	var keyCands []*entry
	for _, e := range all {
		if e.importance != "" {
			keyCands = append(keyCands, e)
		}
	}
	markKeyFiles(keyCands)
	var chosenKeys []*entry
	for _, e := range keyCands {
		if e.key && e.role != RolePrimary {
			chosenKeys = append(chosenKeys, e)
		}
	}
	for _, e := range keys {
		if !e.key {
			rest = append(rest, e)
		}
	}
	var related []*entry
	if b.opts.Related != nil {
		inRest := map[string]*entry{}
		for _, e := range rest {
			inRest[e.file.Path] = e
		}
		for _, p := range b.opts.Related(changedPaths) {
			if e, ok := inRest[p]; ok {
				related = append(related, e)
				delete(inRest, p)
			}
		}
		rest = rest[:0]
		for _, e := range b.entries {
			if _, ok := inRest[e.file.Path]; ok {
				rest = append(rest, e)
			}
		}
	}
	sort.SliceStable(rest, func(i, j int) bool {
		di, dj := depth(rest[i].file.Path), depth(rest[j].file.Path)
		if di != dj {
			return di < dj
		}
		return rest[i].file.Path < rest[j].file.Path
	})
	out := append(primary, chosenKeys...)
	out = append(out, related...)
	return append(out, rest...)
}

// markKeyFiles sorts the candidates, most important first, and marks the
// key files among them under seed 000's limits (5 per category, 25 in all).
func markKeyFiles(cands []*entry) {
	sort.SliceStable(cands, func(i, j int) bool { return keyLess(cands[i], cands[j]) })
	perCat := map[Category]int{}
	total := 0
	for _, e := range cands {
		if total >= KeyFilesTotal || perCat[e.index.Category] >= KeyFilesPerCategory {
			continue
		}
		perCat[e.index.Category]++
		total++
		e.key = true
	}
}

func keyLess(a, b *entry) bool {
	if ia, ib := importanceRank[a.importance], importanceRank[b.importance]; ia != ib {
		return ia < ib
	}
	if ca, cb := categoryRank[a.index.Category], categoryRank[b.index.Category]; ca != cb {
		return ca < cb
	}
	if a.size != b.size {
		return a.size < b.size
	}
	if da, db := depth(a.file.Path), depth(b.file.Path); da != db {
		return da < db
	}
	return a.file.Path < b.file.Path
}

func depth(p string) int { return strings.Count(p, "/") }

// allocate includes candidates in priority order while they fit the content
// budget and the file limit; the rest are excluded with reason size_limit.
func (b *builder) allocate(ordered []*entry, budget int64) {
	count := 0
	for _, e := range ordered {
		size := int64(len(e.sent))
		switch {
		case count >= b.pol.Limits.MaxFiles:
			e.row.Reason, e.row.Detail = ReasonSizeLimit, fmt.Sprintf("max_files %d reached", b.pol.Limits.MaxFiles)
		case size > budget:
			e.row.Reason, e.row.Detail = ReasonSizeLimit, fmt.Sprintf("does not fit the remaining content budget (max_content_bytes %d)", b.pol.Limits.MaxContentBytes)
		default:
			budget -= size
			count++
		}
	}
}

// fill writes the items, the file index and the metadata into p.
func (b *builder) fill(p *Pack, ordered []*entry) {
	diffBytes := b.diffBytes
	p.KeyFiles, p.Contents = []KeyFile{}, []Item{}
	var contentBytes int64
	truncatedFiles := 0
	dropped := 0
	for _, e := range ordered {
		if e.row.Reason != "" {
			dropped++
			continue
		}
		it := item(e)
		e.row.Included, e.row.Role = true, e.role
		e.row.BytesSent = int64(len(e.sent))
		e.row.SHA256Sent = it.SHA256
		contentBytes += int64(len(e.sent))
		if e.truncated {
			truncatedFiles++
		}
		if e.key {
			p.KeyFiles = append(p.KeyFiles, it)
		} else {
			p.Contents = append(p.Contents, it)
		}
	}
	b.fillIndex(p, contentBytes+diffBytes, truncatedFiles, dropped)
}

// fillIndex writes the file index, the metadata and the budget of p from the
// ledger rows (included or excluded with a reason).
func (b *builder) fillIndex(p *Pack, contentBytes int64, truncatedFiles, dropped int) {
	p.FileIndex = make([]IndexEntry, 0, len(b.entries))
	stats := ExclusionStats{}
	byReason := map[Reason]int{}
	included := 0
	var encodings []EncodingNote
	for _, e := range b.listedEntries() {
		ie := e.index
		if why := b.withheldOf(e.file.Path); why != "" {
			ie.SizeBytes, ie.OriginalWithheld = nil, why
		}
		ie.Included = e.row.Included
		if !e.row.Included {
			// A row dropped on a later pass (fitTier) sends nothing.
			e.row.Role, e.row.BytesSent, e.row.SHA256Sent = "", 0, ""
			ie.ExclusionReason, ie.Detail = e.row.Reason, e.row.Detail
			byReason[e.row.Reason]++
			switch e.row.Reason {
			case ReasonCredentials:
				stats.ByCredentials++
			case ReasonBinary:
				stats.ByBinary++
			case ReasonSizeLimit:
				stats.BySize++
			default:
				stats.ByPattern++
			}
		} else {
			included++
			if e.encoding != EncUTF8 {
				encodings = append(encodings, EncodingNote{Path: e.file.Path, Encoding: e.encoding, Note: encodingNote(e.encoding)})
			}
		}
		p.FileIndex = append(p.FileIndex, ie)
	}
	var totalSize int64
	listed := b.listedEntries()
	files := make([]File, len(listed))
	for i, e := range listed {
		files[i] = *e.file
		files[i].Size = b.publishedSize(e)
		totalSize += files[i].Size
	}
	tree, dirs := directoryTree(b.snap.Source.Repository, files)
	p.Metadata = Metadata{
		PackType:           p.Type,
		SelectionReason:    b.selection.Reason,
		CreatedAt:          b.snap.Time.UTC().Format("2006-01-02T15:04:05Z"),
		SourceRoot:         b.snap.Source.Repository,
		TotalFilesScanned:  len(listed),
		FilesIncluded:      included,
		FilesExcluded:      len(listed) - included,
		TotalContentBytes:  contentBytes,
		TruncationApplied:  truncatedFiles > 0 || dropped > 0,
		TruncatedFiles:     truncatedFiles,
		ExclusionStats:     stats,
		ExclusionsByReason: byReason,
		Encodings:          append([]EncodingNote{}, encodings...),
		Totals:             Totals{Files: len(files), Directories: dirs, SizeBytes: totalSize},
		DirectoryTree:      tree,
		ToolVersion:        b.opts.ToolVersion,
	}
	p.Budget = Budget{
		MaxTokens:       p.Budget.MaxTokens, // the builder's to set, once
		MaxChars:        b.pol.TierLimit(),
		MaxContentBytes: b.pol.Limits.MaxContentBytes,
		ContentBytes:    contentBytes,
		Truncated:       truncatedFiles > 0 || dropped > 0,
		DroppedItems:    dropped,
		TokenEncoding:   TokenEncoding,
	}
}

func encodingNote(enc string) string {
	switch enc {
	case EncLatin1:
		return "not valid UTF-8; decoded as Latin-1"
	default:
		return "decoded from " + enc + " (byte order mark) to UTF-8"
	}
}

func item(e *entry) Item {
	var sum [32]byte
	if e.originalSum != nil && e.sent == e.original {
		sum = *e.originalSum
	} else {
		sum = SumString(e.sent)
	}
	n := lang.CountLines(e.original)
	start := 1
	if n == 0 {
		start = 0
	}
	it := Item{
		ID:                fmt.Sprintf("%s:%d:%d", e.file.Path, start, n),
		Path:              e.file.Path,
		Role:              e.role,
		Encoding:          e.encoding,
		Content:           e.sent,
		SHA256:            hex.EncodeToString(sum[:]),
		Blob:              e.row.Blob,
		Truncated:         e.truncated,
		OriginalSizeBytes: e.row.BytesOriginal,
		Redactions:        append([]Redaction{}, e.redactions...),
	}
	if e.key {
		it.Category, it.Importance = e.index.Category, e.importance
	}
	return it
}

// fitTier drops the lowest-priority items until the serialized pack fits the
// tier's character ceiling and an explicit limits.max_tokens.
func (b *builder) fitTier(p *Pack, ordered []*entry) error {
	lim := b.fullLimits()
	if lim.chars == 0 && lim.tokens == 0 {
		return nil
	}
	p.Budget.MaxTokens = lim.tokens
	for {
		// used_chars is the characters of the bytes (Finalize settles it).
		_, tokens, err := b.finalizeCounted(p)
		if err != nil {
			return err
		}
		used := p.Budget.UsedChars
		if lim.fit(used, tokens) {
			return b.refillTier(p, ordered, lim, used, tokens)
		}
		excess, excessTokens := used-lim.chars, tokens-lim.tokens
		dropped := false
		for i := len(ordered) - 1; i >= 0 && (lim.chars > 0 && excess > 0 || lim.tokens > 0 && excessTokens > 0); i-- {
			e := ordered[i]
			if e.row.Reason != "" {
				continue
			}
			e.row.Reason, e.row.Detail = ReasonSizeLimit, lim.dropped
			e.row.Included = false
			c, t, err := itemCost(e)
			if err != nil {
				return err
			}
			excess -= c
			excessTokens -= t
			dropped = true
		}
		if !dropped {
			if lim.chars > 0 && used > lim.chars {
				return fmt.Errorf("the pack without any file content is %d characters, over tier %s's ceiling of %d: use --type summary or a larger tier", used, b.pol.Pack.Tier, lim.chars)
			}
			return fmt.Errorf("the pack without any file content is about %d tokens, over limits.max_tokens %d: use --type summary or raise --max-tokens", tokens, lim.tokens)
		}
		b.fill(p, ordered)
	}
}

// fullLimits are the ceilings a tree's Full pack is fitted to.
type fullLimits struct {
	chars, tokens int
	// dropped is the detail of a file dropped to fit them.
	dropped string
}

func (b *builder) fullLimits() fullLimits {
	l := fullLimits{chars: b.pol.TierLimit(), tokens: b.pol.Limits.MaxTokens}
	var what []string
	if l.chars > 0 {
		what = append(what, fmt.Sprintf("tier %s (%d characters)", b.pol.Pack.Tier, l.chars))
	}
	if l.tokens > 0 {
		what = append(what, fmt.Sprintf("max_tokens %d", l.tokens))
	}
	l.dropped = "dropped to fit " + strings.Join(what, " and ")
	return l
}

func (l fullLimits) fit(chars, tokens int) bool {
	return (l.chars == 0 || chars <= l.chars) && (l.tokens == 0 || tokens <= l.tokens)
}

// itemCost estimates what a file's item adds to the pack: its characters
// and tokens, plus the item's other fields.
func itemCost(e *entry) (chars, tokens int, err error) {
	t, err := CountTokens(e.sent)
	return utf8.RuneCountInString(e.sent) + 200, t + 60, err
}

// refillTier takes back, in priority order, the items the limits dropped
// that the room left can still hold: dropping is done in rounds on
// estimates and may drop more than needed.
func (b *builder) refillTier(p *Pack, ordered []*entry, lim fullLimits, used, tokens int) error {
	for _, e := range ordered {
		if e.row.Reason != ReasonSizeLimit || e.row.Detail != lim.dropped {
			continue
		}
		c, t, err := itemCost(e)
		if err != nil {
			return err
		}
		if lim.chars > 0 && c > lim.chars-used || lim.tokens > 0 && t > lim.tokens-tokens {
			continue
		}
		e.row.Reason, e.row.Detail = "", ""
		b.fill(p, ordered)
		_, tk, err := b.finalizeCounted(p)
		if err != nil {
			return err
		}
		u := p.Budget.UsedChars
		if lim.fit(u, tk) {
			used, tokens = u, tk
			continue
		}
		e.row.Reason, e.row.Detail, e.row.Included = ReasonSizeLimit, lim.dropped, false
		b.fill(p, ordered)
	}
	_, err := b.finalize(p)
	return err
}

// maxTreeDepth is how many directory levels directory_tree shows. A deeper
// directory is folded into its ancestor at this depth, which then counts the
// files of its whole subtree: a repository's nesting must not become the
// pack's (a 5,000-deep path would nest the JSON 10,000 levels, past what
// decoders accept, and repeat its growing path 5,000 times).
const maxTreeDepth = 12

// directoryTree builds the condensed directory tree (depth-capped at
// maxTreeDepth) and counts directories, folded ones included.
func directoryTree(name string, files []File) (*DirNode, int) {
	root := &DirNode{Name: name, Path: ""}
	nodes := map[string]*DirNode{"": root}
	all := map[string]bool{}
	var get func(dir string) *DirNode
	get = func(dir string) *DirNode {
		if n, ok := nodes[dir]; ok {
			return n
		}
		parent := path.Dir(dir)
		if parent == "." {
			parent = ""
		}
		pn := get(parent)
		n := &DirNode{Name: path.Base(dir), Path: dir}
		pn.Children = append(pn.Children, n)
		nodes[dir] = n
		return n
	}
	for _, f := range files {
		dir := path.Dir(f.Path)
		if dir == "." {
			dir = ""
		}
		// Every directory is counted, from the deepest up to the first
		// already counted (its ancestors are too): linear in new directories.
		for d := dir; d != "" && !all[d]; {
			all[d] = true
			i := strings.LastIndexByte(d, '/')
			if i < 0 {
				break
			}
			d = d[:i]
		}
		shown := dir
		for i, seps := 0, 0; i < len(dir); i++ {
			if dir[i] == '/' {
				if seps++; seps == maxTreeDepth {
					shown = dir[:i]
					break
				}
			}
		}
		n := get(shown)
		n.Files++
		n.SizeBytes += f.Size
		if shown != dir {
			n.Folded = true
		}
	}
	var sortTree func(n *DirNode)
	sortTree = func(n *DirNode) {
		sort.Slice(n.Children, func(i, j int) bool { return n.Children[i].Path < n.Children[j].Path })
		for _, c := range n.Children {
			sortTree(c)
		}
	}
	sortTree(root)
	return root, len(all)
}

// Marshal is the canonical serialization: compact JSON, HTML not escaped,
// struct field order, map keys sorted, and a final newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := Encode(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// ContentDigest is the sha256 of the pack serialized with pack_id and
// used_chars cleared: what the pack id is derived from.
func ContentDigest(p *Pack) ([32]byte, error) {
	return EncodeDigest(io.Discard, p)
}

// Top-level fields of Pack that the content digest serializes otherwise.
var (
	packIDField = fieldIndex("PackID")
	budgetField = fieldIndex("Budget")
)

func fieldIndex(name string) int {
	f, ok := reflect.TypeFor[Pack]().FieldByName(name)
	if !ok || len(f.Index) != 1 {
		panic("pack: Pack has no field " + name)
	}
	return f.Index[0]
}

// EncodeDigest writes Encode(p) to w and returns ContentDigest(p), from one
// serialization of p: every field but pack_id and budget is the same in
// both, so it is serialized once and written to w and the digest alike.
// The audit compares the canonical form of the pack it decoded with the
// bytes it was given and derives the pack id in the same pass.
func EncodeDigest(w io.Writer, p *Pack) ([32]byte, error) {
	c := *p
	c.PackID, c.Budget.UsedChars = "", 0
	h := sha256.New()
	both := io.MultiWriter(w, h)
	s := newStreamer(both)
	pv, cv := reflect.ValueOf(p).Elem(), reflect.ValueOf(&c).Elem()
	sepP, sepC := "{", "{"
	var err error
	for i := range pv.NumField() {
		if i == packIDField || i == budgetField || sepP != sepC {
			s.w = w
			if err = s.field(pv, i, &sepP); err != nil {
				break
			}
			s.w = h
			if err = s.field(cv, i, &sepC); err != nil {
				break
			}
			continue
		}
		s.w = both
		if err = s.field(pv, i, &sepP); err != nil {
			break
		}
		sepC = sepP
	}
	if err == nil {
		s.w = w
		if err = s.close(sepP); err == nil {
			s.w = h
			err = s.close(sepC)
		}
	}
	if err == nil {
		_, err = io.WriteString(both, "\n")
	}
	if err != nil {
		return [32]byte{}, fmt.Errorf("serialize: %w", err)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

// ID derives the pack id from a content digest: pk_ and 8 characters of
// lower-case base32 ([a-z2-7], seed 001).
func ID(digest [32]byte) string {
	return "pk_" + strings.ToLower(idEncoding.EncodeToString(digest[:]))[:8]
}

// Finalize fills the token estimate, the pack id and used_chars, and returns
// the canonical bytes. used_chars counts the characters of those very bytes.
// The pack is serialized once, its tokens counted as the bytes stream by
// (a large pack is tens of MB: a second serialization was ~50 ms of
// prometheus's full tree); then the budget, which holds the count, is
// serialized again in place. With pack_id empty and used_chars 0 the pack
// serializes to what its content digest hashes: those bytes are hashed and
// counted, and the two fields are then set in place.
func Finalize(p *Pack) ([]byte, error) {
	return finalize(p, nil)
}

// finalize is Finalize taking the counts of contents counted before from
// counts, and leaving there those it counts, when counts is set.
func finalize(p *Pack, counts TokenCounts) ([]byte, error) {
	data, _, err := finalizeCounted(p, counts)
	return data, err
}

// finalizeCounted is finalize that also returns the tokens of the bytes it
// returns, as CountTokensOf counts them, without counting them again (a
// change pack's budget is fitted on that count, pack after pack). The bytes
// counted as they were written differ from those returned only in the pack
// id's and the budget's fields: the count of the stretch around each, from
// the cut before it to the cut after it (tokenCut), as written is taken
// back and the count of that stretch as returned is added.
func finalizeCounted(p *Pack, counts TokenCounts) ([]byte, int, error) {
	p.PackID, p.Budget.UsedChars, p.Budget.EstimatedTokens = "", 0, 0
	size := serializedSizeBound(p)
	buf := bytes.NewBuffer(make([]byte, 0, size))
	tc, err := newTokenCounter(buf, size, counts)
	if err != nil {
		return nil, 0, err
	}
	s := newStreamer(io.MultiWriter(buf, tc))
	if counts != nil {
		s.onItem = tc.noteItem
	}
	rv := reflect.ValueOf(p).Elem()
	idSpan, budgetSpan, err := serializeFields(s, rv, buf)
	if err != nil {
		_, _ = tc.finish() // let its workers go
		return nil, 0, err
	}
	tokens, err := tc.finish()
	if err != nil {
		return nil, 0, err
	}
	data := buf.Bytes()
	p.Budget.EstimatedTokens = tokens
	// The stretches around the two fields, counted as written.
	blankID, blankBudget := idSpan, budgetSpan
	stretches := cutStretches(data, blankID, blankBudget)
	for _, st := range stretches {
		n, err := CountTokensOf(data[st[0]:st[1]])
		if err != nil {
			return nil, 0, err
		}
		tokens -= n
	}
	if data, budgetSpan, err = reserializeField(data, rv, budgetField, budgetSpan); err != nil {
		return nil, 0, err
	}
	digest := sha256.Sum256(data)
	p.PackID = ID(digest)
	// used_chars is part of what it counts: with it at 0 (one digit) and
	// the pack id in place (ASCII, in place of "") the pack has base
	// characters, so the count n solves n = base-1+digits(n).
	chars := RuneCount(data)
	base := chars + len(p.PackID)
	n := base
	for i := 0; i < 4 && n != base-1+len(strconv.Itoa(n)); i++ {
		n = base - 1 + len(strconv.Itoa(n))
	}
	p.Budget.UsedChars = n
	// The later field first: the earlier one's span stays right. The
	// characters are counted again in the spans alone: a span starts and
	// ends at an ASCII byte, so counts add up, and a pack's tens of MB are
	// counted once.
	replace := func(field int, span [2]int) ([2]int, error) {
		chars -= RuneCount(data[span[0]:span[1]])
		data, span, err = reserializeField(data, rv, field, span)
		if err == nil {
			chars += RuneCount(data[span[0]:span[1]])
		}
		return span, err
	}
	if budgetSpan, err = replace(budgetField, budgetSpan); err != nil {
		return nil, 0, err
	}
	if idSpan, err = replace(packIDField, idSpan); err != nil {
		return nil, 0, err
	}
	if chars != n {
		return nil, 0, fmt.Errorf("serialize: used_chars did not settle")
	}
	// The same stretches in the bytes returned: shifted by the growth of
	// each field before them.
	grown := func(blank, now [2]int) int { return (now[1] - now[0]) - (blank[1] - blank[0]) }
	moved := func(at int) int {
		for _, f := range [][2][2]int{{blankID, idSpan}, {blankBudget, budgetSpan}} {
			if at >= f[0][1] {
				at += grown(f[0], f[1])
			}
		}
		return at
	}
	for _, st := range stretches {
		n, err := CountTokensOf(data[moved(st[0]):moved(st[1])])
		if err != nil {
			return nil, 0, err
		}
		tokens += n
	}
	return data, tokens, nil
}

// cutStretches are the stretches of data around the byte spans given, each
// from the last cut (tokenCut) before its span to the first cut after it,
// the bytes on both sides of each cut outside every span; overlapping
// stretches are merged. The count of data is the sum of the counts of the
// stretches and of what lies between them.
func cutStretches(data []byte, spans ...[2]int) [][2]int {
	s := unsafe.String(unsafe.SliceData(data), len(data))
	var out [][2]int
	for _, sp := range spans {
		from := 0 // the last cut before sp[0]: a quote at c < sp[0]
		for c := sp[0] - 1; c >= 1; c-- {
			if s[c] == '"' && 'a' <= s[c-1] && s[c-1] <= 'z' {
				from = c
				break
			}
		}
		to := len(s) // the first cut whose letter is at or past sp[1]
		if c := tokenCut(s, sp[1]+1); c >= 0 {
			to = c
		}
		out = append(out, [2]int{from, to})
	}
	slices.SortFunc(out, func(a, b [2]int) int { return a[0] - b[0] })
	merged := out[:0]
	for _, st := range out {
		if n := len(merged); n > 0 && st[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], st[1])
			continue
		}
		merged = append(merged, st)
	}
	return merged
}

// serializeFields writes the pack's fields as one JSON object followed by a
// newline, and returns the byte spans in buf of the pack id's and the
// budget's fields (each with the separator before it).
func serializeFields(s *streamer, rv reflect.Value, buf *bytes.Buffer) (id, budget [2]int, err error) {
	sep := "{"
	for i := range rv.NumField() {
		start := buf.Len()
		if err := s.field(rv, i, &sep); err != nil {
			return id, budget, fmt.Errorf("serialize: %w", err)
		}
		switch i {
		case packIDField:
			id = [2]int{start, buf.Len()}
		case budgetField:
			budget = [2]int{start, buf.Len()}
		}
	}
	if err := s.close(sep); err != nil {
		return id, budget, fmt.Errorf("serialize: %w", err)
	}
	if err := s.write("\n"); err != nil {
		return id, budget, fmt.Errorf("serialize: %w", err)
	}
	if id[0] == id[1] || budget[0] <= id[1] {
		return id, budget, fmt.Errorf("serialize: pack_id and budget are not where Finalize sets them")
	}
	return id, budget, nil
}

// reserializeField replaces the bytes of field i at span (its separator
// and itself) with its serialization now, and returns them with the
// field's new span.
func reserializeField(data []byte, rv reflect.Value, i int, span [2]int) ([]byte, [2]int, error) {
	var seg bytes.Buffer
	fs := newStreamer(&seg)
	sep := string(data[span[0]])
	if err := fs.field(rv, i, &sep); err != nil {
		return nil, span, fmt.Errorf("serialize: %w", err)
	}
	return slices.Replace(data, span[0], span[1], seg.Bytes()...), [2]int{span[0], span[0] + seg.Len()}, nil
}

// RuneCount is utf8.RuneCount(p), the same count (an invalid byte counts as
// one), without a copy of p: utf8.RuneCount converts the bytes from the
// first non-ASCII one on to a string, a second copy of a pack of tens of
// MB. A pack is valid UTF-8 (encoding/json writes nothing else), where the
// count is the bytes that do not continue a character, counted eight at a
// time: with utf8.ValidString's ASCII fast path, 1.5 -> 3.3 GB/s on Go
// code with an accent a line (BenchmarkRuneCount); a 10,000-file pack's
// 24 MB cost 17 ms a count, and a pack run counts three times.
func RuneCount(p []byte) int {
	s := unsafe.String(unsafe.SliceData(p), len(p))
	if !utf8.ValidString(s) {
		return utf8.RuneCountInString(s)
	}
	return len(p) - continuationBytes(p)
}

// continuationBytes counts the bytes 10xxxxxx of p.
func continuationBytes(p []byte) int {
	const high = 0x8080808080808080
	n := 0
	for len(p) >= 8 {
		w := binary.LittleEndian.Uint64(p)
		// Bit 7 of a byte set, and bit 6 (moved up to bit 7) clear.
		n += bits.OnesCount64(w &^ (w << 1) & high)
		p = p[8:]
	}
	for _, b := range p {
		if b&0xC0 == 0x80 {
			n++
		}
	}
	return n
}

// SumString is sha256.Sum256 of the bytes of s, without a copy of s (the
// content of a file, up to its whole size).
func SumString(s string) [32]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// CountTokensOf is CountTokens of the text p holds, without a copy of p
// (a serialized pack); p must not change during the call.
func CountTokensOf(p []byte) (int, error) {
	return CountTokens(unsafe.String(unsafe.SliceData(p), len(p)))
}
