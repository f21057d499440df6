package pack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"

	"github.com/ctxpack/ctxpack/internal/workers"
	"github.com/ctxpack/ctxpack/lang"
	"github.com/ctxpack/ctxpack/policy"
)

// allocation spends a change pack's budget on its units.
type allocation struct {
	b      *builder
	p      *Pack
	states []*changeState
	units  []*unit
	// budget is the token budget; chars the tier's ceiling (0: none).
	budget int
	chars  int
	// estimate is a lazy unit's estimated tokens (ready).
	estimate map[*unit]pieceCount
}

// run prepares the units, buys them in order, assembles the pack and
// trims it until it fits.
func (a *allocation) run(ctx context.Context) error {
	b := a.b
	if err := a.prepareAll(ctx); err != nil {
		return err
	}
	diffTokens := 0
	for _, u := range a.units {
		if u.diff {
			diffTokens += u.tokens
		}
	}
	a.budget = b.pol.TokenBudget(diffTokens)
	a.p.Budget.MaxTokens = a.budget
	a.chars = b.pol.TierLimit()
	how := fmt.Sprintf("sized to the change: 4,000 + 2 × its %s diff tokens, within %s–%s", th(diffTokens), th(policy.MinAutoTokens), th(policy.MaxAutoTokens))
	if b.pol.Limits.MaxTokens > 0 {
		how = "limits.max_tokens"
	}
	b.selection = Selection{Type: policy.TypeFull, Reason: fmt.Sprintf("change pack of %s: intent, diff and the code around it in order of value, within %s tokens (%s)",
		count(len(a.states), "changed file", "changed files"), th(a.budget), how)}

	// The skeleton: everything but hunks and items.
	a.assemble()
	if _, err := a.b.finalize(a.p); err != nil {
		return err
	}
	baseTokens, baseChars := a.p.Budget.EstimatedTokens, a.p.Budget.UsedChars
	if b.pol.Pack.Type == policy.TypeAuto {
		// The change's listing alone (index, changes, manifest, intent) is
		// over the budget: only a Summary pack, which condenses it, fits.
		if a.chars > 0 && baseChars > a.chars {
			return &listingTooLarge{fmt.Sprintf("the change pack's listing alone (file index, changes, manifest) is %s characters, over tier %s's ceiling of %s",
				th(baseChars), b.pol.Pack.Tier, th(a.chars))}
		}
		if baseTokens > a.budget {
			return &listingTooLarge{fmt.Sprintf("the change pack's listing alone (file index, changes, manifest) is %s tokens, over its budget of %s",
				th(baseTokens), th(a.budget))}
		}
	}
	tokensLeft := a.budget - baseTokens
	charsLeft := -1
	if a.chars > 0 {
		charsLeft = a.chars - baseChars
	}
	bytesLeft := b.pol.Limits.MaxContentBytes
	for _, st := range a.states {
		if len(st.hunks) > 0 && !st.asContent {
			bytesLeft -= int64(len(st.header)) // sent with any of its hunks
		}
	}
	files := map[*entry]bool{}
	fits := func(u *unit) bool {
		if u.tokens > tokensLeft || (charsLeft >= 0 && u.chars > charsLeft) || int64(u.bytes) > bytesLeft {
			return false
		}
		return u.isHunk() || files[u.e] || len(files) < b.pol.Limits.MaxFiles
	}
	take := func(u *unit) {
		u.accepted = true
		tokensLeft -= u.tokens
		if charsLeft >= 0 {
			charsLeft -= u.chars
		}
		bytesLeft -= int64(u.bytes)
		if !u.isHunk() {
			files[u.e] = true
		}
	}
	// Every hunk first when the whole diff fits.
	hunkTokens, hunkChars, hunkBytes := 0, 0, 0
	for _, u := range a.units {
		if u.diff {
			hunkTokens += u.tokens
			hunkChars += u.chars
			hunkBytes += u.bytes
		}
	}
	if hunkTokens <= tokensLeft && (charsLeft < 0 || hunkChars <= charsLeft) && int64(hunkBytes) <= bytesLeft {
		for _, u := range a.units {
			if u.diff && (u.isHunk() || fits(u)) {
				take(u)
			}
		}
	}
	for i, u := range a.units {
		if u.accepted {
			continue
		}
		ok, err := a.ready(ctx, i, tokensLeft)
		if err != nil {
			return err
		}
		if ok && fits(u) {
			take(u)
		} else if u.isHunk() {
			tokensLeft -= hunkSummaryTokens // its summary
			charsLeft -= 100
		}
	}
	// Assemble and trim: the estimates are close, the serialization decides.
	for round := 0; ; round++ {
		tokens, err := a.written()
		if err != nil {
			return err
		}
		overTokens := tokens - a.budget
		overChars := 0
		if a.chars > 0 {
			overChars = a.p.Budget.UsedChars - a.chars
		}
		if overTokens <= 0 && overChars <= 0 {
			return a.refill(ctx, tokens, a.p.Budget.UsedChars)
		}
		if !a.drop(overTokens, overChars) {
			if overChars > 0 {
				return fmt.Errorf("the pack without any diff or file content is %d characters, over tier %s's ceiling of %d: use --type summary or a larger tier",
					a.p.Budget.UsedChars, b.pol.Pack.Tier, a.chars)
			}
			// The change's own listing is over the token budget: the pack
			// says so (budget.truncated) and carries nothing else.
			a.p.Budget.Truncated = true
			return nil
		}
		if round > 64 {
			return fmt.Errorf("build pack: the budget did not settle")
		}
	}
}

// refill takes back, in order of value, the units the room left can hold
// by their estimates (trimming drops on estimates, and a hunk's change
// header is not in its estimate): once, kept only if the pack still fits.
func (a *allocation) refill(ctx context.Context, tokens, chars int) error {
	b := a.b
	roomTokens, roomChars := a.budget-tokens, -1
	if a.chars > 0 {
		roomChars = a.chars - chars
	}
	roomBytes := b.pol.Limits.MaxContentBytes - a.p.Budget.ContentBytes
	headerSent := map[*changeState]bool{}
	files := map[*entry]bool{}
	// sent marks what an accepted unit sends: its change's header, or its file.
	sent := func(u *unit) {
		if u.isHunk() {
			headerSent[u.ch] = true
		} else {
			files[u.e] = true
		}
	}
	for _, u := range a.units {
		if u.accepted {
			sent(u)
		}
	}
	var taken []*unit
	for i, u := range a.units {
		if u.accepted {
			continue
		}
		if ok, err := a.ready(ctx, i, roomTokens); err != nil {
			return err
		} else if !ok {
			continue
		}
		t, c, n := u.tokens, u.chars, u.bytes
		if u.isHunk() && !headerSent[u.ch] {
			ht, hc, err := jsonCost(u.ch.header)
			if err != nil {
				return err
			}
			t, c, n = t+ht, c+hc, n+len(u.ch.header)
		}
		if t > roomTokens || roomChars >= 0 && c > roomChars || int64(n) > roomBytes {
			continue
		}
		if !u.isHunk() && !files[u.e] && len(files) >= b.pol.Limits.MaxFiles {
			continue
		}
		u.accepted = true
		taken = append(taken, u)
		roomTokens, roomChars, roomBytes = roomTokens-t, roomChars-c, roomBytes-int64(n)
		sent(u)
	}
	if len(taken) == 0 {
		return nil
	}
	n, err := a.written()
	if err != nil {
		return err
	}
	if n <= a.budget && (a.chars == 0 || a.p.Budget.UsedChars <= a.chars) {
		return nil
	}
	for _, u := range taken {
		u.accepted = false
	}
	a.assemble()
	_, err = a.b.finalize(a.p)
	return err
}

// A lazy unit's cost is estimated, before its file is scanned, by the
// pre-tokenizer pieces of its text before redaction (countPiecesUpTo):
// each piece is at least one token, and a JSON string escapes rather than
// joins, so the estimate is at most its cost except where redaction
// shrinks the text. A unit estimated over the tokens left is passed over unscanned.
// Never an overrun: what is taken is costed exactly; at worst a file
// that only its redaction (a private key block, say) would make fit is
// not sent.

// readyBatch is how many files ready scans at once, on all cores, picked
// among the next readyLookahead units.
var readyBatch = 4 * runtime.NumCPU()

const readyLookahead = 256

// prepareAll prepares the units that are not lazy on every core (a
// range's units, one after the other: hugo's 38, ~5 ms of its ~60). The
// units of one file are prepared in turn, in their order, by one worker:
// they share the file's entry (its line offsets, its secret events).
func (a *allocation) prepareAll(ctx context.Context) error {
	var groups [][]*unit
	of := map[*entry]int{}
	for _, u := range a.units {
		if u.lazy {
			continue // prepared if the budget reaches it (ready)
		}
		if u.isHunk() {
			groups = append(groups, []*unit{u})
			continue
		}
		i, ok := of[u.e]
		if !ok {
			i = len(groups)
			of[u.e] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], u)
	}
	// The imports a unit's item names (regionItem) are derived first, all
	// at once: the workers then only read them.
	var paths []string
	for _, g := range groups {
		if e := g[0].e; !g[0].isHunk() && e.row.Reason == "" && !e.pending {
			paths = append(paths, e.file.Path)
		}
	}
	a.b.importsAll(paths)
	return workers.Each(ctx, len(groups), runtime.GOMAXPROCS(0), func(ctx context.Context, i int) error {
		for _, u := range groups[i] {
			if err := a.b.prepare(ctx, u); err != nil {
				return err
			}
		}
		return nil
	})
}

// ready prepares unit i, scanning its file first when it is lazy, and
// reports whether it may fit in tokensLeft: a lazy unit whose estimate
// (countPiecesUpTo) is over it is left unscanned (false). The next lazy
// units that may fit with it are scanned with it, in parallel.
func (a *allocation) ready(ctx context.Context, i, tokensLeft int) (bool, error) {
	u := a.units[i]
	if !u.lazy {
		return true, nil
	}
	b := a.b
	// The pieces are counted only as far as tokensLeft: most units looked
	// at are files far over what is left (gin's range counted its
	// repository's files whole, 2.6 of its 8 ms of allocation). A count
	// cut short is counted further if more tokens are left later.
	mayFit := func(u *unit) bool {
		c, ok := a.estimate[u]
		if !ok || c.atLeast && c.n <= tokensLeft {
			text, _, _ := b.truncated(u.e)
			c = countPiecesUpTo(text, tokensLeft)
			if a.estimate == nil {
				a.estimate = map[*unit]pieceCount{}
			}
			a.estimate[u] = c
		}
		return !c.atLeast && c.n <= tokensLeft
	}
	if !mayFit(u) {
		return false, nil
	}
	// The next ones the tokens left may hold too, estimates summed, among
	// the next readyLookahead units (so that a fill over many units that
	// do not fit stays linear).
	batch, sum := []*unit{u}, a.estimate[u].n
	for _, v := range a.units[i+1 : min(len(a.units), i+1+readyLookahead)] {
		if len(batch) == readyBatch {
			break
		}
		if v.lazy && !v.accepted && mayFit(v) && sum+a.estimate[v].n <= tokensLeft {
			batch = append(batch, v)
			sum += a.estimate[v].n
		}
	}
	es := make([]*entry, len(batch))
	for j, v := range batch {
		es[j] = v.e
	}
	if err := b.scanEntries(ctx, es); err != nil {
		return false, err
	}
	for _, v := range batch {
		v.lazy = false
		if err := b.prepare(ctx, v); err != nil {
			return false, err
		}
	}
	return true, nil
}

// written assembles and finalizes the pack and returns the tokens of its
// bytes as written (pack id, counts and all), which is what the audit
// counts: Finalize's estimate leaves those out.
func (a *allocation) written() (int, error) {
	a.assemble()
	_, tokens, err := a.b.finalizeCounted(a.p)
	return tokens, err
}

// drop gives up the lowest-priority accepted units until their estimated
// cost covers the excess; it reports whether it dropped anything.
func (a *allocation) drop(overTokens, overChars int) bool {
	dropped := false
	for i := len(a.units) - 1; i >= 0 && (overTokens > 0 || overChars > 0); i-- {
		u := a.units[i]
		if !u.accepted {
			continue
		}
		u.accepted = false
		dropped = true
		overTokens -= u.tokens
		overChars -= u.chars
		if u.isHunk() {
			overTokens += hunkSummaryTokens
			overChars += 100
		}
	}
	return dropped
}

// assemble writes the accepted units into the pack: each change's kept
// hunks (and summaries of the others), the content items in order of
// value, the file index, the ledger and the budget.
func (a *allocation) assemble() {
	b, p := a.b, a.p
	for _, st := range a.states {
		for i := range st.kept {
			st.kept[i] = false
		}
	}
	for _, e := range b.entries {
		if e.row.Reason == "" || e.row.Reason == ReasonDiffOnly || e.row.Reason == ReasonSizeLimit && e.budgetCut {
			e.row.Reason, e.row.Detail, e.row.Included, e.budgetCut = "", "", false, false
		}
		e.sentParts = e.sentParts[:0]
		e.role = ""
	}
	var cut []string
	cutCount, otherCut := 0, 0
	noteCut := func(s string) {
		cutCount++
		if len(cut) < maxCutNotes {
			cut = append(cut, s)
		}
	}
	p.KeyFiles, p.Contents = []KeyFile{}, []Item{}
	accepted := 0
	for _, u := range a.units {
		if u.accepted && !u.isHunk() {
			accepted++
		}
	}
	dropped := 0
	for _, u := range a.units {
		if u.isHunk() {
			if u.accepted {
				u.ch.kept[u.hunk] = true
			} else {
				noteCut(u.describe() + ": summarised")
			}
			continue
		}
		if !u.accepted {
			dropped++
			if u.class <= classImport {
				noteCut(u.describe())
			} else {
				otherCut++
			}
			continue
		}
		it := b.regionItem(u)
		u.e.sentParts = append(u.e.sentParts, u.text)
		u.e.row.Included = true
		if u.e.role != RolePrimary {
			u.e.role = it.Role
		}
		it.Score = score(len(p.KeyFiles)+len(p.Contents), accepted)
		if u.key {
			p.KeyFiles = append(p.KeyFiles, it)
		} else {
			p.Contents = append(p.Contents, it)
		}
	}
	// Changes: the kept hunks, with summaries of the rest.
	p.Changes = make([]Change, len(a.states))
	var diffBytes int64
	for i, st := range a.states {
		c := *st.c
		c.OmittedHunks = nil
		if st.asContent {
			// An added file's diff is its content: sent as items (so is
			// the new text of a changed file git gives no diff of).
			c.Diff, c.Redactions, c.DiffInContent = "", nil, st.e.row.Included && c.Status == "added"
			if !st.e.row.Included {
				c.DiffWithheld = ReasonSizeLimit
				for _, h := range st.hunks {
					c.OmittedHunks = append(c.OmittedHunks, hunkSummary(st, h))
				}
			} else {
				c.DiffTruncated = len(st.e.sentParts) < st.chunks
			}
		} else if len(st.hunks) > 0 {
			var sb strings.Builder
			sb.WriteString(st.header)
			var reds []Redaction
			kept := 0
			for k, h := range st.hunks {
				if !st.kept[k] {
					c.OmittedHunks = append(c.OmittedHunks, hunkSummary(st, h))
					continue
				}
				offset := strings.Count(sb.String(), "\n") + 1 - h.line
				end := h.line + strings.Count(h.text, "\n")
				for _, r := range st.reds {
					if r.Line >= h.line && r.Line < end {
						reds = append(reds, Redaction{Line: r.Line + offset, RuleID: r.RuleID})
					}
				}
				sb.WriteString(h.text)
				kept++
			}
			c.Redactions = reds
			if kept == 0 {
				c.Diff, c.DiffWithheld, c.Redactions = "", ReasonSizeLimit, nil
			} else {
				c.Diff = sb.String()
				c.DiffTruncated = c.DiffTruncated || len(c.OmittedHunks) > 0
			}
		}
		diffBytes += int64(len(c.Diff))
		p.Changes[i] = c
	}
	// The ledger: a changed file whose diff went but none of whose other
	// lines did is diff_only; an unchanged file nothing of which went did
	// not fit the budget.
	changed := map[string]*changeState{}
	for _, st := range a.states {
		changed[st.c.Path] = st
	}
	var contentBytes int64
	truncatedFiles := 0
	for _, e := range b.entries {
		if e.row.Reason != "" {
			continue
		}
		if !e.row.Included {
			if st, ok := changed[e.file.Path]; ok {
				e.row.Reason, e.row.Detail = ReasonDiffOnly, "the change is in the pack as its diff"
				if len(st.hunks) == 0 && !st.asContent {
					// A rename or mode change: no line changed, and the
					// budget had nothing of it to cut.
					e.row.Detail = "the change (no changed lines: a rename or mode change) is in the pack's changes"
				} else if !anyKept(st) {
					e.row.Reason, e.row.Detail, e.budgetCut = ReasonSizeLimit, fmt.Sprintf("did not fit the token budget (%s)", th(a.budget)), true
				}
			} else {
				e.row.Reason, e.row.Detail, e.budgetCut = ReasonSizeLimit, fmt.Sprintf("did not fit the token budget (%s)", th(a.budget)), true
			}
			continue
		}
		e.row.Role = e.role
		joined := strings.Join(e.sentParts, "")
		sum := sha256.Sum256([]byte(joined))
		e.row.BytesSent = int64(len(joined))
		e.row.SHA256Sent = hex.EncodeToString(sum[:])
		e.row.Truncated = len(e.sentParts) > 1 || joined != e.original
		contentBytes += e.row.BytesSent
		if e.row.Truncated {
			truncatedFiles++
		}
	}
	b.fillIndex(p, contentBytes+diffBytes, truncatedFiles, dropped)
	// A reviewer needs the files of the change and what is sent; the files
	// left out as unrelated or boilerplate are counted by directory (the
	// transparency record still lists each).
	pinned := map[string]bool{}
	for _, e := range b.listedEntries() {
		if e.fromTree { // read from the tree: the audit checks each there
			pinned[e.file.Path] = true
		}
	}
	for _, e := range b.entries {
		r := e.row.Reason
		if e.row.Included || changed[e.file.Path] != nil || r != "" && r != ReasonSizeLimit && r != ReasonBoilerplate {
			pinned[e.file.Path] = true
		}
	}
	var st condenseStats
	if p.FileIndex, st = condenseIndex(p.FileIndex, pinned, 1); st.entries > 0 {
		p.Metadata.IndexCondensed = fmt.Sprintf("%s left out as unrelated to the change or as boilerplate %s listed as %s by top-level directory; the transparency record lists each",
			count(st.files, "file", "files"), plural(st.files, "is", "are"), count(st.entries, "entry", "entries"))
	}
	p.Metadata.SelectionReason = b.selection.Reason
	p.Budget.Cut = cut
	if cutCount > len(cut) {
		p.Budget.Cut = append(p.Budget.Cut, fmt.Sprintf("… and %s more", th(cutCount-len(cut))))
	}
	if otherCut > 0 {
		p.Budget.Cut = append(p.Budget.Cut, fmt.Sprintf("%s not sent (key files and other files of the snapshot, after everything related to the change)", count(otherCut, "file", "files")))
	}
	// The directory tree describes a repository, not a change.
	p.Metadata.DirectoryTree = nil
	// The budget was short only if it cut something; a region is the
	// change's own shape, not a cut.
	p.Budget.Truncated = cutCount+otherCut > 0
	p.Metadata.TruncationApplied = cutCount+otherCut > 0 || truncatedFiles > 0
}

func anyKept(st *changeState) bool {
	for _, k := range st.kept {
		if k {
			return true
		}
	}
	return false
}

// hunkSummary stands for a hunk that is not sent.
func hunkSummary(st *changeState, h hunk) HunkSummary {
	s := HunkSummary{Header: h.rangeHeader(), Added: h.added, Deleted: h.deleted}
	if st.facts != nil && h.lo > 0 {
		if sym, ok := lang.Enclosing(st.facts.Symbols, h.lo, h.hi); ok {
			s.Symbol = sym.Name
		}
	}
	return s
}

// score is the score of the i-th of n items: 1 down to 1/n, in thousandths.
func score(i, n int) float64 {
	return float64((n-i)*1000/n) / 1000
}

// listingTooLarge says a change pack cannot carry anything but its listing:
// the builder then makes a Summary pack, for this reason.
type listingTooLarge struct{ reason string }

func (e *listingTooLarge) Error() string { return e.reason }
