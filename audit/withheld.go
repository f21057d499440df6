package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// originals fails a pack that publishes a function of a secret: a file
// with a redaction anywhere in the pack (an item of it, its diff), a
// symlink, or a file the pack itself marks original_withheld, may have no blob id or original
// size on any item, no size in its index entry and no blob ids in its
// diff's index line. Each is a function of the original bytes alone, so
// anyone holding the pack could confirm a guess of the secret offline.
func (a *auditor) originals() {
	secret := map[string]bool{}
	for _, it := range items(a.p) {
		if len(it.Redactions) > 0 || it.OriginalWithheld != "" {
			secret[it.Path] = true
		}
	}
	for _, e := range a.p.FileIndex {
		// A symlink's target is never scanned: its size (the target's
		// length) and blob id may not leave either.
		if e.OriginalWithheld != "" || e.ExclusionReason == pack.ReasonSymlink {
			secret[e.Path] = true
		}
	}
	for _, c := range a.p.Changes {
		if len(c.Redactions) > 0 || c.OriginalWithheld != "" {
			secret[c.Path] = true
			if c.OldPath != "" {
				secret[c.OldPath] = true
			}
		}
	}
	published := map[string][]string{}
	for _, it := range items(a.p) {
		if secret[it.Path] && it.Blob != "" {
			published[it.Path] = append(published[it.Path], "blob id (item "+it.ID+")")
		}
		if secret[it.Path] && it.OriginalSizeBytes != nil {
			published[it.Path] = append(published[it.Path], "original size (item "+it.ID+")")
		}
	}
	for _, e := range a.p.FileIndex {
		if secret[e.Path] && e.SizeBytes != nil && !strings.HasSuffix(e.Path, "/") {
			published[e.Path] = append(published[e.Path], "size (file index)")
		}
	}
	for _, c := range a.p.Changes {
		if !secret[c.Path] && !secret[c.OldPath] {
			continue
		}
		if header, _ := pack.DiffHunks(c.Diff); strings.HasPrefix(header, "index ") || strings.Contains(header, "\nindex ") {
			published[c.Path] = append(published[c.Path], "blob ids (the diff's index line)")
		}
	}
	paths := make([]string, 0, len(published))
	for p := range published {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		a.failOn(policy.FailSecretUnredacted, Check{Kind: KindSecret, Code: CodeOriginalPublished,
			Message: fmt.Sprintf("%s holds a secret, yet the pack publishes its original's %s: each lets anyone confirm a guess of the secret offline",
				p, strings.Join(published[p], ", ")),
			Details: map[string]any{"path": p, "published": published[p]}})
	}
}
