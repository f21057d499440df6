package transparency

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
)

// Read profiles (seed 001).
const (
	// ProfileOrchestrator is the compact, handoff-first view (default).
	ProfileOrchestrator = "orchestrator"
	// ProfileReviewer is the full view: diffs and file contents.
	ProfileReviewer = "reviewer"
	// ProfileExecutor is the actionable compact view with a higher bound.
	ProfileExecutor = "executor"
)

// Default page sizes per profile; 0 means unlimited.
const (
	DefaultOrchestratorLimit = 6
	DefaultExecutorLimit     = 20
	DefaultReviewerLimit     = 0
)

// ReadProfiles lists the profiles in a stable order.
var ReadProfiles = []string{ProfileOrchestrator, ProfileReviewer, ProfileExecutor}

// ReadOptions select a page of a pack's chunks.
type ReadOptions struct {
	// Profile is orchestrator (default), reviewer or executor.
	Profile string
	// Limit is the page size; 0 means the profile's default (6 for
	// orchestrator, 20 for executor, unlimited for reviewer).
	Limit int
	// Offset is the first chunk of the page (among the matching chunks). It
	// may not be combined with PageToken.
	Offset int
	// PageToken continues from a previous page's LEGEND next_page_token. The
	// token carries the profile, filter and limit: options left zero are taken
	// from it, options given must equal it.
	PageToken string
	// Contains keeps the chunks whose rendered text contains it, ignoring case.
	Contains string
	// Sections are chunks read before the pack's (a stored entry's document
	// sections); they number, filter and page with the pack's chunks. With
	// no pack, they are all that is read.
	Sections []ReadSection
	// ID names what is read when there is no pack (a stored entry's id).
	ID string
	// Legend adds lines to the LEGEND after pack_id (a store's selection
	// and freshness), in order; values are shown as visible text.
	Legend []LegendLine
	// Binding is bound into the page tokens with the pack id (a stored
	// entry's revision): a token issued under another binding is stale.
	Binding string
	// Nav words the deep-nav hints; nil words them as ctxpack read command
	// lines.
	Nav func(ReadHint) string
}

// ReadSection is one chunk given by the caller.
type ReadSection struct {
	// ID is unique among the sections (the chunk's paging identity).
	ID string
	// Title is plain text for the chunk heading.
	Title string
	// Body is the chunk's markdown.
	Body string
}

// LegendLine is one "- key: value" line of the LEGEND.
type LegendLine struct{ Key, Value string }

// ReadHint is a view a deep-nav hint points to.
type ReadHint struct {
	// Profile is the profile to ask for ("" keeps the current one).
	Profile string
	// Contains is the filter to ask for; "" with Placeholder means a
	// placeholder for a path or id.
	Contains string
	// Placeholder asks for a placeholder filter (Contains unset).
	Placeholder bool
	// NextPage asks for the next page (a page token placeholder).
	NextPage bool
}

// Error codes of Read.
const (
	ReadCodeInvalidData = "invalid_data"
	// ReadInvalidPageToken is in the message of every page-token failure.
	ReadInvalidPageToken = "invalid_page_token"
)

// ReadError is a Read failure in seed 001's error contract shape: kind
// validation, code invalid_data, machine-readable details and a message that
// says the same for people.
type ReadError struct {
	Kind    string         `json:"kind"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

func (e *ReadError) Error() string { return e.Message }

// JSON is the error's JSON form (details always an object).
func (e *ReadError) JSON() []byte {
	c := *e
	if c.Details == nil {
		c.Details = map[string]any{}
	}
	data, err := pack.Marshal(&c)
	if err != nil { // details hold only strings, numbers, bools and slices
		return []byte(`{"kind":"validation","code":"invalid_data","message":"unserializable error","details":{}}` + "\n")
	}
	return data
}

// Check is the error as an audit check (same contract).
func (e *ReadError) Check() audit.Check {
	return audit.Check{Kind: e.Kind, Code: e.Code, Message: e.Message, Details: e.Details}
}

func rdInvalid(details map[string]any, format string, args ...any) *ReadError {
	return &ReadError{Kind: audit.KindValidation, Code: ReadCodeInvalidData, Message: fmt.Sprintf(format, args...), Details: details}
}

func rdBadToken(reason string, details map[string]any, format string, args ...any) *ReadError {
	if details == nil {
		details = map[string]any{}
	}
	details["requested_field"] = "page_token"
	details["reason"] = reason
	details["guidance"] = "start again without page_token (offset 0) using the same pack and options, then follow next_page_token"
	return rdInvalid(details, ReadInvalidPageToken+": "+format, args...)
}

// Read renders one page of a pack as markdown for an agent or a person. The
// pack is cut into chunks in a fixed order: an overview (scope, verdict, top
// risks and gaps, how to read more), one chunk per change, one per content
// item (key files first), then the excluded files grouped by reason. rec may
// be nil (no verdict or history findings are shown then). The page ends with
// a LEGEND whose next_page_token continues it; following the tokens from
// offset 0 returns every matching chunk exactly once.
func Read(p *pack.Pack, rec *Record, opts ReadOptions) (string, error) {
	if p == nil && len(opts.Sections) == 0 {
		return "", rdInvalid(map[string]any{"requested_field": "pack", "required_fields": []string{"pack"}}, "read: no pack given")
	}
	packID := opts.ID
	if p != nil {
		packID = p.PackID
	}
	profile := strings.ToLower(strings.TrimSpace(opts.Profile))
	if profile != "" && !rdValidProfile(profile) {
		return "", rdInvalid(map[string]any{"requested_field": "profile", "requested_value": opts.Profile, "allowed_values": ReadProfiles},
			"read: unknown profile %q: use orchestrator, reviewer or executor", opts.Profile)
	}
	if opts.Limit < 0 {
		return "", rdInvalid(map[string]any{"requested_field": "limit", "requested_value": opts.Limit},
			"read: limit must be 0 (the profile's default) or more, not %d", opts.Limit)
	}
	if opts.Offset < 0 {
		return "", rdInvalid(map[string]any{"requested_field": "offset", "requested_value": opts.Offset},
			"read: offset must be 0 or more, not %d", opts.Offset)
	}
	if opts.Offset > 0 && opts.PageToken != "" {
		return "", rdInvalid(map[string]any{"requested_fields": []string{"offset", "page_token"}, "mutually_exclusive": true},
			"read: offset and page_token cannot be combined: use offset for the first page and page_token to continue")
	}

	contains := opts.Contains
	limit := opts.Limit
	offset := opts.Offset
	var tok *rdToken
	if opts.PageToken != "" {
		t, err := rdDecodeToken(opts.PageToken)
		if err != nil {
			return "", err
		}
		if t.PackID != packID {
			return "", rdBadToken("pack_mismatch", map[string]any{"token_pack_id": t.PackID, "pack_id": packID},
				"the page token belongs to pack %s, not %s", rdOr(t.PackID, "(none)"), rdOr(packID, "(none)"))
		}
		if t.Binding != opts.Binding {
			return "", rdBadToken("stale", map[string]any{"token_binding": t.Binding, "binding": opts.Binding},
				"the page token is stale: it was issued for %s, the pack is now at %s", rdOr(t.Binding, "(none)"), rdOr(opts.Binding, "(none)"))
		}
		var mismatched []string
		if profile != "" && profile != t.Profile {
			mismatched = append(mismatched, "profile")
		}
		if opts.Contains != "" && opts.Contains != t.Contains {
			mismatched = append(mismatched, "contains")
		}
		if opts.Limit != 0 && opts.Limit != t.Limit {
			mismatched = append(mismatched, "limit")
		}
		if len(mismatched) > 0 {
			return "", rdBadToken("options_mismatch", map[string]any{
				"mismatched_fields": mismatched,
				"token_options":     map[string]any{"profile": t.Profile, "contains": t.Contains, "limit": t.Limit},
				"given_options":     map[string]any{"profile": profile, "contains": opts.Contains, "limit": opts.Limit},
			}, "the page token was issued for other options (%s)", strings.Join(mismatched, ", "))
		}
		profile, contains, limit, offset = t.Profile, t.Contains, t.Limit, t.Offset
		tok = t
	}
	if profile == "" {
		profile = ProfileOrchestrator
	}
	if tok == nil && limit == 0 {
		limit = rdDefaultLimit(profile)
	}

	all := rdChunks(p, rec, profile, opts)
	var matching []rdChunk
	needle := strings.ToLower(contains)
	for _, c := range all {
		if needle == "" || strings.Contains(strings.ToLower(c.text), needle) {
			matching = append(matching, c)
		}
	}
	total := len(matching)
	if tok != nil && (tok.Total != total || tok.Offset > total) {
		return "", rdBadToken("stale", map[string]any{"token_total_matching": tok.Total, "total_matching": total, "token_offset": tok.Offset},
			"the page token is stale: it expected %d matching chunks, the pack has %d", tok.Total, total)
	}
	start := min(offset, total)
	end := total
	if limit > 0 && limit < total-start { // never start+limit: a huge limit overflows
		end = start + limit
	}
	page := matching[start:end]
	hasMore := end < total
	next := ""
	if hasMore {
		next = (&rdToken{V: 1, PackID: packID, Binding: opts.Binding, Profile: profile, Contains: contains, Limit: limit, Offset: end, Total: total}).encode()
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# ctxpack read: %s (%s)\n\n", viewCodeSpan(rdOr(packID, "unidentified pack")), profile)
	if len(page) == 0 {
		if needle != "" {
			fmt.Fprintf(&b, "No chunk at this offset matches %s.\n\n", viewCodeSpan(contains))
		} else {
			b.WriteString("No chunk at this offset.\n\n")
		}
	}
	for _, c := range page {
		b.WriteString(c.text)
		b.WriteString("\n")
	}
	b.WriteString("## LEGEND\n\n")
	fmt.Fprintf(&b, "- profile: %s\n", profile)
	fmt.Fprintf(&b, "- pack_id: %s\n", rdOr(packID, "none"))
	for _, l := range opts.Legend {
		fmt.Fprintf(&b, "- %s: %s\n", viewVisible(l.Key), viewVisible(l.Value))
	}
	if contains != "" {
		fmt.Fprintf(&b, "- contains: %s\n", viewCodeSpan(contains))
	} else {
		b.WriteString("- contains: none\n")
	}
	fmt.Fprintf(&b, "- offset: %d\n", start)
	if limit == 0 {
		b.WriteString("- limit: unlimited\n")
	} else {
		fmt.Fprintf(&b, "- limit: %d\n", limit)
	}
	fmt.Fprintf(&b, "- returned: %d\n", len(page))
	fmt.Fprintf(&b, "- total_matching: %d\n", total)
	fmt.Fprintf(&b, "- total_chunks: %d\n", len(all))
	fmt.Fprintf(&b, "- has_more: %t\n", hasMore)
	if next != "" {
		fmt.Fprintf(&b, "- next_page_token: %s\n", next)
	} else {
		b.WriteString("- next_page_token: none\n")
	}
	return b.String(), nil
}

func rdValidProfile(p string) bool {
	for _, q := range ReadProfiles {
		if p == q {
			return true
		}
	}
	return false
}

func rdDefaultLimit(profile string) int {
	switch profile {
	case ProfileReviewer:
		return DefaultReviewerLimit
	case ProfileExecutor:
		return DefaultExecutorLimit
	}
	return DefaultOrchestratorLimit
}

func rdOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// rdToken is the page token's content. It is not a secret and not signed:
// the checksum only makes a damaged or hand-edited token fail closed, and the
// pack id and options bind it to one read.
type rdToken struct {
	V        int    `json:"v"`
	PackID   string `json:"pack_id"`
	Binding  string `json:"binding,omitempty"`
	Profile  string `json:"profile"`
	Contains string `json:"contains"`
	Limit    int    `json:"limit"`
	Offset   int    `json:"offset"`
	Total    int    `json:"total"`
	Sum      string `json:"sum"`
}

const rdTokenMaxLen = 8192

func (t *rdToken) checksum() string {
	c := *t
	c.Sum = ""
	data, _ := json.Marshal(&c)
	h := sha256.Sum256(append([]byte("ctxpack page token v1\n"), data...))
	return hex.EncodeToString(h[:8])
}

func (t *rdToken) encode() string {
	t.Sum = t.checksum()
	data, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(data)
}

// TokenProfile is the profile a page token was issued for, "" when the
// token does not decode (Read then reports why).
func TokenProfile(token string) string {
	t, err := rdDecodeToken(token)
	if err != nil {
		return ""
	}
	return t.Profile
}

func rdDecodeToken(s string) (*rdToken, error) {
	if len(s) > rdTokenMaxLen {
		return nil, rdBadToken("malformed", map[string]any{"max_length": rdTokenMaxLen}, "the page token is too long")
	}
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, rdBadToken("malformed", nil, "the page token is not a ctxpack token (not base64url)")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var t rdToken
	if err := dec.Decode(&t); err != nil || dec.More() {
		return nil, rdBadToken("malformed", nil, "the page token is not a ctxpack token (bad content)")
	}
	if t.V != 1 {
		return nil, rdBadToken("unsupported_version", map[string]any{"token_version": t.V, "supported_version": 1}, "the page token has version %d; this ctxpack reads version 1", t.V)
	}
	if t.Sum == "" || t.Sum != t.checksum() {
		return nil, rdBadToken("checksum_mismatch", nil, "the page token's checksum does not match its content")
	}
	if !rdValidProfile(t.Profile) || t.Limit < 0 || t.Offset < 0 || t.Total < 0 {
		return nil, rdBadToken("malformed", nil, "the page token holds invalid options")
	}
	return &t, nil
}

// rdChunk is one unit of paging: its id and its rendered markdown.
type rdChunk struct {
	id   string
	text string
}

// rdLimits are the compact bounds of a profile (0 = no bound).
type rdLimits struct {
	checks   int // checks listed per kind in the overview
	secrets  int // secret rows in the overview
	excluded int // paths per excluded group
	hunks    int // hunk headers per change (0 = none in compact)
	notable  int // notable code lines per key file summary
	full     bool
	// nav words a hint as the text of a code span ("" when it cannot be).
	nav func(ReadHint) string
}

func rdLimitsFor(profile string) rdLimits {
	switch profile {
	case ProfileReviewer:
		return rdLimits{full: true}
	case ProfileExecutor:
		return rdLimits{checks: 20, secrets: 20, excluded: 50, hunks: 20, notable: 10}
	}
	return rdLimits{checks: 5, secrets: 5, excluded: 10, hunks: 0, notable: 3}
}

// rdCap returns how many of n to show under bound c (0 = all).
func rdCap(n, c int) int {
	if c <= 0 || n < c {
		return n
	}
	return c
}

func rdChunks(p *pack.Pack, rec *Record, profile string, opts ReadOptions) []rdChunk {
	lim := rdLimitsFor(profile)
	lim.nav = opts.Nav
	if lim.nav == nil {
		lim.nav = rdCommandLine
	}
	var list []rdPending
	for _, s := range opts.Sections {
		list = append(list, rdPending{"section:" + s.ID, viewVisible(s.Title), func(b *strings.Builder) { b.WriteString(s.Body) }})
	}
	if p == nil {
		return rdNumber(list)
	}
	list = append(list, rdPending{"overview", "overview", nil})
	for i := range p.Changes {
		c := &p.Changes[i]
		list = append(list, rdPending{"change:" + c.Path, "change " + viewCodeSpan(c.Path), func(b *strings.Builder) { rdChange(b, c, lim) }})
	}
	for _, group := range []struct {
		label string
		items []pack.Item
	}{{"key file", p.KeyFiles}, {"file", p.Contents}} {
		for i := range group.items {
			it := &group.items[i]
			list = append(list, rdPending{"item:" + it.ID, group.label + " " + viewCodeSpan(it.Path), func(b *strings.Builder) { rdItem(b, it, lim) }})
		}
	}
	for i := range p.KeyFilesSummary {
		k := &p.KeyFilesSummary[i]
		list = append(list, rdPending{"key_file_summary:" + k.Path, "key file summary " + viewCodeSpan(k.Path), func(b *strings.Builder) { rdKeySummary(b, k, lim) }})
	}
	if len(p.Entrypoints) > 0 {
		list = append(list, rdPending{"entrypoints", fmt.Sprintf("entrypoints (%d)", len(p.Entrypoints)), func(b *strings.Builder) { rdEntrypoints(b, p.Entrypoints) }})
	}
	groups := rdExcludedGroups(p)
	for _, g := range groups {
		list = append(list, rdPending{"excluded:" + g.reason, fmt.Sprintf("excluded: %s (%s)", viewVisible(rdOr(g.reason, "unspecified")), viewCount(len(g.rows), "file", "files")),
			func(b *strings.Builder) { rdExcluded(b, g, lim) }})
	}
	n := len(list)
	counts := map[string]int{}
	for _, c := range list {
		if c.id != "overview" {
			counts[strings.SplitN(c.id, ":", 2)[0]]++
		}
	}
	for i := range list {
		if list[i].id == "overview" {
			list[i].body = func(b *strings.Builder) { rdOverview(b, p, rec, profile, lim, counts, n) }
		}
	}
	return rdNumber(list)
}

// rdPending is a chunk before rendering.
type rdPending struct {
	id, title string
	body      func(b *strings.Builder)
}

// rdNumber renders the chunks, each headed "[i/n] title".
func rdNumber(list []rdPending) []rdChunk {
	out := make([]rdChunk, 0, len(list))
	for i, c := range list {
		var b strings.Builder
		fmt.Fprintf(&b, "## [%d/%d] %s\n\n", i+1, len(list), c.title)
		c.body(&b)
		out = append(out, rdChunk{id: c.id, text: b.String()})
	}
	return out
}

func rdOverview(b *strings.Builder, p *pack.Pack, rec *Record, profile string, lim rdLimits, counts map[string]int, total int) {
	src := p.Source
	repo := rdOr(src.Repository, p.Manifest.ProjectName)
	if rdIntent(b, p, lim) {
		b.WriteString("**Pack:**")
	} else {
		b.WriteString("**Objective:**")
	}
	fmt.Fprintf(b, " hand over %s", viewCodeSpan(rdOr(repo, "the repository")))
	switch {
	case src.Base != "" && src.Head != "":
		fmt.Fprintf(b, " changes %s..%s", viewCodeSpan(viewShort(src.Base)), viewCodeSpan(viewShort(src.Head)))
	case src.Head != "":
		fmt.Fprintf(b, " at %s", viewCodeSpan(viewShort(src.Head)))
	}
	fmt.Fprintf(b, " as a %s pack", viewVisible(rdOr(p.Type, "unknown")))
	if r := p.Metadata.SelectionReason; r != "" {
		fmt.Fprintf(b, " (%s)", viewVisible(r))
	}
	b.WriteString(".\n\n### Scope\n\n")
	var srcParts []string
	if src.Trigger != "" {
		srcParts = append(srcParts, "trigger "+viewVisible(src.Trigger))
	}
	if src.Ref != "" {
		srcParts = append(srcParts, "ref "+viewCodeSpan(src.Ref))
	}
	if src.Tree != "" {
		srcParts = append(srcParts, "tree "+viewCodeSpan(viewShort(src.Tree)))
	}
	if src.Dirty {
		srcParts = append(srcParts, "uncommitted changes")
	}
	if len(srcParts) > 0 {
		fmt.Fprintf(b, "- source: %s\n", strings.Join(srcParts, " · "))
	}
	m := p.Metadata
	fmt.Fprintf(b, "- files: %s included of %s scanned · %s excluded\n", viewInt(m.FilesIncluded), viewInt(m.TotalFilesScanned), viewInt(m.FilesExcluded))
	withheld, diffs := 0, 0
	for _, c := range p.Changes {
		if c.DiffWithheld != "" {
			withheld++
		} else if c.Diff != "" {
			diffs++
		}
	}
	fmt.Fprintf(b, "- changes: %s (%s sent, %s withheld)\n", viewInt(len(p.Changes)), viewCount(diffs, "diff", "diffs"), viewInt(withheld))
	bu := p.Budget
	fmt.Fprintf(b, "- budget: %s", viewBudgetUse(bu))
	fmt.Fprintf(b, " · content %s · truncated %t · dropped %s\n", viewCount(bu.ContentBytes, "byte", "bytes"), bu.Truncated, viewInt(bu.DroppedItems))
	if rs := p.RepoSummary; rs != nil {
		if rs.Description != "" {
			fmt.Fprintf(b, "- description: %s\n", viewParagraphs(rs.Description))
		}
		if rs.ArchitecturePattern != "" {
			fmt.Fprintf(b, "- architecture: %s\n", viewVisible(rs.ArchitecturePattern))
		}
		if len(rs.KeyTechnologies) > 0 {
			fmt.Fprintf(b, "- technologies: %s\n", rdJoinVisible(rs.KeyTechnologies))
		}
	}

	b.WriteString("\n### Verdict\n\n")
	var v *audit.Verdict
	if rec != nil {
		v = rec.Verdict
	}
	switch {
	case rec == nil:
		b.WriteString("- status: unknown (no transparency record given: run `ctxpack audit` on the pack)\n")
	case v == nil:
		b.WriteString("- status: ❌ not audited (the record holds no verdict)\n")
	default:
		mark := "❌ fail"
		if v.Status == audit.StatusPass && len(v.Failed) == 0 {
			mark = "✅ pass"
		}
		fmt.Fprintf(b, "- status: %s · %s failed · %s · %s skipped\n", mark, viewInt(len(v.Failed)),
			viewCount(len(v.Warnings), "warning", "warnings"), viewInt(len(v.Skipped)))
	}

	b.WriteString("\n### Top risks and gaps\n\n")
	risks := 0
	if v != nil {
		for _, k := range []struct {
			icon   string
			checks []audit.Check
		}{{"❌", v.Failed}, {"⚠️", v.Warnings}, {"⏭️", v.Skipped}} {
			cs := append([]audit.Check(nil), k.checks...)
			sort.SliceStable(cs, func(i, j int) bool {
				if cs[i].Code != cs[j].Code {
					return cs[i].Code < cs[j].Code
				}
				return cs[i].Message < cs[j].Message
			})
			shown := rdCap(len(cs), lim.checks)
			for _, c := range cs[:shown] {
				fmt.Fprintf(b, "- %s %s — %s\n", k.icon, viewCodeSpan(c.Code), viewVisible(c.Message))
				risks++
			}
			if n := len(cs) - shown; n > 0 {
				fmt.Fprintf(b, "- … and %s more %s (profile reviewer lists all)\n", viewInt(n), k.icon)
			}
		}
	}
	if rec != nil && len(rec.Secrets) > 0 {
		secrets := append([]SecretRow(nil), rec.Secrets...)
		sort.SliceStable(secrets, func(i, j int) bool {
			a, c := secrets[i], secrets[j]
			if a.Path != c.Path {
				return a.Path < c.Path
			}
			if a.Line != c.Line {
				return a.Line < c.Line
			}
			if a.RuleID != c.RuleID {
				return a.RuleID < c.RuleID
			}
			return a.Commit < c.Commit
		})
		fmt.Fprintf(b, "- secrets: %s (values never recorded)\n", viewCount(len(secrets), "finding", "findings"))
		shown := rdCap(len(secrets), lim.secrets)
		for _, s := range secrets[:shown] {
			loc := fmt.Sprintf("%s:%d", s.Path, s.Line)
			line := fmt.Sprintf("  - %s %s at %s in %s", viewVisible(rdOr(s.Action, "reported")), viewCodeSpan(s.RuleID), viewCodeSpan(loc), viewVisible(rdOr(s.Where, "content")))
			if s.Commit != "" {
				line += " commit " + viewCodeSpan(viewShort(s.Commit))
			}
			b.WriteString(line + "\n")
		}
		if n := len(secrets) - shown; n > 0 {
			fmt.Fprintf(b, "  - … and %s more\n", viewInt(n))
		}
		risks++
	}
	redactions, redactedFiles, stale := 0, 0, 0
	for _, it := range rdAllItems(p) {
		if len(it.Redactions) > 0 {
			redactions += len(it.Redactions)
			redactedFiles++
		}
		if rdStale(&it) {
			stale++
		}
	}
	if redactions > 0 {
		fmt.Fprintf(b, "- redactions in sent content: %s in %s\n", viewInt(redactions), viewCount(redactedFiles, "file", "files"))
		risks++
	}
	if stale > 0 {
		fmt.Fprintf(b, "- ⚠️ stale refs: %s whose content does not match its sha256\n", viewCount(stale, "item", "items"))
		risks++
	}
	if groups := rdExcludedGroups(p); len(groups) > 0 {
		var parts []string
		for _, g := range groups {
			parts = append(parts, fmt.Sprintf("%s %s", viewVisible(rdOr(g.reason, "unspecified")), viewInt(len(g.rows))))
		}
		fmt.Fprintf(b, "- excluded (not sent): %s\n", strings.Join(parts, " · "))
		risks++
	}
	// A region (a change pack's function around a hunk) is the lines its id
	// names, not a file cut to its head and tail: only the latter is a gap.
	headTail, regions := rdPartialFiles(p)
	if headTail > 0 || bu.DroppedItems > 0 {
		fmt.Fprintf(b, "- gaps: %s truncated (head and tail kept), %s dropped for the budget\n", viewCount(headTail, "file", "files"), viewCount(bu.DroppedItems, "item", "items"))
		risks++
	}
	if regions > 0 {
		fmt.Fprintf(b, "- partial files: %s sent as regions (the lines each item's id names)\n", viewCount(regions, "file", "files"))
	}
	if cut, barred := rdWithheld(p); cut+barred > 0 {
		var parts []string
		if barred > 0 {
			parts = append(parts, viewCount(barred, "diff", "diffs")+" withheld (changed files whose content may not leave)")
		}
		if cut > 0 {
			parts = append(parts, viewCount(cut, "diff", "diffs")+" left out for the budget")
		}
		fmt.Fprintf(b, "- gaps: %s\n", strings.Join(parts, ", "))
		risks++
	}
	hs := append([]pack.RiskHotspot(nil), p.RiskHotspots...)
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].Path < hs[j].Path })
	shown := rdCap(len(hs), lim.checks)
	for _, h := range hs[:shown] {
		fmt.Fprintf(b, "- hotspot %s: %s — %s\n", viewCodeSpan(h.Path), viewVisible(h.RiskType), viewVisible(h.Description))
		risks++
	}
	if n := len(hs) - shown; n > 0 {
		fmt.Fprintf(b, "- … and %s more hotspots\n", viewInt(n))
	}
	if risks == 0 {
		b.WriteString("- none recorded\n")
	}

	b.WriteString("\n### Deep-nav hints\n\n")
	fmt.Fprintf(b, "- %s in total: 1 overview, %s, %s, %s",
		viewCount(total, "chunk", "chunks"), viewCount(counts["change"], "change", "changes"),
		viewCount(counts["item"], "file", "files"), viewCount(counts["excluded"], "excluded group", "excluded groups"))
	if n := counts["section"]; n > 0 {
		fmt.Fprintf(b, ", %s", viewCount(n, "document section", "document sections"))
	}
	if n := counts["key_file_summary"]; n > 0 {
		fmt.Fprintf(b, ", %s", viewCount(n, "key file summary", "key file summaries"))
	}
	if counts["entrypoints"] > 0 {
		b.WriteString(", entrypoints")
	}
	b.WriteString("\n")
	if profile != ProfileReviewer {
		fmt.Fprintf(b, "- full diffs and contents: %s\n", rdHint(lim, ReadHint{Profile: ProfileReviewer}))
	}
	fmt.Fprintf(b, "- one file or change: %s\n", rdHint(lim, ReadHint{Profile: ProfileReviewer, Placeholder: true}))
	fmt.Fprintf(b, "- next page: %s with next_page_token from the LEGEND\n", rdHint(lim, ReadHint{NextPage: true}))
}

func rdJoinVisible(list []string) string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = viewVisible(s)
	}
	return strings.Join(out, ", ")
}

func rdAllItems(p *pack.Pack) []pack.Item {
	out := make([]pack.Item, 0, len(p.KeyFiles)+len(p.Contents))
	out = append(out, p.KeyFiles...)
	return append(out, p.Contents...)
}

// rdStale reports an item whose content does not hash to its sha256.
func rdStale(it *pack.Item) bool {
	sum := sha256.Sum256([]byte(it.Content))
	return it.SHA256 != hex.EncodeToString(sum[:])
}

func rdRedactions(reds []pack.Redaction) string {
	if len(reds) == 0 {
		return "none"
	}
	parts := make([]string, len(reds))
	for i, r := range reds {
		parts[i] = fmt.Sprintf("line %d %s", r.Line, viewCodeSpan(r.RuleID))
	}
	return viewInt(len(reds)) + ": " + strings.Join(parts, ", ")
}

func rdChange(b *strings.Builder, c *pack.Change, lim rdLimits) {
	fmt.Fprintf(b, "- status: %s", viewVisible(c.Status))
	if c.OldPath != "" {
		fmt.Fprintf(b, " from %s", viewCodeSpan(c.OldPath))
	}
	fmt.Fprintf(b, " · +%s −%s", viewInt(c.Added), viewInt(c.Deleted))
	if c.Binary {
		b.WriteString(" · binary")
	}
	b.WriteString("\n")
	hunks := rdHunks(c.Diff)
	switch {
	case c.DiffWithheld != "":
		if c.DiffWithheld == pack.ReasonSizeLimit {
			b.WriteString("- diff: left out for the budget (size_limit)\n")
		} else {
			fmt.Fprintf(b, "- diff: withheld (%s): this file's content may not leave\n", viewVisible(string(c.DiffWithheld)))
		}
	case c.DiffInContent:
		b.WriteString("- diff: not repeated: the added file's content is in the pack\n")
	case c.Diff == "":
		b.WriteString("- diff: none in the pack\n")
	default:
		fmt.Fprintf(b, "- diff: %s, %s", viewCount(strings.Count(c.Diff, "\n")+rdNoFinalNL(c.Diff), "line", "lines"), viewCount(len(hunks), "hunk", "hunks"))
		if c.DiffTruncated {
			b.WriteString(", truncated")
		}
		b.WriteString("\n")
	}
	if len(c.Redactions) > 0 {
		fmt.Fprintf(b, "- redactions: %s\n", rdRedactions(c.Redactions))
	}
	if c.Diff == "" {
		return
	}
	if lim.full {
		b.WriteString("\n")
		viewFenceBlock(b, c.Diff, "diff")
		return
	}
	if lim.hunks > 0 && len(hunks) > 0 {
		shown := rdCap(len(hunks), lim.hunks)
		b.WriteString("- hunks:\n")
		for _, h := range hunks[:shown] {
			fmt.Fprintf(b, "  - %s\n", viewCodeSpan(h))
		}
		if n := len(hunks) - shown; n > 0 {
			fmt.Fprintf(b, "  - … and %s more\n", viewInt(n))
		}
	}
	fmt.Fprintf(b, "- read: %s\n", rdHint(lim, ReadHint{Profile: ProfileReviewer, Contains: c.Path}))
}

// rdHint is a hint as a code span. A hint the code span cannot hold on one
// line is asked again with a placeholder filter.
func rdHint(lim rdLimits, h ReadHint) string {
	text := lim.nav(h)
	if text == "" || strings.Contains(text, "`") || viewVisible(text) != text {
		h.Contains, h.Placeholder = "", true
		if text = lim.nav(h); text == "" || strings.Contains(text, "`") || viewVisible(text) != text {
			return "(see the LEGEND)"
		}
	}
	return "`" + text + "`"
}

// rdCommandLine words a hint as a ctxpack read command line.
func rdCommandLine(h ReadHint) string {
	if h.NextPage {
		return "ctxpack read PACK --page-token TOKEN"
	}
	s := "ctxpack read PACK"
	if h.Profile != "" {
		s += " --profile " + h.Profile
	}
	switch {
	case h.Placeholder && h.Contains == "":
		s += " --contains 'path/or/id'"
	case h.Contains != "":
		s += " --contains " + rdHintArg(h.Contains)
	}
	return s
}

// rdHintArg is a shell-quoted argument for a hint inside a code span; names
// a code span cannot hold on one line are left as a placeholder.
func rdHintArg(s string) string {
	q := viewShellQuote(s)
	if strings.ContainsAny(q, "`") || viewVisible(q) != q {
		return "'PATH'"
	}
	return q
}

func rdNoFinalNL(s string) int {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return 1
	}
	return 0
}

// rdHunks are a diff's hunk header lines.
func rdHunks(diff string) []string {
	var out []string
	for _, line := range strings.Split(diff, "\n") {
		if strings.HasPrefix(line, "@@ ") {
			out = append(out, line)
		}
	}
	return out
}

// rdOriginal is the original's size in bytes, or why it is withheld.
func rdOriginal(it *pack.Item) string {
	if it.OriginalSizeBytes != nil {
		return viewInt(*it.OriginalSizeBytes)
	}
	return viewOriginalSize(nil, it.OriginalWithheld)
}

// rdPartialFiles counts the files sent in part: cut to head and tail, or
// as regions (items with start and end lines). A file with both counts as
// cut.
func rdPartialFiles(p *pack.Pack) (headTail, regions int) {
	cut, region := map[string]bool{}, map[string]bool{}
	for _, group := range [][]pack.Item{p.KeyFiles, p.Contents} {
		for _, it := range group {
			switch {
			case !it.Truncated:
			case it.StartLine > 0:
				region[it.Path] = true
			default:
				cut[it.Path] = true
			}
		}
	}
	for path := range region {
		if !cut[path] {
			regions++
		}
	}
	return len(cut), regions
}

func rdItem(b *strings.Builder, it *pack.Item, lim rdLimits) {
	fmt.Fprintf(b, "- id: %s\n", viewCodeSpan(it.ID))
	fmt.Fprintf(b, "- role: %s", viewVisible(rdOr(it.Role, "unspecified")))
	if it.Category != "" || it.Importance != "" {
		fmt.Fprintf(b, " · category %s · importance %s", viewVisible(rdOr(string(it.Category), "none")), viewVisible(rdOr(it.Importance, "none")))
	}
	b.WriteString("\n")
	if it.Blob != "" {
		fmt.Fprintf(b, "- sha256: %s · blob: %s\n", viewCodeSpan(it.SHA256), viewCodeSpan(it.Blob))
	} else {
		fmt.Fprintf(b, "- sha256: %s · blob: withheld (%s)\n", viewCodeSpan(it.SHA256), viewVisible(rdOr(it.OriginalWithheld, "unknown")))
	}
	fmt.Fprintf(b, "- size: %s sent of %s original · %s · encoding %s\n", viewCount(int64(len(it.Content)), "byte", "bytes"),
		rdOriginal(it), viewCount(strings.Count(it.Content, "\n")+rdNoFinalNL(it.Content), "line", "lines"), viewVisible(rdOr(it.Encoding, "unknown")))
	if it.Truncated && it.StartLine > 0 {
		fmt.Fprintf(b, "- truncated: a region, lines %s–%s of the file\n", viewInt(it.StartLine), viewInt(it.EndLine))
	} else if it.Truncated {
		b.WriteString("- truncated: yes (head and tail kept, a marker in between)\n")
	} else {
		b.WriteString("- truncated: no\n")
	}
	fmt.Fprintf(b, "- redactions: %s\n", rdRedactions(it.Redactions))
	if rdStale(it) {
		b.WriteString("- ⚠️ stale: the content does not match its sha256\n")
	}
	if lim.full {
		b.WriteString("\n")
		viewFenceBlock(b, it.Content, viewLang(it.Path))
		return
	}
	fmt.Fprintf(b, "- read: %s\n", rdHint(lim, ReadHint{Profile: ProfileReviewer, Contains: it.ID}))
}

func rdKeySummary(b *strings.Builder, k *pack.KeyFileSummary, lim rdLimits) {
	fmt.Fprintf(b, "- category: %s\n", viewVisible(string(k.Category)))
	if k.Summary != "" {
		fmt.Fprintf(b, "- summary: %s\n", viewVisible(k.Summary))
	}
	if len(k.Exports) > 0 {
		fmt.Fprintf(b, "- exports: %s\n", rdJoinCode(k.Exports))
	}
	if len(k.Dependencies) > 0 {
		fmt.Fprintf(b, "- dependencies: %s\n", rdJoinCode(k.Dependencies))
	}
	shown := len(k.NotableCode)
	if !lim.full {
		shown = rdCap(shown, lim.notable)
	}
	for _, n := range k.NotableCode[:shown] {
		fmt.Fprintf(b, "- notable: %s\n", viewCodeSpan(n))
	}
	if n := len(k.NotableCode) - shown; n > 0 {
		fmt.Fprintf(b, "- … and %s more notable lines\n", viewInt(n))
	}
}

func rdJoinCode(list []string) string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = viewCodeSpan(s)
	}
	return strings.Join(out, ", ")
}

func rdEntrypoints(b *strings.Builder, eps []pack.Entrypoint) {
	for _, e := range eps {
		fmt.Fprintf(b, "- %s (%s): %s\n", viewCodeSpan(e.Path), viewVisible(e.Type), viewVisible(e.Description))
		for _, r := range e.RoutesOrCommands {
			fmt.Fprintf(b, "  - %s\n", viewCodeSpan(r))
		}
	}
}

type rdGroup struct {
	reason string
	rows   []pack.IndexEntry
}

// rdExcludedGroups groups the pack's excluded files by reason, in the
// summary's reason order.
func rdExcludedGroups(p *pack.Pack) []rdGroup {
	by := map[string][]pack.IndexEntry{}
	for _, e := range p.FileIndex {
		if !e.Included {
			by[string(e.ExclusionReason)] = append(by[string(e.ExclusionReason)], e)
		}
	}
	out := make([]rdGroup, 0, len(by))
	for r, rows := range by {
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].Path < rows[j].Path })
		out = append(out, rdGroup{r, rows})
	}
	sort.Slice(out, func(i, j int) bool {
		oi, iok := smReasonOrder[pack.Reason(out[i].reason)]
		oj, jok := smReasonOrder[pack.Reason(out[j].reason)]
		if iok != jok {
			return iok
		}
		if oi != oj {
			return oi < oj
		}
		return out[i].reason < out[j].reason
	})
	return out
}

func rdExcluded(b *strings.Builder, g rdGroup, lim rdLimits) {
	shown := len(g.rows)
	if !lim.full {
		shown = rdCap(shown, lim.excluded)
	}
	for _, e := range g.rows[:shown] {
		line := "- " + viewCodeSpan(e.Path)
		if e.Detail != "" {
			line += " — " + viewVisible(e.Detail)
		}
		b.WriteString(line + "\n")
	}
	if n := len(g.rows) - shown; n > 0 {
		fmt.Fprintf(b, "- … and %s more: %s\n", viewInt(n), rdHint(lim, ReadHint{Profile: ProfileReviewer, Contains: "excluded: " + g.reason}))
	}
}

// rdWithheld counts the changes whose diff is not in the pack: cut for the
// budget (size_limit), and barred (the file's content may not leave).
func rdWithheld(p *pack.Pack) (cut, barred int) {
	for _, c := range p.Changes {
		switch {
		case c.DiffWithheld == "":
		case c.DiffWithheld == pack.ReasonSizeLimit:
			cut++
		default:
			barred++
		}
	}
	return cut, barred
}
