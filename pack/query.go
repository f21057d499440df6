package pack

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/lang"
	"github.com/ctxpack/ctxpack/policy"
)

// A query pack (seed 003) is one query → the most relevant code chunks of a
// tree within a character budget: for an identifier, its definitions and
// then the definitions that use it; for a path, the file's definitions in
// order; for a phrase, the definitions that hold most of its words. Ranking
// is lexical and deterministic (no model, no network); every chunk is
// filtered and secret-scanned like any content that leaves.

// QueryVersion is the query pack's shape version.
const QueryVersion = 1

// Query ranking's name, in model_id and profile.
const (
	QueryModelID = "ctxpack-lexical-v1"
	QueryProfile = "lexical"
)

// DefaultQueryChars is a query pack's character budget when none is given.
const DefaultQueryChars = 20000

// QueryPack is seed 003's ContextPackOutput.
type QueryPack struct {
	Version int         `json:"version"`
	Query   string      `json:"query"`
	ModelID string      `json:"model_id"`
	Profile string      `json:"profile"`
	Source  Source      `json:"source"`
	Items   []QueryItem `json:"items"`
	Budget  QueryBudget `json:"budget"`
}

// QueryItem is one chunk of a query pack.
type QueryItem struct {
	ID           string      `json:"id"`
	Role         string      `json:"role"`
	File         string      `json:"file"`
	StartLine    int         `json:"start_line"`
	EndLine      int         `json:"end_line"`
	Symbol       string      `json:"symbol,omitempty"`
	Type         string      `json:"type,omitempty"`
	Score        float64     `json:"score"`
	Imports      []string    `json:"imports"`
	Content      string      `json:"content"`
	Relationship []string    `json:"relationship,omitempty"`
	Distance     int         `json:"distance,omitempty"`
	Redactions   []Redaction `json:"redactions,omitempty"`
}

// QueryBudget is seed 003's budget block.
type QueryBudget struct {
	MaxChars     int  `json:"max_chars"`
	UsedChars    int  `json:"used_chars"`
	Truncated    bool `json:"truncated"`
	DroppedItems int  `json:"dropped_items"`
}

// QueryOptions are a query and its budget.
type QueryOptions struct {
	Text     string
	MaxChars int
}

// Query bounds: files read and candidate chunks ranked.
const (
	queryMaxFiles      = 80
	queryMaxCandidates = 400
	queryWindowLines   = 60
	queryChunkLines    = 120
	queryMergeLines    = 30
)

var (
	identQuery = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$`)
	queryWord  = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]{2,}`)
)

// queryStop are words too common to rank by.
var queryStop = set("the", "and", "for", "with", "that", "this", "from", "into", "how", "what", "where", "when", "are",
	"was", "not", "all", "any", "can", "does", "use", "uses", "used", "get", "set", "new", "its", "our", "you", "has")

// queryCand is a ranked chunk before the budget.
type queryCand struct {
	e          *entry
	start, end int
	symbol     string
	kind       string
	score      float64
	rel        []string
	distance   int
}

// Query builds the query pack of a text over the snapshot's tree.
func Query(ctx context.Context, snap *Snapshot, opts Options, q QueryOptions) (*QueryPack, []byte, error) {
	text := strings.TrimSpace(q.Text)
	if text == "" {
		return nil, nil, errors.New("query: empty: give an identifier, a path or a phrase")
	}
	if opts.Scanner == nil {
		return nil, nil, errors.New("query: no secret scanner: a pack is never built unscanned")
	}
	if q.MaxChars <= 0 {
		q.MaxChars = DefaultQueryChars
	}
	if opts.Policy == nil {
		opts.Policy = policy.Default()
	}
	b := &builder{snap: snap, opts: opts, pol: opts.Policy, byPath: map[string]*entry{}, changePack: true}
	if err := b.redactNames(ctx); err != nil {
		return nil, nil, err
	}
	if err := b.readIgnoreFiles(ctx); err != nil {
		return nil, nil, err
	}
	if snap.Tree == nil { // a work tree or plain directory: every file is at hand
		if err := b.examineAll(ctx); err != nil {
			return nil, nil, err
		}
	}
	// The query is echoed back: it leaves too.
	echoed, err := b.scanText(ctx, "(query)", text)
	if err != nil {
		return nil, nil, err
	}
	paths, err := b.treePaths(ctx)
	if err != nil {
		return nil, nil, err
	}
	var cands []queryCand
	switch {
	case queryPath(text, paths) != "":
		cands, err = b.queryFile(ctx, queryPath(text, paths))
	case identQuery.MatchString(text):
		cands, err = b.queryIdent(ctx, text)
	default:
		cands, err = b.queryPhrase(ctx, text)
	}
	if err != nil {
		return nil, nil, err
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, c := cands[i], cands[j]
		if a.score != c.score {
			return a.score > c.score
		}
		if a.e.file.Path != c.e.file.Path {
			return a.e.file.Path < c.e.file.Path
		}
		return a.start < c.start
	})
	if len(cands) > queryMaxCandidates {
		cands = cands[:queryMaxCandidates]
	}
	out := &QueryPack{Version: QueryVersion, Query: echoed, ModelID: QueryModelID, Profile: QueryProfile, Source: snap.Source,
		Items: []QueryItem{}, Budget: QueryBudget{MaxChars: q.MaxChars}}
	used, err := queryChars(out)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cands {
		it, err := b.queryItem(ctx, c)
		if err != nil {
			return nil, nil, err
		}
		data, err := Marshal(&it)
		if err != nil {
			return nil, nil, err
		}
		n := RuneCount(data) // the item, its comma and the final newline's share
		if used+n+1 > q.MaxChars {
			out.Budget.DroppedItems++
			continue
		}
		used += n + 1
		out.Items = append(out.Items, it)
	}
	out.Budget.Truncated = out.Budget.DroppedItems > 0
	// used_chars counts itself: settle it as Finalize does.
	for range 4 {
		n, err := queryChars(out)
		if err != nil {
			return nil, nil, err
		}
		if n == out.Budget.UsedChars {
			break
		}
		out.Budget.UsedChars = n
	}
	data, err := Marshal(out)
	if err != nil {
		return nil, nil, err
	}
	return out, data, nil
}

func queryChars(p *QueryPack) (int, error) {
	data, err := Marshal(p)
	if err != nil {
		return 0, err
	}
	return RuneCount(data), nil
}

// scanText redacts the secrets of a text that leaves as it is.
func (b *builder) scanText(ctx context.Context, where, text string) (string, error) {
	findings, err := b.textScan()(ctx, where, []byte(text))
	if err != nil {
		return "", fmt.Errorf("secret scan of the %s: %w", where, err)
	}
	if len(findings) == 0 {
		return text, nil
	}
	var spans []redactSpan
	for _, f := range findings {
		spans = append(spans, redactSpan{f.Start, f.End, f.RuleID})
	}
	out, _, err := b.redactAllWith(ctx, b.textScan(), where, text, spans)
	return out, err
}

// queryPath resolves a path query: a path of the tree, exactly or by a
// unique suffix of at least two components; "" when the text names none.
func queryPath(text string, paths []string) string {
	t := strings.TrimPrefix(text, "./")
	var suffix []string
	for _, p := range paths {
		if p == t {
			return p
		}
		if strings.Contains(t, "/") && strings.HasSuffix(p, "/"+t) {
			suffix = append(suffix, p)
		}
	}
	if len(suffix) == 1 {
		return suffix[0]
	}
	return ""
}

// queryFile ranks a file's own chunks in order: its outermost definitions,
// or windows of lines when it has none.
func (b *builder) queryFile(ctx context.Context, p string) ([]queryCand, error) {
	e, err := b.entryOf(ctx, p)
	if err != nil || e == nil {
		return nil, err
	}
	chunks := fileChunks(e, b.factsOf(p))
	for i := range chunks {
		chunks[i].score = roundScore(1 - float64(i)*0.001)
	}
	return chunks, nil
}

// fileChunks cuts a file along its outermost definitions (with the lines
// between them), or in windows when it has none.
func fileChunks(e *entry, f *lang.Facts) []queryCand {
	n := lang.CountLines(e.original)
	var out []queryCand
	end := 0
	if f != nil {
		for _, s := range f.Symbols {
			if s.Line <= end {
				continue // nested in the previous one
			}
			// Short neighbours (the constants of one block) make one chunk.
			if k := len(out) - 1; k >= 0 && s.Line-out[k].end <= 2 && s.EndLine-out[k].start < queryMergeLines {
				out[k].end = min(s.EndLine, n)
				end = s.EndLine
				continue
			}
			out = append(out, queryCand{e: e, start: s.Line, end: min(s.EndLine, s.Line+queryChunkLines-1, n), symbol: s.Name, kind: s.Kind})
			end = s.EndLine
		}
	}
	if len(out) == 0 {
		for lo := 1; lo <= n; lo += queryWindowLines {
			out = append(out, queryCand{e: e, start: lo, end: min(n, lo+queryWindowLines-1)})
		}
	}
	return out
}

// queryIdent ranks an identifier's definitions first, then the definitions
// that use it (callers), nearest first.
func (b *builder) queryIdent(ctx context.Context, text string) ([]queryCand, error) {
	name := text[strings.LastIndexByte(text, '.')+1:]
	hits, err := b.grep(ctx, []string{name}, GrepOptions{})
	if err != nil {
		return nil, err
	}
	files := hits[name]
	if len(files) > queryMaxFiles {
		files = files[:queryMaxFiles]
	}
	var out []queryCand
	rank := 0
	for _, p := range files {
		e, err := b.entryOf(ctx, p)
		if err != nil {
			return nil, err
		}
		f := b.factsOf(p)
		if e == nil || f == nil {
			continue
		}
		seen := map[string]bool{}
		for _, s := range lang.Defined(f.Symbols, name) {
			// A qualified query (Repo.Open) prefers the matching qualifier.
			score := 1.0
			if strings.Contains(text, ".") && s.Name != text {
				score = 0.95
			}
			out = append(out, queryCand{e: e, start: s.Line, end: min(s.EndLine, s.Line+queryChunkLines-1), symbol: s.Name, kind: s.Kind, score: score})
			seen[s.Name] = true
		}
		// A qualified name (Context.Redirect) is a method or a package's
		// function: its callers call it as .Redirect(; a bare name is used
		// wherever the word is.
		lines := wordLines(e.original, name)
		if strings.Contains(text, ".") {
			lines = callLines(e.original, name, packageNames(f))
		}
		rel := RelCalledBy
		if lang.IsTestPath(p) {
			rel = RelTestOf
		}
		for _, line := range lines {
			s, ok := lang.Enclosing(f.Symbols, line, line)
			if !ok || seen[s.Name] || receiverMention(s, name, line) {
				continue
			}
			seen[s.Name] = true
			rank++
			out = append(out, queryCand{e: e, start: s.Line, end: min(s.EndLine, s.Line+queryChunkLines-1), symbol: s.Name, kind: s.Kind,
				score: roundScore(0.5 - math.Min(float64(rank)*0.001, 0.4)), rel: []string{rel}, distance: 1})
		}
	}
	return out, nil
}

// queryPhrase ranks chunks by how many of the phrase's words they hold
// (case-insensitively), then by how often, with a bonus when a word names
// the definition.
func (b *builder) queryPhrase(ctx context.Context, text string) ([]queryCand, error) {
	var words []string
	seen := map[string]bool{}
	for _, w := range queryWord.FindAllString(text, -1) {
		lw := stem(strings.ToLower(w))
		if queryStop[lw] || seen[lw] {
			continue
		}
		seen[lw] = true
		words = append(words, lw)
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("query %q: no word of three letters or more to look for", text)
	}
	// A phrase's words are parts of identifiers as often as words
	// (TrustedProxies for "trusted proxy"): any case, anywhere.
	hits, err := b.grep(ctx, words, GrepOptions{Substring: true, IgnoreCase: true})
	if err != nil {
		return nil, err
	}
	fileWords := map[string]map[string]bool{}
	for _, w := range words {
		for _, p := range hits[w] {
			if fileWords[p] == nil {
				fileWords[p] = map[string]bool{}
			}
			fileWords[p][w] = true
		}
	}
	files := make([]string, 0, len(fileWords))
	for p := range fileWords {
		files = append(files, p)
	}
	sort.Slice(files, func(i, j int) bool {
		if a, c := len(fileWords[files[i]]), len(fileWords[files[j]]); a != c {
			return a > c
		}
		return files[i] < files[j]
	})
	if len(files) > queryMaxFiles {
		files = files[:queryMaxFiles]
	}
	var out []queryCand
	for _, p := range files {
		e, err := b.entryOf(ctx, p)
		if err != nil {
			return nil, err
		}
		if e == nil {
			continue
		}
		for _, c := range fileChunks(e, b.factsOf(p)) {
			lo, hi := lineOffsets(e, c.start, c.end)
			chunk := strings.ToLower(e.analysis[lo:min(hi, len(e.analysis))])
			matched, occurrences := 0, 0
			for _, w := range words {
				if n := strings.Count(chunk, w); n > 0 {
					matched++
					occurrences += n
				}
			}
			if matched == 0 {
				continue
			}
			score := float64(matched)/float64(len(words))*0.8 + math.Min(float64(occurrences), 20)/20*0.15
			for _, w := range words {
				if strings.Contains(strings.ToLower(c.symbol), w) {
					score += 0.05
					break
				}
			}
			// The code before its tests and its documents.
			if _, programming, _ := lang.LanguageName(p); lang.IsTestPath(p) || !programming {
				score *= 0.9
			}
			c.score = roundScore(math.Min(score, 1))
			out = append(out, c)
		}
	}
	return out, nil
}

func roundScore(x float64) float64 { return math.Round(x*1000) / 1000 }

// queryItem cuts and scans a chunk.
func (b *builder) queryItem(ctx context.Context, c queryCand) (QueryItem, error) {
	text, reds, err := b.regionText(ctx, c.e, c.start, c.end)
	if err != nil {
		return QueryItem{}, err
	}
	role := RoleRelated
	if c.score >= 0.9 {
		role = RolePrimary
	}
	it := QueryItem{
		ID: fmt.Sprintf("%s:%d:%d", c.e.file.Path, c.start, c.end), Role: role, File: c.e.file.Path,
		StartLine: c.start, EndLine: c.end, Symbol: c.symbol, Type: c.kind, Score: c.score, Imports: []string{},
		Content: text, Relationship: c.rel, Distance: c.distance, Redactions: reds,
	}
	if f := b.factsOf(c.e.file.Path); f != nil && len(f.Imports) > 0 {
		it.Imports = capStrings(f.Imports, 30)
	}
	return it, nil
}

// stem strips one common English ending, so "keys" finds key and
// "refused" finds refuse: the words of a phrase are looked for inside
// identifiers, where they are rarely inflected.
func stem(w string) string {
	for _, suf := range []string{"ing", "ies", "ed", "es", "s"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			if suf == "ies" {
				return w[:len(w)-3] + "y"
			}
			return w[:len(w)-len(suf)]
		}
	}
	return w
}
