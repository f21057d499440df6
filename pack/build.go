package pack

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"github.com/ctxpack/ctxpack/internal/workers"
	"github.com/ctxpack/ctxpack/lang"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/go-git/go-git/v5/plumbing"
)

// Key-file limits of seed 000.
const (
	KeyFilesPerCategory = 5
	KeyFilesTotal       = 25
	KeyFileMaxBytes     = 50000
)

// hardFileCap is the size above which a file is not read at all.
const hardFileCap = 10 << 20

// Options configure Build.
type Options struct {
	Policy *policy.Policy
	// Scanner finds secrets in everything that would leave. Required: a pack is
	// never built unscanned.
	Scanner SecretScanner
	// Sensitive matches credential files by path (audit.SensitiveFile).
	Sensitive func(path string) (signature string, ok bool)
	// Related orders the files the changed files import; nil means the
	// builder's own import graph (imports.go) over the packable files.
	Related func(changed []string) []string
	// ToolVersion is stamped in the metadata.
	ToolVersion string
}

// Result is a built pack with what the transparency record needs.
type Result struct {
	Pack *Pack
	// JSON is the canonical serialization: what is written and sent.
	JSON []byte
	// Ledger has one row per file of the snapshot, by path.
	Ledger []LedgerRow
	// Secrets are the findings in what would have left, with what was done.
	Secrets []SecretEvent
	// Notes are manifest parse problems and other non-fatal observations.
	Notes []string
	// Added are the files of the head tree the builder read beyond the
	// snapshot's (the relations of a change), which the pack lists too.
	Added []File
}

// LedgerRow accounts for one file of the snapshot.
type LedgerRow struct {
	Path     string `json:"path"`
	Included bool   `json:"included"`
	Reason   Reason `json:"reason,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Role     string `json:"role,omitempty"`
	// BytesOriginal, SHA256Original and Blob describe the original file;
	// all three are absent when OriginalWithheld is set.
	BytesOriginal    *int64   `json:"bytes_original,omitempty"`
	BytesSent        int64    `json:"bytes_sent"`
	SHA256Original   string   `json:"sha256_original,omitempty"`
	SHA256Sent       string   `json:"sha256_sent,omitempty"`
	Blob             string   `json:"blob,omitempty"`
	OriginalWithheld string   `json:"original_withheld,omitempty"`
	Truncated        bool     `json:"truncated"`
	Redactions       int      `json:"redactions"`
	RuleIDs          []string `json:"rule_ids"`
}

// Secret actions recorded in events.
const (
	SecretRedacted = "redacted"
	SecretExcluded = "excluded"
	SecretFailed   = "failed"
)

// SecretEvent is a finding in content or a diff that would have left.
type SecretEvent struct {
	Finding
	// Where is "content" or "diff".
	Where  string `json:"where"`
	Action string `json:"action"`
}

// entry is the working state of one snapshot file.
type entry struct {
	file       *File
	index      IndexEntry
	row        LedgerRow
	original   string // decoded text
	analysis   string // the whole text with secrets redacted: what extractors read
	sent       string
	encoding   string
	truncated  bool
	redactions []Redaction
	importance string
	role       string
	key        bool
	// events and notes are collected per file (files are examined in
	// parallel) and merged in path order.
	events []SecretEvent
	notes  []string
	// findings are the secrets of the whole original text (byte spans), for
	// redacting regions cut from it.
	findings []Finding
	// lineStarts indexes the original text by line (regionText).
	lineStarts []int
	// sentParts are the texts of a change pack's items of this file.
	sentParts []string
	// budgetCut marks a size_limit reason set by the change budget.
	budgetCut bool
	// fromTree marks a file read from the head tree beyond the snapshot.
	fromTree bool
	// size is the original's size in bytes.
	size int64
	// originalSum is the SHA-256 of original when original is the file's
	// bytes as read (UTF-8, nothing replaced): the digest examine takes of
	// the file, which an item sending the whole text reuses.
	originalSum *[32]byte
	// withheld says why the original's size, digest and blob id may not
	// leave (WithheldSecret, WithheldCredentials); see withhold.go.
	withheld string
	// pending: read and classified, not yet secret-scanned (a change pack
	// scans a file when it may use it; see scanEntry).
	pending bool
	// scanned: the whole file was secret-scanned (prepareContent).
	scanned bool
	// sentUnchecked: sent has the findings of the scan redacted but was
	// not rescanned yet (a change pack's; see checkSent).
	sentUnchecked bool
}

// Build turns a snapshot into a Full or Summary pack under the policy: the
// type is selected by Select (seed 000's PackSelector), and the reason is
// recorded in metadata.selection_reason. First it replaces, in snap itself,
// every file name that holds a secret (RedactNames), so the stages after it
// (history scan, audit, record) see only redacted names too.
func Build(ctx context.Context, snap *Snapshot, opts Options) (*Result, error) {
	if opts.Policy == nil {
		opts.Policy = policy.Default()
	}
	if opts.Scanner == nil {
		return nil, errors.New("build pack: no secret scanner: a pack is never built unscanned")
	}
	b := &builder{snap: snap, opts: opts, pol: opts.Policy}
	b.changePack = len(snap.Changes) > 0 && b.pol.Pack.Type != policy.TypeSummary
	// Under secrets.action exclude or fail a scan decides what is listed
	// (credentials) and whether the pack fails, for every listed file: then
	// every file is scanned as it is read.
	b.lazyScan = b.changePack && b.secretAction() == SecretRedacted
	return b.build(ctx)
}

type builder struct {
	snap    *Snapshot
	opts    Options
	pol     *policy.Policy
	exclude *Excluder
	entries []*entry
	secrets []SecretEvent
	notes   []string
	// diffBytes is the size of the diffs sent, charged to the content budget first.
	diffBytes int64
	// selection is the chosen pack type and why.
	selection Selection
	byPath    map[string]*entry
	// facts, resolver: the language facts and import resolver (imports.go).
	facts    map[string]*lang.Facts
	resolver *lang.Resolver
	// rawFacts are the facts of files read and not yet scanned, extracted
	// only to tell whether they define a name (relationFinder.mayDefine).
	rawFacts map[string]*lang.Facts
	// imports are the imports of files whose items name them and whose
	// facts nothing else needs (importsOf).
	imports map[string][]string
	// ahead holds the files the relations' callee lookup reads, read on
	// the other cores while it runs (see factsAhead).
	ahead *factsAhead
	// ignore are the .ctxpackignore texts read (nil: looked up, absent).
	ignore map[string][]byte
	// added are the files taken from the head tree beyond the snapshot's.
	added []File
	// changed are the paths a change pack changes (not deleted).
	changed map[string]bool
	// intent is the pack's intent, bounded and scanned (nil: none).
	intent *Intent
	// changePack: the snapshot has changes and no Summary is asked for, so
	// the pack is a change pack (change.go).
	changePack bool
	// lazyScan: files are secret-scanned when the pack may use them
	// (scanEntry), not when they are read: a change pack sends a few of the
	// files it lists, and scanning the rest (unchanged boilerplate, files
	// read only to look for a relation) was most of a small change's cost.
	lazyScan bool
	// redactedNames are the names RedactNames replaced (names.go).
	redactedNames map[string]bool
	// secretPaths are paths without an entry (a deleted or renamed file's)
	// whose diff holds a secret (withhold.go).
	secretPaths map[string]bool
	// sides are the scanned versions each change's diff shows, by path
	// (scanChangeSides).
	sides map[string]*changeSides
}

func (b *builder) build(ctx context.Context) (*Result, error) {
	if err := b.redactNames(ctx); err != nil {
		return nil, err
	}
	if err := b.redactSource(ctx); err != nil {
		return nil, err
	}
	if err := b.readIgnoreFiles(ctx); err != nil {
		return nil, err
	}
	if err := b.examineAll(ctx); err != nil {
		return nil, err
	}
	if b.opts.Related == nil {
		b.opts.Related = b.relatedByImports
	}
	// A change is packed for review: its diff, the code around it and its
	// intent, within a token budget (change.go). A pack without changes (a
	// clean work tree, a plain directory) packs the tree as it is.
	changePack := b.changePack
	readable := make(map[string]bool, len(b.entries))
	for _, e := range b.entries {
		// Manifests are read only when their content could leave anyway.
		readable[e.file.Path] = e.row.Reason == "" || e.row.Reason == ReasonSizeLimit
	}
	manifest, notes, err := b.buildManifest(ctx, readable)
	if err != nil {
		return nil, err
	}
	b.notes = append(b.notes, notes...)
	if err := b.scanManifest(ctx, &manifest); err != nil {
		return nil, err
	}
	if b.intent, err = b.buildIntent(ctx); err != nil {
		return nil, err
	}
	listed, secretsBefore := append([]*entry(nil), b.entries...), len(b.secrets)
	changes, diffBytes, err := b.changes(ctx, !changePack)
	if err != nil {
		return nil, err
	}
	b.diffBytes = diffBytes
	if changePack {
		p, err := b.buildChange(ctx, changes, manifest)
		var over *listingTooLarge
		if errors.As(err, &over) {
			// Start the Summary pack afresh from the listed files: what the
			// change pack read and scanned beyond them is not sent.
			b.selection = Selection{Type: policy.TypeSummary, Reason: over.reason}
			b.entries, b.secrets, b.added = listed, b.secrets[:secretsBefore], nil
			b.byPath = map[string]*entry{}
			for _, e := range b.entries {
				b.byPath[e.file.Path] = e
			}
			// A Summary pack describes every listed file: scan them all.
			if err := b.scanEntries(ctx, b.entries); err != nil {
				return nil, err
			}
			b.resetForSummary()
			for _, e := range b.entries { // a Summary pack reports every file's
				b.secrets = append(b.secrets, e.events...)
			}
			changes, _, err := b.changes(ctx, true)
			if err != nil {
				return nil, err
			}
			if p, err = b.buildSummary(ctx, changes, manifest); err != nil {
				return nil, err
			}
			return b.result(p)
		}
		if err != nil {
			return nil, err
		}
		return b.result(p)
	}

	var full *Pack
	var ordered []*entry
	buildFull := func() *Pack {
		if full == nil {
			ordered = b.prioritize()
			b.allocate(ordered, b.pol.Limits.MaxContentBytes-b.diffBytes)
			full = &Pack{
				SchemaVersion: SchemaVersion,
				Type:          policy.TypeFull,
				Source:        b.snap.Source,
				Intent:        b.intent,
				Manifest:      manifest,
				Changes:       changes,
				KeyFiles:      []KeyFile{},
				Contents:      []Item{},
			}
			b.fill(full, ordered)
		}
		return full
	}
	est := Estimate{ContentBytes: diffBytes, Chars: func() (int, error) {
		b.selection.Reason = strings.Repeat("x", 240) // room for the final reason
		_, chars, err := measure(buildFull())
		return chars, err
	}}
	for _, e := range b.entries {
		if e.row.Reason == "" {
			est.ContentBytes += int64(len(e.sent))
			est.Files++
		}
	}
	if b.selection, err = Select(ConstraintsOf(b.pol), est); err != nil {
		return nil, err
	}
	var p *Pack
	if b.selection.Type == policy.TypeSummary {
		if p, err = b.buildSummary(ctx, changes, manifest); err != nil {
			return nil, err
		}
	} else {
		p = buildFull()
		p.Metadata.SelectionReason = b.selection.Reason
		if err := b.fitTier(p, ordered); err != nil {
			return nil, err
		}
	}
	return b.result(p)
}

// finalize is Finalize with the token counts the scanner remembers
// (TokenCounts), when it does.
func (b *builder) finalize(p *Pack) ([]byte, error) {
	data, _, err := b.finalizeCounted(p)
	return data, err
}

// finalizeCounted is finalize that also returns the tokens of the bytes
// (finalizeCounted).
func (b *builder) finalizeCounted(p *Pack) ([]byte, int, error) {
	counts, _ := b.opts.Scanner.(TokenCounts)
	return finalizeCounted(p, counts)
}

// result finalizes the pack and collects the ledger.
func (b *builder) result(p *Pack) (*Result, error) {
	b.withholdOriginals(p)
	data, err := b.finalize(p)
	if err != nil {
		return nil, err
	}
	res := &Result{Pack: p, JSON: data, Secrets: b.secrets, Notes: b.notes}
	for _, e := range b.listedEntries() {
		row := e.row
		if why := b.withheldOf(e.file.Path); why != "" {
			withholdRow(&row, why)
		} else if !e.scanned {
			// Never secret-scanned (excluded by path, binary, or listed
			// by a change pack that did not use it): a digest of it could
			// confirm a guess of a secret it holds, so none is described.
			row.SHA256Original, row.Blob = "", ""
		}
		res.Ledger = append(res.Ledger, row)
		if e.fromTree {
			res.Added = append(res.Added, *e.file)
		}
	}
	return res, nil
}

// listedEntries are the files the pack describes: the snapshot's, and those
// of the head tree a change pack sends (a file read only to look for a
// relation, and not sent, was never part of what the pack describes).
func (b *builder) listedEntries() []*entry {
	out := make([]*entry, 0, len(b.entries))
	for _, e := range b.entries {
		if !e.fromTree || e.row.Included {
			out = append(out, e)
		}
	}
	return out
}

// examineAll reads, classifies and scans every file of the snapshot.
// Each file is independent: the work is spread over the cores, then merged
// in path order so the result stays deterministic.
func (b *builder) examineAll(ctx context.Context) error {
	b.entries = make([]*entry, len(b.snap.Files))
	// The changed files are scanned as they are read, and read first: their
	// scans then run beside the reading of the rest, not after it.
	changed := make(map[string]bool, len(b.snap.Changes))
	for _, c := range b.snap.Changes {
		changed[c.Path] = true
	}
	order := make([]int, 0, len(b.snap.Files))
	for i := range b.snap.Files {
		if changed[b.snap.Files[i].Path] {
			order = append(order, i)
		}
	}
	for i := range b.snap.Files {
		if !changed[b.snap.Files[i].Path] {
			order = append(order, i)
		}
	}
	err := workers.Each(ctx, len(order), runtime.NumCPU(), func(ctx context.Context, k int) error {
		i := order[k]
		f := &b.snap.Files[i]
		e, err := b.examine(ctx, f, b.lazyScan && !changed[f.Path])
		b.entries[i] = e
		return err
	})
	if err != nil {
		return err
	}
	for _, e := range b.entries {
		if !b.changePack { // a change pack reports what it uses (contentEvents)
			b.secrets = append(b.secrets, e.events...)
		}
		b.notes = append(b.notes, e.notes...)
	}
	b.byPath = make(map[string]*entry, len(b.entries))
	for _, e := range b.entries {
		b.byPath[e.file.Path] = e
	}
	return nil
}

func (b *builder) readIgnoreFiles(ctx context.Context) error {
	sources, err := IgnoreSources(ctx, b.snap.Files)
	if err != nil {
		return err
	}
	b.ignore = map[string][]byte{}
	for p, data := range sources {
		b.ignore[p] = data
	}
	b.exclude = NewExcluder(b.pol, b.opts.Sensitive, sources)
	return nil
}

// examine classifies a file and decides whether it is a content candidate;
// lazy leaves a candidate's scan pending (lazyScan).
func (b *builder) examine(ctx context.Context, f *File, lazy bool) (*entry, error) {
	typ := typeByName(f.Path)
	e := &entry{file: f, size: f.Size}
	e.row = LedgerRow{Path: f.Path, Blob: f.Blob, RuleIDs: []string{}}
	exclude := func(r Reason, detail string) {
		e.row.Reason, e.row.Detail = r, detail
	}
	switch {
	case f.Mode == ModeSymlink:
		exclude(ReasonSymlink, "symlinks are never followed")
	case f.Mode == ModeSubmodule:
		exclude(ReasonSubmodule, "submodule content is not part of this repository")
	case b.nameWithheld(f.Path):
		exclude(ReasonCredentials, "secret in the file name")
	default:
		if r, d := b.exclude.Reason(f.Path); r != "" {
			exclude(r, d)
		} else if f.Size > hardFileCap {
			exclude(ReasonSizeLimit, fmt.Sprintf("%d bytes is over the %d-byte read cap", f.Size, hardFileCap))
		} else if f.Read == nil {
			exclude(ReasonBinary, "not a regular file")
		}
	}
	var data []byte
	if e.row.Reason == "" {
		var err error
		data, err = f.Read(ctx)
		var unavailable *Unavailable
		if errors.As(err, &unavailable) {
			exclude(unavailable.Reason, unavailable.Detail)
		} else if err != nil {
			return nil, fmt.Errorf("read %s: %w", f.Path, err)
		}
	}
	if e.row.Reason == "" {
		sum := sha256.Sum256(data)
		e.row.SHA256Original = hex.EncodeToString(sum[:])
		e.size = int64(len(data))
		if e.row.Blob == "" {
			e.row.Blob = plumbing.ComputeHash(plumbing.BlobObject, data).String()
		}
		binary, enc := sniff(data)
		if binary {
			if typ != TypeImage {
				typ = TypeBinary
			}
			exclude(ReasonBinary, "binary content (NUL or control bytes in the first 8 KiB)")
		} else {
			if typ == TypeImage || typ == TypeBinary { // named like a binary, reads as text
				typ = TypeText
			}
			text, err := decode(data, enc)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
			e.original, e.encoding = text, enc
			if text == string(data) {
				e.originalSum = &sum
			}
		}
	}
	cat, importance := classify(f.Path, typ)
	e.importance = importance
	e.row.BytesOriginal = new(e.size)
	e.index = IndexEntry{Path: f.Path, Type: typ, Category: cat, SizeBytes: new(e.size)}
	switch e.row.Reason {
	case ReasonCredentials:
		e.withheld = WithheldCredentials
	case ReasonSymlink:
		e.withheld = WithheldSymlink
	}
	if e.row.Reason != "" {
		return e, nil
	}
	if e.encoding != EncUTF8 {
		e.notes = append(e.notes, fmt.Sprintf("%s: decoded from %s", e.file.Path, e.encoding))
	}
	if lazy {
		e.pending = true
		return e, nil
	}
	if err := b.prepareContent(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// scanEntry secret-scans a file read but not yet scanned (lazyScan). Every
// use of a file's text beyond reading and classifying it (facts, regions,
// items) comes after its scan.
func (b *builder) scanEntry(ctx context.Context, e *entry) error {
	if e == nil || !e.pending {
		return nil
	}
	e.pending = false
	return b.prepareContent(ctx, e)
}

// scanEntries scans the pending entries of es, spread over the cores.
func (b *builder) scanEntries(ctx context.Context, es []*entry) error {
	var pending []*entry
	for _, e := range es {
		if e != nil && e.pending {
			e.pending = false
			pending = append(pending, e)
		}
	}
	return workers.Each(ctx, len(pending), runtime.NumCPU(), func(ctx context.Context, i int) error {
		return b.prepareContent(ctx, pending[i])
	})
}

// truncated is the text of e its item starts from, before redaction:
// e.original cut to the file's byte limit.
func (b *builder) truncated(e *entry) (string, []span, bool) {
	l := b.pol.Limits
	maxBytes := l.MaxFileBytes
	if e.importance != "" && maxBytes > KeyFileMaxBytes {
		maxBytes = KeyFileMaxBytes
	}
	return truncate(e.original, maxBytes, l.PreserveHeadLines, l.PreserveTailLines)
}

// prepareContent truncates a candidate and applies the secret policy.
func (b *builder) prepareContent(ctx context.Context, e *entry) error {
	text, kept, truncated := b.truncated(e)
	// The text's own bytes (a scanner never changes what it reads), with
	// their digest where the file's bytes are the text.
	content := unsafe.Slice(unsafe.StringData(e.original), len(e.original))
	findings, err := ScanWithSum(ctx, b.opts.Scanner, e.file.Path, content, e.originalSum)
	if err != nil {
		return fmt.Errorf("secret scan of %s: %w", e.file.Path, err)
	}
	e.scanned = true
	var spans, whole []redactSpan
	var sentFindings []Finding // a finding in lines truncation cut away was never sent
	for _, f := range findings {
		ms := mapSpan(kept, f.Start, f.End)
		for _, s := range ms {
			spans = append(spans, redactSpan{s.start, s.end, f.RuleID})
		}
		// A change pack may send any lines of a file as regions: every
		// finding counts.
		if len(ms) > 0 || b.changePack {
			sentFindings = append(sentFindings, f)
		}
		whole = append(whole, redactSpan{f.Start, f.End, f.RuleID})
	}
	e.analysis = e.original
	if len(whole) > 0 {
		e.analysis, _ = applyRedactions(e.original, whole)
	}
	var sent string
	var reds redactions
	if b.lazyScan && len(spans) > 0 {
		// As it scans a file when it may use it (lazyScan), a change pack
		// rescans the file's redacted whole text when it first sends it
		// whole (checkSent): most files with a secret it reads never are,
		// and their regions are rescanned as they are cut. A README
		// holding a token in an example was a third of a range's scan.
		sent, reds.list = applyRedactions(text, spans)
		sortRedactions(reds.list)
		e.sentUnchecked = true
	} else if sent, reds, err = b.redactAll(ctx, e.file.Path, text, spans); err != nil {
		return err
	}
	all := append(sentFindings, reds.extra...)
	if len(findings) > 0 || len(reds.extra) > 0 {
		// The original holds a secret, sent or not (truncated away).
		e.withheld = WithheldSecret
	}
	if len(all) > 0 {
		action := b.secretAction()
		for _, f := range all {
			f.Path = e.file.Path
			e.events = append(e.events, SecretEvent{Finding: f, Where: "content", Action: action})
		}
		if action != SecretRedacted {
			e.row.Reason = ReasonCredentials
			e.row.Detail = "secret found: " + strings.Join(ruleIDs(all), ", ")
			e.row.RuleIDs = ruleIDs(all)
			return nil
		}
	}
	e.sent, e.truncated, e.redactions = sent, truncated, reds.list
	e.findings = findings
	e.row.Truncated = truncated
	e.row.Redactions = len(reds.list)
	e.row.RuleIDs = ruleIDs(all)
	return nil
}

// checkSent finishes the secret policy on a change pack's whole text of
// e, which prepareContent redacted without the rescan (sentUnchecked):
// what the rescan finds is redacted and reported like what the first scan
// found.
func (b *builder) checkSent(ctx context.Context, e *entry) error {
	if !e.sentUnchecked {
		return nil
	}
	e.sentUnchecked = false
	sent, reds, err := rescanRedacted(ctx, b.opts.Scanner.Scan, e.file.Path, e.sent, redactions{list: e.redactions})
	if err != nil {
		return err
	}
	for _, f := range reds.extra {
		f.Path = e.file.Path
		e.events = append(e.events, SecretEvent{Finding: f, Where: "content", Action: SecretRedacted})
	}
	e.sent, e.redactions = sent, reds.list
	e.row.Redactions = len(reds.list)
	e.row.RuleIDs = ruleIDs(append(append([]Finding{}, e.findings...), reds.extra...))
	return nil
}

func (b *builder) secretAction() string {
	switch b.pol.Secrets.Action {
	case policy.ActionExclude:
		return SecretExcluded
	case policy.ActionFail:
		return SecretFailed
	}
	return SecretRedacted
}

type redactSpan struct {
	start, end int
	rule       string
}

type redactions struct {
	list  []Redaction
	extra []Finding // found only in the redacted text (a second pass)
}

// redactAll replaces spans with [REDACTED:<rule>] and rescans the result until
// it is clean. A text that stays dirty after three passes is an error: better
// no pack than a leaking one.
func (b *builder) redactAll(ctx context.Context, p, text string, spans []redactSpan) (string, redactions, error) {
	return b.redactAllWith(ctx, b.opts.Scanner.Scan, p, text, spans)
}

// redactAllWith is redactAll rescanning with scan (a diff's scan for a diff).
func (b *builder) redactAllWith(ctx context.Context, scan func(context.Context, string, []byte) ([]Finding, error), p, text string, spans []redactSpan) (string, redactions, error) {
	if len(spans) == 0 {
		return text, redactions{}, nil // the original scan found nothing; the truncated text is a subset
	}
	text, reds := applyRedactions(text, spans)
	return rescanRedacted(ctx, scan, p, text, redactions{list: reds})
}

// rescanRedacted scans text, in which out.list's redactions are made,
// redacting what each scan finds, until a scan finds nothing: three scans
// at most.
func rescanRedacted(ctx context.Context, scan func(context.Context, string, []byte) ([]Finding, error), p, text string, out redactions) (string, redactions, error) {
	var spans []redactSpan
	for pass := 0; pass < 3; pass++ {
		if pass > 0 {
			var reds []Redaction
			text, reds = applyRedactions(text, spans)
			out.list = append(out.list, reds...)
		}
		again, err := scan(ctx, p, []byte(text))
		if err != nil {
			return "", out, fmt.Errorf("secret scan of %s: %w", p, err)
		}
		if len(again) == 0 {
			sortRedactions(out.list)
			return text, out, nil
		}
		spans = spans[:0]
		for _, f := range again {
			spans = append(spans, redactSpan{f.Start, f.End, f.RuleID})
			out.extra = append(out.extra, f)
		}
	}
	return "", out, fmt.Errorf("secret scan of %s: content still holds secrets after redaction", p)
}

// applyRedactions replaces the (merged) spans, last first, and reports each
// replacement's line in the resulting text.
func applyRedactions(text string, spans []redactSpan) (string, []Redaction) {
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	var merged []redactSpan
	for _, s := range spans {
		if s.start < 0 || s.end > len(text) || s.start >= s.end {
			continue
		}
		if n := len(merged); n > 0 && s.start < merged[n-1].end {
			if s.end > merged[n-1].end {
				merged[n-1].end = s.end
			}
			continue
		}
		merged = append(merged, s)
	}
	var sb strings.Builder
	var reds []Redaction
	last := 0
	for _, s := range merged {
		sb.WriteString(text[last:s.start])
		reds = append(reds, Redaction{Line: strings.Count(sb.String(), "\n") + 1, RuleID: s.rule})
		sb.WriteString("[REDACTED:" + s.rule + "]")
		last = s.end
	}
	sb.WriteString(text[last:])
	return sb.String(), reds
}

func sortRedactions(r []Redaction) {
	sort.Slice(r, func(i, j int) bool {
		if r[i].Line != r[j].Line {
			return r[i].Line < r[j].Line
		}
		return r[i].RuleID < r[j].RuleID
	})
}

func ruleIDs(fs []Finding) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, f := range fs {
		if !seen[f.RuleID] {
			seen[f.RuleID] = true
			out = append(out, f.RuleID)
		}
	}
	sort.Strings(out)
	return out
}

// buildManifest derives the manifest (package lang) from the texts of the
// readable files with their secrets redacted: lang cleans and caps what it
// takes from a README or a manifest file, and a cut inside a secret would
// leave a part that no scan of the result, nor the audit, recognises. A
// file not scanned yet is scanned first, as any use of its text is
// (scanEntry); a text lang is about to cap is scanned whole first.
func (b *builder) buildManifest(ctx context.Context, readable map[string]bool) (Manifest, []string, error) {
	var failed error
	files := langFiles(b.snap.Files)
	for i := range files {
		p := files[i].Path
		files[i].Text = func(ctx context.Context) ([]byte, error) {
			e := b.byPath[p]
			if e == nil {
				return nil, lang.ErrExcluded
			}
			if err := b.scanEntry(ctx, e); err != nil {
				failed = cmp.Or(failed, err)
				return nil, err
			}
			if e.row.Reason != "" || !e.scanned {
				return nil, lang.ErrExcluded // its scan excluded it, or it was never read
			}
			return []byte(e.analysis), nil
		}
	}
	redact := func(ctx context.Context, text string) (string, error) {
		out, err := b.redactManifestText(ctx, text)
		failed = cmp.Or(failed, err)
		return out, err
	}
	m, notes := lang.BuildManifest(ctx, b.snap.Source.Repository, files, func(p string) bool { return readable[p] }, redact)
	if failed != nil {
		return Manifest{}, nil, failed
	}
	return m, notes, nil
}

// scanManifest redacts secrets in the manifest's strings: they come from file
// contents (README, manifests) and leave like any content.
func (b *builder) scanManifest(ctx context.Context, m *Manifest) error {
	fields := []*string{&m.ProjectName, &m.ProjectType, &m.PurposeGuess, &m.StructureSummary, &m.BuildSystem, &m.TestFramework}
	for i := range m.Dependencies {
		fields = append(fields, &m.Dependencies[i].Name, &m.Dependencies[i].Version)
	}
	for i := range m.EntryPoints {
		fields = append(fields, &m.EntryPoints[i])
	}
	for _, f := range fields {
		if *f == "" {
			continue
		}
		text, err := b.redactManifestText(ctx, *f)
		if err != nil {
			return err
		}
		*f = text
	}
	return nil
}

// redactManifestText replaces the secrets of one text of the manifest,
// reporting each.
func (b *builder) redactManifestText(ctx context.Context, text string) (string, error) {
	out, _, err := b.redactText(ctx, "manifest", "(manifest)", text, SecretRedacted)
	if err != nil {
		return "", fmt.Errorf("secret scan of the manifest: %w", err)
	}
	return out, nil
}

// redactText replaces the secrets of a text that is no file (the intent,
// the manifest: scanned as text, honouring no gitleaks:allow), rescanning
// what the redaction makes as any redaction does, and reports each finding
// as an event of where, under path, with action. It returns the text and
// its redactions.
func (b *builder) redactText(ctx context.Context, where, path, text, action string) (string, []Redaction, error) {
	scan := b.textScan()
	doc := "(" + where + ")"
	findings, err := scan(ctx, doc, []byte(text))
	if err != nil || len(findings) == 0 {
		return text, nil, err
	}
	var spans []redactSpan
	for _, x := range findings {
		spans = append(spans, redactSpan{x.Start, x.End, x.RuleID})
	}
	out, reds, err := b.redactAllWith(ctx, scan, doc, text, spans)
	if err != nil {
		return "", nil, err
	}
	for _, x := range append(findings, reds.extra...) {
		x.Path = path
		b.secrets = append(b.secrets, SecretEvent{Finding: x, Where: where, Action: action})
	}
	return out, reds.list, nil
}

// resetForSummary undoes what a change pack's budget decided about files, so
// a Summary pack starts from the exclusion rules alone.
func (b *builder) resetForSummary() {
	for _, e := range b.entries {
		if e.row.Reason == ReasonDiffOnly || e.row.Reason == ReasonBoilerplate || e.budgetCut {
			e.row.Reason, e.row.Detail, e.budgetCut = "", "", false
		}
		e.row.Included, e.key = false, false
	}
}
