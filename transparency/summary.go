package transparency

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
)

// DefaultSummaryMaxChars bounds the reviewer summary: under GitHub's 65,536
// characters for an issue comment, well under its 1 MiB job-summary limit.
const DefaultSummaryMaxChars = 65000

// SummaryOptions configure Summary.
type SummaryOptions struct {
	// RunURL and ArtifactURL are optional http(s) links (the workflow run, the
	// uploaded pack and record). Other schemes are dropped.
	RunURL      string
	ArtifactURL string
	// Marker is a hidden HTML comment placed first (e.g.
	// "<!-- ctxpack:summary -->") so a sticky PR comment can be found again.
	Marker string
	// MaxChars bounds the summary in characters (runes); 0 means
	// DefaultSummaryMaxChars.
	MaxChars int
	// Notes are shown under the verdict (e.g. "history was not available
	// (shallow clone): set fetch-depth: 0").
	Notes []string
}

// Per-item bounds, so that one hostile name or message cannot use the budget.
const (
	smMaxPath    = 300
	smMaxMessage = 1000
	smMaxHeader  = 200
)

// Summary renders the reviewer summary of a pack as GitHub-flavoured markdown:
// the PR comment and job summary text. Either rec or p may be nil; the record
// is preferred where both say the same thing. The output is deterministic and
// at most opts.MaxChars characters: when over, the longest lists are cut
// first and the summary says what was cut.
func Summary(rec *Record, p *pack.Pack, opts SummaryOptions) string {
	max := opts.MaxChars
	if max <= 0 {
		max = DefaultSummaryMaxChars
	}
	v := smCollect(rec, p)
	doc := smBuild(v, opts)
	return doc.fit(max)
}

// smView is what the summary shows, from the record and/or the pack.
type smView struct {
	verdict         *audit.Verdict
	packID          string
	packType        string
	selectionReason string
	source          pack.Source
	scanned         int
	included        int
	excluded        int
	contentBytes    int64
	tokens          int
	tokenEncoding   string
	usedChars       int
	maxChars        int
	hasPack         bool
	sent            []smSent
	groups          []smGroup
	changes         int
	diffsSent       int
	withheld        []ChangeRow
	secrets         []SecretRow
	truncated       []smTrunc
	digests         Digests
	hasRecord       bool
	previous        string
}

type smSent struct {
	path       string
	bytes      int64
	role       string
	truncated  bool
	redactions int
	rules      []string
}

type smExcluded struct{ path, detail string }

type smGroup struct {
	reason string
	rows   []smExcluded
}

type smTrunc struct {
	path string
	// original is nil when the original's size is withheld.
	original *int64
	sent     int64
}

// smReasonOrder puts the reasons a reviewer cares most about first.
var smReasonOrder = map[pack.Reason]int{
	pack.ReasonCredentials:   0,
	pack.ReasonPolicy:        1,
	pack.ReasonPatternMatch:  2,
	pack.ReasonSizeLimit:     3,
	pack.ReasonBinary:        4,
	pack.ReasonDependencyDir: 5,
	pack.ReasonBuildOutput:   6,
	pack.ReasonCache:         7,
	pack.ReasonSymlink:       8,
	pack.ReasonSubmodule:     9,
	pack.ReasonDeleted:       10,
}

func smCollect(rec *Record, p *pack.Pack) *smView {
	v := &smView{}
	byReason := map[string][]smExcluded{}
	if p != nil {
		v.hasPack = true
		v.packID, v.packType, v.source = p.PackID, p.Type, p.Source
		v.selectionReason = p.Metadata.SelectionReason
		v.scanned, v.included, v.excluded = p.Metadata.TotalFilesScanned, p.Metadata.FilesIncluded, p.Metadata.FilesExcluded
		v.contentBytes = p.Budget.ContentBytes
		v.tokens, v.tokenEncoding = p.Budget.EstimatedTokens, p.Budget.TokenEncoding
		v.usedChars, v.maxChars = p.Budget.UsedChars, p.Budget.MaxChars
		v.changes = len(p.Changes)
		for _, c := range p.Changes {
			if c.Diff != "" {
				v.diffsSent++
			}
		}
	}
	if rec != nil {
		v.hasRecord = true
		v.verdict = rec.Verdict
		if rec.PackID != "" {
			v.packID = rec.PackID
		}
		if rec.Source != (pack.Source{}) {
			v.source = rec.Source
		}
		ci := rec.ContextPackInfo
		if ci.Type != "" {
			v.packType = ci.Type
		}
		if ci.SelectionReason != "" {
			v.selectionReason = ci.SelectionReason
		}
		v.scanned, v.included, v.excluded = ci.FilesScanned, ci.FilesIncluded, ci.FilesExcluded
		v.contentBytes = ci.ContentBytes
		for _, r := range rec.Ledger {
			if r.Included {
				v.sent = append(v.sent, smSent{r.Path, r.BytesSent, r.Role, r.Truncated, r.Redactions, r.RuleIDs})
				if r.Truncated {
					v.truncated = append(v.truncated, smTrunc{r.Path, r.BytesOriginal, r.BytesSent})
				}
				continue
			}
			byReason[string(r.Reason)] = append(byReason[string(r.Reason)], smExcluded{r.Path, r.Detail})
		}
		if len(rec.Changes) > 0 || p == nil {
			v.changes, v.diffsSent = len(rec.Changes), 0
			for _, c := range rec.Changes {
				if c.DiffSent {
					v.diffsSent++
				}
				if c.DiffWithheld != "" {
					v.withheld = append(v.withheld, c)
				}
			}
		}
		v.secrets = append(v.secrets, rec.Secrets...)
		v.digests, v.previous = rec.Digests, rec.Previous
	} else if p != nil {
		for _, it := range smItems(p) {
			v.sent = append(v.sent, smSent{it.Path, int64(len(it.Content)), it.Role, it.Truncated, len(it.Redactions), smRules(it.Redactions)})
			if it.Truncated {
				v.truncated = append(v.truncated, smTrunc{it.Path, it.OriginalSizeBytes, int64(len(it.Content))})
			}
		}
		for _, e := range p.FileIndex {
			if !e.Included {
				byReason[string(e.ExclusionReason)] = append(byReason[string(e.ExclusionReason)], smExcluded{e.Path, e.Detail})
			}
		}
		for _, c := range p.Changes {
			if c.DiffWithheld != "" {
				v.withheld = append(v.withheld, ChangeRow{Path: c.Path, Status: c.Status, OldPath: c.OldPath, Added: c.Added, Deleted: c.Deleted, DiffWithheld: c.DiffWithheld})
			}
		}
	}
	sort.Slice(v.sent, func(i, j int) bool { return v.sent[i].path < v.sent[j].path })
	sort.Slice(v.truncated, func(i, j int) bool { return v.truncated[i].path < v.truncated[j].path })
	sort.Slice(v.withheld, func(i, j int) bool { return v.withheld[i].Path < v.withheld[j].Path })
	for reason, rows := range byReason {
		sort.Slice(rows, func(i, j int) bool { return rows[i].path < rows[j].path })
		v.groups = append(v.groups, smGroup{reason, rows})
	}
	sort.Slice(v.groups, func(i, j int) bool {
		oi, iok := smReasonOrder[pack.Reason(v.groups[i].reason)]
		oj, jok := smReasonOrder[pack.Reason(v.groups[j].reason)]
		if iok != jok {
			return iok
		}
		if oi != oj {
			return oi < oj
		}
		return v.groups[i].reason < v.groups[j].reason
	})
	sort.SliceStable(v.secrets, func(i, j int) bool {
		a, b := v.secrets[i], v.secrets[j]
		if smActionRank(a.Action) != smActionRank(b.Action) {
			return smActionRank(a.Action) < smActionRank(b.Action)
		}
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Commit != b.Commit {
			return a.Commit < b.Commit
		}
		return a.Where < b.Where
	})
	return v
}

// smItems are the pack's content items, key files first.
func smItems(p *pack.Pack) []pack.Item {
	out := make([]pack.Item, 0, len(p.KeyFiles)+len(p.Contents))
	out = append(out, p.KeyFiles...)
	return append(out, p.Contents...)
}

func smRules(reds []pack.Redaction) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range reds {
		if !seen[r.RuleID] {
			seen[r.RuleID] = true
			out = append(out, r.RuleID)
		}
	}
	sort.Strings(out)
	return out
}

func smActionRank(a string) int {
	switch a {
	case pack.SecretFailed:
		return 0
	case pack.SecretExcluded:
		return 1
	case pack.SecretRedacted:
		return 2
	}
	return 3
}

// smList is a list the bound may cut: its rows are rendered whole or not at
// all, and a cut list says how many rows it left out.
type smList struct {
	head  string // written when at least one row is shown (table header)
	rows  []string
	noun  string // "paths", "findings"
	table bool
	// essential lists (failed checks) are cut only when cutting every other
	// list to nothing is not enough.
	essential bool
}

// smPart is fixed text or a list.
type smPart struct {
	text string
	list *smList
}

type smDoc struct {
	parts []smPart
	max   int
}

func (d *smDoc) add(format string, args ...any) {
	d.parts = append(d.parts, smPart{text: fmt.Sprintf(format, args...)})
}

func (d *smDoc) text(s string) { d.parts = append(d.parts, smPart{text: s}) }

func (d *smDoc) addList(l *smList) { d.parts = append(d.parts, smPart{list: l}) }

// render writes the document with at most capN rows of each list (capE for
// essential lists); a negative cap means no cap.
func (d *smDoc) render(capN, capE int) string {
	var b strings.Builder
	cut := map[string]int{}
	var nouns []string
	shown := func(l *smList) int {
		c := capN
		if l.essential {
			c = capE
		}
		if c < 0 || c > len(l.rows) {
			return len(l.rows)
		}
		return c
	}
	for _, part := range d.parts {
		if part.list == nil {
			continue
		}
		if n := len(part.list.rows) - shown(part.list); n > 0 {
			if _, ok := cut[part.list.noun]; !ok {
				nouns = append(nouns, part.list.noun)
			}
			cut[part.list.noun] += n
		}
	}
	for _, part := range d.parts {
		if part.text == smCutNotice {
			if len(nouns) > 0 {
				var what []string
				for _, n := range nouns {
					what = append(what, viewInt(cut[n])+" "+n)
				}
				fmt.Fprintf(&b, "> ✂️ This summary was shortened to fit %s characters: %s not shown. The transparency record lists every file and finding.\n\n",
					viewInt(d.max), strings.Join(what, ", "))
			}
			continue
		}
		if part.list == nil {
			b.WriteString(part.text)
			continue
		}
		l := part.list
		k := shown(l)
		if k > 0 {
			b.WriteString(l.head)
		}
		for _, r := range l.rows[:k] {
			b.WriteString(r)
		}
		if n := len(l.rows) - k; n > 0 {
			if l.table && k > 0 {
				b.WriteByte('\n')
			}
			more := "… and " + viewInt(n) + " more " + l.noun + " not shown"
			if k == 0 {
				more = viewInt(n) + " " + l.noun + " not shown"
			}
			if !l.table {
				more = "- " + more
			}
			b.WriteString(more + "\n")
		}
	}
	return b.String()
}

// smCutNotice marks where the notice of what was cut goes.
const smCutNotice = "\x00cut-notice\x00"

func smLen(s string) int { return utf8.RuneCountInString(s) }

// fit renders the document within max characters, cutting the longest lists
// first: every list shows at most c rows, with c the largest that fits.
func (d *smDoc) fit(max int) string {
	d.max = max
	out := d.render(-1, -1)
	if smLen(out) <= max {
		return out
	}
	longest := 0
	for _, part := range d.parts {
		if part.list != nil && len(part.list.rows) > longest {
			longest = len(part.list.rows)
		}
	}
	// Largest cap c for ordinary lists (essential lists whole) that fits.
	if smLen(d.render(0, -1)) <= max {
		lo, hi := 0, longest // render(lo) fits, render(hi) does not
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if smLen(d.render(mid, -1)) <= max {
				lo = mid
			} else {
				hi = mid
			}
		}
		return d.render(lo, -1)
	}
	if s := d.render(0, 0); smLen(s) <= max {
		lo, hi := 0, longest
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if smLen(d.render(0, mid)) <= max {
				lo = mid
			} else {
				hi = mid
			}
		}
		return d.render(0, lo)
	}
	// Even the fixed text is too long (a tiny MaxChars): cut at a line.
	s := []rune(d.render(0, 0))
	tail := fmt.Sprintf("\n\n… summary truncated at %s characters\n", viewInt(max))
	keep := max - smLen(tail)
	if keep <= 0 {
		return string(s[:max])
	}
	cut := string(s[:keep])
	if i := strings.LastIndexByte(cut, '\n'); i >= 0 {
		cut = cut[:i]
	}
	return cut + tail
}

func smBuild(v *smView, opts SummaryOptions) *smDoc {
	d := &smDoc{}
	if m := ghMarker(opts.Marker); m != "" {
		d.text(m + "\n")
	}
	smVerdict(d, v)
	d.text(smCutNotice)
	notes := opts.Notes
	if c := v.source.Config; c != nil && c.Note != "" {
		// Whose configuration applied, when the change edits it.
		notes = append([]string{c.Note}, notes...)
	}
	if len(notes) > 0 {
		d.add("**Notes**\n\n")
		l := &smList{noun: "notes"}
		for _, n := range notes {
			l.rows = append(l.rows, "- "+ghText(viewClip(n, smMaxMessage))+"\n")
		}
		d.addList(l)
		d.add("\n")
	}
	smChecks(d, v)
	smLeaves(d, v)
	smStays(d, v)
	smSecrets(d, v)
	smTruncated(d, v)
	smFooter(d, v, opts)
	return d
}

func smVerdict(d *smDoc, v *smView) {
	if v.verdict == nil {
		d.add("## ❌ ctxpack: no audit verdict\n\n")
		d.add("**❌ not audited** — the record holds no audit verdict; treat this pack as failing until `ctxpack audit` passes.\n\n")
		return
	}
	failed, warned, skipped := len(v.verdict.Failed), len(v.verdict.Warnings), len(v.verdict.Skipped)
	counts := fmt.Sprintf("%s · %s · %s", viewCount(failed, "failed check", "failed checks"),
		viewCount(warned, "warning", "warnings"), viewCount(skipped, "skipped check", "skipped checks"))
	if v.verdict.Status == audit.StatusPass && failed == 0 {
		d.add("## ✅ ctxpack: context pack passed the policy\n\n")
		d.add("**✅ pass** — %s\n\n", counts)
		return
	}
	d.add("## ❌ ctxpack: context pack failed the policy\n\n")
	d.add("**❌ fail** — %s\n\n", counts)
}

func smCheckRows(checks []audit.Check, icon string) []string {
	cs := append([]audit.Check(nil), checks...)
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Code != cs[j].Code {
			return cs[i].Code < cs[j].Code
		}
		return cs[i].Message < cs[j].Message
	})
	rows := make([]string, 0, len(cs))
	for _, c := range cs {
		rows = append(rows, fmt.Sprintf("- %s %s — %s\n", icon, ghCode(viewClip(c.Code, smMaxHeader)), ghText(viewClip(c.Message, smMaxMessage))))
	}
	return rows
}

func smChecks(d *smDoc, v *smView) {
	if v.verdict == nil {
		return
	}
	if n := len(v.verdict.Failed); n > 0 {
		d.add("### Policy failures (%s)\n\n", viewInt(n))
		d.addList(&smList{rows: smCheckRows(v.verdict.Failed, "❌"), noun: "failed checks", essential: true})
		d.add("\n")
	}
	if n := len(v.verdict.Warnings); n > 0 {
		d.add("### Warnings (%s)\n\n", viewInt(n))
		d.addList(&smList{rows: smCheckRows(v.verdict.Warnings, "⚠️"), noun: "warnings"})
		d.add("\n")
	}
	if n := len(v.verdict.Skipped); n > 0 {
		d.add("### Skipped checks (%s)\n\n", viewInt(n))
		d.add("A skipped check did not run; it is not counted as passed.\n\n")
		d.addList(&smList{rows: smCheckRows(v.verdict.Skipped, "⏭️"), noun: "skipped checks"})
		d.add("\n")
	}
}

func smLeaves(d *smDoc, v *smView) {
	d.add("### What leaves this repository\n\n")
	d.add("| What | Amount |\n|---|---:|\n")
	d.add("| Files sent | %s of %s scanned |\n", viewInt(v.included), viewInt(v.scanned))
	d.add("| Content bytes | %s |\n", viewInt(v.contentBytes))
	if v.hasPack {
		enc := ""
		if v.tokenEncoding != "" {
			enc = " (" + ghText(viewClip(v.tokenEncoding, 40)) + ")"
		}
		d.add("| Estimated tokens | %s%s |\n", viewInt(v.tokens), enc)
	}
	withheld := ""
	if len(v.withheld) > 0 {
		withheld = ", " + viewInt(len(v.withheld)) + " withheld"
	}
	d.add("| Changed files | %s (%s sent%s) |\n", viewInt(v.changes), viewCount(v.diffsSent, "diff", "diffs"), withheld)
	if v.hasPack && v.usedChars > 0 {
		if v.maxChars > 0 {
			d.add("| Pack size | %s of %s characters |\n", viewInt(v.usedChars), viewInt(v.maxChars))
		} else {
			d.add("| Pack size | %s characters |\n", viewInt(v.usedChars))
		}
	}
	d.add("\n")
	typ := v.packType
	if typ == "" {
		typ = "unknown"
	}
	line := "**Pack type:** " + ghCode(viewClip(typ, 40))
	if v.selectionReason != "" {
		line += " — " + ghText(viewClip(v.selectionReason, smMaxMessage))
	}
	d.text(line + "\n\n")
	if src := smSource(v.source); src != "" {
		d.text("**Source:** " + src + "\n\n")
	}
	if len(v.sent) > 0 {
		d.add("<details><summary>Files sent (%s)</summary>\n\n", viewInt(len(v.sent)))
		l := &smList{noun: "paths"}
		for _, s := range v.sent {
			var facts []string
			facts = append(facts, viewCount(s.bytes, "byte", "bytes"))
			if s.role != "" {
				facts = append(facts, ghText(viewClip(s.role, 40)))
			}
			if s.truncated {
				facts = append(facts, "truncated")
			}
			if s.redactions > 0 {
				rs := viewCount(s.redactions, "redaction", "redactions")
				if len(s.rules) > 0 {
					var ids []string
					for _, r := range s.rules {
						ids = append(ids, ghCode(viewClip(r, 80)))
					}
					rs += " (" + strings.Join(ids, ", ") + ")"
				}
				facts = append(facts, rs)
			}
			l.rows = append(l.rows, "- "+ghCode(viewClip(s.path, smMaxPath))+" — "+strings.Join(facts, " · ")+"\n")
		}
		d.addList(l)
		d.add("\n</details>\n\n")
	}
}

func smSource(s pack.Source) string {
	var parts []string
	if s.Repository != "" {
		parts = append(parts, ghCode(viewClip(s.Repository, smMaxHeader)))
	}
	if s.Trigger != "" {
		parts = append(parts, ghText(viewClip(s.Trigger, 40)))
	}
	if s.Ref != "" {
		parts = append(parts, "ref "+ghCode(viewClip(s.Ref, smMaxHeader)))
	}
	if s.Base != "" {
		parts = append(parts, "base "+ghCode(viewShort(s.Base)))
	}
	if s.Head != "" {
		parts = append(parts, "head "+ghCode(viewShort(s.Head)))
	}
	if s.Dirty {
		parts = append(parts, "uncommitted changes")
	}
	return strings.Join(parts, " · ")
}

func smStays(d *smDoc, v *smView) {
	total := 0
	for _, g := range v.groups {
		total += len(g.rows)
	}
	if total == 0 && len(v.withheld) == 0 {
		d.add("### What stays behind\n\nNothing: every scanned file is in the pack.\n\n")
		return
	}
	// The heading counts both kinds of what stays: files kept out, and
	// changed files whose diff was withheld.
	var counts []string
	if total > 0 {
		counts = append(counts, viewCount(total, "file", "files")+" kept out")
	}
	if len(v.withheld) > 0 {
		counts = append(counts, viewCount(len(v.withheld), "diff", "diffs")+" withheld")
	}
	d.add("### What stays behind (%s)\n\n", strings.Join(counts, ", "))
	for _, g := range v.groups {
		reason := g.reason
		if reason == "" {
			reason = "unspecified"
		}
		d.add("<details><summary>%s — %s</summary>\n\n", ghHTML(viewClip(reason, 60)), viewCount(len(g.rows), "file", "files"))
		l := &smList{noun: "paths"}
		for _, r := range g.rows {
			row := "- " + ghCode(viewClip(r.path, smMaxPath))
			if r.detail != "" {
				row += " — " + ghText(viewClip(r.detail, smMaxHeader))
			}
			l.rows = append(l.rows, row+"\n")
		}
		d.addList(l)
		d.add("\n</details>\n\n")
	}
	if len(v.withheld) > 0 {
		d.add("<details><summary>Changed files whose diff was withheld — %s</summary>\n\n", viewCount(len(v.withheld), "file", "files"))
		l := &smList{noun: "paths"}
		for _, c := range v.withheld {
			row := "- " + ghCode(viewClip(c.Path, smMaxPath)) + " — " + ghText(viewClip(c.Status, 40))
			if c.OldPath != "" {
				row += " from " + ghCode(viewClip(c.OldPath, smMaxPath))
			}
			row += fmt.Sprintf(" (+%s −%s) · %s", viewInt(c.Added), viewInt(c.Deleted), ghText(viewClip(string(c.DiffWithheld), 60)))
			l.rows = append(l.rows, row+"\n")
		}
		d.addList(l)
		d.add("\n</details>\n\n")
	}
}

func smSecrets(d *smDoc, v *smView) {
	if len(v.secrets) == 0 {
		if v.hasRecord {
			d.add("### Secrets\n\nNone found.\n\n")
		}
		return
	}
	byAction := map[string]int{}
	history := 0
	for _, s := range v.secrets {
		if s.Where == "history" {
			history++
			continue
		}
		byAction[s.Action]++
	}
	var counts []string
	for _, a := range []string{pack.SecretRedacted, pack.SecretExcluded, pack.SecretFailed} {
		if byAction[a] > 0 {
			counts = append(counts, viewInt(byAction[a])+" "+a)
		}
	}
	var other []string
	for a := range byAction {
		if smActionRank(a) == 3 {
			other = append(other, a)
		}
	}
	sort.Strings(other)
	for _, a := range other {
		counts = append(counts, viewInt(byAction[a])+" "+ghText(viewClip(a, 40)))
	}
	if history > 0 {
		counts = append(counts, viewInt(history)+" in history")
	}
	d.add("### Secrets (%s)\n\n", viewInt(len(v.secrets)))
	d.add("%s. Values are never recorded: rule, location and commit only.\n\n", strings.Join(counts, ", "))
	l := &smList{noun: "findings", table: true,
		head: "| Action | Rule | Location | Commit | Found in |\n|---|---|---|---|---|\n"}
	for _, s := range v.secrets {
		commit := "—"
		if s.Commit != "" {
			commit = ghCode(viewShort(s.Commit))
		}
		loc := s.Path
		if s.Line > 0 {
			loc = fmt.Sprintf("%s:%d", viewClip(s.Path, smMaxPath), s.Line)
		} else {
			loc = viewClip(loc, smMaxPath)
		}
		action := s.Action
		if action == "" {
			action = "reported"
		}
		l.rows = append(l.rows, fmt.Sprintf("| %s | %s | %s | %s | %s |\n", ghText(viewClip(action, 40)),
			ghCode(viewClip(s.RuleID, 80)), ghCode(loc), commit, ghText(viewClip(s.Where, 40))))
	}
	d.addList(l)
	d.add("\n")
}

func smTruncated(d *smDoc, v *smView) {
	if len(v.truncated) == 0 {
		return
	}
	d.add("### Truncated files (%s)\n\n", viewInt(len(v.truncated)))
	d.add("Head and tail kept, the middle replaced by a marker.\n\n")
	d.add("<details><summary>%s</summary>\n\n", viewCount(len(v.truncated), "file", "files"))
	l := &smList{noun: "paths"}
	for _, t := range v.truncated {
		original := "original size withheld"
		if t.original != nil {
			original = viewInt(*t.original)
		}
		l.rows = append(l.rows, fmt.Sprintf("- %s — %s → %s bytes\n", ghCode(viewClip(t.path, smMaxPath)), original, viewInt(t.sent)))
	}
	d.addList(l)
	d.add("\n</details>\n\n")
}

func smFooter(d *smDoc, v *smView, opts SummaryOptions) {
	d.add("### Pack\n\n")
	id := "unknown"
	if v.packID != "" {
		id = ghCode(viewClip(v.packID, 40))
	}
	d.add("- Pack id: %s\n", id)
	dg := v.digests
	if dg.PackSHA256 != "" {
		d.add("- Pack sha256: %s\n", ghCode(viewClip(dg.PackSHA256, 80)))
	} else {
		d.add("- Pack sha256: not recorded\n")
	}
	if dg.PolicySHA256 != "" {
		d.add("- Policy sha256: %s\n", ghCode(viewClip(dg.PolicySHA256, 80)))
	}
	var tools []string
	if dg.ToolVersion != "" {
		tools = append(tools, "ctxpack "+ghCode(viewClip(dg.ToolVersion, 60)))
	}
	if dg.GitleaksVersion != "" {
		tools = append(tools, fmt.Sprintf("gitleaks %s (%s)", ghCode(viewClip(dg.GitleaksVersion, 60)), viewCount(dg.GitleaksRules, "rule", "rules")))
	}
	if len(tools) > 0 {
		d.add("- Tools: %s\n", strings.Join(tools, " · "))
	}
	if v.hasRecord {
		if v.previous != "" {
			d.add("- Previous record: %s\n", ghCode(viewClip(v.previous, 80)))
		} else {
			d.add("- Previous record: none known\n")
		}
	}
	var links []string
	if l := ghLink(opts.RunURL, "workflow run"); l != "" {
		links = append(links, l)
	}
	if l := ghLink(opts.ArtifactURL, "pack and transparency record"); l != "" {
		links = append(links, l)
	}
	if len(links) > 0 {
		d.add("- Links: %s\n", strings.Join(links, " · "))
	}
}
