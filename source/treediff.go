package source

import (
	"context"
	"fmt"
	"path"
	"sort"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// treeChanges diffs two trees (from may be nil: everything is added), with
// rename detection, and returns the changes and the lines each change added.
// Its tree diff reads only the trees on the way to a change. go-git's DiffTree loads every subtree of a directory
// it descends into (its tree noder lists children through a TreeWalker that
// reads each child tree), so its cost grows with the width of the tree around
// a change: for a 3-file change, 10 top-level directories of 100
// subdirectories cost ~200 tree reads where this diff needs ~6. Renames are
// detected as go-git does (object.DetectRenames with the default options),
// so the work is proportional to the change, not to the repository.
func (r *Repo) treeChanges(ctx context.Context, from, to *object.Tree) ([]pack.Change, []pack.AddedLines, error) {
	changes, added, _, err := r.treeChangesLimited(ctx, from, to, 0)
	return changes, added, err
}

// treeChangesLimited is treeChanges that reads no blob over limit bytes
// (0: no limit): a change with such a side is left out and listed as
// skipped, with the size of its larger side.
func (r *Repo) treeChangesLimited(ctx context.Context, from, to *object.Tree, limit int64) ([]pack.Change, []pack.AddedLines, []pack.SkippedFile, error) {
	r.mu.Lock()
	raw, err := r.diffTrees(ctx, from, to)
	if err == nil {
		raw, err = object.DetectRenames(raw, object.DefaultDiffTreeOptions)
	}
	r.mu.Unlock()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("diff trees: %w", err)
	}
	var out []pack.Change
	var added []pack.AddedLines
	var skipped []pack.SkippedFile
	for _, c := range raw {
		if limit > 0 {
			if size := r.largerSide(c); size > limit {
				p := c.To.Name
				if p == "" {
					p = c.From.Name
				}
				skipped = append(skipped, pack.SkippedFile{Path: safePath(p), Size: size})
				continue
			}
		}
		fromSide, err := r.side(c.From)
		if err != nil {
			return nil, nil, nil, err
		}
		toSide, err := r.side(c.To)
		if err != nil {
			return nil, nil, nil, err
		}
		ch, lines := fileDiff(fromSide, toSide)
		out = append(out, ch)
		if len(lines) > 0 {
			added = append(added, pack.AddedLines{Path: ch.Path, Lines: lines})
		}
	}
	sortChanges(out)
	sort.Slice(added, func(i, j int) bool { return added[i].Path < added[j].Path })
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Path < skipped[j].Path })
	return out, added, skipped, nil
}

// largerSide is the size of a change's larger blob, without reading it (0
// when unknown: a partial clone that lacks it reads it to know).
func (r *Repo) largerSide(c *object.Change) int64 {
	var max int64
	for _, e := range []object.ChangeEntry{c.From, c.To} {
		if e.Name == "" || !e.TreeEntry.Mode.IsFile() {
			continue
		}
		if n, err := r.blobSize(e.TreeEntry.Hash); err == nil && n > max {
			max = n
		}
	}
	return max
}

// diffTrees lists the file-level changes between two trees (either may be
// nil: empty), descending only into subtrees whose ids differ. A path that is
// a file on one side and a directory on the other is a deletion plus
// insertions, as in go-git. The caller holds r.mu.
func (r *Repo) diffTrees(ctx context.Context, from, to *object.Tree) (object.Changes, error) {
	var out object.Changes
	var walk func(prefix string, a, b *object.Tree) error
	walk = func(prefix string, a, b *object.Tree) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ae, be := entries(a), entries(b)
		names := make([]string, 0, len(ae)+len(be))
		for n := range ae {
			names = append(names, n)
		}
		for n := range be {
			if _, ok := ae[n]; !ok {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			ea, inA := ae[name]
			eb, inB := be[name]
			p := path.Join(prefix, name)
			if inA && inB && ea.Hash == eb.Hash && ea.Mode == eb.Mode {
				continue
			}
			aDir, bDir := inA && ea.Mode == filemode.Dir, inB && eb.Mode == filemode.Dir
			var sa, sb *object.Tree
			var err error
			if aDir {
				if sa, err = r.git.TreeObject(ea.Hash); err != nil {
					return fmt.Errorf("read tree %s (%s): %w", ea.Hash, p, err)
				}
			}
			if bDir {
				if sb, err = r.git.TreeObject(eb.Hash); err != nil {
					return fmt.Errorf("read tree %s (%s): %w", eb.Hash, p, err)
				}
			}
			switch {
			case aDir && bDir:
				err = walk(p, sa, sb)
			case inA && inB && !aDir && !bDir:
				out = append(out, &object.Change{From: changeEntry(p, a, ea), To: changeEntry(p, b, eb)})
			default:
				if aDir {
					err = walk(p, sa, nil)
				} else if inA {
					out = append(out, &object.Change{From: changeEntry(p, a, ea)})
				}
				if err != nil {
					return err
				}
				if bDir {
					err = walk(p, nil, sb)
				} else if inB {
					out = append(out, &object.Change{To: changeEntry(p, b, eb)})
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk("", from, to); err != nil {
		return nil, err
	}
	return out, nil
}

func entries(t *object.Tree) map[string]object.TreeEntry {
	m := map[string]object.TreeEntry{}
	if t != nil {
		for _, e := range t.Entries {
			m[e.Name] = e
		}
	}
	return m
}

// changeEntry is what go-git puts in a Change: the full path, the tree that
// holds the entry, and the entry.
func changeEntry(p string, parent *object.Tree, e object.TreeEntry) object.ChangeEntry {
	return object.ChangeEntry{Name: p, Tree: parent, TreeEntry: object.TreeEntry{Name: e.Name, Mode: e.Mode, Hash: e.Hash}}
}
