package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/internal/workers"
	"github.com/ctxpack/ctxpack/pack"
)

// DecodeDepth is how many decoding passes (base64, hex, percent, unicode)
// gitleaks runs over each fragment, the gitleaks CLI's default
// (--max-decode-depth 5). A secret found only after decoding is reported with
// the span of the encoded text.
const DecodeDepth = 5

// ScannerOptions configures NewScanner.
type ScannerOptions struct {
	// RepoRoot is the repository's working tree root, where the default
	// .gitleaks.toml and .gitleaksignore are looked for. May be "".
	RepoRoot string
	// ConfigPath is a gitleaks toml config. "" means RepoRoot/.gitleaks.toml
	// when that file exists, else gitleaks' default rules. As in gitleaks, a
	// config replaces the default rules unless it says
	// `[extend] useDefault = true`.
	ConfigPath string
	// IgnorePath is a .gitleaksignore file of fingerprints. "" means
	// RepoRoot/.gitleaksignore when that file exists.
	IgnorePath string
	// CacheDir holds cached scan results (and the pack builder's token
	// counts). "" means no cache.
	CacheDir string
	// CacheKey authenticates the cache's entries (UserCacheKey); required
	// with CacheDir.
	CacheKey []byte
	// Files, when set, are the gitleaks config and ignore file as the
	// caller read them (for a commit, range or push: from the base commit);
	// RepoRoot, ConfigPath and IgnorePath are then not read.
	Files *GitleaksFiles
	// InlineAllow, when set, says whether a line of path (as AllowLine
	// spells it) is one the configuration's owner already has (the base's):
	// AllowSignature is then honoured only for a finding every line of
	// whose match is such a line. nil honours it as gitleaks does, on any
	// line of a finding's match. Text that is no file (ScanText) never
	// honours it.
	InlineAllow func(path, line string) bool
}

// GitleaksFiles are a repository's gitleaks configuration, read by the
// caller from wherever its configuration applies.
type GitleaksFiles struct {
	// Config is the gitleaks toml; nil means gitleaks' default rules.
	Config *ConfigFile
	// Ignore is .gitleaksignore; nil means none.
	Ignore *ConfigFile
	// ReadRelative reads a file a relative [extend] path of Config names,
	// from where Config was read.
	ReadRelative func(path string) ([]byte, error)
}

// ConfigFile is a configuration file's content and the name messages give it.
type ConfigFile struct {
	Name string
	Data []byte
}

// ScanItem is one unit of work for ScanAll: a file (Path, Content), or, when
// Commit is set, the lines that commit added to Path (Lines; Content unused).
type ScanItem struct {
	Path    string
	Content []byte
	Commit  string
	Lines   []pack.Line
}

// Scanner finds secrets with gitleaks (the default rules or the repository's
// config) and ctxpack's password-assignment rules. It is safe for concurrent
// use.
type Scanner struct {
	rules *ruleSource // read-only after NewScanner
	fast  *fastDetect // the same findings with less work; nil: stock only
	// stock is gitleaks' own detector, for scans without fast (another
	// gitleaks version, or no rule fast can window); built on first use
	// (a few MB and ms).
	stock       func() *detect.Detector
	ignore      ignoreSet
	cache       *Cache
	rulesDigest string
	version     string
	configPath  string
	ignorePath  string
	inlineAllow lineTrust

	scans atomic.Int64 // fragments actually scanned (cache misses)
}

var _ pack.SecretScanner = (*Scanner)(nil)

// NewScanner loads the gitleaks config and ignore file and builds the
// detector. Building is serialized process-wide (gitleaks' config code uses
// global state); the returned Scanner needs no further locking.
func NewScanner(opts ScannerOptions) (*Scanner, error) {
	files := opts.Files
	if files == nil {
		var err error
		if files, err = diskGitleaksFiles(opts); err != nil {
			return nil, err
		}
	}
	var cfgData []byte
	var cfgName, ignName string
	if files.Config != nil {
		cfgData, cfgName = files.Config.Data, files.Config.Name
		if cfgData == nil {
			cfgData = []byte{}
		}
	}
	src, err := loadRules(cfgName, cfgData, files.ReadRelative)
	if err != nil {
		return nil, err
	}
	ign := ignoreSet{}
	if files.Ignore != nil {
		ignName = files.Ignore.Name
		if ign, err = parseIgnore(ignName, files.Ignore.Data); err != nil {
			return nil, err
		}
	}
	cfgPath, ignPath := cfgName, ignName
	s := &Scanner{
		ignore:      ign,
		rulesDigest: src.digest,
		version:     gitleaksVersion(),
		configPath:  cfgPath,
		ignorePath:  ignPath,
		inlineAllow: opts.InlineAllow,
	}
	// One Detector serves all goroutines: DetectContext only reads the
	// config, the prefilter trie and the compiled regexps (all immutable
	// after construction), creates its decoder per call and adds to an
	// atomic byte counter; findings are returned, not stored, because we do
	// not call AddFinding. (Rule Tags slices are clipped in
	// loadGitleaksConfig so the decode path's append never shares memory.)
	s.stock = sync.OnceValue(func() *detect.Detector {
		d := detect.NewDetector(src.full())
		d.MaxDecodeDepth = DecodeDepth
		return d
	})
	s.rules = src
	s.fast = newFastDetect(src, s.version)
	if opts.CacheDir != "" {
		c, err := OpenCache(opts.CacheDir, opts.CacheKey)
		if err != nil {
			return nil, err
		}
		s.cache = c
	}
	return s, nil
}

// RuleCount is the number of gitleaks rules in effect (ctxpack's own
// assignment rules not counted).
func (s *Scanner) RuleCount() int { return len(s.rules.ids) }

// knownRule reports whether id names one of the scanner's rules (a
// redaction marker names the rule that found the secret).
func (s *Scanner) knownRule(id string) bool {
	if id == RulePasswordAssignment || id == RulePasswordInURL {
		return true
	}
	_, ok := slices.BinarySearch(s.rules.ids, id)
	return ok
}

// Version is the gitleaks module version the binary was built with.
func (s *Scanner) Version() string { return s.version }

// RulesDigest is a stable hex sha256 over the rules in effect: every gitleaks
// rule (id, regex, path, secret group, entropy, keywords, allowlists), the
// global allowlists, the decode depth and the version of ctxpack's assignment
// rules. .gitleaksignore is not part of it.
func (s *Scanner) RulesDigest() string { return s.rulesDigest }

// ConfigPath is the gitleaks config file in use, "" for the default rules.
func (s *Scanner) ConfigPath() string { return s.configPath }

// IgnorePath is the .gitleaksignore in use, "" for none.
func (s *Scanner) IgnorePath() string { return s.ignorePath }

// TokenCount and StoreTokenCount keep the pack builder's token counts of
// what it sends in the scan cache, beside the scan results
// (pack.TokenCounts): a run over files packed before counts only what
// changed. Without a cache nothing is kept.
func (s *Scanner) TokenCount(key string) (int, bool) {
	if s.cache == nil {
		return 0, false
	}
	var n int
	return n, s.cache.Load(key, &n)
}

// StoreTokenCount: see TokenCount. A cache that cannot be written only
// costs a count next time.
func (s *Scanner) StoreTokenCount(key string, n int) {
	if s.cache != nil {
		_ = s.cache.Store(key, n)
	}
}

// CacheStats reports the scan cache's lookups; zero without a cache.
func (s *Scanner) CacheStats() CacheStats {
	if s.cache == nil {
		return CacheStats{}
	}
	return s.cache.Stats()
}

// Scan finds secrets in content, the bytes of path that would leave the
// repository. Lines are 1-based; Start/End are byte offsets of the secret in
// content. A finding of a path-only rule (e.g. a .p12 file) covers the whole
// content and has line 0, as gitleaks reports it. Findings are sorted by line,
// offset and rule. Fingerprints are gitleaks' `path:rule:line`; findings
// listed in .gitleaksignore and those a gitleaks:allow comment switches off
// (ScannerOptions.InlineAllow) are dropped.
// An error means the scan did not complete (cancelled context, internal
// failure); partial results are never returned as complete.
func (s *Scanner) Scan(ctx context.Context, path string, content []byte) ([]pack.Finding, error) {
	return s.scan(ctx, path, content, nil, s.inlineAllow)
}

// ScanText is Scan of text that is no file of the repository, where names
// it (the pack's intent, its file names, its other fields): no
// gitleaks:allow in it is honoured, whatever InlineAllow says. A comment
// is a file's configuration, in the file; a commit message, a task or a
// pull request's body has none, and what a file's line says does not
// carry over to a copy of it elsewhere.
func (s *Scanner) ScanText(ctx context.Context, where string, text []byte) ([]pack.Finding, error) {
	return s.scan(ctx, where, text, nil, noLine)
}

// ScanSum is Scan of content whose sha256 is sum (pack.SumScanner): the
// scan cache's key is made from sum, the content not hashed again.
func (s *Scanner) ScanSum(ctx context.Context, path string, content []byte, sum [32]byte) ([]pack.Finding, error) {
	return s.scan(ctx, path, content, &sum, s.inlineAllow)
}

// scan is Scan, with the content's sha256 when the caller has it and the
// lines whose allow comments are honoured.
func (s *Scanner) scan(ctx context.Context, path string, content []byte, sum *[32]byte, trust lineTrust) ([]pack.Finding, error) {
	// Read in place, not copied: nothing of the text outlives the call
	// (findings and cache entries hold offsets), and callers hand over
	// content they do not change while it runs.
	text := unsafe.String(unsafe.SliceData(content), len(content))
	raw, err := s.scanFragment(ctx, path, "", text, sum, trust)
	if err != nil {
		return nil, err
	}
	out := make([]pack.Finding, 0, len(raw))
	for _, r := range raw {
		if s.ignore.ignored("", path, r.RuleID, r.Line) {
			continue
		}
		out = append(out, pack.Finding{
			RuleID:      r.RuleID,
			Path:        path,
			StartLine:   r.Line,
			EndLine:     r.EndLine,
			Fingerprint: fingerprint("", path, r.RuleID, r.Line),
			Start:       r.Start,
			End:         r.End,
		})
	}
	sortFindings(out)
	return out, nil
}

// ScanCommit scans the lines a commit added to path, the way gitleaks scans
// `git log -p -U0`: each run of consecutive line numbers is one fragment
// starting at its first line number, so multi-line secrets inside a run are
// found. Findings carry Commit and gitleaks' commit fingerprint
// `commit:path:rule:line`; .gitleaksignore entries of either form apply.
// Start/End are offsets into the added text: the lines sorted by number, each
// followed by "\n" (AddedText).
func (s *Scanner) ScanCommit(ctx context.Context, commit, path string, lines []pack.Line) ([]pack.Finding, error) {
	if len(lines) == 0 {
		return nil, ctx.Err()
	}
	ls := sortedLines(lines)
	total := 0
	for _, l := range ls {
		total += len(l.Text) + 1
	}
	var out []pack.Finding
	seenWhole := map[string]bool{} // path-only rules fire once per fragment; report once
	off := 0
	for i := 0; i < len(ls); {
		j := i + 1
		for j < len(ls) && ls[j].Number == ls[j-1].Number+1 {
			j++
		}
		var b strings.Builder
		for _, l := range ls[i:j] {
			b.WriteString(l.Text)
			b.WriteByte('\n')
		}
		text := b.String()
		raw, err := s.scanFragment(ctx, path, commit, text, nil, s.inlineAllow)
		if err != nil {
			return nil, err
		}
		first := ls[i].Number
		for _, r := range raw {
			line, end := r.Line, r.EndLine
			if line > 0 {
				line, end = first+line-1, first+end-1
			} else {
				if seenWhole[r.RuleID] {
					continue
				}
				seenWhole[r.RuleID] = true
			}
			if s.ignore.ignored(commit, path, r.RuleID, line) {
				continue
			}
			start, stop := off+r.Start, off+r.End
			if r.Line == 0 {
				start, stop = 0, total // the file itself: all of the added text
			}
			out = append(out, pack.Finding{
				RuleID:      r.RuleID,
				Path:        path,
				Commit:      commit,
				StartLine:   line,
				EndLine:     end,
				Fingerprint: fingerprint(commit, path, r.RuleID, line),
				Start:       start,
				End:         stop,
			})
		}
		off += len(text)
		i = j
	}
	sortFindings(out)
	return out, nil
}

// AddedText is the text ScanCommit's offsets refer to: the lines sorted by
// number, each followed by "\n".
func AddedText(lines []pack.Line) string {
	var b strings.Builder
	for _, l := range sortedLines(lines) {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

func sortedLines(lines []pack.Line) []pack.Line {
	ls := slices.Clone(lines)
	slices.SortStableFunc(ls, func(a, b pack.Line) int { return a.Number - b.Number })
	return ls
}

// ScanAll scans many items in parallel on runtime.NumCPU() workers and
// returns all findings sorted by path, line, rule (then commit and offset).
// The first error cancels the rest and is returned.
func (s *Scanner) ScanAll(ctx context.Context, items []ScanItem) ([]pack.Finding, error) {
	results := make([][]pack.Finding, len(items))
	err := workers.Each(ctx, len(items), runtime.NumCPU(), func(ctx context.Context, i int) error {
		it := items[i]
		var fs []pack.Finding
		var err error
		if it.Commit != "" {
			fs, err = s.ScanCommit(ctx, it.Commit, it.Path, it.Lines)
		} else {
			fs, err = s.Scan(ctx, it.Path, it.Content)
		}
		if err != nil {
			if it.Commit != "" {
				return fmt.Errorf("scan %s in %s: %w", it.Path, it.Commit, err)
			}
			return fmt.Errorf("scan %s: %w", it.Path, err)
		}
		results[i] = fs
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []pack.Finding
	for _, r := range results {
		out = append(out, r...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.StartLine != b.StartLine {
			return a.StartLine < b.StartLine
		}
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		if a.Commit != b.Commit {
			return a.Commit < b.Commit
		}
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.End < b.End
	})
	return out, nil
}

func sortFindings(fs []pack.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.StartLine != b.StartLine {
			return a.StartLine < b.StartLine
		}
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		return a.End < b.End
	})
}

// rawFinding is a finding of one fragment before .gitleaksignore is applied:
// lines relative to the fragment (1 = its first line; 0 = whole file) and
// offsets into the fragment text. It is what the cache stores.
type rawFinding struct {
	RuleID  string `json:"rule"`
	Line    int    `json:"line"`
	EndLine int    `json:"end_line"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
	// MatchLine and MatchEnd are the lines of the rule's match, where
	// gitleaks reads an allow comment, when they are not Line and EndLine
	// (a match wider than its secret); 0 otherwise.
	MatchLine int `json:"match_line,omitempty"`
	MatchEnd  int `json:"match_end,omitempty"`
	// Under marks a finding of the assignment rules or of an escaped
	// string inside gitleaks' findings that an allow comment may switch
	// off: reported only when none of them is left (keptOver).
	Under bool `json:"under,omitempty"`
}

// scanFragment returns the findings of one fragment, from the cache when a
// valid entry exists. sum, when set, is the sha256 of text. Under a trust
// (not gitleaks' own rule) the fragment is scanned with its allow comments
// masked, and the findings a trusted comment allows are dropped after.
func (s *Scanner) scanFragment(ctx context.Context, path, commit, text string, sum *[32]byte, trust lineTrust) ([]rawFinding, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	original, masked := text, false
	if trust != nil {
		if text, masked = maskAllow(text); masked {
			sum = nil // another text: its own digest
		}
	}
	raw, err := s.scanCached(ctx, path, commit, text, sum)
	if err != nil {
		return nil, err
	}
	if masked {
		raw = allowedFindings(path, original, raw, trust)
	}
	return uniqueSpans(keptOver(raw)), nil
}

// uniqueSpans is raw with one finding of each rule and span, the first:
// matches on other lines of one secret are kept apart until the allow
// comments are read (rawFinding.MatchLine). raw is not changed.
func uniqueSpans(raw []rawFinding) []rawFinding {
	if len(raw) < 2 {
		return raw
	}
	type key struct {
		rule       string
		start, end int
	}
	seen := make(map[key]bool, len(raw))
	out := make([]rawFinding, 0, len(raw))
	for _, f := range raw {
		if k := (key{f.RuleID, f.Start, f.End}); !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

// scanCached is scanFragment's scan of text, from the cache when a valid
// entry exists.
func (s *Scanner) scanCached(ctx context.Context, path, commit, text string, sum *[32]byte) ([]rawFinding, error) {
	var key string
	if s.cache != nil {
		if sum == nil {
			d := sha256.Sum256(unsafe.Slice(unsafe.StringData(text), len(text))) // read only: no copy of the text
			sum = &d
		}
		key = s.cacheKey(path, commit, *sum)
		var cached []rawFinding
		if s.cache.Load(key, &cached) {
			if validRaw(cached, text) {
				return cached, nil
			}
			s.cache.invalid.Add(1)
		}
	}
	raw, err := s.detectFragment(ctx, path, commit, text)
	if err != nil {
		return nil, err
	}
	if s.cache != nil {
		// A cache that cannot be written only costs a rescan next time.
		_ = s.cache.Store(key, raw)
	}
	return raw, nil
}

// cacheKey addresses a fragment's result: the content digest, the rules
// digest and, because gitleaks' path and commit allowlists and path-only
// rules make the result depend on them, the path and commit.
func (s *Scanner) cacheKey(path, commit string, content [32]byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "ctxpack-scan-v4\x00%s\x00%s\x00%s\x00%s\x00%x",
		s.rulesDigest, s.version, path, commit, content)
	return hex.EncodeToString(h.Sum(nil))
}

// validRaw checks a cached result against the text before trusting it.
func validRaw(fs []rawFinding, text string) bool {
	if len(fs) == 0 {
		return true
	}
	n := strings.Count(text, "\n") // the lines: a final line without '\n' counts
	if len(text) == 0 || text[len(text)-1] != '\n' {
		n++
	}
	for _, f := range fs {
		if f.RuleID == "" || f.Start < 0 || f.End > len(text) || f.Start > f.End {
			return false
		}
		if f.Line == 0 {
			if f.EndLine != 0 || f.Start != 0 || f.End != len(text) {
				return false
			}
			continue
		}
		if f.Line < 1 || f.EndLine < f.Line || f.EndLine > n {
			return false
		}
		if f.MatchLine != 0 && (f.MatchLine < 1 || f.MatchEnd < f.MatchLine || f.MatchEnd > n) {
			return false
		}
	}
	return true
}

var errScanPanic = errors.New("secret scan failed")

// detectFragment runs gitleaks and the assignment rules over one fragment,
// and over the decoded values of its escaped strings; then settles each
// span on its secret (settleSpan) and drops digests (isChecksum).
func (s *Scanner) detectFragment(ctx context.Context, path, commit, text string) (raw []rawFinding, err error) {
	s.scans.Add(1)
	defer func() {
		if r := recover(); r != nil {
			raw, err = nil, fmt.Errorf("%w: %s: %v", errScanPanic, path, r)
		}
	}()
	li := newLineIndex(text)
	raw, err = s.detectText(ctx, path, commit, text, li)
	if err != nil {
		return nil, err
	}
	if hasEscape(text) {
		dec, err := s.detectEscaped(ctx, path, commit, text, li)
		if err != nil {
			return nil, err
		}
		for _, d := range dec {
			if dropped, under := shadowed(raw, text, li, d.Start, d.End); !dropped {
				d.Under = under
				raw = append(raw, d)
			}
		}
	}
	type key struct {
		rule                        string
		start, end, match, matchEnd int
	}
	seen := map[key]bool{}
	out := raw[:0]
	for _, f := range raw {
		if f.Line > 0 {
			match, matchEnd := f.Line, f.EndLine
			f.Start, f.End = settleSpan(text, f.Start, f.End)
			if isChecksum(text, f.Start, f.End) || withinMarker(text, f.Start, f.End, s.knownRule) {
				continue
			}
			f.Line, f.EndLine = li.lineOf(f.Start), li.lineOf(f.End-1)
			if match != f.Line || matchEnd != f.EndLine {
				f.MatchLine, f.MatchEnd = match, matchEnd
			}
		}
		k := key{f.RuleID, f.Start, f.End, f.MatchLine, f.MatchEnd}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, f)
	}
	raw = out
	slices.SortFunc(raw, func(a, b rawFinding) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return strings.Compare(a.RuleID, b.RuleID)
	})
	return raw, nil
}

// detectText is gitleaks' findings and the assignment findings of text,
// with spans as the rules give them.
func (s *Scanner) detectText(ctx context.Context, path, commit, text string, li *lineIndex) ([]rawFinding, error) {
	//lint:ignore SA1019 v8's DetectContext takes detect.Fragment; sources.Fragment replaces it only in v9
	frag := detect.Fragment{
		Raw:       text,
		FilePath:  path,
		CommitSHA: commit,
		StartLine: 1, // gitleaks adds the 0-based line index to this
	}
	assignments := s.assignments(path, commit, text, li)
	gl, ok := s.fast.detectOrSkip(ctx, frag, li)
	if !ok {
		gl = s.stock().DetectContext(ctx, frag)
	}
	assigned := assignments()
	// DetectContext stops quietly on cancellation and returns what it has;
	// a partial scan must not pass for a clean one.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var raw []rawFinding
	// One secret found by two matches is one finding, unless the matches
	// are on other lines: an allow comment may switch one off and not the
	// other (uniqueSpans makes them one after).
	type key struct {
		rule                   string
		start, end, line, end2 int
	}
	seen := map[key]bool{}
	for _, f := range gl {
		start, end := gitleaksSpan(li, f, s.rules.rule(f.RuleID))
		// The lines of the match, where gitleaks reads an allow comment.
		line, endLine := f.StartLine, f.EndLine
		if line <= 0 {
			line, endLine = 0, 0
		} else if end > start {
			// gitleaks leaves EndLine at StartLine when a multi-line match
			// ends on a last line without '\n'; take the span's last line.
			endLine = max(endLine, li.lineOf(end-1))
		}
		k := key{f.RuleID, start, end, line, endLine}
		if line == 0 {
			k.start, k.end = -1, -1
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		raw = append(raw, rawFinding{RuleID: f.RuleID, Line: line, EndLine: endLine, Start: start, End: end})
	}
	for _, a := range assigned {
		line := text[li.start(a.line):li.end(a.line)]
		secret := text[a.start:a.end]
		if globallyAllowedFinding(s.rules.base.Allowlists, path, commit, secret, text[a.matchStart:a.end], line) {
			continue
		}
		dropped, under := shadowed(raw, text, li, a.start, a.end)
		if dropped {
			continue // the gitleaks finding wins
		}
		raw = append(raw, rawFinding{RuleID: a.rule, Line: a.line, EndLine: a.line, Start: a.start, End: a.end, Under: under})
	}
	return raw, nil
}

// assignments returns a function that returns the assignment findings of
// text (none where the path is allowed as a whole). A large text's are
// found on another goroutine meanwhile, beside gitleaks' rules (this
// repository's README: ~3.5 ms of a ~20 ms scan, on one core while the
// rules' serial parts left the other idle); a panic there is raised again
// by the function, in the scan's goroutine.
func (s *Scanner) assignments(path, commit, text string, li *lineIndex) func() []assignment {
	if globallyAllowedPath(s.rules.base.Allowlists, path, commit) {
		return func() []assignment { return nil }
	}
	find := func() []assignment { return findAssignments(path, text, li) }
	if len(text) < parallelRulesText {
		return find
	}
	li.lower() // made here, before both goroutines read it
	var found []assignment
	var panicked any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		found = find()
	}()
	return func() []assignment {
		<-done
		if panicked != nil {
			panic(panicked)
		}
		return found
	}
}

// detectEscaped scans the decoded values of text's escaped strings and maps
// the findings back onto text: a finding covering several strings becomes
// one per string. Findings on a raw line carrying gitleaks:allow are
// dropped, as gitleaks drops them in the raw text (where the scanner
// masked the comments, allowedFindings decides after).
func (s *Scanner) detectEscaped(ctx context.Context, path, commit, text string, li *lineIndex) ([]rawFinding, error) {
	ss := escapedStrings(text)
	if len(ss) == 0 {
		return nil, nil
	}
	doc, starts := decodedDoc(ss)
	// An allow comment counts on the raw line, below; one an escape spells
	// (\x67itleaks:allow) is none.
	doc, _ = maskAllow(doc)
	found, err := s.detectText(ctx, path, commit, doc, newLineIndex(doc))
	if err != nil {
		return nil, err
	}
	var out []rawFinding
	for _, f := range found {
		if f.Line <= 0 {
			continue // a path-only rule: the raw text reported it already
		}
		for _, sp := range rawSpans(ss, starts, f.Start, f.End) {
			line := li.lineOf(sp[0])
			if strings.Contains(text[li.start(line):li.end(line)], AllowSignature) {
				continue
			}
			out = append(out, rawFinding{RuleID: f.RuleID, Line: line, EndLine: li.lineOf(sp[1] - 1), Start: sp[0], End: sp[1]})
		}
	}
	return out, nil
}

// shadowed says what becomes of a finding [start,end) of text beside fs,
// found before it, which win where they overlap it: dropped when one of
// them stays whatever the allow comments say; under when the ones it
// overlaps may each be switched off by a comment the scanner reads after
// (allowedFindings; its own comments are masked in text): it is then
// reported if none of them is (keptOver).
func shadowed(fs []rawFinding, text string, li *lineIndex, start, end int) (dropped, under bool) {
	for _, f := range fs {
		if f.Line > 0 && f.Start < end && start < f.End {
			if !mayBeAllowed(text, li, f) {
				return true, false
			}
			under = true
		}
	}
	return false, under
}

// mayBeAllowed reports whether f, a finding of text not settled yet (its
// lines are its match's), may be switched off by an allow comment masked
// in text, or lies under one that may.
func mayBeAllowed(text string, li *lineIndex, f rawFinding) bool {
	if f.Under {
		return true
	}
	for l := f.Line; l <= f.EndLine; l++ {
		if strings.Contains(text[li.start(l):li.end(l)], maskedAllow) {
			return true
		}
	}
	return false
}

// keptOver drops the findings under others (rawFinding.Under) that one of
// those others still overlaps, now that the allow comments are read. raw
// is not changed.
func keptOver(raw []rawFinding) []rawFinding {
	if !slices.ContainsFunc(raw, func(f rawFinding) bool { return f.Under }) {
		return raw
	}
	out := make([]rawFinding, 0, len(raw))
	for _, f := range raw {
		if f.Under && slices.ContainsFunc(raw, func(o rawFinding) bool {
			return !o.Under && o.Line > 0 && o.Start < f.End && f.Start < o.End
		}) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// Flush writes the scan cache's new entries to disk; a no-op without a cache.
func (s *Scanner) Flush() error {
	if s.cache == nil {
		return nil
	}
	return s.cache.Flush()
}

// diskGitleaksFiles reads the gitleaks files of opts from disk: ConfigPath
// (else RepoRoot/.gitleaks.toml when present) and IgnorePath (else
// RepoRoot/.gitleaksignore when present). Files under RepoRoot are read
// through no symlink that leaves it; every file must be a regular file
// within the size limits.
func diskGitleaksFiles(opts ScannerOptions) (*GitleaksFiles, error) {
	root := opts.RepoRoot
	read := func(explicit, def string, max int64, what string) (*ConfigFile, error) {
		name := explicit
		if name == "" {
			if root == "" {
				return nil, nil
			}
			name = filepath.Join(root, def)
		}
		var data []byte
		var err error
		if rel, ok := inside(root, name); ok {
			data, err = fsutil.ReadInRoot(root, rel, max)
		} else {
			data, err = fsutil.ReadFile(name, max)
		}
		if errors.Is(err, fs.ErrNotExist) && explicit == "" {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return &ConfigFile{Name: name, Data: data}, nil
	}
	cfg, err := read(opts.ConfigPath, ".gitleaks.toml", fsutil.MaxConfigBytes, "gitleaks config")
	if err != nil {
		return nil, err
	}
	ign, err := read(opts.IgnorePath, ".gitleaksignore", fsutil.MaxIgnoreBytes, "gitleaks ignore file")
	if err != nil {
		return nil, err
	}
	base := root
	if base == "" {
		base = "."
	}
	return &GitleaksFiles{Config: cfg, Ignore: ign, ReadRelative: func(rel string) ([]byte, error) {
		return fsutil.ReadInRoot(base, rel, fsutil.MaxConfigBytes)
	}}, nil
}

// inside returns p relative to root when p is inside root.
func inside(root, p string) (string, bool) {
	if root == "" {
		return "", false
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
