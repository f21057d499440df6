package audit

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/ctxpack/ctxpack/internal/workers"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pack/schema"
	"github.com/ctxpack/ctxpack/policy"
)

// Input is what an audit checks a pack against.
type Input struct {
	Policy  *policy.Policy
	Scanner pack.SecretScanner
	// Sensitive matches credential files by path (SensitiveFile).
	Sensitive func(string) (string, bool)
	// Snapshot, when the repository is at hand, is the repository state the
	// pack claims to describe, re-read from git: blobs and changes are checked
	// against it.
	Snapshot *pack.Snapshot
}

// Pack audits pack bytes independently of the builder: everything is
// re-derived from the bytes. Every failed check is reported. An error is
// returned only for a missing input; problems with the pack are in the verdict.
func Pack(ctx context.Context, data []byte, in Input) (*Verdict, error) {
	v, _, err := PackDecoded(ctx, data, in)
	return v, err
}

// PackDecoded is Pack that also returns the pack its checks read, decoded
// from data (nil when data is not a JSON pack document), for a caller that
// keeps a pack after the audit: it can keep this one instead of a second
// copy of a large pack's contents.
func PackDecoded(ctx context.Context, data []byte, in Input) (*Verdict, *pack.Pack, error) {
	if in.Policy == nil || in.Scanner == nil {
		return nil, nil, fmt.Errorf("audit: a policy and a secret scanner are required")
	}
	v := NewVerdict()
	var p pack.Pack
	if err := pack.Unmarshal(data, &p); err != nil {
		// One failure: the schema check of bytes that are not a JSON
		// document says the same thing again.
		v.Fail(Check{Kind: KindValidation, Code: CodeSchemaInvalid, Message: "the pack is not a JSON pack document: " + err.Error()})
		return v, nil, nil
	}
	a := &auditor{in: in, v: v, p: &p, data: data, sums: make([]contentSum, len(p.KeyFiles)+len(p.Contents))}
	a.chars = sync.OnceValue(func() int { return pack.RuneCount(data) })
	// Two groups of checks side by side (a large pack's take ~100 ms
	// each): the integrity and schema checks (the schema check reads what
	// the integrity check finds), and the others. Each group records into
	// a verdict of its own; they are merged in the order the checks are
	// listed, as running them one after the other would.
	first, rest := a.fork(), a.fork()
	var g sync.WaitGroup
	g.Go(func() {
		first.integrity()
		first.schema()
	})
	rest.secrets(ctx)
	rest.originals()
	rest.paths(ctx)
	rest.sizes()
	rest.availability()
	if in.Snapshot != nil {
		rest.repository(ctx)
	}
	g.Wait()
	v.Merge(first.v)
	v.Merge(rest.v)
	v.Sort()
	return v, &p, nil
}

// fork is a copy of a that records into a verdict of its own.
func (a *auditor) fork() *auditor {
	f := *a
	f.v = NewVerdict()
	return &f
}

type auditor struct {
	in   Input
	v    *Verdict
	p    *pack.Pack
	data []byte
	// canonical is set by integrity when data is exactly the canonical
	// serialization of p.
	canonical bool
	// chars is the number of characters of data, counted once.
	chars func() int
	// sums are the sha256 of the items' contents, in items' order, each
	// taken once by whichever check needs it first (integrity, secrets).
	sums []contentSum
}

type contentSum struct {
	once sync.Once
	sum  [32]byte
}

// contentSum is the sha256 of it, the i-th item's content.
func (a *auditor) contentSum(i int, it *pack.Item) [32]byte {
	s := &a.sums[i]
	s.once.Do(func() { s.sum = pack.SumString(it.Content) })
	return s.sum
}

// failOn fails the check when the policy fails on cond, else warns.
func (a *auditor) failOn(cond string, c Check) {
	if a.in.Policy.FailsOn(cond) {
		a.v.Fail(c)
	} else {
		a.v.Warn(c)
	}
}

func (a *auditor) integrity() {
	p := a.p
	canonical, digest, err := canonicalDigest(p, a.data)
	if err != nil {
		a.v.Fail(Check{Kind: KindInternal, Code: CodeInternal, Message: "re-serialize the pack: " + err.Error()})
		return
	}
	a.canonical = canonical
	if !canonical {
		a.v.Fail(Check{Kind: KindIntegrity, Code: CodeDigestMismatch,
			Message: "the pack bytes are not in canonical form: it was edited or re-serialized after it was built"})
	}
	if want := pack.ID(digest); p.PackID != want {
		a.v.Fail(Check{Kind: KindIntegrity, Code: CodePackIDMismatch,
			Message: fmt.Sprintf("pack_id %s does not match the content digest (expected %s)", p.PackID, want),
			Details: map[string]any{"pack_id": p.PackID, "expected": want}})
	}
	if n := a.chars(); n != p.Budget.UsedChars {
		a.v.Fail(Check{Kind: KindIntegrity, Code: CodeDigestMismatch,
			Message: fmt.Sprintf("budget.used_chars says %d but the pack has %d characters", p.Budget.UsedChars, n),
			Details: map[string]any{"used_chars": p.Budget.UsedChars, "actual": n}})
	}
	for i, it := range items(p) {
		sum := a.contentSum(i, it)
		if got := hex.EncodeToString(sum[:]); got != it.SHA256 {
			a.v.Fail(Check{Kind: KindIntegrity, Code: CodeContentMismatch,
				Message: fmt.Sprintf("%s: content sha256 %s does not match the recorded %s", it.ID, got, it.SHA256),
				Details: map[string]any{"path": it.Path, "id": it.ID}})
		}
	}
}

// schema validates the JSON document the pack bytes hold against the pack
// schema. Bytes that are exactly the canonical serialization of the pack
// decoded from them hold the document pack.DocumentParts derives from that
// pack, strings shared: a large pack is not decoded a second time, into a
// second copy of its contents, and its document is checked in parts, never
// held whole. Any other bytes (or a pack the document does not cover) are
// decoded again for the check.
func (a *auditor) schema() {
	var err error
	if a.canonical {
		err = validateDocument(a.p)
	}
	if !a.canonical || errors.Is(err, errNotDocumented) {
		err = schema.ValidatePack(a.data)
	}
	if err != nil {
		a.v.Fail(Check{Kind: KindValidation, Code: CodeSchemaInvalid, Message: "the pack does not match the pack schema: " + err.Error()})
	}
}

var errNotDocumented = errors.New("no document of the pack")

// validateDocument validates the document of p in parts; an error wrapping
// errNotDocumented when p holds what a document does not cover.
func validateDocument(p *pack.Pack) error {
	top, lens, element, err := pack.DocumentParts(p)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotDocumented, err)
	}
	return schema.ValidatePackParts(top, lens, func(name string, i int) (any, error) {
		v, err := element(name, i)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errNotDocumented, err)
		}
		return v, nil
	})
}

// items yields the key files and then the other contents of p, in place:
// each check walks them, and a large pack has thousands.
func items(p *pack.Pack) iter.Seq2[int, *pack.Item] {
	return func(yield func(int, *pack.Item) bool) {
		n := 0
		for _, list := range [][]pack.Item{p.KeyFiles, p.Contents} {
			for i := range list {
				if !yield(n, &list[i]) {
					return
				}
				n++
			}
		}
	}
}

// secrets scans every string of the pack afresh.
func (a *auditor) secrets(ctx context.Context) {
	found, failed := packSecrets(ctx, a.in.Scanner, a.p, a.contentSum)
	for _, c := range failed {
		a.v.Fail(c)
	}
	for _, c := range found {
		a.failOn(policy.FailSecretUnredacted, c)
	}
}

// PackSecrets scans every string of a pack afresh: each content item and
// diff under its path (a diff read as its file's lines), every file name the
// way the builder reads names, everything else (manifest, summaries, paths,
// metadata) as one document. found has one secret_unredacted check per
// finding (never the value); failed has one internal check per document the
// scanner could not scan, which a caller must treat as a failure.
func PackSecrets(ctx context.Context, scanner pack.SecretScanner, p *pack.Pack) (found, failed []Check) {
	return packSecrets(ctx, scanner, p, nil)
}

// packSecrets is PackSecrets; sum, when set, gives the sha256 of the i-th
// item's content, for a pack.SumScanner.
func packSecrets(ctx context.Context, scanner pack.SecretScanner, p *pack.Pack, sum func(i int, it *pack.Item) [32]byte) (found, failed []Check) {
	type doc struct {
		where, path, text string
		sum               *[32]byte // the text's sha256, when known
		noFile            bool      // not a file's content or diff (ScanText)
	}
	var docs []doc
	for i, it := range items(p) {
		d := doc{where: "content", path: it.Path, text: it.Content}
		if sum != nil {
			s := sum(i, it)
			d.sum = &s
		}
		docs = append(docs, d)
	}
	for _, c := range p.Changes {
		if c.Diff != "" {
			docs = append(docs, doc{where: "diff", path: c.Path, text: c.Diff})
		}
	}
	rest := *p
	rest.KeyFiles, rest.Contents = nil, nil
	rest.Changes = append([]pack.Change(nil), p.Changes...)
	for i := range rest.Changes {
		rest.Changes[i].Diff = ""
	}
	docs = append(docs, doc{where: "metadata", path: "(pack fields)", text: strings.Join(pack.Strings(&rest), "\n") + "\n", noFile: true})
	nameFound, nameFailed := packNames(ctx, scanner, p)
	found, failed = append(found, nameFound...), append(failed, nameFailed...)
	// The documents are scanned on every core (a range's items and diffs
	// are regions no scan before saw: express's, ~3 ms one after the
	// other), each into its place, and reported in order.
	type scanned struct {
		findings []pack.Finding
		err      error
		done     bool
	}
	results := make([]scanned, len(docs))
	stopped := workers.Each(ctx, len(docs), runtime.GOMAXPROCS(0), func(ctx context.Context, i int) error {
		d := docs[i]
		// The string's own bytes: a scanner never changes what it reads.
		text := unsafe.Slice(unsafe.StringData(d.text), len(d.text))
		r := &results[i]
		if ds, ok := scanner.(pack.DiffScanner); ok && d.where == "diff" {
			r.findings, r.err = ds.ScanDiff(ctx, d.path, text) // a diff's lines read as the file's, at the file's lines
		} else if d.noFile {
			r.findings, r.err = pack.ScanText(ctx, scanner, d.path, text)
		} else {
			r.findings, r.err = pack.ScanWithSum(ctx, scanner, d.path, text, d.sum)
		}
		r.done = true
		return nil // a document that could not be scanned is reported below
	})
	for i, d := range docs {
		findings, err := results[i].findings, results[i].err
		if !results[i].done { // the run ended before it was scanned
			err = stopped
			if err == nil {
				err = errors.New("not scanned")
			}
		}
		if err != nil {
			failed = append(failed, Check{Kind: KindInternal, Code: CodeInternal,
				Message: fmt.Sprintf("the secret scanner could not scan %s (%s): %v", d.path, d.where, err),
				Details: map[string]any{"path": d.path, "where": d.where}})
			continue
		}
		for _, f := range findings {
			found = append(found, Check{Kind: KindSecret, Code: CodeSecretUnredacted,
				Message: fmt.Sprintf("unredacted secret in %s %s:%d (rule %s)", d.where, d.path, f.StartLine, f.RuleID),
				Details: map[string]any{"path": d.path, "where": d.where, "line": f.StartLine, "rule_id": f.RuleID}})
		}
	}
	return found, failed
}

// packNames scans every file name of the pack the way the builder does (a
// token before ".txt" or "/" is found): a name holding a secret leaves in
// the index, the changes, the ledger and every report. A check never
// repeats the name.
func packNames(ctx context.Context, scanner pack.SecretScanner, p *pack.Pack) (found, failed []Check) {
	set := map[string]bool{}
	for _, e := range p.FileIndex {
		set[e.Path] = true
	}
	for _, c := range p.Changes {
		set[c.Path] = true
		if c.OldPath != "" {
			set[c.OldPath] = true
		}
	}
	for _, it := range items(p) {
		set[it.Path] = true
	}
	paths := make([]string, 0, len(set))
	for n := range set {
		if n != "" {
			paths = append(paths, n)
		}
	}
	sort.Strings(paths)
	rules, err := pack.ScanNames(ctx, scanner, paths)
	if err != nil {
		return nil, []Check{{Kind: KindInternal, Code: CodeInternal, Message: "the secret scanner could not scan the file names: " + err.Error()}}
	}
	for _, n := range paths {
		if r := rules[n]; len(r) > 0 {
			found = append(found, Check{Kind: KindSecret, Code: CodeSecretUnredacted,
				Message: fmt.Sprintf("a file name in the pack holds a secret (rule %s)", strings.Join(r, ", ")),
				Details: map[string]any{"where": "name", "rule_id": r[0]}})
		}
	}
	return found, failed
}

// paths checks that no included path (content or diff) matches an exclusion.
func (a *auditor) paths(ctx context.Context) {
	var ignore map[string][]byte
	if a.in.Snapshot != nil {
		var err error
		if ignore, err = pack.IgnoreSources(ctx, a.in.Snapshot.Files); err != nil {
			a.v.Fail(Check{Kind: KindInternal, Code: CodeInternal, Message: "read .ctxpackignore: " + err.Error()})
		}
	}
	x := pack.NewExcluder(a.in.Policy, a.in.Sensitive, ignore)
	check := func(p, where string) {
		r, rule := x.Reason(p)
		if r == "" {
			return
		}
		c := Check{Kind: KindPolicy, Details: map[string]any{"path": p, "where": where, "reason": string(r), "rule": rule}}
		if r == pack.ReasonPolicy {
			c.Code = CodeForbiddenContent
			c.Message = fmt.Sprintf("%s of %s is in the pack but matches %s", where, p, rule)
		} else {
			c.Code = CodeExcludedIncluded
			c.Message = fmt.Sprintf("%s of %s is in the pack but is excluded (%s: %s)", where, p, r, rule)
		}
		a.failOn(policy.FailForbiddenContent, c)
	}
	for _, it := range items(a.p) {
		check(it.Path, "content")
	}
	for _, c := range a.p.Changes {
		if c.Diff == "" {
			continue
		}
		check(c.Path, "diff")
		if c.OldPath != "" {
			check(c.OldPath, "diff")
		}
	}
}

func (a *auditor) sizes() {
	l := a.in.Policy.Limits
	over := func(code, msg string, details map[string]any) {
		a.failOn(policy.FailOverLimit, Check{Kind: KindPolicy, Code: code, Message: msg, Details: details})
	}
	var content int64
	its := items(a.p)
	for _, it := range its {
		content += int64(len(it.Content))
		limit := l.MaxFileBytes
		if it.Importance != "" && limit > pack.KeyFileMaxBytes {
			limit = pack.KeyFileMaxBytes
		}
		if int64(len(it.Content)) > limit+int64(len(pack.TruncationMarker))+redactionSlack(it.Redactions) {
			over(CodeOverLimit, fmt.Sprintf("%s: %d bytes of content over max_file_bytes %d", it.Path, len(it.Content), limit),
				map[string]any{"path": it.Path, "bytes": len(it.Content), "limit": limit})
		}
	}
	for _, c := range a.p.Changes {
		content += int64(len(c.Diff))
	}
	if content > l.MaxContentBytes {
		over(CodeOverLimit, fmt.Sprintf("content and diffs are %d bytes, over max_content_bytes %d", content, l.MaxContentBytes),
			map[string]any{"bytes": content, "limit": l.MaxContentBytes})
	}
	// A change pack may send several regions of one file: files count once.
	withContent := map[string]bool{}
	for _, it := range its {
		withContent[it.Path] = true
	}
	if len(withContent) > l.MaxFiles {
		over(CodeOverLimit, fmt.Sprintf("%d files with content, over max_files %d", len(withContent), l.MaxFiles),
			map[string]any{"files": len(withContent), "limit": l.MaxFiles})
	}
	chars := a.chars()
	if limit := a.in.Policy.TierLimit(); limit > 0 && chars > limit {
		over(CodeOverTier, fmt.Sprintf("the pack is %d characters, over tier %s's %d", chars, a.in.Policy.Pack.Tier, limit),
			map[string]any{"chars": chars, "limit": limit, "tier": a.in.Policy.Pack.Tier})
	}
	var tokens int
	countTokens := func() bool {
		if tokens == 0 {
			n, err := pack.CountTokensOf(a.data)
			if err != nil {
				a.v.Fail(Check{Kind: KindInternal, Code: CodeInternal, Message: "count tokens: " + err.Error()})
				return false
			}
			tokens = n
		}
		return true
	}
	// An explicit limits.max_tokens caps every pack, Full or Summary (a
	// budget sized to the change is the builder's choice, not a limit).
	if limit := a.in.Policy.Limits.MaxTokens; limit > 0 {
		if countTokens() && tokens > limit {
			over(CodeOverLimit, fmt.Sprintf("the %s pack is about %d tokens, over limits.max_tokens %d", a.p.Type, tokens, limit),
				map[string]any{"tokens": tokens, "limit": limit})
		}
	}
	for _, d := range a.in.Policy.Egress.Destinations {
		if d.MaxChars > 0 && chars > d.MaxChars {
			over(CodeOverDestination, fmt.Sprintf("the pack is %d characters, over destination %s's max_chars %d", chars, d.Name, d.MaxChars),
				map[string]any{"destination": d.Name, "chars": chars, "limit": d.MaxChars})
		}
		if d.MaxTokens > 0 {
			if !countTokens() {
				continue
			}
			if tokens > d.MaxTokens {
				over(CodeOverDestination, fmt.Sprintf("the pack is about %d tokens, over destination %s's max_tokens %d", tokens, d.Name, d.MaxTokens),
					map[string]any{"destination": d.Name, "tokens": tokens, "limit": d.MaxTokens})
			}
		}
	}
}

// redactionSlack allows for placeholders longer than what they replaced.
func redactionSlack(r []pack.Redaction) int64 {
	var n int64
	for _, x := range r {
		n += int64(len("[REDACTED:]") + len(x.RuleID))
	}
	return n
}

// availability fails every changed file whose content the repository
// could not provide: what a change brings must be checked, never assumed.
func (a *auditor) availability() {
	for _, c := range a.p.Changes {
		if c.DiffWithheld != pack.ReasonNotFetched {
			continue
		}
		a.v.Fail(Check{Kind: KindIntegrity, Code: CodeContentUnavailable,
			Message: fmt.Sprintf("changed file %s (%s) could not be checked: its content is not in this partial clone and its promisor remote could not provide it; give the remote's access (network, credentials) and pack again, or fetch the objects first", c.Path, c.Status),
			Details: map[string]any{"path": c.Path, "status": c.Status, "reason": string(c.DiffWithheld)}})
	}
}

// repository checks the pack against the repository state it claims.
func (a *auditor) repository(ctx context.Context) {
	snap := a.in.Snapshot
	files := map[string]*pack.File{}
	for i := range snap.Files {
		files[snap.Files[i].Path] = &snap.Files[i]
	}
	// A change pack may carry files of the head tree beyond the listed
	// scope (what the change calls, what calls it): each must be there.
	var extra []string
	if snap.Tree != nil {
		for _, e := range a.p.FileIndex {
			if _, ok := files[e.Path]; ok || strings.HasSuffix(e.Path, "/") {
				continue
			}
			f, ok, err := snap.Tree.File(ctx, e.Path)
			if err != nil {
				a.v.Fail(Check{Kind: KindInternal, Code: CodeInternal, Message: fmt.Sprintf("read %s from the head tree: %v", e.Path, err)})
				continue
			}
			if ok {
				files[e.Path] = &f
				extra = append(extra, e.Path)
			}
		}
	}
	// Each file is read once, and let go after its last item: a full
	// pack's files are not all held at once.
	uses := map[string]int{}
	for _, it := range items(a.p) {
		uses[it.Path]++
	}
	data := map[string][]byte{}
	// read returns the bytes of the file f the item it was cut from, and
	// whether they are known to be the blob it.Blob names.
	read := func(it *pack.Item, f *pack.File) (d []byte, isBlob, ok bool) {
		path := it.Path
		uses[path]--
		if d, ok := data[path]; ok {
			if uses[path] == 0 {
				delete(data, path)
			}
			return d, false, true
		}
		if d := contentAsBlob(it, f, provenBlobID); d != nil {
			return d, true, true
		}
		if f.Read == nil {
			a.v.Fail(Check{Kind: KindIntegrity, Code: CodeBlobMismatch,
				Message: fmt.Sprintf("%s is in the pack but is not a regular file in the repository state", path),
				Details: map[string]any{"path": path}})
			return nil, false, false
		}
		d, err := f.Read(ctx)
		if err != nil {
			a.v.Fail(Check{Kind: KindInternal, Code: CodeInternal, Message: fmt.Sprintf("read %s: %v", path, err)})
			return nil, false, false
		}
		if uses[path] > 0 {
			data[path] = d
		}
		return d, false, true
	}
	for _, it := range items(a.p) {
		f, ok := files[it.Path]
		if !ok {
			a.v.Fail(Check{Kind: KindIntegrity, Code: CodeBlobMismatch,
				Message: fmt.Sprintf("%s is in the pack but not in the repository state", it.Path),
				Details: map[string]any{"path": it.Path}})
			continue
		}
		d, isBlob, ok := read(it, f)
		if !ok {
			continue
		}
		// A withheld original has no blob id in the pack: its content is
		// re-derived all the same. A message never names the repository's
		// blob id: it is a function of the file, which may hold a secret.
		if it.Blob != "" && !isBlob && it.Blob != gitBlobID(d, len(it.Blob)) {
			a.v.Fail(Check{Kind: KindIntegrity, Code: CodeBlobMismatch,
				Message: fmt.Sprintf("%s: the blob id in the pack is not the repository's", it.ID),
				Details: map[string]any{"path": it.Path, "id": it.ID, "pack_blob": it.Blob}})
		}
		if problem := rederiveItem(it, d); problem != "" {
			a.v.Fail(Check{Kind: KindIntegrity, Code: CodeBlobMismatch,
				Message: fmt.Sprintf("%s: %s in the repository state", it.ID, problem),
				Details: map[string]any{"path": it.Path, "id": it.ID}})
		}
	}
	repoChanges := map[string]*pack.Change{}
	for i := range snap.Changes {
		repoChanges[snap.Changes[i].Path] = &snap.Changes[i]
	}
	var diffs []sentDiff
	for i := range a.p.Changes {
		c := &a.p.Changes[i]
		if c.Diff == "" {
			continue
		}
		rc := repoChanges[c.Path]
		if rc == nil || rc.Diff == "" || rc.Status != c.Status {
			a.v.Fail(Check{Kind: KindIntegrity, Code: CodeBlobMismatch,
				Message: fmt.Sprintf("the diff of %s is in the pack but the repository state has no such change", c.Path),
				Details: map[string]any{"path": c.Path, "where": "diff"}})
			continue
		}
		diffs = append(diffs, sentDiff{sent: c, repo: rc})
	}
	a.diffs(ctx, diffs, files)
	// Every file is accounted for: an entry of its own, or counted by a
	// condensed directory entry of a Summary pack.
	paths := make([]string, len(snap.Files), len(snap.Files)+len(extra))
	for i, f := range snap.Files {
		paths[i] = f.Path
	}
	paths = append(paths, extra...)
	for _, problem := range pack.CheckIndex(a.p.FileIndex, paths) {
		a.v.Fail(Check{Kind: KindIntegrity, Code: CodeChangeUnaccounted,
			Message: "file index: " + problem})
	}
	listed := map[string]string{}
	for _, c := range a.p.Changes {
		listed[c.Path] = c.Status
	}
	for _, c := range snap.Changes {
		if st, ok := listed[c.Path]; !ok || st != c.Status {
			a.v.Fail(Check{Kind: KindIntegrity, Code: CodeChangeUnaccounted,
				Message: fmt.Sprintf("changed file %s (%s) is not accounted for in the pack", c.Path, c.Status),
				Details: map[string]any{"path": c.Path, "status": c.Status}})
		}
	}
}

// sentDiff is a diff of the pack and the repository's diff of its change.
type sentDiff struct{ sent, repo *pack.Change }

// diffs checks each diff of the pack against the repository's diff of its
// change (rederiveDiffSecrets) and against the secrets of the versions of
// the file it shows: every part of a secret of either version that the
// repository's diff shows (pack.DiffSecrets: a line in the middle of a
// private key, which the diff's own text never shows as a key) must be
// behind a placeholder or cut away. The versions are read and scanned on
// every core; the scanner's cache holds what the builder scanned.
func (a *auditor) diffs(ctx context.Context, diffs []sentDiff, files map[string]*pack.File) {
	type shown struct {
		secrets []pack.DiffSecret
		// unchecked says why what the diff shows could not be checked.
		unchecked, code string
	}
	results := make([]shown, len(diffs))
	stopped := workers.Each(ctx, len(diffs), runtime.GOMAXPROCS(0), func(ctx context.Context, i int) error {
		r := &results[i]
		rc := diffs[i].repo
		side := func(p string, read func(context.Context) ([]byte, error), what string) *pack.DiffSide {
			if r.unchecked != "" {
				return nil
			}
			if read == nil {
				r.unchecked, r.code = fmt.Sprintf("the repository state cannot give %s, whose lines the diff shows", what), CodeContentUnavailable
				return nil
			}
			data, err := read(ctx)
			var unavailable *pack.Unavailable
			if errors.As(err, &unavailable) {
				r.unchecked, r.code = fmt.Sprintf("%s, whose lines the diff shows, is not available (%s)", what, unavailable.Reason), CodeContentUnavailable
				return nil
			}
			if err != nil {
				r.unchecked, r.code = fmt.Sprintf("read %s: %v", what, err), CodeInternal
				return nil
			}
			s, err := pack.ScanDiffSide(ctx, a.in.Scanner, p, data)
			if err != nil {
				r.unchecked, r.code = fmt.Sprintf("the secret scanner could not scan %s: %v", what, err), CodeInternal
				return nil
			}
			return s
		}
		var old, cur *pack.DiffSide
		if rc.Status != "deleted" {
			var read func(context.Context) ([]byte, error)
			if f := files[rc.Path]; f != nil {
				read = f.Read
			}
			cur = side(rc.Path, read, "the file")
		}
		if rc.Status != "added" {
			p := rc.OldPath
			if p == "" {
				p = rc.Path
			}
			var read func(context.Context) ([]byte, error)
			if rc.Old != nil {
				read = rc.Old.Read
			}
			old = side(p, read, "the file before the change")
		}
		if r.unchecked == "" {
			var ok bool
			if r.secrets, ok = pack.DiffSecrets(rc.Diff, old, cur); !ok {
				r.unchecked, r.code = "the repository's diff of the file is not a diff of its versions", CodeInternal
			}
		}
		return nil
	})
	if stopped != nil {
		a.v.Fail(Check{Kind: KindInternal, Code: CodeInternal, Message: "the versions of the changed files could not be scanned: " + stopped.Error()})
		return
	}
	for i, d := range diffs {
		c, r := d.sent, &results[i]
		problem, exposed := rederiveDiffSecrets(c, d.repo.Diff, r.secrets)
		switch {
		case problem != "":
			a.v.Fail(Check{Kind: KindIntegrity, Code: CodeBlobMismatch,
				Message: fmt.Sprintf("%s: %s", c.Path, problem),
				Details: map[string]any{"path": c.Path, "where": "diff"}})
		case r.unchecked != "":
			kind := KindIntegrity
			if r.code == CodeInternal {
				kind = KindInternal
			}
			a.v.Fail(Check{Kind: kind, Code: r.code,
				Message: fmt.Sprintf("the diff of %s could not be checked for the secrets of the file: %s", c.Path, r.unchecked),
				Details: map[string]any{"path": c.Path, "where": "diff"}})
		case exposed != nil:
			version := "new"
			if exposed.Old {
				version = "old"
			}
			a.failOn(policy.FailSecretUnredacted, Check{Kind: KindSecret, Code: CodeSecretUnredacted,
				Message: fmt.Sprintf("unredacted secret in diff %s:%d (rule %s): the diff shows part of a secret of the file's %s version", c.Path, exposed.Finding.StartLine, exposed.Finding.RuleID, version),
				Details: map[string]any{"path": c.Path, "where": "diff", "line": exposed.Finding.StartLine, "rule_id": exposed.Finding.RuleID, "version": version}})
		}
	}
}

// gitBlobID is git's id of a blob with this content: SHA-256 when the id
// it is compared with has 64 digits (a SHA-256 repository), else SHA-1.
func gitBlobID(data []byte, idLen int) string {
	if idLen == 64 {
		return hex.EncodeToString(gitBlobSHA256(data))
	}
	h := sha1Blob(data)
	return hex.EncodeToString(h[:])
}

// contentAsBlob is the bytes of the item's content when they are the
// whole blob that the repository state names for its file, a regular file
// (f.Read set), f.Blob, and that the item names too: nil otherwise. Such
// an item is re-derived from its own bytes, which are the file's, without
// reading the file again (a full pack's items are most of them: 10,000
// files read a second time). Only an item that says it is the file as it
// is (UTF-8, whole, nothing redacted) is hashed for it; whatever it says,
// its bytes are the blob's only if their blob id is, by a hash that shows
// a SHA-1 collision attack (idOf, provenBlobID: bytes that collide with
// the file's are read against the file), and the re-derivation checks the
// rest as for any item.
func contentAsBlob(it *pack.Item, f *pack.File, idOf func(data []byte, idLen int) (string, bool)) []byte {
	if f.Read == nil || f.Blob == "" || it.Blob != f.Blob || it.Encoding != pack.EncUTF8 || it.Truncated || len(it.Redactions) > 0 {
		return nil
	}
	d := unsafe.Slice(unsafe.StringData(it.Content), len(it.Content)) // read only
	if id, ok := idOf(d, len(f.Blob)); !ok || id != f.Blob {
		return nil
	}
	return d
}
