package pack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/lang"
	"github.com/ctxpack/ctxpack/policy"
)

// A change pack (a Full pack of a commit, range or edited work tree) spends
// a token budget in one order of value, documented in README ("The budget"):
//
//	intent → diff hunks of changed source files → their enclosing
//	definitions → diff hunks of changed tests, then their definitions →
//	hunks of the other changed files (docs, config, generated) → files the
//	intent names → definitions the changed lines call → definitions that
//	call the changed symbols, and tests of them → imports and importers of
//	the changed files → key files → everything else.
//
// When the whole diff fits the budget, every hunk is kept before anything
// else is considered. A hunk that does not fit is summarised (header and
// counts); nothing is dropped without a trace in budget.cut.
const (
	classSourceHunk = iota
	classEnclosing
	classTestHunk
	classTestEnclosing
	classOtherHunk
	classMentioned
	classCallee
	classCaller
	classImport
	classKey
	classRest
)

// classNames name the classes in budget.cut and in the README.
var classNames = [...]string{"diff hunk", "enclosing definition", "test hunk", "test definition", "diff hunk",
	"mentioned file", "callee", "caller", "import", "key file", "other file"}

// Relationships of content items (seed 003).
const (
	RelChanged    = "changed"
	RelCalls      = "calls"
	RelCalledBy   = "called_by"
	RelImports    = "imports"
	RelImportedBy = "imported_by"
	RelTestOf     = "test_of"
	RelMentioned  = "mentioned"
)

// Region shapes.
const (
	// smallFileLines: a changed file this short is sent whole as its region.
	smallFileLines = 80
	// maxRegionLines caps one definition sent as a region; a longer one is
	// cut around the change (or to its head, for a relation).
	maxRegionLines = 160
	// regionContext is the context kept around a change outside any
	// definition, or inside a definition over maxRegionLines.
	regionContext = 12
	// relationHeadLines is how much of a called or calling definition is
	// sent when it is long: its signature, doc and first lines.
	relationHeadLines = 40
	// addedChunkLines is the size of the chunks an added file is sent in.
	addedChunkLines = 200
	// hunkSummaryTokens is what a hunk's summary costs in the pack.
	hunkSummaryTokens = 30
	// maxCutNotes bounds budget.cut.
	maxCutNotes = 20
)

// changeState is one change with its hunks.
type changeState struct {
	c      *Change
	header string
	hunks  []hunk
	e      *entry // the head file's entry, when listed
	facts  *lang.Facts
	// reds are the change's redactions, by line of the whole diff text.
	reds []Redaction
	// kept says which hunks are sent.
	kept []bool
	rank int
	// asContent: an added text file (or a changed one git calls binary),
	// sent as content items (chunks) instead of a diff of "+" lines.
	asContent bool
	chunks    int
}

// unit is one thing the budget can buy: a hunk of a diff, or a region (or
// the whole text) of a file.
type unit struct {
	class, rank int
	// diff marks the change itself: a hunk, or a chunk of an added file.
	diff bool
	// a hunk
	ch   *changeState
	hunk int
	// a region of a file: lines start..end, or whole (e.sent) when start is 0
	e          *entry
	start, end int
	symbol     string
	kind       string
	rel        []string
	distance   int
	key        bool
	text       string
	reds       []Redaction
	truncated  bool
	tokens     int
	chars      int
	bytes      int
	accepted   bool
	// lazy: a whole file not yet scanned nor prepared (allocation.ready).
	lazy bool
}

func (u *unit) isHunk() bool { return u.ch != nil }

// describe names the unit in budget.cut.
func (u *unit) describe() string {
	if u.isHunk() {
		h := u.ch.hunks[u.hunk]
		return fmt.Sprintf("%s: hunk %s (+%d −%d)", u.ch.c.Path, h.rangeHeader(), h.added, h.deleted)
	}
	what := classNames[u.class]
	if u.start > 0 {
		return fmt.Sprintf("%s %s:%d:%d", what, u.e.file.Path, u.start, u.end)
	}
	return fmt.Sprintf("%s %s", what, u.e.file.Path)
}

// isSourcePath reports whether p is program source (not a test, not
// generated).
func isSourcePath(p string) bool {
	_, programming, ok := lang.LanguageName(p)
	return ok && programming && !lang.IsTestPath(p) && !isGeneratedPath(p)
}

// isGeneratedPath recognises generated and minified files by name.
func isGeneratedPath(p string) bool {
	base := strings.ToLower(path.Base(p))
	for _, suf := range []string{".pb.go", "_gen.go", ".gen.go", "_generated.go", ".min.js", ".min.css", ".pb.ts", "_pb2.py", ".g.dart", ".designer.cs"} {
		if strings.HasSuffix(base, suf) {
			return true
		}
	}
	return strings.HasPrefix(base, "zz_generated")
}

// generatedText recognises the "Code generated … DO NOT EDIT." marker (Go's
// convention, widely copied) in the first lines.
func generatedText(text string) bool {
	head := text
	if len(head) > 2048 {
		head = head[:2048]
	}
	return strings.Contains(head, "DO NOT EDIT") && strings.Contains(strings.ToLower(head), "generated")
}

// boilerplateNames are files that ride along nowhere unless they changed:
// licences, notices, author lists, codes of conduct and contributing
// guides, changelogs, lockfiles.
var boilerplateNames = set("license", "licence", "copying", "notice", "authors", "contributors", "maintainers",
	"code_of_conduct", "contributing", "governance", "changelog", "changes", "history", "news", "patents", "security", "codeowners",
	"go.sum", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "cargo.lock", "poetry.lock",
	"pipfile.lock", "composer.lock", "gemfile.lock", "uv.lock", "bun.lockb", "gradle.lockfile", "flake.lock",
	".gitignore", ".gitattributes", ".editorconfig", ".mailmap", ".dockerignore", ".npmignore", ".prettierignore")

// IsBoilerplate reports whether p is repository boilerplate (see
// boilerplateNames); names match with or without an extension
// (LICENSE.md, CHANGELOG.rst).
func IsBoilerplate(p string) bool {
	base := strings.ToLower(path.Base(p))
	if boilerplateNames[base] {
		return true
	}
	stem := strings.TrimSuffix(base, path.Ext(base))
	switch path.Ext(base) {
	case ".md", ".txt", ".rst", ".adoc", ".markdown", "":
		return boilerplateNames[stem] || strings.HasPrefix(stem, "license-") || strings.HasPrefix(stem, "licence-")
	}
	return false
}

// toolConfigNames are the configuration files of tools around the code —
// linters and formatters, CI, coverage, release, editors, version pins and
// bots — which tell a reviewer nothing about a change they are not part of.
var toolConfigNames = set(
	// linters and formatters
	".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json", ".eslintrc", ".eslintrc.js", ".eslintrc.cjs",
	".eslintrc.json", ".eslintrc.yml", ".eslintrc.yaml", "eslint.config.js", "eslint.config.mjs", "eslint.config.cjs",
	".eslintignore", ".prettierrc", ".prettierrc.json", ".prettierrc.yml", ".prettierrc.yaml", ".prettierrc.js",
	"prettier.config.js", ".stylelintrc", ".stylelintrc.json", ".markdownlint.json", ".markdownlint.yaml",
	".markdownlint.yml", ".markdownlintignore", ".yamllint", ".yamllint.yml", ".yamllint.yaml", ".flake8", ".pylintrc",
	"pylintrc", ".rubocop.yml", ".clang-format", ".clang-tidy", "rustfmt.toml", ".rustfmt.toml", "clippy.toml",
	".jshintrc", ".jscsrc", ".swiftlint.yml", ".hadolint.yaml", ".shellcheckrc", "ruff.toml", ".ruff.toml", ".isort.cfg",
	"mypy.ini", ".mypy.ini", ".codespellrc", "_typos.toml", ".typos.toml", ".commitlintrc", ".commitlintrc.json",
	"commitlint.config.js", ".lintstagedrc", ".pre-commit-config.yaml", ".pre-commit-hooks.yaml", "biome.json",
	".dprint.json", ".golangci-lint.yml", ".revive.toml", "revive.toml", ".gofumpt.toml", ".spellcheck.yml",
	// CI
	".travis.yml", "appveyor.yml", ".appveyor.yml", ".gitlab-ci.yml", "azure-pipelines.yml", "jenkinsfile", ".drone.yml",
	"bitbucket-pipelines.yml", "cloudbuild.yaml", ".cirrus.yml", ".woodpecker.yml",
	// coverage
	"codecov.yml", ".codecov.yml", "codecov.yaml", ".codecov.yaml", ".coveragerc", ".nycrc", ".nycrc.json", ".nycrc.yml",
	".c8rc", ".c8rc.json", ".coveralls.yml",
	// release
	".goreleaser.yml", ".goreleaser.yaml", "goreleaser.yml", "goreleaser.yaml", ".releaserc", ".releaserc.json",
	".releaserc.yml", "release.config.js", "release-please-config.json", ".release-please-manifest.json", ".promu.yml",
	".versionrc", ".versionrc.json",
	// editors, environments and version pins
	".gitpod.yml", ".npmrc", ".nvmrc", ".node-version", ".python-version", ".ruby-version", ".tool-versions", ".yarnrc",
	".yarnrc.yml", ".readthedocs.yaml", ".readthedocs.yml",
	// bots
	"renovate.json", "renovate.json5", ".renovaterc", ".renovaterc.json", "dependabot.yml", "dependabot.yaml", ".mergify.yml",
	".kodiak.toml", ".snyk", ".stale.yml", ".allcontributorsrc", ".pullapprove.yml", "security-insights.yml")

// toolConfigDirs are directories that hold only tool configuration: CI
// workflows, bots, editor and dev-container settings.
var toolConfigDirs = []string{".github/", ".circleci/", ".buildkite/", ".devcontainer/", ".vscode/", ".idea/", ".husky/", ".changeset/"}

// isToolConfig reports whether p is tool configuration (toolConfigNames,
// toolConfigDirs).
func isToolConfig(p string) bool {
	if toolConfigNames[strings.ToLower(path.Base(p))] {
		return true
	}
	for _, d := range toolConfigDirs {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

// buildChange builds the Full pack of a change under the token budget.
func (b *builder) buildChange(ctx context.Context, changes []Change, manifest Manifest) (*Pack, error) {
	intent := b.intent
	states := b.changeStates(changes)
	b.changed = map[string]bool{}
	for _, st := range states {
		if st.c.Status != "deleted" {
			b.changed[st.c.Path] = true
		}
	}
	units, err := b.changeUnits(ctx, states, intent)
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	for _, st := range states {
		changed[st.c.Path] = true
	}
	manifest = trimManifest(manifest, changed, b.importsOfChanged(states))

	p := &Pack{
		SchemaVersion: SchemaVersion,
		Type:          policy.TypeFull,
		Source:        b.snap.Source,
		Intent:        intent,
		Manifest:      manifest,
		KeyFiles:      []KeyFile{},
		Contents:      []Item{},
	}
	a := &allocation{b: b, p: p, states: states, units: units}
	if err := a.run(ctx); err != nil {
		return nil, err
	}
	b.contentEvents()
	return p, nil
}

// treePaths lists the head tree: the whole tree when the snapshot reaches
// it, else the listed files.
func (b *builder) treePaths(ctx context.Context) ([]string, error) {
	if b.snap.Tree != nil {
		ps, err := b.snap.Tree.Paths(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the head tree: %w", err)
		}
		return ps, nil
	}
	out := make([]string, len(b.snap.Files))
	for i, f := range b.snap.Files {
		out[i] = f.Path
	}
	return out, nil
}

// changeStates splits each change's (scanned, redacted) diff into hunks and
// ranks the changes: language source first, then by lines changed, then
// by path.
func (b *builder) changeStates(changes []Change) []*changeState {
	var out []*changeState
	for i := range changes {
		c := &changes[i]
		st := &changeState{c: c, reds: c.Redactions}
		if c.Diff != "" {
			st.header, st.hunks = splitDiff(c.Diff)
		}
		st.kept = make([]bool, len(st.hunks))
		if e := b.byPath[c.Path]; e != nil && e.row.Reason == "" && c.Status != "deleted" {
			st.e = e
			st.facts = b.factsOf(c.Path)
		}
		out = append(out, st)
	}
	sorted := append([]*changeState(nil), out...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, c := sorted[i], sorted[j]
		if ka, kc := changeKind(a), changeKind(c); ka != kc {
			return ka < kc
		}
		if na, nc := a.c.Added+a.c.Deleted, c.c.Added+c.c.Deleted; na != nc {
			return na > nc
		}
		return a.c.Path < c.c.Path
	})
	for i, st := range sorted {
		st.rank = i
	}
	return out
}

// changeKind orders changed files: source 0, tests 1, the rest 2.
func changeKind(st *changeState) int {
	switch {
	case lang.IsTestPath(st.c.Path):
		return 1
	case isSourcePath(st.c.Path) && (st.e == nil || !generatedText(st.e.original)):
		return 0
	}
	return 2
}

// changeUnits lists everything the budget could buy, each with its class
// and rank.
func (b *builder) changeUnits(ctx context.Context, states []*changeState, intent *Intent) ([]*unit, error) {
	var units []*unit
	// A file's regions never overlap: a region that shares a line with one
	// already planned (a whole file shares every line) is left out.
	inPack := map[*entry][][2]int{}
	var scanErr error
	addRegion := func(u *unit) {
		if !u.lazy {
			if err := b.scanEntry(ctx, u.e); err != nil && scanErr == nil {
				scanErr = err
			}
		}
		if u.e == nil || u.e.row.Reason != "" {
			return
		}
		lo, hi := u.start, u.end
		if lo == 0 {
			lo, hi = 1, max(lang.CountLines(u.e.original), 1)
		}
		for _, r := range inPack[u.e] {
			if r[0] <= hi && lo <= r[1] {
				return
			}
		}
		inPack[u.e] = append(inPack[u.e], [2]int{lo, hi})
		units = append(units, u)
	}
	// Hunks, and the regions of the changed files.
	for _, st := range states {
		kind := changeKind(st)
		hunkClass, regionClass := classSourceHunk, classEnclosing
		switch kind {
		case 1:
			hunkClass, regionClass = classTestHunk, classTestEnclosing
		case 2:
			hunkClass, regionClass = classOtherHunk, -1
		}
		// An added file is sent as its content. So is a changed file git
		// calls binary that reads as text here (UTF-16 with a BOM, say):
		// git gives no diff of it, and its new text is the change.
		textNotDiffed := st.c.Binary && len(st.hunks) == 0 && st.c.Status != "deleted"
		if st.e != nil && (st.c.Status == "added" && len(st.hunks) > 0 || textNotDiffed) {
			st.asContent = true
			n := lang.CountLines(st.e.original)
			for lo := 1; lo <= n; lo += addedChunkLines {
				hi := min(n, lo+addedChunkLines-1)
				addRegion(&unit{class: hunkClass, rank: st.rank*10000 + lo, diff: true, e: st.e, start: lo, end: hi, rel: []string{RelChanged}})
				st.chunks++
			}
			continue
		}
		for i := range st.hunks {
			units = append(units, &unit{class: hunkClass, rank: st.rank*10000 + i, diff: true, ch: st, hunk: i})
		}
		if regionClass < 0 || st.e == nil {
			continue
		}
		for _, r := range changeRegions(st) {
			r.class, r.rank = regionClass, st.rank*10000+r.start
			addRegion(r)
		}
	}
	// Files the intent names.
	changed := map[string]bool{}
	for _, st := range states {
		changed[st.c.Path] = true
	}
	if intent != nil {
		for i, p := range intent.Mentioned {
			if changed[p] {
				continue
			}
			e, err := b.entryOf(ctx, p)
			if err != nil {
				return nil, err
			}
			if e != nil {
				addRegion(&unit{class: classMentioned, rank: i, e: e, rel: []string{RelMentioned}, distance: 1})
			}
		}
	}
	// Relations of the change.
	rels, err := b.relations(ctx, states)
	if err != nil {
		return nil, err
	}
	for _, u := range rels {
		addRegion(u)
	}
	// Key files, then the rest: unchanged files of the snapshot, boilerplate
	// and generated files left out — and never scanned, since they are not
	// sent (a generated file that could be a key file is). Under lazyScan
	// they are scanned as the budget reaches them (allocation.ready);
	// otherwise the scan decides which are excluded, so all are scanned now.
	if !b.lazyScan {
		var candidates []*entry
		for _, e := range b.entries {
			if e.row.Reason != "" || changed[e.file.Path] || IsBoilerplate(e.file.Path) {
				continue
			}
			if e.importance != "" || !(isGeneratedPath(e.file.Path) || generatedText(e.original)) {
				candidates = append(candidates, e)
			}
		}
		if err := b.scanEntries(ctx, candidates); err != nil {
			return nil, err
		}
	}
	b.chooseKeyFiles()
	var rest []*entry
	for _, e := range b.entries {
		if e.row.Reason != "" || changed[e.file.Path] {
			continue
		}
		if len(inPack[e]) > 0 {
			continue // planned already (the intent names it, or a relation)
		}
		if IsBoilerplate(e.file.Path) || isToolConfig(e.file.Path) || isGeneratedPath(e.file.Path) || generatedText(e.original) {
			e.row.Reason, e.row.Detail = ReasonBoilerplate, "unchanged "+boilerplateWhat(e.file.Path)+": sent only when it changes"
			continue
		}
		if e.key {
			addRegion(&unit{class: classKey, rank: len(units), e: e, key: true, lazy: e.pending})
		} else {
			rest = append(rest, e)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool {
		di, dj := depth(rest[i].file.Path), depth(rest[j].file.Path)
		if di != dj {
			return di < dj
		}
		return rest[i].file.Path < rest[j].file.Path
	})
	for i, e := range rest {
		addRegion(&unit{class: classRest, rank: i, e: e, lazy: e.pending})
	}
	if scanErr != nil {
		return nil, scanErr
	}
	sort.SliceStable(units, func(i, j int) bool {
		if units[i].class != units[j].class {
			return units[i].class < units[j].class
		}
		return units[i].rank < units[j].rank
	})
	return units, nil
}

// boilerplateWhat names what kind of boilerplate a file is, for its detail.
func boilerplateWhat(p string) string {
	base := strings.ToLower(path.Base(p))
	switch {
	case strings.Contains(base, "lock") || base == "go.sum" || base == "npm-shrinkwrap.json":
		return "lockfile"
	case strings.HasPrefix(base, "licen") || base == "copying" || strings.HasPrefix(base, "notice") || strings.HasPrefix(base, "patents"):
		return "licence text"
	case strings.HasPrefix(base, "change") || strings.HasPrefix(base, "history") || strings.HasPrefix(base, "news"):
		return "changelog"
	case isGeneratedPath(p):
		return "generated file"
	case strings.HasPrefix(base, ".") || isToolConfig(p):
		return "tool configuration"
	}
	return "project boilerplate"
}

// chooseKeyFiles marks the key files among the unchanged candidates.
func (b *builder) chooseKeyFiles() {
	var cands []*entry
	for _, e := range b.entries {
		if e.row.Reason == "" && e.importance != "" && !IsBoilerplate(e.file.Path) && !isToolConfig(e.file.Path) {
			cands = append(cands, e)
		}
	}
	markKeyFiles(cands)
}

// changeRegions are the regions of a changed file worth sending beside its
// diff: the whole file when it is short, else the enclosing definition of
// each hunk (or the change with context, outside any definition or in a
// very long one), merged; a region the hunk already shows whole is left out.
func changeRegions(st *changeState) []*unit {
	e := st.e
	n := lang.CountLines(e.original)
	if n == 0 {
		return nil
	}
	base := &unit{e: e, rel: []string{RelChanged}}
	if n <= smallFileLines {
		u := *base
		u.start, u.end = 1, n
		if !hunksCover(st, 1, n) {
			return []*unit{&u}
		}
		return nil
	}
	var syms []lang.Symbol
	if st.facts != nil {
		syms = st.facts.Symbols
	}
	type region struct {
		lo, hi     int
		sym, kind  string
		truncated  bool
		fromSymbol bool
	}
	var regions []region
	for _, h := range st.hunks {
		lo, hi := h.lo, h.hi
		if lo == 0 {
			continue
		}
		lo, hi = min(max(lo, 1), n), min(max(hi, 1), n)
		if s, ok := lang.Enclosing(syms, lo, hi); ok && s.EndLine-s.Line+1 <= maxRegionLines {
			regions = append(regions, region{s.Line, min(s.EndLine, n), s.Name, s.Kind, false, true})
			continue
		} else if ok {
			regions = append(regions, region{max(s.Line, lo-regionContext), min(s.EndLine, hi+regionContext, n), s.Name, s.Kind, true, true})
			continue
		}
		// Outside any definition: the change may be a whole new one (an
		// added function with the blank line before it), which names it.
		r := region{max(1, lo-regionContext), min(n, hi+regionContext), "", "", false, false}
		if s, ok := soleDefinition(syms, lo, hi); ok {
			r.sym, r.kind = s.Name, s.Kind
		}
		regions = append(regions, r)
	}
	sort.Slice(regions, func(i, j int) bool { return regions[i].lo < regions[j].lo })
	var merged []region
	for _, r := range regions {
		if k := len(merged); k > 0 && r.lo <= merged[k-1].hi+1 {
			m := &merged[k-1]
			if r.hi > m.hi {
				m.hi = r.hi
			}
			if m.sym != r.sym {
				m.sym, m.kind = "", ""
			}
			continue
		}
		merged = append(merged, r)
	}
	var out []*unit
	for _, r := range merged {
		if hunksCover(st, r.lo, r.hi) {
			continue
		}
		u := *base
		u.start, u.end, u.symbol, u.kind = r.lo, r.hi, r.sym, r.kind
		out = append(out, &u)
	}
	return out
}

// soleDefinition is the one outermost definition that lines lo..hi hold
// whole, when no definition lies only partly in them.
func soleDefinition(syms []lang.Symbol, lo, hi int) (lang.Symbol, bool) {
	var whole []lang.Symbol
	for _, s := range lang.Overlapping(syms, lo, hi) {
		if s.Line < lo || s.EndLine > hi {
			return lang.Symbol{}, false
		}
		whole = append(whole, s)
	}
	var outer []lang.Symbol
	for _, s := range whole {
		nested := false
		for _, o := range whole {
			if o != s && o.Line <= s.Line && s.EndLine <= o.EndLine && (o.Line != s.Line || o.EndLine != s.EndLine) {
				nested = true
			}
		}
		if !nested {
			outer = append(outer, s)
		}
	}
	if len(outer) != 1 {
		return lang.Symbol{}, false
	}
	return outer[0], true
}

// hunksCover reports whether lines lo..hi of the new file are all shown by
// the change's hunks (as context or added lines).
func hunksCover(st *changeState, lo, hi int) bool {
	for _, h := range st.hunks {
		if h.newLines > 0 && h.newStart <= lo && hi <= h.newStart+h.newLines-1 {
			return true
		}
	}
	return false
}

// entryOf returns the entry of a head-tree path: listed, or taken from the
// tree (and then classified, filtered and scanned like every file); nil
// when there is none or it may not leave.
func (b *builder) entryOf(ctx context.Context, p string) (*entry, error) {
	e, err := b.readEntry(ctx, p)
	if err != nil || e == nil {
		return nil, err
	}
	if err := b.scanEntry(ctx, e); err != nil {
		return nil, err
	}
	if e.row.Reason != "" {
		return nil, nil
	}
	return e, nil
}

// readEntry is entryOf without the scan: a file of a change pack read and
// classified, pending its scan (lazyScan); nil when it is not there or
// excluded before any scan.
func (b *builder) readEntry(ctx context.Context, p string) (*entry, error) {
	if e, ok := b.byPath[p]; ok {
		if e.row.Reason != "" {
			return nil, nil
		}
		return e, nil
	}
	if b.snap.Tree == nil {
		return nil, nil
	}
	// A name holding a secret never leaves: such a file is simply not used.
	if bad, err := ScanNames(ctx, b.opts.Scanner, []string{p}); err != nil {
		return nil, fmt.Errorf("secret scan of the name %s: %w", p, err)
	} else if len(bad) > 0 {
		return nil, nil
	}
	f, ok := b.ahead.file(p)
	if !ok {
		var err error
		if f, ok, err = b.snap.Tree.File(ctx, p); err != nil {
			return nil, fmt.Errorf("read %s from the head tree: %w", p, err)
		}
	}
	if !ok {
		return nil, nil
	}
	if err := b.addIgnoreFilesFor(ctx, p); err != nil {
		return nil, err
	}
	file := f
	e, err := b.examine(ctx, &file, b.lazyScan)
	if err != nil {
		return nil, err
	}
	b.addEntry(e)
	if e.row.Reason != "" {
		return nil, nil
	}
	return e, nil
}

// addEntry lists a file taken from the tree in the snapshot, in path order.
func (b *builder) addEntry(e *entry) {
	b.byPath[e.file.Path] = e
	i := sort.Search(len(b.entries), func(i int) bool { return b.entries[i].file.Path >= e.file.Path })
	b.entries = append(b.entries, nil)
	copy(b.entries[i+1:], b.entries[i:])
	b.entries[i] = e
	b.notes = append(b.notes, e.notes...)
	b.added = append(b.added, *e.file)
	e.fromTree = true
}

// contentEvents reports the secrets of the files a change pack uses
// (included, or kept out because of the secret): a file listed or read
// only to look for a relation, and then not sent, had nothing leave.
func (b *builder) contentEvents() {
	for _, e := range b.entries {
		if e.row.Included || e.row.Reason == ReasonCredentials {
			b.secrets = append(b.secrets, e.events...)
		}
	}
}

// addIgnoreFilesFor reads the .ctxpackignore files on the way to p that
// the snapshot did not list, so a file taken from the tree is filtered
// exactly as if the whole tree had been listed.
func (b *builder) addIgnoreFilesFor(ctx context.Context, p string) error {
	dir := path.Dir(p)
	changed := false
	for {
		ip := IgnoreFileName
		if dir != "." && dir != "" {
			ip = dir + "/" + IgnoreFileName
		}
		if _, seen := b.ignore[ip]; !seen {
			f, ok, err := b.snap.Tree.File(ctx, ip)
			if err != nil {
				return fmt.Errorf("read %s from the head tree: %w", ip, err)
			}
			var data []byte
			if ok && f.Read != nil {
				if data, err = f.Read(ctx); err != nil {
					return fmt.Errorf("read %s: %w", ip, err)
				}
				changed = true
			}
			b.ignore[ip] = data
			if ok {
				b.addIgnoreEntry(ctx, f)
			}
		}
		if dir == "." || dir == "" {
			break
		}
		dir = path.Dir(dir)
	}
	if changed {
		b.exclude = NewExcluder(b.pol, b.opts.Sensitive, b.ignoreSources())
	}
	return nil
}

// addIgnoreEntry lists an ignore file read from the tree (it is part of
// what the pack describes, like every file it reads).
func (b *builder) addIgnoreEntry(ctx context.Context, f File) {
	if _, ok := b.byPath[f.Path]; ok {
		return
	}
	file := f
	if e, err := b.examine(ctx, &file, b.lazyScan); err == nil {
		b.addEntry(e)
	}
}

// ignoreSources is the .ctxpackignore texts read so far (absent files left out).
func (b *builder) ignoreSources() map[string][]byte {
	out := map[string][]byte{}
	for p, data := range b.ignore {
		if data != nil {
			out[p] = data
		}
	}
	return out
}

// regionText cuts lines start..end of the entry's text and applies the
// secret policy to them: the findings of the whole file mapped in, then a
// rescan of the cut (a secret can look different out of context). The
// redactions carry file lines.
func (b *builder) regionText(ctx context.Context, e *entry, start, end int) (string, []Redaction, error) {
	lo, hi := lineOffsets(e, start, end)
	text := e.original[lo:hi]
	var spans []redactSpan
	for _, f := range e.findings {
		s, t := max(f.Start, lo), min(f.End, hi)
		if s < t {
			spans = append(spans, redactSpan{s - lo, t - lo, f.RuleID})
		}
	}
	sent, reds, err := b.redactAll(ctx, e.file.Path, text, spans)
	if err != nil {
		return "", nil, err
	}
	for _, f := range reds.extra {
		f.Path = e.file.Path
		e.events = append(e.events, SecretEvent{Finding: f, Where: "content", Action: SecretRedacted})
		e.withheld = WithheldSecret // a secret the whole-file scan missed
	}
	out := make([]Redaction, len(reds.list))
	for i, r := range reds.list {
		out[i] = Redaction{Line: start + r.Line - 1, RuleID: r.RuleID}
	}
	return sent, out, nil
}

// lineOffsets returns the byte span of lines start..end (1-based,
// inclusive) of the entry's text.
func lineOffsets(e *entry, start, end int) (int, int) {
	if e.lineStarts == nil {
		e.lineStarts = []int{0}
		for i := 0; i < len(e.original); i++ {
			if e.original[i] == '\n' && i+1 < len(e.original) {
				e.lineStarts = append(e.lineStarts, i+1)
			}
		}
	}
	n := len(e.lineStarts)
	start, end = min(max(start, 1), n), min(max(end, 1), n)
	lo := e.lineStarts[start-1]
	hi := len(e.original)
	if end < n {
		hi = e.lineStarts[end]
	}
	return lo, hi
}

// prepare fills a unit's text and costs. Hunk text is the (already
// scanned) diff; region text is cut and scanned here.
func (b *builder) prepare(ctx context.Context, u *unit) error {
	if u.isHunk() {
		u.text = u.ch.hunks[u.hunk].text
	} else if u.start > 0 {
		n := lang.CountLines(u.e.original)
		u.end = min(u.end, n)
		text, reds, err := b.regionText(ctx, u.e, u.start, u.end)
		if err != nil {
			return err
		}
		u.text, u.reds = text, reds
		u.truncated = u.start > 1 || u.end < n
	} else {
		if err := b.checkSent(ctx, u.e); err != nil {
			return err
		}
		u.text, u.reds, u.truncated = u.e.sent, u.e.redactions, u.e.truncated
	}
	tokens, chars, err := jsonCost(u.text)
	if err != nil {
		return err
	}
	u.tokens, u.chars, u.bytes = tokens, chars, len(u.text)
	if !u.isHunk() {
		it := b.regionItem(u)
		it.Content = ""
		data, err := Marshal(&it)
		if err != nil {
			return err
		}
		n, err := CountTokensOf(data)
		if err != nil {
			return err
		}
		u.tokens += n + 1
		u.chars += RuneCount(data) + 1
	}
	return nil
}

// jsonCost is what a string costs inside the serialized pack: the tokens
// and characters of its JSON form.
func jsonCost(s string) (int, int, error) {
	data, err := Marshal(s)
	if err != nil {
		return 0, 0, err
	}
	n, err := CountTokensOf(data)
	return n, RuneCount(data), err
}

// regionItem is the content item of a region unit.
func (b *builder) regionItem(u *unit) Item {
	e := u.e
	sum := sha256.Sum256([]byte(u.text))
	start, end := u.start, u.end
	if start == 0 {
		end = lang.CountLines(e.original)
		if end > 0 {
			start = 1
		}
	}
	role := RoleRelated
	if b.changed[e.file.Path] {
		role = RolePrimary
	}
	it := Item{
		ID:                fmt.Sprintf("%s:%d:%d", e.file.Path, start, end),
		Path:              e.file.Path,
		Role:              role,
		Encoding:          e.encoding,
		Content:           u.text,
		SHA256:            hex.EncodeToString(sum[:]),
		Blob:              e.row.Blob,
		Truncated:         u.truncated,
		OriginalSizeBytes: e.row.BytesOriginal,
		Redactions:        append([]Redaction{}, u.reds...),
		StartLine:         start,
		EndLine:           end,
		Symbol:            u.symbol,
		SymbolType:        u.kind,
		Relationship:      u.rel,
	}
	if len(u.rel) > 0 {
		it.Distance = new(u.distance)
	}
	if u.key {
		it.Category, it.Importance = e.index.Category, e.importance
	}
	if imps := b.importsOf(e.file.Path); len(imps) > 0 {
		it.Imports = capStrings(imps, 30)
	}
	return it
}

func capStrings(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string{}, s[:n]...), fmt.Sprintf("… %d more", len(s)-n))
	}
	return s
}

// trimManifest keeps the manifest's dependencies that the change touches:
// those the changed files import and those of a changed manifest file. A
// hundred unchanged dependencies tell a reviewer nothing about the change.
func trimManifest(m Manifest, changed map[string]bool, imports []string) Manifest {
	var deps []Dependency
	for _, d := range m.Dependencies {
		keep := changed[d.Source]
		for _, imp := range imports {
			if imp == d.Name || strings.HasPrefix(imp, d.Name+"/") || strings.HasPrefix(imp, d.Name+".") {
				keep = true
				break
			}
		}
		if keep {
			deps = append(deps, d)
		}
	}
	if deps == nil {
		deps = []Dependency{}
	}
	m.Dependencies = deps
	return m
}

// importsOfChanged lists the import specifiers of the changed files.
func (b *builder) importsOfChanged(states []*changeState) []string {
	var out []string
	for _, st := range states {
		if st.facts != nil {
			out = append(out, st.facts.Imports...)
		}
	}
	return out
}
