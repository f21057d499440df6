package source

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// Push is what pushing one head publishes, ready to pack.
type Push struct {
	// Snapshot is the pushed change in its change scope (see ChangeScope),
	// with the lines every new commit added.
	Snapshot *pack.Snapshot
	// Commits is every new commit, oldest first, merges included (as in
	// the snapshot's per-commit patches).
	Commits []string
	// Base is the diff base, "" when the whole tree is new.
	Base string
}

// Pushed snapshots what pushing head publishes to a remote that has the
// known commits: the change from the diff base (see Unpublished) to head, in
// its change scope, and the added lines of exactly the new commits. With no
// new commit, Snapshot is nil.
//
// The work is proportional to the push, not to the repository: the walk stops
// at the known commits, the tree diff skips unchanged subtrees, and only the
// files of the change scope are listed.
func (r *Repo) Pushed(ctx context.Context, head ObjectID, known []ObjectID) (*Push, error) {
	u, err := r.Unpublished(ctx, head, known)
	if err != nil {
		return nil, err
	}
	out := &Push{}
	if u.Base != nil {
		out.Base = u.Base.ID.String()
	}
	if len(u.Commits) == 0 {
		return out, nil
	}
	for _, c := range u.Commits {
		out.Commits = append(out.Commits, c.ID.String())
	}
	headCommit, err := r.commit(ctx, head)
	if err != nil {
		return nil, err
	}
	if out.Snapshot, err = r.treeSnapshot(ctx, u.Base, headCommit, u.Commits, policy.ScopeChange); err != nil {
		return nil, err
	}
	out.Snapshot.Source.Trigger = "push"
	return out, nil
}

// Unpublished is what pushing a head publishes.
type Unpublished struct {
	// Head is the pushed commit.
	Head ObjectID
	// Commits are the commits reachable from Head and from none of the known
	// commits, parents before children (oldest first).
	Commits []*Commit
	// Base is the diff base: the first commit on Head's first-parent line
	// that a known commit reaches (Head itself when nothing is new); nil when
	// the line has none, so the whole tree is new.
	Base *Commit
}

// Unpublished lists the commits reachable from head and not from any of the
// known commits (git rev-list head --not known…). Known commits missing from
// the repository are ignored (a remote tracking ref can name a commit that
// was never fetched).
func (r *Repo) Unpublished(ctx context.Context, head ObjectID, known []ObjectID) (*Unpublished, error) {
	if r.b == nil {
		return nil, fmt.Errorf("%s is not a git repository", r.Root)
	}
	hc, err := r.commit(ctx, head)
	if err != nil {
		return nil, err
	}
	var present []ObjectID
	seen := map[ObjectID]bool{}
	for _, k := range known {
		if seen[k] {
			continue
		}
		seen[k] = true
		if kind, _, err := r.b.kind(ctx, k); err != nil {
			return nil, fmt.Errorf("read object %s: %w", k, err)
		} else if kind == KindCommit {
			present = append(present, k)
		}
	}
	ids, err := r.revList(ctx, head, present)
	if err != nil {
		return nil, fmt.Errorf("list the commits of %s not on the remote: %w", head.Short(), err)
	}
	out := &Unpublished{Head: head}
	if out.Commits, err = r.ordered(ctx, ids); err != nil {
		return nil, err
	}
	isNew := make(map[ObjectID]bool, len(ids))
	for _, id := range ids {
		isNew[id] = true
	}
	// The diff base: walk the first-parent line down to the first known commit.
	c := hc
	for c != nil && isNew[c.ID] {
		if len(c.Parents) == 0 {
			c = nil
			break
		}
		p, err := r.b.commit(ctx, c.Parents[0])
		if errors.Is(err, errMissing) {
			c = nil // a shallow boundary: no known base on this line
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", c.Parents[0], err)
		}
		c = p
	}
	out.Base = c
	return out, nil
}

// TrackingRefs returns the commits of a remote's tracking refs
// (refs/remotes/<remote>/*), sorted and without duplicates; symbolic refs
// (refs/remotes/<remote>/HEAD) are skipped, their targets are listed anyway.
func (r *Repo) TrackingRefs(remote string) ([]ObjectID, error) {
	if r.b == nil {
		return nil, fmt.Errorf("%s is not a git repository", r.Root)
	}
	if remote == "" || strings.ContainsAny(remote, "*?[\\") {
		return nil, nil
	}
	refs, err := r.b.refs(context.Background(), "refs/remotes/"+remote+"/")
	if err != nil {
		return nil, fmt.Errorf("list references: %w", err)
	}
	seen := map[ObjectID]bool{}
	var out []ObjectID
	for _, ref := range refs {
		if !seen[ref.ID] {
			seen[ref.ID] = true
			out = append(out, ref.ID)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// Peel follows tag objects from id to what they finally name, and says what
// that is: a commit (the id returned), a tree, a blob, or missing.
func (r *Repo) Peel(id ObjectID) (ObjectID, string, error) {
	if r.b == nil {
		return "", "", fmt.Errorf("%s is not a git repository", r.Root)
	}
	for range 32 { // tags of tags, bounded
		kind, target, err := r.b.kind(context.Background(), id)
		if err != nil {
			return id, "", fmt.Errorf("read object %s: %w", id, err)
		}
		if kind != KindTag {
			return id, kind, nil
		}
		id = target
	}
	return id, "", fmt.Errorf("tag %s: too many levels of tags", id)
}

// ChangeScope snapshots head against base (a range, not the commits of
// one), listing only the change scope of the head tree rather than all of
// it: the changed files, the repository's top-level files (where key files
// and manifests live) and the .ctxpackignore files of every directory on the
// way to a changed path (all that gitignore semantics consult for them). It
// is what the pre-push hook packs; a pack of it re-derives with this call.
func (r *Repo) ChangeScope(ctx context.Context, baseRev, headRev string) (*pack.Snapshot, error) {
	hh, err := r.ResolveContext(ctx, headRev)
	if err != nil {
		return nil, err
	}
	head, err := r.commit(ctx, hh)
	if err != nil {
		return nil, err
	}
	var base *Commit
	if baseRev != "" {
		bh, err := r.ResolveContext(ctx, baseRev)
		if err != nil {
			return nil, err
		}
		if base, err = r.commit(ctx, bh); err != nil {
			return nil, err
		}
	}
	snap, err := r.treeSnapshot(ctx, base, head, nil, policy.ScopeChange)
	if err != nil {
		return nil, err
	}
	snap.Source.Trigger = "range"
	snap.Source.Ref = headRev
	return snap, nil
}

// scopeFiles lists the change scope of head's tree for changes. Trees are
// walked by hand, reading only the directories on the way to a change.
func (r *Repo) scopeFiles(ctx context.Context, head *Commit, changes []pack.Change) ([]pack.File, error) {
	dirs := map[string]bool{"": true}
	wanted := map[string]bool{}
	for _, c := range changes {
		if !TreePath(c.Path) || (c.OldPath != "" && !TreePath(c.OldPath)) {
			continue // no tree holds it (an API's list may name anything)
		}
		for _, p := range []string{c.Path, c.OldPath} {
			if p == "" {
				continue
			}
			for d := path.Dir(p); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
				dirs[d] = true
			}
		}
		if c.Status != "deleted" {
			wanted[c.Path] = true
		}
	}
	type dirEntries struct{ entries []treeEntry }
	trees := map[string]*dirEntries{}
	var subtree func(d string) (*dirEntries, error)
	subtree = func(d string) (*dirEntries, error) {
		if t, ok := trees[d]; ok {
			return t, nil // nil: not a directory at head
		}
		var id ObjectID
		if d == "" {
			id = head.Tree
		} else {
			parentDir := path.Dir(d)
			if parentDir == "." {
				parentDir = ""
			}
			parent, err := subtree(parentDir)
			if err != nil || parent == nil {
				trees[d] = nil
				return nil, err
			}
			if e := entryNamed(parent.entries, path.Base(d)); e != nil && e.Mode == filemode.Dir {
				id = e.ID
			}
		}
		if id == "" {
			trees[d] = nil
			return nil, nil
		}
		entries, err := r.tree(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("read tree %s (%s/) of %s: %w", id, safePath(d), head.ID.Short(), err)
		}
		trees[d] = &dirEntries{entries}
		return trees[d], nil
	}
	for d := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sub, err := subtree(d)
		if err != nil {
			return nil, err
		}
		if sub == nil {
			continue // the directory is gone at head (its files were deleted)
		}
		for _, e := range sub.entries {
			if e.Mode != filemode.Dir && (d == "" || e.Name == pack.IgnoreFileName) {
				wanted[path.Join(d, safePath(e.Name))] = true
			}
		}
	}
	files := make([]pack.File, 0, len(wanted))
	for p := range wanted {
		d := path.Dir(p)
		if d == "." {
			d = ""
		}
		sub, err := subtree(d)
		if err != nil {
			return nil, err
		}
		var e *treeEntry
		if sub != nil {
			e = entryNamed(sub.entries, path.Base(p))
		}
		if e == nil || e.Mode == filemode.Dir {
			continue
		}
		f, err := r.treeFile(ctx, RawPath(p), *e, head.ID)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	sortFiles(files)
	return files, nil
}

// TreePath reports whether p can name an entry of a git tree: relative,
// slash-separated, with no empty, "." or ".." element and no NUL. A change
// list from elsewhere (GitHub's API) is checked with it before it is walked.
func TreePath(p string) bool {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	for _, el := range strings.Split(p, "/") {
		if el == "" || el == "." || el == ".." {
			return false
		}
	}
	return true
}

// entryNamed finds the entry whose name is name, written as a snapshot
// writes names (see safePath).
func entryNamed(entries []treeEntry, name string) *treeEntry {
	for i := range entries {
		if entries[i].Name == name || safePath(entries[i].Name) == name {
			return &entries[i]
		}
	}
	return nil
}
