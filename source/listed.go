package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
)

// Shallow reports whether the repository is a shallow clone (git clone
// --depth N, actions/checkout's default fetch-depth: 1): some commits' parents
// are not in it.
func (r *Repo) Shallow() bool {
	if r.b == nil {
		return false
	}
	fi, err := os.Stat(filepath.Join(r.commonDir, "shallow"))
	return err == nil && fi.Size() > 0
}

// HasCommit reports whether rev names a commit whose object is in the
// repository.
func (r *Repo) HasCommit(rev string) bool {
	if r.b == nil || rev == "" {
		return false
	}
	h, err := r.Resolve(rev)
	if err != nil {
		return false
	}
	_, err = r.b.commit(context.Background(), h)
	return err == nil
}

// RangeAvailable reports whether base..head can be snapshotted from the
// objects at hand: both commits are present and their merge base is found
// (in a shallow clone it may lie beyond the boundary).
func (r *Repo) RangeAvailable(baseRev, headRev string) bool {
	if !r.HasCommit(baseRev) || !r.HasCommit(headRev) {
		return false
	}
	bh, _ := r.Resolve(baseRev)
	hh, _ := r.Resolve(headRev)
	mbs, err := r.mergeBases(context.Background(), hh, bh)
	return err == nil && len(mbs) > 0
}

// CommitAvailable reports whether rev and its first parent (if it has one)
// are present, so Commit can diff it.
func (r *Repo) CommitAvailable(rev string) bool {
	if !r.HasCommit(rev) {
		return false
	}
	h, _ := r.Resolve(rev)
	c, err := r.b.commit(context.Background(), h)
	if err != nil {
		return false
	}
	if len(c.Parents) == 0 {
		return true
	}
	_, err = r.b.commit(context.Background(), c.Parents[0])
	return err == nil
}

// TreeWithChanges snapshots rev's tree with a change list obtained elsewhere
// (GitHub's API, when the base commit is not in a shallow clone). base is
// recorded as the snapshot's base commit; it need not be present. No
// per-commit patches are collected: the history scan cannot run, and the
// caller must report it as skipped. scope (policy.ScopeTree or
// policy.ScopeChange) is what is listed of the tree.
func (r *Repo) TreeWithChanges(ctx context.Context, rev, base string, changes []pack.Change, scope string) (*pack.Snapshot, error) {
	if r.b == nil {
		return nil, fmt.Errorf("revision %q: %s is not a git repository", rev, r.Root)
	}
	h, err := r.ResolveContext(ctx, rev)
	if err != nil {
		return nil, err
	}
	head, err := r.commit(ctx, h)
	if err != nil {
		return nil, err
	}
	snap, err := r.commitSnapshot(head)
	if err != nil {
		return nil, err
	}
	snap.Source.Ref, snap.Source.Trigger = rev, "range"
	if base != "" {
		id, err := ParseID(base)
		if err != nil || len(id) != len(h) {
			return nil, errors.New("the base of a listed change set must be a full commit id")
		}
		snap.Source.Base = id.String()
	}
	for _, c := range changes {
		if !TreePath(c.Path) || (c.OldPath != "" && !TreePath(c.OldPath)) {
			return nil, fmt.Errorf("the change list names %q, which no git tree can hold (absolute, empty or dot elements, or a NUL): refusing it", clipName(c.Path+" "+c.OldPath))
		}
	}
	snap.Changes = append([]pack.Change(nil), changes...)
	sortChanges(snap.Changes)
	snap.Source.Scope = scope
	if snap.Files, err = r.scopedFiles(ctx, head, snap.Changes, scope); err != nil {
		return nil, err
	}
	return snap, nil
}

// clipName bounds a name quoted in an error.
func clipName(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
