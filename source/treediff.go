package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// entryAt is a tree entry with its full path.
type entryAt struct {
	path string
	mode filemode.FileMode
	id   ObjectID
}

// rawChange is one file-level change between two trees; a nil side is absent.
type rawChange struct{ from, to *entryAt }

// treeChanges diffs two trees (from may be "": everything is added), with
// rename detection, and returns the changes and the lines each change
// added. at names the commit being diffed, for errors. The tree diff reads
// only the trees on the way to a change, so the work is proportional to
// the change, not to the repository. With linesOnly the changes carry no
// unified diff (fileDiff). limit is diffChanges'.
func (r *Repo) treeChanges(ctx context.Context, from, to, at ObjectID, limit int64, linesOnly bool) ([]pack.Change, []pack.AddedLines, []pack.SkippedFile, error) {
	all, err := r.diffTrees(ctx, from, to, at)
	if err != nil {
		return nil, nil, nil, err
	}
	return r.diffChanges(ctx, all, at, limit, linesOnly)
}

// diffChanges reads the sides of the file-level changes all of commit at,
// pairs them into renames and diffs them: treeChanges after its tree diff.
// It reads no blob over limit bytes (0: no limit), which only the
// per-commit scan sets: a change whose new side is larger is left out
// and listed as skipped, with that side's size; an old side that is
// larger is left unread, so every line of the new side counts as added
// (and a deletion, which adds nothing, is left out).
func (r *Repo) diffChanges(ctx context.Context, all []rawChange, at ObjectID, limit int64, linesOnly bool) ([]pack.Change, []pack.AddedLines, []pack.SkippedFile, error) {
	var raw []rawChange
	var skipped []pack.SkippedFile
	for _, c := range all {
		if limit > 0 {
			if size := r.sideSize(ctx, c.to); size > limit {
				skipped = append(skipped, pack.SkippedFile{Path: safePath(c.to.path), Size: size})
				continue
			}
			if r.sideSize(ctx, c.from) > limit {
				if c.to == nil {
					continue
				}
				c.from = nil
			}
		}
		raw = append(raw, c)
	}
	pre := r.prefetchSides(ctx, raw)
	sides := map[*entryAt]*side{}
	for _, c := range raw {
		for _, e := range []*entryAt{c.from, c.to} {
			if e == nil {
				continue
			}
			s, err := r.loadSide(ctx, e, at, pre)
			if err != nil {
				return nil, nil, nil, err
			}
			sides[e] = s
		}
	}
	pairs, err := detectRenames(raw, sides)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("detect renames at %s: %w", at, err)
	}
	zero := ObjectID(strings.Repeat("0", len(at)))
	var out []pack.Change
	var added []pack.AddedLines
	for _, p := range pairs {
		ch, lines := fileDiff(p[0], p[1], zero, linesOnly)
		if !linesOnly && ch.Diff != "" {
			ch.Old = r.oldFile(p[0], at)
		}
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

// prefetchSides reads the blobs of the changes' sides in one exchange
// where the backend has one (blobBatcher), not one round trip to cat-file
// each (express's range: 60 blobs for its change, more for its 14
// commits, each asked when the last was answered). A blob it could not
// read is left out: loadSide reads it and says why. A small one is also
// kept in the memo for the readers after (the pack's contents).
func (r *Repo) prefetchSides(ctx context.Context, raw []rawChange) map[ObjectID]string {
	bb, ok := r.b.(blobBatcher)
	if !ok {
		return nil
	}
	var ids []ObjectID
	seen := map[ObjectID]bool{}
	for _, c := range raw {
		for _, e := range []*entryAt{c.from, c.to} {
			if e == nil || e.mode == filemode.Submodule || seen[e.id] {
				continue
			}
			seen[e.id] = true
			if _, ok := r.blobs.get(e.id); !ok {
				ids = append(ids, e.id)
			}
		}
	}
	if len(ids) < 2 {
		return nil
	}
	asks := make(chan blobAsk, len(ids))
	for i, id := range ids {
		asks <- blobAsk{key: i, id: id}
	}
	close(asks)
	out := make(map[ObjectID]string, len(ids))
	_ = bb.blobs(ctx, asks, func(i int, data []byte, err error) error {
		if err != nil {
			return nil
		}
		text := ownedText(data)
		out[ids[i]] = text
		r.keepText(ids[i], text)
		return nil
	})
	return out
}

// sideSize is the size of a change's side, without reading it (0 when
// the side is absent, not a file, or its size unknown; a partial clone
// that lacks the blob fetches it to know).
func (r *Repo) sideSize(ctx context.Context, e *entryAt) int64 {
	if e == nil || !e.mode.IsFile() {
		return 0
	}
	n, err := r.b.size(ctx, e.id)
	if err != nil {
		return 0
	}
	return n
}

// loadSide reads one side of a change, from read (prefetchSides) when it
// holds the blob. Content a partial clone could not fetch is marked
// unavailable rather than failing the diff.
func (r *Repo) loadSide(ctx context.Context, e *entryAt, at ObjectID, read map[ObjectID]string) (*side, error) {
	s := &side{path: safePath(e.path), mode: e.mode, id: e.id}
	if e.mode == filemode.Submodule {
		s.text, s.loaded = "Subproject commit "+string(e.id)+"\n", true
		return s, nil
	}
	if text, ok := read[e.id]; ok {
		s.text, s.loaded = text, true
		return s, nil
	}
	text, err := r.blob(ctx, e.id)
	var nf *NotFetchedError
	if errors.As(err, &nf) {
		s.unavailable = err
		return s, nil
	}
	if err != nil {
		return nil, r.blobError(e.path, at, e.id, err)
	}
	s.text, s.loaded = text, true
	return s, nil
}

// blobError says which file of which commit could not be read, and what to do.
func (r *Repo) blobError(p string, at, id ObjectID, err error) error {
	if ctxErr := errors.Unwrap(err); ctxErr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return err
	}
	what := fmt.Sprintf("read %s", safePath(p))
	if at != "" {
		what += " at " + at.Short()
	}
	if errors.Is(err, errMissing) {
		return fmt.Errorf("%s: blob %s is not in the repository: fetch the missing objects (git fetch) or check the repository (git fsck)", what, id)
	}
	if errors.Is(err, errDamaged) {
		return fmt.Errorf("%s: blob %s is damaged in the object store: %s: %w", what, id, damagedHelp, err)
	}
	return fmt.Errorf("%s: blob %s: %w", what, id, err)
}

// detectRenames pairs the sides of the raw changes, deletions and additions
// paired into renames by go-git's rename detection (exact, then by content
// similarity of at least 60%) with its default options. It runs on an
// in-memory copy of the candidate blobs, so both backends and both object
// formats get the same pairs. Sides whose content is unavailable are never
// paired.
func detectRenames(raw []rawChange, sides map[*entryAt]*side) ([][2]*side, error) {
	pair := func(c rawChange) [2]*side {
		var p [2]*side
		if c.from != nil {
			p[0] = sides[c.from]
		}
		if c.to != nil {
			p[1] = sides[c.to]
		}
		return p
	}
	var adds, dels int
	for _, c := range raw {
		if c.from == nil {
			adds++
		} else if c.to == nil {
			dels++
		}
	}
	if adds == 0 || dels == 0 {
		out := make([][2]*side, len(raw))
		for i, c := range raw {
			out[i] = pair(c)
		}
		return out, nil
	}
	st := memory.NewStorage()
	emptyTree := st.NewEncodedObject()
	if err := (&object.Tree{}).Encode(emptyTree); err != nil {
		return nil, err
	}
	th, err := st.SetEncodedObject(emptyTree)
	if err != nil {
		return nil, err
	}
	tree, err := object.GetTree(st, th)
	if err != nil {
		return nil, err
	}
	bySide := map[string]*side{} // "from:"/"to:" + path
	entry := func(s *side) (object.ChangeEntry, error) {
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			return object.ChangeEntry{}, err
		}
		if _, err := io.WriteString(w, s.text); err != nil {
			return object.ChangeEntry{}, err
		}
		w.Close()
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			return object.ChangeEntry{}, err
		}
		return object.ChangeEntry{Name: s.path, Tree: tree, TreeEntry: object.TreeEntry{Name: "blob", Mode: s.mode, Hash: h}}, nil // the name only has to pass go-git's path check
	}
	var in object.Changes
	var out [][2]*side
	for _, c := range raw {
		p := pair(c)
		if (p[0] != nil && p[0].unavailable != nil) || (p[1] != nil && p[1].unavailable != nil) || (p[0] != nil && p[1] != nil) {
			out = append(out, p) // modifications and unreadable sides stay as they are
			continue
		}
		oc := &object.Change{}
		if p[0] != nil {
			if oc.From, err = entry(p[0]); err != nil {
				return nil, err
			}
			bySide["from:"+p[0].path] = p[0]
		}
		if p[1] != nil {
			if oc.To, err = entry(p[1]); err != nil {
				return nil, err
			}
			bySide["to:"+p[1].path] = p[1]
		}
		in = append(in, oc)
	}
	detected, err := object.DetectRenames(in, object.DefaultDiffTreeOptions)
	if err != nil {
		return nil, err
	}
	for _, c := range detected {
		var p [2]*side
		if c.From.Name != "" {
			p[0] = bySide["from:"+c.From.Name]
		}
		if c.To.Name != "" {
			p[1] = bySide["to:"+c.To.Name]
		}
		out = append(out, p)
	}
	return out, nil
}

// diffTrees lists the file-level changes between two trees (either may be
// "": empty), descending only into subtrees whose ids differ. A path that is
// a file on one side and a directory on the other is a deletion plus
// insertions, as in go-git. at names the commit, for errors.
func (r *Repo) diffTrees(ctx context.Context, from, to, at ObjectID) ([]rawChange, error) {
	var out []rawChange
	read := func(id ObjectID, p string) ([]treeEntry, error) {
		if id == "" {
			return nil, nil
		}
		entries, err := r.tree(ctx, id)
		if err != nil {
			if p == "" {
				p = "/"
			}
			return nil, fmt.Errorf("read tree %s (%s) of %s: %w", id, safePath(p), at.Short(), err)
		}
		return entries, nil
	}
	var walk func(prefix string, a, b ObjectID) error
	walk = func(prefix string, a, b ObjectID) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ae, err := read(a, prefix)
		if err != nil {
			return err
		}
		be, err := read(b, prefix)
		if err != nil {
			return err
		}
		am, bm := entryMap(ae), entryMap(be)
		names := make([]string, 0, len(am)+len(bm))
		for n := range am {
			names = append(names, n)
		}
		for n := range bm {
			if _, ok := am[n]; !ok {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			ea, inA := am[name]
			eb, inB := bm[name]
			p := path.Join(prefix, name)
			if inA && inB && ea.ID == eb.ID && ea.Mode == eb.Mode {
				continue
			}
			aDir, bDir := inA && ea.Mode == filemode.Dir, inB && eb.Mode == filemode.Dir
			var err error
			switch {
			case aDir && bDir:
				err = walk(p, ea.ID, eb.ID)
			case inA && inB && !aDir && !bDir:
				out = append(out, rawChange{from: &entryAt{p, ea.Mode, ea.ID}, to: &entryAt{p, eb.Mode, eb.ID}})
			default:
				if aDir {
					err = walk(p, ea.ID, "")
				} else if inA {
					out = append(out, rawChange{from: &entryAt{p, ea.Mode, ea.ID}})
				}
				if err != nil {
					return err
				}
				if bDir {
					err = walk(p, "", eb.ID)
				} else if inB {
					out = append(out, rawChange{to: &entryAt{p, eb.Mode, eb.ID}})
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

func entryMap(entries []treeEntry) map[string]treeEntry {
	m := make(map[string]treeEntry, len(entries))
	for _, e := range entries {
		m[e.Name] = e
	}
	return m
}
