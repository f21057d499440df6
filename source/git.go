package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// Commit snapshots one commit against its first parent (the empty tree for a
// root commit), listing scope (policy.ScopeTree or policy.ScopeChange) of its
// tree.
func (r *Repo) Commit(ctx context.Context, rev, scope string) (*pack.Snapshot, error) {
	h, err := r.Resolve(rev)
	if err != nil {
		return nil, err
	}
	c, err := r.commit(h)
	if err != nil {
		return nil, err
	}
	var base *object.Commit
	if c.NumParents() > 0 {
		if base, err = r.commit(c.ParentHashes[0]); err != nil {
			return nil, err
		}
	}
	snap, err := r.treeSnapshot(ctx, base, c, []*object.Commit{c}, scope)
	if err != nil {
		return nil, err
	}
	snap.Source.Trigger = "commit"
	snap.Source.Ref = rev
	return snap, nil
}

// Range snapshots head against the merge base of base and head (what a pull
// request shows), with every commit reachable from head and not from base,
// listing scope (policy.ScopeTree or policy.ScopeChange) of head's tree.
func (r *Repo) Range(ctx context.Context, baseRev, headRev, scope string) (*pack.Snapshot, error) {
	bh, err := r.Resolve(baseRev)
	if err != nil {
		return nil, err
	}
	hh, err := r.Resolve(headRev)
	if err != nil {
		return nil, err
	}
	head, err := r.commit(hh)
	if err != nil {
		return nil, err
	}
	base, err := r.commit(bh)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	mbs, err := head.MergeBase(base)
	r.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("merge base of %s and %s: %w", baseRev, headRev, err)
	}
	var from *object.Commit
	if len(mbs) > 0 {
		sort.Slice(mbs, func(i, j int) bool { return mbs[i].Hash.String() < mbs[j].Hash.String() })
		from = mbs[0]
	}
	commits, err := r.commitsBetween(ctx, bh, hh)
	if err != nil {
		return nil, err
	}
	snap, err := r.treeSnapshot(ctx, from, head, commits, scope)
	if err != nil {
		return nil, err
	}
	snap.Source.Trigger = "range"
	snap.Source.Ref = headRev
	if from == nil { // unrelated histories: the whole head tree is the change
		snap.Source.Base = bh.String()
	}
	return snap, nil
}

func (r *Repo) commit(h plumbing.Hash) (*object.Commit, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.git.CommitObject(h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	return c, nil
}

// commitSnapshot starts the snapshot of a commit: its source fields and time,
// and its tree.
func (r *Repo) commitSnapshot(head *object.Commit) (*pack.Snapshot, *object.Tree, error) {
	r.mu.Lock()
	tree, err := head.Tree()
	r.mu.Unlock()
	if err != nil {
		return nil, nil, fmt.Errorf("read tree of %s: %w", head.Hash, err)
	}
	t, err := epoch(head.Committer.When)
	if err != nil {
		return nil, nil, err
	}
	return &pack.Snapshot{
		Source: pack.Source{Repository: r.Name, Kind: "git", Head: head.Hash.String(), Tree: tree.Hash.String()},
		Time:   t,
	}, tree, nil
}

// treeSnapshot diffs head's tree against base's, lists scope of head's tree
// (all of it, or the change scope: see scopeFiles), and collects each listed
// commit's added lines.
func (r *Repo) treeSnapshot(ctx context.Context, base, head *object.Commit, commits []*object.Commit, scope string) (*pack.Snapshot, error) {
	snap, headTree, err := r.commitSnapshot(head)
	if err != nil {
		return nil, err
	}
	snap.Source.Scope = scope
	var baseTree *object.Tree
	if base != nil {
		snap.Source.Base = base.Hash.String()
		r.mu.Lock()
		baseTree, err = base.Tree()
		r.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("read tree of %s: %w", base.Hash, err)
		}
	}
	if snap.Changes, _, err = r.treeChanges(ctx, baseTree, headTree); err != nil {
		return nil, err
	}
	if snap.Files, err = r.scopedFiles(ctx, headTree, snap.Changes, scope); err != nil {
		return nil, err
	}
	if snap.Commits, err = r.commitPatches(ctx, commits); err != nil {
		return nil, err
	}
	return snap, nil
}

// scopedFiles lists scope of tree: every file (policy.ScopeTree) or the change
// scope of changes (policy.ScopeChange, see scopeFiles).
func (r *Repo) scopedFiles(ctx context.Context, tree *object.Tree, changes []pack.Change, scope string) ([]pack.File, error) {
	switch scope {
	case policy.ScopeTree:
		return r.treeFiles(ctx, tree)
	case policy.ScopeChange:
		return r.scopeFiles(ctx, tree, changes)
	}
	return nil, fmt.Errorf("snapshot scope %q: use %s or %s", scope, policy.ScopeChange, policy.ScopeTree)
}

// commitPatches collects the lines each commit added against its first
// parent (everything, for a root commit). Merges are skipped: their parents
// are listed themselves.
func (r *Repo) commitPatches(ctx context.Context, commits []*object.Commit) ([]pack.CommitPatch, error) {
	var out []pack.CommitPatch
	for _, c := range commits {
		if c.NumParents() > 1 {
			continue
		}
		var parentTree *object.Tree
		if c.NumParents() == 1 {
			p, err := r.commit(c.ParentHashes[0])
			if err != nil {
				return nil, err
			}
			r.mu.Lock()
			parentTree, err = p.Tree()
			r.mu.Unlock()
			if err != nil {
				return nil, fmt.Errorf("read tree of %s: %w", p.Hash, err)
			}
		}
		r.mu.Lock()
		tree, err := c.Tree()
		r.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("read tree of %s: %w", c.Hash, err)
		}
		_, added, skipped, err := r.treeChangesLimited(ctx, parentTree, tree, r.HistoryBlobLimit)
		if err != nil {
			return nil, err
		}
		out = append(out, pack.CommitPatch{Commit: c.Hash.String(), Files: added, Skipped: skipped})
	}
	return out, nil
}

// treeFiles lists every entry of a tree, recursively, with lazy readers.
// The tree is walked by hand: go-git's TreeWalker refuses names git
// accepts (a control character in a name).
func (r *Repo) treeFiles(ctx context.Context, tree *object.Tree) ([]pack.File, error) {
	var files []pack.File
	r.mu.Lock()
	defer r.mu.Unlock()
	var walk func(prefix string, t *object.Tree) error
	walk = func(prefix string, t *object.Tree) error {
		for _, entry := range t.Entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			name := entry.Name
			if prefix != "" {
				name = prefix + "/" + name
			}
			if entry.Mode == filemode.Dir {
				sub, err := r.git.TreeObject(entry.Hash)
				if err != nil {
					return fmt.Errorf("walk tree %s: %s: %w", tree.Hash, safePath(name), err)
				}
				if err := walk(name, sub); err != nil {
					return err
				}
				continue
			}
			f := pack.File{Path: safePath(name), Mode: modeOf(entry.Mode), Blob: entry.Hash.String()}
			if entry.Mode != filemode.Submodule {
				if size, err := r.git.Storer.EncodedObjectSize(entry.Hash); err == nil {
					f.Size = size
				}
			}
			if f.Mode == pack.ModeRegular || f.Mode == pack.ModeExecutable {
				f.Read = r.blobReader(entry.Hash)
			}
			files = append(files, f)
		}
		return nil
	}
	if err := walk("", tree); err != nil {
		return nil, err
	}
	sortFiles(files)
	return files, nil
}

func modeOf(m filemode.FileMode) pack.Mode {
	switch m {
	case filemode.Executable:
		return pack.ModeExecutable
	case filemode.Symlink:
		return pack.ModeSymlink
	case filemode.Submodule:
		return pack.ModeSubmodule
	default:
		return pack.ModeRegular
	}
}

func (r *Repo) blobReader(h plumbing.Hash) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return r.readBlob(h)
	}
}

// readBlob reads a blob; a partial clone that lacks it fetches it (see
// fetch.go).
func (r *Repo) readBlob(h plumbing.Hash) ([]byte, error) {
	data, err := r.readLocalBlob(h)
	if err != nil && errors.Is(err, plumbing.ErrObjectNotFound) && r.Promisor() {
		return r.catBlob(context.Background(), h)
	}
	return data, err
}

func (r *Repo) readLocalBlob(h plumbing.Hash) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := r.git.BlobObject(h)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return data, nil
}

func (r *Repo) side(e object.ChangeEntry) (*side, error) {
	if e.Name == "" {
		return nil, nil
	}
	s := &side{path: safePath(e.Name), mode: e.TreeEntry.Mode, hash: e.TreeEntry.Hash}
	if e.TreeEntry.Mode == filemode.Submodule {
		s.data = []byte("Subproject commit " + e.TreeEntry.Hash.String() + "\n")
		return s, nil
	}
	data, err := r.readBlob(e.TreeEntry.Hash)
	if err != nil {
		return nil, err
	}
	s.data = data
	return s, nil
}

// commitsBetween lists the commits reachable from head and not from base,
// parents before children (oldest first), ties by committer time then hash.
func (r *Repo) commitsBetween(ctx context.Context, base, head plumbing.Hash) ([]*object.Commit, error) {
	excluded, err := r.ancestors(ctx, base, nil)
	if err != nil {
		return nil, err
	}
	return r.topo(ctx, head, excluded)
}

// ancestors returns every commit reachable from start (inclusive).
func (r *Repo) ancestors(ctx context.Context, start plumbing.Hash, stop map[plumbing.Hash]bool) (map[plumbing.Hash]*object.Commit, error) {
	seen := map[plumbing.Hash]*object.Commit{}
	stack := []plumbing.Hash{start}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, ok := seen[h]; ok || stop[h] {
			continue
		}
		c, err := r.commit(h)
		if err != nil {
			if errors.Is(err, plumbing.ErrObjectNotFound) {
				continue // shallow clone boundary
			}
			return nil, err
		}
		seen[h] = c
		stack = append(stack, c.ParentHashes...)
	}
	return seen, nil
}

func (r *Repo) topo(ctx context.Context, head plumbing.Hash, excluded map[plumbing.Hash]*object.Commit) ([]*object.Commit, error) {
	stop := make(map[plumbing.Hash]bool, len(excluded))
	for h := range excluded {
		stop[h] = true
	}
	set, err := r.ancestors(ctx, head, stop)
	if err != nil {
		return nil, err
	}
	// Kahn's algorithm over parent edges inside the set.
	children := map[plumbing.Hash][]plumbing.Hash{}
	pending := map[plumbing.Hash]int{}
	for h, c := range set {
		for _, p := range c.ParentHashes {
			if _, ok := set[p]; ok {
				pending[h]++
				children[p] = append(children[p], h)
			}
		}
	}
	var ready []*object.Commit
	for h, c := range set {
		if pending[h] == 0 {
			ready = append(ready, c)
		}
	}
	var out []*object.Commit
	for len(ready) > 0 {
		sort.Slice(ready, func(i, j int) bool {
			a, b := ready[i], ready[j]
			if !a.Committer.When.Equal(b.Committer.When) {
				return a.Committer.When.Before(b.Committer.When)
			}
			return a.Hash.String() < b.Hash.String()
		})
		c := ready[0]
		ready = ready[1:]
		out = append(out, c)
		for _, ch := range children[c.Hash] {
			pending[ch]--
			if pending[ch] == 0 {
				ready = append(ready, set[ch])
			}
		}
	}
	return out, nil
}
