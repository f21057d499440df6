package pack

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"github.com/ctxpack/ctxpack/internal/workers"
	"github.com/ctxpack/ctxpack/lang"
	"github.com/ctxpack/ctxpack/policy"
)

// maxRelatedSummaries bounds the summaries of files the changed files import.
const maxRelatedSummaries = 10

// summaryBuilder holds the working state of a Summary pack (seed 000's
// SummaryPackBuilder): facts of every packable file, the import graph, and
// the optional parts in priority order.
type summaryBuilder struct {
	b        *builder
	manifest Manifest
	changes  []Change
	// paths are the packable files (not excluded by any rule), in snapshot order.
	paths    []string
	entries  map[string]*entry
	facts    map[string]*lang.Facts
	resolver *lang.Resolver
	graph    *lang.Graph
	changed  map[string]bool
	// kinds caches notCode per path (see kind).
	kinds map[string]string

	units []*sumUnit
	repo  *RepoSummary
	// hunks are the diff hunks of each change (index of changes).
	hunks map[int][]string
	// noPartial marks changes whose diff may only be sent whole.
	noPartial map[int]bool
	// base is the pack without the optional parts, index and metadata complete.
	base Pack
}

// Unit kinds, in priority order.
const (
	unitChanged    = "changed"
	unitDiff       = "diff"
	unitEntrypoint = "entrypoint"
	unitKey        = "key"
	unitHotspot    = "hotspot"
	unitRelated    = "related"
)

// sumUnit is one optional part of a Summary pack: a file summary, a diff
// hunk, an entrypoint or a risk hotspot. Units are kept in priority order
// while they fit; the rest are dropped and counted.
type sumUnit struct {
	kind   string
	path   string
	file   *KeyFileSummary
	entry  *Entrypoint
	hot    *RiskHotspot
	change int // diff: index into changes
	hunk   int // diff: hunk index
}

// extractAll derives the facts of the packable files, in parallel.
func (b *builder) extractAll(paths []string) {
	if b.facts == nil {
		b.facts = map[string]*lang.Facts{}
	}
	var todo []*entry
	for _, p := range paths {
		if _, ok := b.facts[p]; ok {
			continue
		}
		e := b.byPath[p]
		if f, ok := b.rawFacts[p]; ok && sameText(e.analysis, e.original) {
			b.facts[p] = f // the scan redacted nothing: the facts of the text read
			continue
		}
		todo = append(todo, e)
	}
	for i, f := range analyseAll(todo, lang.Extract) {
		b.facts[todo[i].file.Path] = f
	}
}

// analyseAll is derive of each entry's path and analysis text, in order,
// on up to 8 cores.
func analyseAll[T any](todo []*entry, derive func(p, text string) T) []T {
	out := make([]T, len(todo))
	_ = workers.Each(context.Background(), len(todo), min(runtime.GOMAXPROCS(0), 8), func(_ context.Context, i int) error {
		out[i] = derive(todo[i].file.Path, todo[i].analysis)
		return nil
	})
	return out
}

// importsOf is factsOf(p).Imports, the imports a pack item of p names,
// without deriving the rest of its facts when they are not derived yet
// (lang.Imports): a change pack's items are often files the change
// imports or calls, whose facts nothing else reads. Called from one
// goroutine, or after importsAll derived p's.
func (b *builder) importsOf(p string) []string {
	if f, ok := b.facts[p]; ok {
		if f == nil {
			return nil
		}
		return f.Imports
	}
	if imps, ok := b.imports[p]; ok {
		return imps
	}
	b.importsAll([]string{p})
	return b.imports[p]
}

// importsAll derives, in parallel, the imports importsOf gives of paths
// whose facts are not derived: none for a file without facts (excluded,
// or not scanned yet), as factsOf; a file's raw facts' when they are of
// the text it is analysed by.
func (b *builder) importsAll(paths []string) {
	if b.imports == nil {
		b.imports = map[string][]string{}
	}
	var todo []*entry
	for _, p := range paths {
		if _, ok := b.facts[p]; ok {
			continue
		}
		if _, ok := b.imports[p]; ok {
			continue
		}
		e := b.byPath[p]
		if e == nil || e.row.Reason != "" || e.pending {
			continue // none yet: a pending file's text is not read before its scan
		}
		if f, ok := b.rawFacts[p]; ok && sameText(e.analysis, e.original) {
			b.imports[p] = f.Imports
			continue
		}
		todo = append(todo, e)
	}
	for i, imps := range analyseAll(todo, lang.Imports) {
		b.imports[todo[i].file.Path] = imps
	}
}

// sameText reports whether a and b are one string in memory (the analysis
// text of a file whose scan redacted nothing is its original, not a copy).
func sameText(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// candidates are the paths of the files no rule excludes, in snapshot order.
func (b *builder) candidatePaths() []string {
	var out []string
	for _, e := range b.entries {
		if e.row.Reason == "" {
			out = append(out, e.file.Path)
		}
	}
	return out
}

// factsOf returns the facts of a packable file (nil for an excluded one).
func (b *builder) factsOf(p string) *lang.Facts {
	if f, ok := b.facts[p]; ok {
		return f
	}
	e := b.byPath[p]
	if e == nil || e.row.Reason != "" || e.pending {
		return nil // a pending file's text is not read before its scan (scanEntry)
	}
	b.extractAll([]string{p})
	return b.facts[p]
}

// resolverOf builds (once) the import resolver over the packable files.
func (b *builder) resolverOf() *lang.Resolver {
	if b.resolver == nil {
		b.resolver = lang.NewResolver(b.candidatePaths(), func(p string) string {
			if e := b.byPath[p]; e != nil {
				return e.analysis
			}
			return ""
		})
	}
	return b.resolver
}

// relatedByImports is the default Options.Related: the files the changed
// files import, resolved in the repository.
func (b *builder) relatedByImports(changed []string) []string {
	r := b.resolverOf()
	return lang.RelatedFiles(changed, func(p string) []lang.Unit { return r.Resolve(p, b.factsOf(p)) })
}

// buildSummary builds a Summary pack that fits the tier and max_content_bytes.
func (b *builder) buildSummary(ctx context.Context, changes []Change, manifest Manifest) (*Pack, error) {
	// A Full pack may have been measured for the selection: start afresh.
	for _, e := range b.entries {
		e.row.Included, e.row.Role, e.row.BytesSent, e.row.SHA256Sent = false, "", 0, ""
	}
	sb := &summaryBuilder{b: b, manifest: manifest, changes: changes, entries: map[string]*entry{}, changed: map[string]bool{},
		hunks: map[int][]string{}, noPartial: map[int]bool{}}
	sb.paths = b.candidatePaths()
	for _, p := range sb.paths {
		sb.entries[p] = b.byPath[p]
	}
	b.extractAll(sb.paths)
	sb.facts = b.facts
	sb.resolver = b.resolverOf()
	sb.graph = lang.BuildGraph(sb.resolver, sb.paths, b.factsOf)
	for _, c := range b.snap.Changes {
		if c.Status != "deleted" {
			sb.changed[c.Path] = true
		}
	}
	ordered := b.prioritize()
	for _, e := range ordered {
		e.row.Included, e.row.Role = true, e.role
	}
	eps, hots := sb.entrypoints(), sb.hotspots()
	keys := sb.summaryKeyFiles(eps)
	for _, e := range sb.entries {
		e.key = false
	}
	for _, e := range keys {
		e.key = true
	}
	sb.buildUnits(keys)
	sb.collect(eps, hots)
	sb.repo = sb.repoSummary(eps, hots)
	if err := b.scanDerived(ctx, sb.derivedStrings()); err != nil {
		return nil, err
	}

	p := &Pack{SchemaVersion: SchemaVersion, Type: policy.TypeSummary, Source: b.snap.Source, Intent: b.intent, Manifest: manifest}
	// Fit, then scan the result as the audit will; a redaction changes sizes,
	// so fit again (and list afresh: it may withhold a file's size).
	for attempt := 0; attempt < 4; attempt++ {
		b.fillIndex(p, 0, 0, 0)
		sb.base = *p
		fitted, err := sb.fit()
		if err != nil {
			return nil, err
		}
		changed, err := sb.verify(ctx, fitted)
		if err != nil {
			return nil, err
		}
		if !changed {
			sb.account(fitted)
			return fitted, nil
		}
	}
	return nil, errors.New("secret scan of the summary: the pack still holds secrets after redaction")
}

// buildUnits lists the optional parts in priority order: summaries of the
// changed files, their diff hunks, entrypoints, key file summaries (keys,
// most central first), risk hotspots, then summaries of the files the
// changed files import.
func (sb *summaryBuilder) buildUnits(keys []*entry) {
	b := sb.b
	for i := range sb.changes {
		c := &sb.changes[i]
		if c.Status == "deleted" {
			continue
		}
		e := sb.entries[c.Path]
		if e == nil {
			continue
		}
		k := sb.describeFile(e, sb.facts[c.Path], c)
		sb.units = append(sb.units, &sumUnit{kind: unitChanged, path: c.Path, file: &k})
	}
	// Diff hunks come right after the changed files' summaries while they
	// take at most half of the limit; the rest come last, so that a large
	// change does not crowd out the entrypoints, key files and hotspots.
	share := int(b.pol.Limits.MaxContentBytes / 2)
	if t := b.pol.TierLimit(); t > 0 {
		share = min(share, t/2)
	}
	var overflow []*sumUnit
	used := 0
	for i := range sb.changes {
		hunks := splitHunks(sb.changes[i].Diff)
		sb.hunks[i] = hunks
		for h, text := range hunks {
			u := &sumUnit{kind: unitDiff, path: sb.changes[i].Path, change: i, hunk: h}
			used += len(text)
			if used <= share && len(overflow) == 0 {
				sb.units = append(sb.units, u)
			} else {
				overflow = append(overflow, u)
			}
		}
	}
	// Entrypoints and hotspots are computed in collect (they need all facts);
	// placeholders keep their position in the order.
	sb.units = append(sb.units, &sumUnit{kind: unitEntrypoint})
	for _, e := range keys {
		k := sb.describeFile(e, sb.facts[e.file.Path], nil)
		sb.units = append(sb.units, &sumUnit{kind: unitKey, path: e.file.Path, file: &k})
	}
	sb.units = append(sb.units, &sumUnit{kind: unitHotspot})
	n := 0
	listed := map[string]bool{}
	for _, u := range sb.units {
		if u.file != nil {
			listed[u.path] = true
		}
	}
	var changedPaths []string
	for _, c := range b.snap.Changes {
		if c.Status != "deleted" {
			changedPaths = append(changedPaths, c.Path)
		}
	}
	if b.opts.Related != nil {
		for _, p := range b.opts.Related(changedPaths) {
			e := sb.entries[p]
			if e == nil || listed[p] || n >= maxRelatedSummaries {
				continue
			}
			listed[p] = true
			n++
			k := sb.describeFile(e, sb.facts[p], nil)
			sb.units = append(sb.units, &sumUnit{kind: unitRelated, path: p, file: &k})
		}
	}
	sb.units = append(sb.units, overflow...)
}

// collect replaces the placeholders with the entrypoints and hotspots.
func (sb *summaryBuilder) collect(eps []Entrypoint, hots []RiskHotspot) {
	var out []*sumUnit
	for _, u := range sb.units {
		switch {
		case u.kind == unitEntrypoint && u.entry == nil:
			for i := range eps {
				out = append(out, &sumUnit{kind: unitEntrypoint, path: eps[i].Path, entry: &eps[i]})
			}
		case u.kind == unitHotspot && u.hot == nil:
			for i := range hots {
				out = append(out, &sumUnit{kind: unitHotspot, path: hots[i].Path, hot: &hots[i]})
			}
		default:
			out = append(out, u)
		}
	}
	sb.units = out
}

// splitHunks splits a unified diff into hunks at its "@@ " lines; the
// header goes with the first hunk. A diff without hunks is one piece.
func splitHunks(diff string) []string {
	if diff == "" {
		return nil
	}
	var starts []int
	for i := 0; i < len(diff); {
		if strings.HasPrefix(diff[i:], "@@ ") {
			starts = append(starts, i)
		}
		j := strings.IndexByte(diff[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if len(starts) <= 1 {
		return []string{diff}
	}
	out := []string{diff[:starts[1]]}
	for k := 1; k < len(starts); k++ {
		end := len(diff)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		out = append(out, diff[starts[k]:end])
	}
	return out
}

// derived lists every string of the optional parts and the repo summary:
// all of it comes from file contents and is scanned before it may leave.
func (sb *summaryBuilder) derivedStrings() []derivedText {
	var out []derivedText
	add := func(p string, ss ...*string) {
		for _, s := range ss {
			if *s != "" {
				out = append(out, derivedText{s: s, path: p})
			}
		}
	}
	for _, u := range sb.units {
		switch {
		case u.file != nil:
			k := u.file
			add(u.path, &k.Summary)
			for i := range k.Exports {
				add(u.path, &k.Exports[i])
			}
			for i := range k.Dependencies {
				add(u.path, &k.Dependencies[i])
			}
			for i := range k.NotableCode {
				add(u.path, &k.NotableCode[i])
			}
		case u.entry != nil:
			add(u.path, &u.entry.Description)
			for i := range u.entry.RoutesOrCommands {
				add(u.path, &u.entry.RoutesOrCommands[i])
			}
		case u.hot != nil:
			add(u.path, &u.hot.Description)
			for i := range u.hot.Indicators {
				add(u.path, &u.hot.Indicators[i])
			}
		}
	}
	r := sb.repo
	add("(repo summary)", &r.Description, &r.ArchitecturePattern)
	for _, l := range [][]string{r.KeyTechnologies, r.NotablePatterns, r.PotentialConcerns} {
		for i := range l {
			add("(repo summary)", &l[i])
		}
	}
	return out
}

// condensation is one level of file-index detail.
type condensation struct {
	tree   bool // the directory tree is kept (only with the full index)
	depth  int  // group files below this directory depth; -1: no grouping
	strict bool // changed files are grouped too
}

func (sb *summaryBuilder) levels() []condensation {
	maxDepth := 0
	for _, e := range sb.b.entries {
		maxDepth = max(maxDepth, depth(e.file.Path))
	}
	out := []condensation{{tree: true, depth: -1}, {depth: -1}}
	for d := maxDepth; d >= 0; d-- {
		out = append(out, condensation{depth: d})
	}
	return append(out, condensation{depth: 0, strict: true})
}

// assemble builds the pack with the first k units at a condensation level.
func (sb *summaryBuilder) assemble(lv condensation, k int) (*Pack, int) {
	p := sb.base
	p.KeyFilesSummary = []KeyFileSummary{}
	p.Entrypoints = []Entrypoint{}
	p.RiskHotspots = []RiskHotspot{}
	rs := *sb.repo
	p.RepoSummary = &rs
	pinned := map[string]bool{}
	keptHunks := map[int]int{}
	for _, u := range sb.units[:k] {
		switch {
		case u.file != nil:
			p.KeyFilesSummary = append(p.KeyFilesSummary, *u.file)
			pinned[u.path] = true
		case u.entry != nil:
			p.Entrypoints = append(p.Entrypoints, *u.entry)
			pinned[u.path] = true
		case u.hot != nil:
			p.RiskHotspots = append(p.RiskHotspots, *u.hot)
			pinned[u.path] = true
		case u.kind == unitDiff:
			if keptHunks[u.change] == u.hunk {
				keptHunks[u.change]++
			}
		}
	}
	// Dropped units count once each; a cut or withheld diff once per change.
	dropped := 0
	for _, u := range sb.units[k:] {
		if u.kind != unitDiff {
			dropped++
		}
	}
	p.Changes = make([]Change, len(sb.changes))
	for i, c := range sb.changes {
		hunks := sb.hunks[i]
		n := keptHunks[i]
		if sb.noPartial[i] && n < len(hunks) {
			n = 0
		}
		if len(hunks) > 0 && n < len(hunks) {
			dropped++
		}
		switch {
		case len(hunks) == 0 || n == len(hunks):
		case n == 0:
			c.Diff, c.DiffWithheld, c.DiffTruncated, c.Redactions = "", ReasonSizeLimit, false, nil
		default:
			c.Diff = strings.Join(hunks[:n], "") + strings.TrimPrefix(TruncationMarker, "\n")
			c.DiffTruncated = true
			limit := lang.CountLines(strings.Join(hunks[:n], ""))
			var reds []Redaction
			for _, r := range c.Redactions {
				if r.Line <= limit {
					reds = append(reds, r)
				}
			}
			c.Redactions = reds
		}
		p.Changes[i] = c
		if !lv.strict && c.Status != "deleted" {
			pinned[c.Path] = true
		}
	}
	meta := sb.base.Metadata
	if !lv.tree && meta.DirectoryTree != nil {
		meta.DirectoryTree = nil
		dropped++
	}
	if lv.depth >= 0 {
		var st condenseStats
		p.FileIndex, st = condenseIndex(sb.base.FileIndex, pinned, lv.depth)
		if st.files > 0 {
			meta.IndexCondensed = fmt.Sprintf("file index condensed by directory to fit %s: %s of %s files are listed as %s (a path ending in \"/\" stands for the files under that directory that have no entry of their own and no deeper directory entry, grouped by inclusion and exclusion reason; \"files\" counts them); changed files and files the summary describes are listed individually; directory_tree omitted",
				sb.limitName(), th(st.files), th(len(sb.base.FileIndex)), count(st.entries, "directory entry", "directory entries"))
		}
	}
	var content int64
	for _, c := range p.Changes {
		content += int64(len(c.Diff))
	}
	content += derivedBytes(&p)
	meta.TotalContentBytes = content
	meta.TruncationApplied = dropped > 0 || meta.IndexCondensed != ""
	meta.TruncatedFiles = 0
	p.Metadata = meta
	p.Budget.ContentBytes = content
	p.Budget.DroppedItems = dropped
	p.Budget.Truncated = meta.TruncationApplied
	// An explicit token limit binds a Summary pack too (the audit checks it).
	p.Budget.MaxTokens = sb.b.pol.Limits.MaxTokens
	return &p, dropped
}

// derivedBytes is the size of the text the summary parts carry.
func derivedBytes(p *Pack) int64 {
	var n int
	if r := p.RepoSummary; r != nil {
		n += len(r.Description) + len(r.ArchitecturePattern)
		for _, l := range [][]string{r.KeyTechnologies, r.NotablePatterns, r.PotentialConcerns} {
			for _, s := range l {
				n += len(s)
			}
		}
	}
	for _, k := range p.KeyFilesSummary {
		n += len(k.Summary)
		for _, l := range [][]string{k.Exports, k.Dependencies, k.NotableCode} {
			for _, s := range l {
				n += len(s)
			}
		}
	}
	for _, e := range p.Entrypoints {
		n += len(e.Description)
		for _, s := range e.RoutesOrCommands {
			n += len(s)
		}
	}
	for _, h := range p.RiskHotspots {
		n += len(h.Description)
		for _, s := range h.Indicators {
			n += len(s)
		}
	}
	return int64(n)
}

func (sb *summaryBuilder) limitName() string {
	s := "max_content_bytes " + thousands(sb.b.pol.Limits.MaxContentBytes)
	if t := sb.b.pol.TierLimit(); t > 0 {
		s = fmt.Sprintf("tier %s (%s characters) and %s", sb.b.pol.Pack.Tier, th(t), s)
	}
	if t := sb.b.pol.Limits.MaxTokens; t > 0 {
		s = fmt.Sprintf("max_tokens %s and %s", th(t), s)
	}
	return s
}

// measure serializes p with the widest values of the fields Finalize fills
// and returns its size in bytes and characters: the final pack is never larger.
func measure(p *Pack) (int, int, error) {
	data, err := measured(p)
	if err != nil {
		return 0, 0, err
	}
	return len(data), RuneCount(data), nil
}

// measured is the serialization measure sizes.
func measured(p *Pack) ([]byte, error) {
	c := *p
	c.PackID = "pk_aaaaaaaa"
	c.Budget.UsedChars = 9999999999
	c.Budget.EstimatedTokens = 9999999999
	return Marshal(&c)
}

// idTokenSlack covers the pack id's 8 base32 characters, which may take
// more tokens than the placeholder measure writes.
const idTokenSlack = 8

// fits reports whether a pack of this size fits the tier, max_content_bytes
// and an explicit max_tokens; tokens is counted only when max_tokens is set.
func (sb *summaryBuilder) fits(p *Pack) (ok bool, n, chars, tokens int, err error) {
	data, err := measured(p)
	if err != nil {
		return false, 0, 0, 0, err
	}
	n, chars = len(data), RuneCount(data)
	ok = int64(n) <= sb.b.pol.Limits.MaxContentBytes
	if t := sb.b.pol.TierLimit(); t > 0 && chars > t {
		ok = false
	}
	if t := sb.b.pol.Limits.MaxTokens; t > 0 && ok {
		if tokens, err = CountTokensOf(data); err != nil {
			return false, 0, 0, 0, err
		}
		tokens += idTokenSlack
		ok = tokens <= t
	}
	return ok, n, chars, tokens, nil
}

// sizeModel gives cheap lower bounds of the serialized size of the pack at
// a level with the first k units: the size without units plus what each
// unit adds as an array element. Units only add (their files are pinned in
// the index too), so the bound never exceeds the real size; it is used to
// skip tries that cannot fit, and every choice is measured for real.
type sizeModel struct {
	sb           *summaryBuilder
	bytes, chars []int // prefix sums over units
	base         map[int][2]int
	slack        int
}

func (sb *summaryBuilder) newSizeModel() (*sizeModel, error) {
	m := &sizeModel{sb: sb, bytes: make([]int, len(sb.units)+1), chars: make([]int, len(sb.units)+1), base: map[int][2]int{}}
	for i, u := range sb.units {
		var v any
		switch {
		case u.file != nil:
			v = u.file
		case u.entry != nil:
			v = u.entry
		case u.hot != nil:
			v = u.hot
		default:
			v = sb.hunks[u.change][u.hunk]
		}
		data, err := Marshal(v)
		if err != nil {
			return nil, err
		}
		n, c := len(data)-2, RuneCount(data)-2 // the newline, plus a comma, minus quotes for a diff
		if u.kind == unitDiff {
			n, c = len(data)-3, RuneCount(data)-3
		}
		m.bytes[i+1], m.chars[i+1] = m.bytes[i]+n, m.chars[i]+c
	}
	// A diff that is kept drops its "diff_withheld":"size_limit"; counts
	// in the budget and in index_condensed may lose a few digits.
	m.slack = 64
	for i := range sb.changes {
		if len(sb.hunks[i]) > 0 {
			m.slack += len(`,"diff_withheld":"size_limit"`)
		}
	}
	return m, nil
}

// hopeless reports whether the pack at level li with k units surely does
// not fit.
func (m *sizeModel) hopeless(li int, lv condensation, k int) (bool, error) {
	b, ok := m.base[li]
	if !ok {
		p, _ := m.sb.assemble(lv, 0)
		n, c, err := measure(p)
		if err != nil {
			return false, err
		}
		b = [2]int{n, c}
		m.base[li] = b
	}
	n, c := b[0]-m.slack+m.bytes[k], b[1]-m.slack+m.chars[k]
	if int64(n) > m.sb.b.pol.Limits.MaxContentBytes {
		return true, nil
	}
	if t := m.sb.b.pol.TierLimit(); t > 0 && c > t {
		return true, nil
	}
	return false, nil
}

// fit chooses how much to keep: everything at the most detailed index that
// fits (condensed at most to top-level directories); else the most units
// that fit with the index at that floor, then the most detailed index those
// units allow.
func (sb *summaryBuilder) fit() (*Pack, error) {
	levels := sb.levels()
	all := len(sb.units)
	model, err := sb.newSizeModel()
	if err != nil {
		return nil, err
	}
	try := func(li int, k int) (*Pack, bool, int, int, error) {
		if no, err := model.hopeless(li, levels[li], k); err != nil || no {
			return nil, false, 0, 0, err
		}
		p, _ := sb.assemble(levels[li], k)
		ok, n, chars, _, err := sb.fits(p)
		return p, ok, n, chars, err
	}
	// Keeping every part is worth condensing the index down to its top-level
	// directories, not further.
	for li, lv := range levels {
		if lv.depth == 0 {
			break
		}
		p, ok, _, _, err := try(li, all)
		if err != nil {
			return nil, err
		}
		if ok {
			return p, nil
		}
	}
	// Drop parts: the index keeps at least its top-level directories unless
	// not even that fits without any part.
	floor := -1
	var n, chars, tokens int
	for li, lv := range levels {
		if lv.depth < 0 || lv.depth > 1 {
			continue
		}
		p, _ := sb.assemble(lv, 0)
		ok, n1, c1, t1, err := sb.fits(p)
		if err != nil {
			return nil, err
		}
		if ok {
			floor = li
			break
		}
		n, chars, tokens = n1, c1, t1
	}
	if floor < 0 {
		return nil, sb.tooLarge(n, chars, tokens)
	}
	// The largest k that fits (sizes grow with k): the bound gives an upper
	// limit, then gallop down and bisect.
	hi := all + 1 // the smallest k known not to fit
	for lo, up := 0, all; lo <= up; {
		mid := (lo + up) / 2
		no, err := model.hopeless(floor, levels[floor], mid)
		if err != nil {
			return nil, err
		}
		if no {
			hi, up = mid, mid-1
		} else {
			lo = mid + 1
		}
	}
	lo := 0 // the largest k known to fit
	step := 1
	for k := hi - 1; k > lo; {
		_, ok, _, _, err := try(floor, k)
		if err != nil {
			return nil, err
		}
		if ok {
			lo = k
			break
		}
		hi = k
		k -= step
		step *= 2
		if k < lo {
			k = lo
		}
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		_, ok, _, _, err := try(floor, mid)
		if err != nil {
			return nil, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	for li := range levels[:floor+1] {
		p, ok, _, _, err := try(li, lo)
		if err != nil {
			return nil, err
		}
		if ok {
			return p, nil
		}
	}
	p, _ := sb.assemble(levels[floor], lo)
	return p, nil
}

// tooLarge is the error when not even the manifest, the changed-file list
// and the condensed index fit.
func (sb *summaryBuilder) tooLarge(n, chars, tokens int) error {
	l := sb.b.pol.Limits.MaxContentBytes
	if t := sb.b.pol.Limits.MaxTokens; t > 0 && tokens > t {
		return fmt.Errorf("summary pack cannot fit max_tokens %s: the manifest, the list of %s and the condensed file index alone are about %s tokens; raise limits.max_tokens (--max-tokens) or pack a smaller range",
			th(t), count(len(sb.changes), "changed file", "changed files"), th(tokens))
	}
	if int64(n) > l {
		return fmt.Errorf("summary pack cannot fit max_content_bytes %s: the manifest, the list of %s and the condensed file index alone are %s bytes; raise limits.max_content_bytes (--max-content-bytes) or pack a smaller range",
			thousands(l), count(len(sb.changes), "changed file", "changed files"), th(n))
	}
	t := sb.b.pol.TierLimit()
	return fmt.Errorf("summary pack cannot fit tier %s (%s characters): the manifest, the list of %s and the condensed file index alone are %s characters; use a larger tier (--tier) or pack a smaller range",
		sb.b.pol.Pack.Tier, th(t), count(len(sb.changes), "changed file", "changed files"), th(chars))
}

// account fills the ledger's bytes sent: the derived text of each file kept
// in the pack.
func (sb *summaryBuilder) account(p *Pack) {
	sent := map[string]int{}
	for _, k := range p.KeyFilesSummary {
		n := len(k.Summary)
		for _, l := range [][]string{k.Exports, k.Dependencies, k.NotableCode} {
			for _, s := range l {
				n += len(s)
			}
		}
		sent[k.Path] += n
	}
	for _, e := range p.Entrypoints {
		n := len(e.Description)
		for _, s := range e.RoutesOrCommands {
			n += len(s)
		}
		sent[e.Path] += n
	}
	for _, h := range p.RiskHotspots {
		n := len(h.Description)
		for _, s := range h.Indicators {
			n += len(s)
		}
		sent[h.Path] += n
	}
	for _, e := range sb.b.entries {
		e.row.BytesSent = int64(sent[e.file.Path])
	}
}

// condenseStats says how much an index was condensed.
type condenseStats struct {
	files   int // files now represented by directory entries
	entries int // directory entries
}

// condenseIndex groups the entries of files that are not pinned by their
// directory at depth d (0 = the root), inclusion and exclusion reason. A
// group of one file keeps the file's own entry.
func condenseIndex(full []IndexEntry, pinned map[string]bool, d int) ([]IndexEntry, condenseStats) {
	type key struct {
		dir      string
		excluded bool
		reason   Reason
	}
	groups := map[key][]int{}
	var out []IndexEntry
	for i, e := range full {
		if pinned[e.Path] {
			out = append(out, e)
			continue
		}
		dir := lang.DirOf(e.Path)
		if dir != "" {
			parts := strings.Split(dir, "/")
			if len(parts) > d {
				parts = parts[:d]
			}
			dir = strings.Join(parts, "/")
		}
		k := key{dir, !e.Included, e.ExclusionReason}
		groups[k] = append(groups[k], i)
	}
	var st condenseStats
	for k, idx := range groups {
		if len(idx) == 1 {
			out = append(out, full[idx[0]])
			continue
		}
		st.files += len(idx)
		st.entries++
		ce := IndexEntry{Path: k.dir + "/", Included: !k.excluded, ExclusionReason: k.reason, Files: len(idx), SizeBytes: new(int64(0))}
		if k.dir == "" {
			ce.Path = "./"
		}
		exts := map[string]int{}
		for n, i := range idx {
			e := full[i]
			if e.SizeBytes != nil { // a withheld size is not summed either
				*ce.SizeBytes += *e.SizeBytes
			}
			if n == 0 {
				ce.Type, ce.Category = e.Type, e.Category
			} else {
				if ce.Type != e.Type {
					ce.Type = TypeUnknown
				}
				if ce.Category != e.Category {
					ce.Category = CatOther
				}
			}
			x := ext(e.Path)
			if x == "" {
				x = "(none)"
			}
			exts[x]++
		}
		var parts []string
		for i, c := range lang.TopCounts(exts) {
			if i == 3 {
				rest := 0
				for _, c2 := range lang.TopCounts(exts)[3:] {
					rest += c2.N
				}
				parts = append(parts, "other "+th(rest))
				break
			}
			parts = append(parts, c.Name+" "+th(c.N))
		}
		ce.Detail = fmt.Sprintf("condensed: %s (%s)", count(len(idx), "file", "files"), strings.Join(parts, ", "))
		out = append(out, ce)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		if out[i].Included != out[j].Included {
			return out[i].Included
		}
		return out[i].ExclusionReason < out[j].ExclusionReason
	})
	return out, st
}

// IndexCovers reports whether a pack's file index accounts for the file at
// p: an entry of its own or, in a condensed index (metadata.index_condensed),
// the deepest directory entry ("dir/", "./" for the root) above it.
func IndexCovers(index []IndexEntry, p string) bool {
	_, ok := coveringEntry(index, p)
	return ok
}

// coveringEntry returns the path of the entry accounting for p.
func coveringEntry(index []IndexEntry, p string) (string, bool) {
	best := ""
	found := false
	for _, e := range index {
		if e.Path == p {
			return p, true
		}
		if strings.HasSuffix(e.Path, "/") && (e.Path == "./" || strings.HasPrefix(p, e.Path)) {
			if !found || len(e.Path) > len(best) || best == "./" {
				best, found = e.Path, true
			}
		}
	}
	return best, found
}

// CheckIndex verifies that a file index accounts for exactly the given
// files: each has an entry of its own or is counted by the deepest
// directory entry above it, and every directory entry's files count equals
// the files it covers. It returns the problems found, none when it holds.
func CheckIndex(index []IndexEntry, paths []string) []string {
	var problems []string
	own := map[string]bool{}
	dirFiles := map[string]int{}
	for _, e := range index {
		if strings.HasSuffix(e.Path, "/") {
			dirFiles[e.Path] += e.Files
		} else {
			own[e.Path] = true
		}
	}
	covered := map[string]int{}
	for _, p := range paths {
		if own[p] {
			continue
		}
		dir, ok := coveringEntry(index, p)
		if !ok {
			problems = append(problems, p+" is not in the file index")
			continue
		}
		covered[dir]++
	}
	for _, d := range sortedKeys(dirFiles) {
		if covered[d] != dirFiles[d] {
			problems = append(problems, fmt.Sprintf("directory entry %s says %d files, %d are under it without an entry of their own", d, dirFiles[d], covered[d]))
		}
	}
	return problems
}
