package pack

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// A secret can sit in a file's name (keys/AKIA….json, a token pasted into a
// branch of the tree). A name leaves in more places than any content: the
// file index, the changes, diff headers, the ledger, findings, annotations,
// the PR comment. So the scanner reads every name of the snapshot — head
// tree, changes (new and old paths) and every commit's files — before
// anything else, and a name with a finding is replaced everywhere by its
// redacted form, `dir/[REDACTED:<rule>].json`, before any stage sees it. The
// file itself is excluded (reason credentials) and its diff withheld: a
// file named by a secret is presumed to hold what its name says.

// NamesScanPath is the path the scanner is given for the document of file
// names: not a file path, so no path-based allowlist applies.
const NamesScanPath = "(file names)"

// WhereName marks a finding in a file name.
const WhereName = "name"

// FingerprintIgnorer is a SecretScanner that can say whether its
// .gitleaksignore lists a fingerprint the caller made (a name finding's
// `<redacted path>:<rule>:0`). Without it, name findings cannot be ignored.
type FingerprintIgnorer interface {
	IgnoresFingerprint(fp string) bool
}

// DiffScanner is a SecretScanner that reads a unified diff and reports each
// finding at the line of the file the diff line shows (not the line inside
// the diff text), fingerprinted and ignored by that line.
type DiffScanner interface {
	ScanDiff(ctx context.Context, path string, diff []byte) ([]Finding, error)
}

// textScan is how a text that is no file is scanned (ScanText).
func (b *builder) textScan() func(context.Context, string, []byte) ([]Finding, error) {
	return func(ctx context.Context, where string, text []byte) ([]Finding, error) {
		return ScanText(ctx, b.opts.Scanner, where, text)
	}
}

// diffScan is how a diff is scanned: the scanner's DiffScanner when it has
// one, else its Scan.
func (b *builder) diffScan() func(context.Context, string, []byte) ([]Finding, error) {
	if ds, ok := b.opts.Scanner.(DiffScanner); ok {
		return ds.ScanDiff
	}
	return b.opts.Scanner.Scan
}

// scanSentDiff scans the whole diff of path (diffScan) and returns the
// findings in the part sent, the kept spans of truncate, with their
// redaction spans in the sent text.
func (b *builder) scanSentDiff(ctx context.Context, path, diff string, kept []span) ([]Finding, []redactSpan, error) {
	fs, err := b.diffScan()(ctx, path, []byte(diff))
	if err != nil {
		return nil, nil, err
	}
	var sent []Finding
	var spans []redactSpan
	for _, f := range fs {
		ms := mapSpan(kept, f.Start, f.End)
		for _, s := range ms {
			spans = append(spans, redactSpan{s.start, s.end, f.RuleID})
		}
		if len(ms) > 0 {
			sent = append(sent, f)
		}
	}
	return sent, spans, nil
}

// RedactNames scans every name of snap and replaces each name holding a
// secret, in place, everywhere in snap: files, changes, diff headers and
// commits (Files and Changes stay sorted). It returns one finding per rule
// and redacted name, with Path the redacted name, line 0 and the
// fingerprint `<redacted path>:<rule>:0`; a name only a commit of the range
// brings (not in the head tree or the changes) is reported for that commit
// (Commit set), like a secret it added. Running it again on its own result
// finds nothing. An error means the names could not be scanned.
func RedactNames(ctx context.Context, snap *Snapshot, sc SecretScanner) ([]Finding, error) {
	// The names a commit brings are read with its patch.
	if err := snap.AwaitCommits(); err != nil {
		return nil, err
	}
	current := map[string]bool{}
	firstCommit := map[string]string{}
	for _, f := range snap.Files {
		current[f.Path] = true
	}
	for _, c := range snap.Changes {
		current[c.Path] = true
		if c.OldPath != "" {
			current[c.OldPath] = true
		}
	}
	all := make(map[string]bool, len(current))
	for p := range current {
		all[p] = true
	}
	for _, c := range snap.Commits {
		for _, f := range c.Files {
			all[f.Path] = true
			if _, ok := firstCommit[f.Path]; !ok {
				firstCommit[f.Path] = c.Commit
			}
		}
	}
	paths := make([]string, 0, len(all))
	for p := range all {
		if p != "" {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	spans, err := nameSpans(ctx, sc, paths)
	if err != nil {
		return nil, err
	}
	if len(spans) == 0 {
		return nil, nil
	}
	ignorer, _ := sc.(FingerprintIgnorer)
	rename := map[string]string{}
	taken := map[string]bool{}
	for _, p := range paths {
		taken[p] = true
	}
	var out []Finding
	for _, p := range paths {
		sp := spans[p]
		if len(sp) == 0 {
			continue
		}
		red, _ := applyRedactions(p, append([]redactSpan(nil), sp...))
		if ignorer != nil {
			var kept []redactSpan
			for _, s := range sp {
				if !ignorer.IgnoresFingerprint(nameFingerprint(red, s.rule)) {
					kept = append(kept, s)
				}
			}
			if len(kept) == 0 {
				continue
			}
			red, _ = applyRedactions(p, kept)
			sp = kept
		}
		red = uniqueName(red, taken)
		taken[red] = true
		rename[p] = red
		commit := ""
		if !current[p] {
			commit = firstCommit[p]
		}
		seen := map[string]bool{}
		for _, s := range sp {
			if seen[s.rule] {
				continue
			}
			seen[s.rule] = true
			fp := nameFingerprint(red, s.rule)
			if commit != "" {
				fp = commit + ":" + fp
			}
			out = append(out, Finding{RuleID: s.rule, Path: red, Commit: commit, Fingerprint: fp})
		}
	}
	if len(rename) > 0 {
		renameSnapshot(snap, rename)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].RuleID < out[j].RuleID
	})
	return out, nil
}

// ScanNames reports the rules that find a secret in each of paths, read
// the way RedactNames reads names (whole, by component, stem and dot
// piece); paths without a finding are left out.
func ScanNames(ctx context.Context, sc SecretScanner, paths []string) (map[string][]string, error) {
	spans, err := nameSpans(ctx, sc, paths)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for p, sp := range spans {
		seen := map[string]bool{}
		for _, s := range sp {
			if !seen[s.rule] {
				seen[s.rule] = true
				out[p] = append(out[p], s.rule)
			}
		}
		sort.Strings(out[p])
	}
	return out, nil
}

func nameFingerprint(redacted, rule string) string { return redacted + ":" + rule + ":0" }

// uniqueName appends ~2, ~3, … to a redacted name another path already has.
func uniqueName(name string, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s~%d", name, i); !taken[n] {
			return n
		}
	}
}

// nameSpans scans the names and returns each name's secret spans. Rules
// expect a token to end at a quote, a space or a line end, not at the ".txt"
// or "/" that follows it in a name; so besides each whole name, each of its
// components is read on its own line, also without its extension and cut
// at its dots (a distinct piece once, however many names hold it), and a
// finding in a piece is a span of every name holding that piece there. A
// name holding a line break is scanned on its own.
func nameSpans(ctx context.Context, sc SecretScanner, paths []string) (map[string][]redactSpan, error) {
	type occurrence struct {
		path string
		off  int
	}
	out := map[string][]redactSpan{}
	pieces := map[string][]occurrence{}
	addPiece := func(piece, p string, off int) {
		if piece != "" {
			pieces[piece] = append(pieces[piece], occurrence{p, off})
		}
	}
	for _, p := range paths {
		if strings.ContainsAny(p, "\n\r") {
			fs, err := ScanText(ctx, sc, NamesScanPath, []byte(p))
			if err != nil {
				return nil, fmt.Errorf("secret scan of file names: %w", err)
			}
			for _, f := range fs {
				out[p] = append(out[p], redactSpan{max(f.Start, 0), min(f.End, len(p)), f.RuleID})
			}
			continue
		}
		addPiece(p, p, 0)
		off := 0
		for _, comp := range strings.Split(p, "/") {
			if comp != p {
				addPiece(comp, p, off)
			}
			if dot := strings.LastIndexByte(comp, '.'); dot > 0 {
				addPiece(comp[:dot], p, off)
				k := 0
				for _, part := range strings.Split(comp, ".") {
					addPiece(part, p, off+k)
					k += len(part) + 1
				}
			}
			off += len(comp) + 1
		}
	}
	if len(pieces) == 0 {
		return out, nil
	}
	keys := make([]string, 0, len(pieces))
	for k := range pieces {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var doc strings.Builder
	starts := make([]int, len(keys))
	for i, k := range keys {
		starts[i] = doc.Len()
		doc.WriteString(k)
		doc.WriteByte('\n')
	}
	fs, err := ScanText(ctx, sc, NamesScanPath, []byte(doc.String()))
	if err != nil {
		return nil, fmt.Errorf("secret scan of file names: %w", err)
	}
	seen := map[string]map[[2]int]bool{}
	for _, f := range fs {
		for i := sort.Search(len(starts), func(i int) bool { return starts[i] > f.Start }) - 1; i >= 0 && i < len(keys) && starts[i] < f.End; i++ {
			s, e := max(f.Start, starts[i])-starts[i], min(f.End, starts[i]+len(keys[i]))-starts[i]
			if s >= e {
				continue
			}
			for _, o := range pieces[keys[i]] {
				sp := [2]int{o.off + s, o.off + e}
				if seen[o.path] == nil {
					seen[o.path] = map[[2]int]bool{}
				}
				if !seen[o.path][sp] {
					seen[o.path][sp] = true
					out[o.path] = append(out[o.path], redactSpan{sp[0], sp[1], f.RuleID})
				}
			}
		}
	}
	return out, nil
}

// renameSnapshot applies rename (old name → redacted name) to every name of
// snap, diff headers included, and sorts Files and Changes again.
func renameSnapshot(snap *Snapshot, rename map[string]string) {
	to := func(p string) string {
		if r, ok := rename[p]; ok {
			return r
		}
		return p
	}
	for i := range snap.Files {
		snap.Files[i].Path = to(snap.Files[i].Path)
	}
	sort.SliceStable(snap.Files, func(i, j int) bool { return snap.Files[i].Path < snap.Files[j].Path })
	for i := range snap.Changes {
		c := &snap.Changes[i]
		if c.Diff != "" {
			c.Diff = renameDiffHeader(c.Diff, rename, c.Path, c.OldPath)
		}
		c.Path, c.OldPath = to(c.Path), to(c.OldPath)
	}
	sort.SliceStable(snap.Changes, func(i, j int) bool { return snap.Changes[i].Path < snap.Changes[j].Path })
	for i := range snap.Commits {
		for j := range snap.Commits[i].Files {
			f := &snap.Commits[i].Files[j]
			f.Path = to(f.Path)
		}
	}
}

// renameDiffHeader replaces the file's names in the header lines of a
// unified diff (everything before its first hunk).
func renameDiffHeader(diff string, rename map[string]string, names ...string) string {
	end := strings.Index(diff, "\n@@ ")
	if end < 0 {
		end = len(diff)
	}
	head := diff[:end]
	for _, n := range names {
		if r, ok := rename[n]; ok && n != "" {
			head = strings.ReplaceAll(head, n, r)
		}
	}
	return head + diff[end:]
}

// nameWithheld reports whether p is a redacted name (its file is excluded,
// its diff withheld).
func (b *builder) nameWithheld(p string) bool { return b.redactedNames[p] }

// redactNames runs RedactNames on the builder's snapshot and records each
// finding as a name event under the secret policy.
func (b *builder) redactNames(ctx context.Context) error {
	fs, err := RedactNames(ctx, b.snap, b.opts.Scanner)
	if err != nil {
		return err
	}
	b.redactedNames = map[string]bool{}
	action := b.secretAction()
	for _, f := range fs {
		b.redactedNames[f.Path] = true
		b.secrets = append(b.secrets, SecretEvent{Finding: f, Where: WhereName, Action: action})
	}
	return nil
}
