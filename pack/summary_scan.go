package pack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// derivedText is one string of a Summary pack derived from file contents,
// and the file it came from.
type derivedText struct {
	s    *string
	path string
}

// summaryScanPath is the path the secret scanner is given for derived text:
// like the audit, which scans the pack's fields as one document, it is not a
// file path, so no path-based allowlist applies.
const summaryScanPath = "(pack fields)"

// scanDerived secret-scans every derived string (joined, one per line, as
// one document) and redacts what is found in place, rescanning until the
// strings are clean. Findings are recorded as content events of the file
// the string came from. A string that stays dirty is an error: better no
// pack than a leaking one.
func (b *builder) scanDerived(ctx context.Context, items []derivedText) error {
	if len(items) == 0 {
		return nil
	}
	for pass := 0; pass < 4; pass++ {
		var doc strings.Builder
		offsets := make([]int, len(items))
		for i, it := range items {
			offsets[i] = doc.Len()
			doc.WriteString(*it.s)
			doc.WriteByte('\n')
		}
		findings, err := b.textScan()(ctx, summaryScanPath, []byte(doc.String()))
		if err != nil {
			return fmt.Errorf("secret scan of the summary: %w", err)
		}
		if len(findings) == 0 {
			return nil
		}
		spans := map[int][]redactSpan{}
		for _, f := range findings {
			hit := false
			for i := sort.Search(len(offsets), func(i int) bool { return offsets[i] > f.Start }) - 1; i >= 0 && i < len(items) && offsets[i] < f.End; i++ {
				s, e := max(f.Start, offsets[i])-offsets[i], min(f.End, offsets[i]+len(*items[i].s))-offsets[i]
				if s < e {
					spans[i] = append(spans[i], redactSpan{s, e, f.RuleID})
					if !hit {
						ev := b.derivedFinding(f, items[i].path, (*items[i].s)[s:e])
						b.secrets = append(b.secrets, SecretEvent{Finding: ev, Where: "content", Action: SecretRedacted})
						b.markSecret(items[i].path)
						hit = true
					}
				}
			}
		}
		if len(spans) == 0 {
			return errors.New("secret scan of the summary: a finding could not be located in the summary's text")
		}
		for i, sp := range spans {
			*items[i].s, _ = applyRedactions(*items[i].s, sp)
		}
	}
	return errors.New("secret scan of the summary: text still holds secrets after redaction")
}

// verify scans the finished pack the way the audit does — every string of
// the pack except diffs as one document, and every diff cut to fit — and
// redacts what it finds in the summary's own strings. It reports whether
// anything changed (the pack must then be fitted again).
func (sb *summaryBuilder) verify(ctx context.Context, p *Pack) (bool, error) {
	b := sb.b
	changed := false
	// Diffs cut at a hunk boundary are new text: scan them.
	for i, c := range p.Changes {
		if !c.DiffTruncated || sb.noPartial[i] || !strings.HasSuffix(c.Diff, strings.TrimPrefix(TruncationMarker, "\n")) {
			continue
		}
		if sb.changes[i].Diff == c.Diff {
			continue
		}
		findings, err := b.diffScan()(ctx, c.Path, []byte(c.Diff))
		if err != nil {
			return false, fmt.Errorf("secret scan of the diff of %s: %w", c.Path, err)
		}
		if len(findings) > 0 {
			sb.noPartial[i] = true // send it whole (scanned) or not at all
			changed = true
		}
	}
	strs, err := b.auditFields(p)
	if err != nil {
		return false, err
	}
	var doc strings.Builder
	offsets := make([]int, len(strs))
	for i, s := range strs {
		offsets[i] = doc.Len()
		doc.WriteString(s)
		doc.WriteByte('\n')
	}
	findings, err := b.textScan()(ctx, summaryScanPath, []byte(doc.String()))
	if err != nil {
		return false, fmt.Errorf("secret scan of the summary: %w", err)
	}
	if len(findings) == 0 {
		return changed, nil
	}
	// Map each finding to the strings it covers, and redact those among the
	// summary's own strings (every copy of the same value).
	own := sb.derivedStrings()
	byValue := map[string][]int{}
	for i, d := range own {
		byValue[*d.s] = append(byValue[*d.s], i)
	}
	type fix struct {
		value string
		spans []redactSpan
	}
	fixes := map[string]*fix{}
	for _, f := range findings {
		for i := sort.Search(len(offsets), func(i int) bool { return offsets[i] > f.Start }) - 1; i >= 0 && i < len(strs) && offsets[i] < f.End; i++ {
			s, e := max(f.Start, offsets[i])-offsets[i], min(f.End, offsets[i]+len(strs[i]))-offsets[i]
			if s >= e || len(byValue[strs[i]]) == 0 {
				continue
			}
			x := fixes[strs[i]]
			if x == nil {
				x = &fix{value: strs[i]}
				fixes[strs[i]] = x
			}
			x.spans = append(x.spans, redactSpan{s, e, f.RuleID})
		}
	}
	for _, v := range sortedKeys(fixes) {
		x := fixes[v]
		red, _ := applyRedactions(x.value, x.spans)
		for _, i := range byValue[v] {
			*own[i].s = red
			ev := b.derivedFinding(Finding{RuleID: x.spans[0].rule}, own[i].path, v[x.spans[0].start:x.spans[0].end])
			b.secrets = append(b.secrets, SecretEvent{Finding: ev, Where: "content", Action: SecretRedacted})
			b.markSecret(own[i].path)
		}
		changed = true
	}
	return changed, nil
}

// auditFields are the strings of p the audit scans as one document (see
// audit.PackSecrets): p as it will be written — originals withheld,
// finalized — without items and diffs. Scanning exactly that document here
// lets the audit's scan of the written pack be answered by the scan cache
// instead of a second scan of the same text.
func (b *builder) auditFields(p *Pack) ([]string, error) {
	q := *p
	// Clones keep nil apart from empty: the copy must serialize as p will.
	q.FileIndex, q.Changes = slices.Clone(p.FileIndex), slices.Clone(p.Changes)
	q.KeyFiles, q.Contents = slices.Clone(p.KeyFiles), slices.Clone(p.Contents)
	b.withholdOriginals(&q) // what result does to p: on the copies only
	if _, err := b.finalize(&q); err != nil {
		return nil, err
	}
	q.KeyFiles, q.Contents = nil, nil
	for i := range q.Changes {
		q.Changes[i].Diff = ""
	}
	return Strings(&q), nil
}

// Strings lists every string value of v in JSON document order with object
// keys sorted: the order in which the audit scans a pack's other fields.
func Strings(v any) []string {
	// A pack's document is walked in parts, an element of its arrays at a
	// time: a full tree of 100,000 files made a 36 MB document of its
	// index at once, at the audit's peak of memory.
	if p, ok := v.(*Pack); ok && p != nil {
		if out, err := packStrings(p); err == nil {
			return out
		}
	}
	// Document is the decode of the serialization, without serializing
	// (the file index of a large pack is MBs); what it does not cover is
	// serialized and decoded.
	tree, err := Document(v)
	if err != nil {
		data, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		if err := json.Unmarshal(data, &tree); err != nil {
			return nil
		}
	}
	return appendStrings(nil, tree)
}

// packStrings is Strings(p) from DocumentParts(p): the top level's members
// in key order, each array's elements made one at a time.
func packStrings(p *Pack) ([]string, error) {
	top, lens, element, err := DocumentParts(p)
	if err != nil {
		return nil, err
	}
	keys := slices.Concat(slices.Collect(maps.Keys(top)), slices.Collect(maps.Keys(lens)))
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		n, ok := lens[k]
		if !ok {
			out = appendStrings(out, top[k])
			continue
		}
		for i := range n {
			e, err := element(k, i)
			if err != nil {
				return nil, err
			}
			out = appendStrings(out, e)
		}
	}
	return out, nil
}

// appendStrings appends the strings of a decoded JSON document to out in
// document order, object keys sorted.
func appendStrings(out []string, tree any) []string {
	var walk func(any)
	walk = func(n any) {
		switch t := n.(type) {
		case string:
			out = append(out, t)
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(t[k])
			}
		}
	}
	walk(tree)
	return out
}
