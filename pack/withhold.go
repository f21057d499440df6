package pack

import "strings"

// Nothing that leaves is a function of a secret (DESIGN.md): the size,
// sha256 and git blob id of a file that holds a secret are each a function
// of its original bytes alone, so anyone holding the pack or its record
// could confirm a guess of a short redacted password offline. For such a
// file every item, its index entry, its ledger row and its diff say why
// instead (original_withheld), and sums of sizes leave its size out.
//
// A file is marked as soon as its secret is known: the whole-file scan
// (prepareContent), a diff scan (changes), a rescan of a region cut from it
// (regionText) or of text derived from it (scanDerived, verify); or when it
// is excluded as credentials (examine). withholdOriginals then clears the
// fields of the finished pack in one pass, so a late mark is honoured too.

// markSecret records that the file at p (either side of a change) holds a
// secret.
func (b *builder) markSecret(p string) {
	if p == "" {
		return
	}
	if e := b.byPath[p]; e != nil {
		e.withheld = WithheldSecret
		return
	}
	if b.secretPaths == nil {
		b.secretPaths = map[string]bool{}
	}
	b.secretPaths[p] = true
}

// withheldOf says why the original of the file at p may not be described,
// "" when it may.
func (b *builder) withheldOf(p string) string {
	if e := b.byPath[p]; e != nil && e.withheld != "" {
		return e.withheld
	}
	if b.secretPaths[p] {
		return WithheldSecret
	}
	return ""
}

// withholdRow clears a ledger row's description of the original.
func withholdRow(row *LedgerRow, why string) {
	row.BytesOriginal, row.SHA256Original, row.Blob, row.OriginalWithheld = nil, "", "", why
}

// withholdOriginals clears, in the finished pack, every field that is a
// function of a withheld file's original bytes alone: items' blob and
// original size, index entries' size, and the blob ids of its diff.
func (b *builder) withholdOriginals(p *Pack) {
	for _, items := range [][]Item{p.KeyFiles, p.Contents} {
		for i := range items {
			if why := b.withheldOf(items[i].Path); why != "" {
				items[i].Blob, items[i].OriginalSizeBytes, items[i].OriginalWithheld = "", nil, why
			}
		}
	}
	for i := range p.FileIndex {
		if why := b.withheldOf(p.FileIndex[i].Path); why != "" && !strings.HasSuffix(p.FileIndex[i].Path, "/") {
			p.FileIndex[i].SizeBytes, p.FileIndex[i].OriginalWithheld = nil, why
		}
	}
	for i := range p.Changes {
		c := &p.Changes[i]
		why := b.withheldOf(c.Path)
		if why == "" && c.OldPath != "" {
			why = b.withheldOf(c.OldPath)
		}
		if why == "" {
			continue
		}
		c.OriginalWithheld = why
		c.Diff, c.Redactions = dropIndexLine(c.Diff, c.Redactions)
	}
}

// dropIndexLine removes the diff's index line and renumbers the
// redactions after it, which are numbered by line of the diff text.
func dropIndexLine(diff string, reds []Redaction) (string, []Redaction) {
	out, line := DropIndexLine(diff)
	if line == 0 || reds == nil {
		return out, reds
	}
	renumbered := make([]Redaction, len(reds))
	for i, r := range reds {
		if r.Line > line {
			r.Line--
		}
		renumbered[i] = r
	}
	return out, renumbered
}

// DropIndexLine removes the "index <old>..<new>" line from a diff's file
// header (git applies a diff without it) and returns the diff and the
// line removed (1-based; 0 when there was none).
func DropIndexLine(diff string) (string, int) {
	header, _ := splitDiff(diff)
	at := 0
	for i, l := range strings.SplitAfter(header, "\n") {
		if strings.HasPrefix(l, "index ") {
			return diff[:at] + diff[at+len(l):], i + 1
		}
		at += len(l)
	}
	return diff, 0
}

// publishedSize is the size of e that sums may count: 0 when withheld.
func (b *builder) publishedSize(e *entry) int64 {
	if b.withheldOf(e.file.Path) != "" {
		return 0
	}
	return e.file.Size
}
