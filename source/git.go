package source

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/internal/workers"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// Commit snapshots one commit against its first parent (the empty tree for a
// root commit), listing scope (policy.ScopeTree or policy.ScopeChange) of its
// tree.
func (r *Repo) Commit(ctx context.Context, rev, scope string) (*pack.Snapshot, error) {
	h, err := r.ResolveContext(ctx, rev)
	if err != nil {
		return nil, err
	}
	c, err := r.commit(ctx, h)
	if err != nil {
		return nil, err
	}
	var base *Commit
	if len(c.Parents) > 0 {
		if base, err = r.commit(ctx, c.Parents[0]); err != nil {
			return nil, err
		}
	}
	snap, err := r.treeSnapshot(ctx, base, c, []*Commit{c}, scope)
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
// Its cost is the change's: the merge base and the commit list come from
// date-bounded walks (git merge-base and git rev-list through the CLI).
func (r *Repo) Range(ctx context.Context, baseRev, headRev, scope string) (*pack.Snapshot, error) {
	bh, err := r.ResolveContext(ctx, baseRev)
	if err != nil {
		return nil, err
	}
	hh, err := r.ResolveContext(ctx, headRev)
	if err != nil {
		return nil, err
	}
	head, err := r.commit(ctx, hh)
	if err != nil {
		return nil, err
	}
	from, err := r.mergeBase(ctx, bh, hh)
	if err != nil {
		return nil, fmt.Errorf("merge base of %s and %s: %w", baseRev, headRev, err)
	}
	commits, err := r.commitsBetween(ctx, bh, hh)
	if err != nil {
		return nil, fmt.Errorf("commits of %s..%s: %w", baseRev, headRev, err)
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

// mergeBase is the merge base of a and b (the smallest id when there are
// several), nil when their histories are unrelated.
func (r *Repo) mergeBase(ctx context.Context, a, b ObjectID) (*Commit, error) {
	bases, err := r.mergeBases(ctx, b, a)
	if err != nil {
		return nil, err
	}
	if len(bases) == 0 {
		return nil, nil
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return r.commit(ctx, bases[0])
}

// commitsBetween lists the commits reachable from head and not from base,
// parents before children (oldest first), ties by committer time then id.
func (r *Repo) commitsBetween(ctx context.Context, base, head ObjectID) ([]*Commit, error) {
	ids, err := r.revList(ctx, head, []ObjectID{base})
	if err != nil {
		return nil, err
	}
	return r.ordered(ctx, ids)
}

// ordered reads a set of commits and puts them in topological order.
func (r *Repo) ordered(ctx context.Context, ids []ObjectID) ([]*Commit, error) {
	set := make(map[ObjectID]*Commit, len(ids))
	for _, id := range ids {
		c, err := r.commit(ctx, id)
		if err != nil {
			return nil, err
		}
		set[id] = c
	}
	return topoOrder(set), nil
}

// fullID reports whether id is a whole object id (SHA-1 or SHA-256 hex).
func fullID(id ObjectID) bool {
	if len(id) != 40 && len(id) != 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (r *Repo) commit(ctx context.Context, id ObjectID) (*Commit, error) {
	if c, ok := r.commits.get(id); ok {
		c.Parents = slices.Clone(c.Parents)
		return &c, nil
	}
	c, err := r.b.commit(ctx, id)
	if err != nil {
		if errors.Is(err, errMissing) {
			return nil, fmt.Errorf("read commit %s: not in the repository (a shallow clone or an unfetched ref): fetch it (git fetch --deepen, or fetch-depth: 0 on actions/checkout): %w", id, err)
		}
		if errors.Is(err, errDamaged) {
			return nil, fmt.Errorf("read commit %s: it is damaged in the object store: %s: %w", id, damagedHelp, err)
		}
		return nil, fmt.Errorf("read commit %s: %w", id, err)
	}
	if fullID(id) { // not a name whose commit may move
		memo := *c
		memo.Parents = slices.Clone(c.Parents)
		r.commits.put(id, memo, 1, maxMemoCommits)
	}
	return c, nil
}

// commitSnapshot starts the snapshot of a commit: its source fields and time.
func (r *Repo) commitSnapshot(head *Commit) (*pack.Snapshot, error) {
	t, err := epoch(head.Committer)
	if err != nil {
		return nil, err
	}
	return &pack.Snapshot{
		Source: pack.Source{Repository: r.Name, Kind: "git", Head: head.ID.String(), Tree: head.Tree.String()},
		Time:   t,
	}, nil
}

// treeSnapshot diffs head's tree against base's, lists scope of head's tree
// (all of it, or the change scope: see scopeFiles), and collects each listed
// commit's added lines (in the background under CommitsAside).
func (r *Repo) treeSnapshot(ctx context.Context, base, head *Commit, commits []*Commit, scope string) (snap *pack.Snapshot, err error) {
	if snap, err = r.commitSnapshot(head); err != nil {
		return nil, err
	}
	snap.Source.Scope = scope
	// Read aside, the commits' patches are read beside the tree diff and
	// listing (express's 14 commits: ~14 ms of a ~110 ms range, ~10 ms
	// less with them aside), until RedactNames needs them.
	if r.CommitsAside && len(commits) > 0 {
		reading := snap
		reading.ReadCommitsAside(ctx, func(ctx context.Context) ([]pack.CommitPatch, error) {
			return r.commitPatches(ctx, commits)
		})
		defer func() {
			if err != nil { // nothing reads them
				reading.StopCommits()
			}
		}()
	}
	var baseTree ObjectID
	if base != nil {
		snap.Source.Base = base.ID.String()
		baseTree = base.Tree
	}
	if snap.Changes, _, _, err = r.treeChanges(ctx, baseTree, head.Tree, head.ID, 0, false); err != nil {
		return nil, err
	}
	tree := r.headTree(head)
	tree.prefetch(ctx, snap.Changes, scope)
	if snap.Files, err = r.scopedFiles(ctx, head, snap.Changes, scope); err != nil {
		return nil, err
	}
	if !r.CommitsAside {
		if snap.Commits, err = r.commitPatches(ctx, commits); err != nil {
			return nil, err
		}
	}
	snap.Tree = tree
	snap.Intent.Commits = commitMessages(commits)
	return snap, nil
}

// commitMessages are the messages of the commits, merges left out (their
// subject says only what was merged).
func commitMessages(commits []*Commit) []pack.CommitMessage {
	var out []pack.CommitMessage
	for _, c := range commits {
		if len(c.Parents) > 1 {
			continue
		}
		subject, body := pack.SplitMessage(c.Message)
		out = append(out, pack.CommitMessage{Commit: c.ID.String(), Subject: subject, Body: body})
	}
	return out
}

// scopedFiles lists scope of head's tree: every file (policy.ScopeTree) or
// the change scope of changes (policy.ScopeChange, see scopeFiles).
func (r *Repo) scopedFiles(ctx context.Context, head *Commit, changes []pack.Change, scope string) ([]pack.File, error) {
	switch scope {
	case policy.ScopeTree:
		return r.treeFiles(ctx, head)
	case policy.ScopeChange:
		return r.scopeFiles(ctx, head, changes)
	}
	return nil, fmt.Errorf("snapshot scope %q: use %s or %s", scope, policy.ScopeChange, policy.ScopeTree)
}

// commitPatches collects the lines each commit added: against its parent
// (everything, for a root commit), or, for a merge, against every parent
// (mergePatch). A file whose content a partial clone could not fetch is
// listed as unread.
func (r *Repo) commitPatches(ctx context.Context, commits []*Commit) ([]pack.CommitPatch, error) {
	// The commits are diffed on every core, each into its place: one
	// commit's diff waits on the object store (cat-file answers one read at
	// a time) while another's lines are compared (express's 14 commits:
	// ~17 ms one after the other). The error is the first in commit order
	// (workers.Each), as when they were diffed in turn.
	patches := make([]pack.CommitPatch, len(commits))
	err := workers.Each(ctx, len(commits), runtime.GOMAXPROCS(0), func(ctx context.Context, i int) error {
		var p *pack.CommitPatch
		var err error
		if c := commits[i]; len(c.Parents) > 1 {
			p, err = r.mergePatch(ctx, c)
		} else {
			p, err = r.commitPatch(ctx, c)
		}
		if err == nil {
			patches[i] = *p
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return patches, nil
}

// commitPatch is the added lines of a commit that is not a merge.
func (r *Repo) commitPatch(ctx context.Context, c *Commit) (*pack.CommitPatch, error) {
	var parentTree ObjectID
	if len(c.Parents) == 1 {
		p, err := r.commit(ctx, c.Parents[0])
		if err != nil {
			return nil, err
		}
		parentTree = p.Tree
	}
	changes, added, skipped, err := r.treeChanges(ctx, parentTree, c.Tree, c.ID, r.HistoryBlobLimit, true)
	if err != nil {
		return nil, err
	}
	patch := &pack.CommitPatch{Commit: c.ID.String(), Files: added, Skipped: skipped}
	for _, ch := range changes {
		if ch.DiffWithheld == pack.ReasonNotFetched && ch.Status != "deleted" {
			patch.Unread = append(patch.Unread, ch.Path)
		}
	}
	return patch, nil
}

// mergePatch is the lines a merge added: the lines of its version of a
// file that no parent's version has (an "evil" merge's, a conflict's
// resolution; a clean merge adds none). They are the lines added against
// every parent, by path and line number in the merge's version, each
// parent's diffed as a commit's is (renames detected). Only a file that
// differs from every parent's tree can hold one, so only those are read
// and diffed, parent after parent while they still have lines; against a
// parent without the path, with the files that parent has and the merge
// has not, one of which may be its old name (a rename on another side).
// A file skipped or unread against any parent is listed as such.
func (r *Repo) mergePatch(ctx context.Context, c *Commit) (*pack.CommitPatch, error) {
	raws, candidate, err := r.mergeDiffs(ctx, c)
	if err != nil {
		return nil, err
	}
	// common holds, of each candidate (by its name in the patch) that has
	// any, the lines added against every parent diffed so far.
	var common []pack.AddedLines
	unread, skipped := map[string]bool{}, map[string]int64{}
	for i, raw := range raws {
		has := make(map[string]bool, len(common))
		for _, f := range common {
			has[f.Path] = true
		}
		keep := mergeChanges(raw, func(p string) bool { return candidate[p] && (i == 0 || has[safePath(p)]) })
		if len(keep) == 0 {
			common = nil
			break
		}
		changes, added, skip, err := r.diffChanges(ctx, keep, c.ID, r.HistoryBlobLimit, true)
		if err != nil {
			return nil, err
		}
		for _, f := range skip {
			skipped[f.Path] = f.Size
		}
		for _, ch := range changes {
			if ch.DiffWithheld == pack.ReasonNotFetched && ch.Status != "deleted" {
				unread[ch.Path] = true
			}
		}
		if i == 0 {
			common = added
		} else {
			common = pack.CommonAddedLines(common, added)
		}
	}
	patch := &pack.CommitPatch{Commit: c.ID.String(), Files: common} // diffChanges sorts by path
	for p, size := range skipped {
		patch.Skipped = append(patch.Skipped, pack.SkippedFile{Path: p, Size: size})
	}
	sort.Slice(patch.Skipped, func(i, j int) bool { return patch.Skipped[i].Path < patch.Skipped[j].Path })
	for p := range unread {
		patch.Unread = append(patch.Unread, p)
	}
	sort.Strings(patch.Unread)
	return patch, nil
}

// mergeDiffs is the tree diff of merge c against each of its parents, and
// the paths of c's tree that differ from every parent's: the only files
// that can hold a line no parent has. It reads trees, never blobs.
func (r *Repo) mergeDiffs(ctx context.Context, c *Commit) ([][]rawChange, map[string]bool, error) {
	raws := make([][]rawChange, len(c.Parents))
	for i, id := range c.Parents {
		p, err := r.commit(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		if raws[i], err = r.diffTrees(ctx, p.Tree, c.Tree, c.ID); err != nil {
			return nil, nil, err
		}
	}
	differs := map[string]int{} // path in the merge → parents whose tree differs there
	for _, raw := range raws {
		for _, ch := range raw {
			if ch.to != nil {
				differs[ch.to.path]++
			}
		}
	}
	candidate := map[string]bool{}
	for p, n := range differs {
		if n == len(raws) {
			candidate[p] = true
		}
	}
	return raws, candidate, nil
}

// mergeChanges is what of a merge's diff against one parent (raw) is read
// for the lines of the merge's files at paths keep takes: their changes
// and, when the parent lacks one of them, the files the parent has and
// the merge has not, of which one may be its old name (renamed on
// another side). None when keep takes no file of raw.
func mergeChanges(raw []rawChange, keep func(p string) bool) []rawChange {
	var out []rawChange
	renamed := false // a file kept that this parent lacks, maybe under an old name
	for _, ch := range raw {
		if ch.to != nil && keep(ch.to.path) {
			out = append(out, ch)
			renamed = renamed || ch.from == nil
		}
	}
	if !renamed {
		return out
	}
	out = out[:0]
	for _, ch := range raw {
		if ch.to == nil || keep(ch.to.path) {
			out = append(out, ch)
		}
	}
	return out
}

// treeFiles lists every file of head's tree, recursively, with lazy readers.
func (r *Repo) treeFiles(ctx context.Context, head *Commit) ([]pack.File, error) {
	var files []pack.File
	err := r.walkTree(ctx, head.Tree, head.ID.Short(), func(p string, e treeEntry) error {
		f, err := r.treeFile(ctx, p, e, head.ID)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortFiles(files)
	return files, nil
}

// walkTree calls visit with the path (raw, slash-separated) and entry of
// every non-directory entry below the tree root, recursively; of names
// the tree's commit in errors.
func (r *Repo) walkTree(ctx context.Context, root ObjectID, of string, visit func(p string, e treeEntry) error) error {
	var walk func(dir string, id ObjectID) error
	walk = func(dir string, id ObjectID) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries, err := r.tree(ctx, id)
		if err != nil {
			return fmt.Errorf("read tree %s (%s/) of %s: %w", id, safePath(dir), of, err)
		}
		for _, e := range entries {
			p := path.Join(dir, e.Name)
			if e.Mode == filemode.Dir {
				err = walk(p, e.ID)
			} else {
				err = visit(p, e)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return walk("", root)
}

// treeFile is the snapshot entry of a tree entry at commit at.
func (r *Repo) treeFile(ctx context.Context, p string, e treeEntry, at ObjectID) (pack.File, error) {
	f := pack.File{Path: safePath(p), Mode: modeOf(e.Mode), Blob: e.ID.String()}
	if f.Mode == pack.ModeSubmodule {
		return f, nil
	}
	size, err := r.blobSize(ctx, e.ID)
	var nf *NotFetchedError
	switch {
	case errors.As(err, &nf):
		// Read reports it; the size stays unknown.
	case err != nil:
		return f, r.blobError(p, at, e.ID, err)
	default:
		f.Size = size
	}
	if f.Mode == pack.ModeRegular || f.Mode == pack.ModeExecutable {
		f.Read = r.blobReader(p, e.ID, at)
	}
	return f, nil
}

// blobSize is the size of blob id: its length when the memo holds it (a
// search found a word in it: the relations look it up next), else the
// object store's answer.
func (r *Repo) blobSize(ctx context.Context, id ObjectID) (int64, error) {
	if text, ok := r.blobs.get(id); ok {
		return int64(len(text)), nil
	}
	return r.b.size(ctx, id)
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

// blobReader reads the blob id of file p at commit at. Content a partial
// clone could not fetch is a *pack.Unavailable (the file is excluded as
// not_fetched).
func (r *Repo) blobReader(p string, id, at ObjectID) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if text, ok := r.blobs.get(id); ok {
			return []byte(text), nil
		}
		if data, ok := r.worktreeBlob(ctx, p, id); ok {
			return data, nil
		}
		data, err := r.b.blob(ctx, id)
		var nf *NotFetchedError
		if errors.As(err, &nf) {
			return nil, notFetched(p, at, nf)
		}
		if err != nil {
			return nil, r.blobError(p, at, id, err)
		}
		return data, nil
	}
}

// worktreeBlob reads blob id of path p from the work tree, when the file
// there holds exactly that content (its blob id, computed, is id; or, once
// a search loaded the index's entries, the index added the file as id and
// its stat is the one the index recorded, git's own test of a clean
// file: loadIndexStats): a checkout holds most files of the commits near
// it as they are, and reading one and hashing it costs a fraction of
// inflating its object and the deltas it is built from (gin's 1-file
// range reads 42 files). Any difference — another version, a clean or
// line-ending filter, a symlink (the file itself, or a directory on its
// path leading out of the work tree, fsutil.Root), no file — leaves the
// read to the object store; only content the blob's id or the index
// vouches for is taken (the audit hashes what a pack sends of it: a
// forged index fails it). A file of askSizeFrom bytes or more is read
// only when its size is the blob's, and a path whose file once differed
// is not read again (a range's commits read each version of a changed
// file).
func (r *Repo) worktreeBlob(ctx context.Context, p string, id ObjectID) ([]byte, bool) {
	return r.worktreeBlobBuf(ctx, p, id, nil)
}

// askSizeFrom is the size from which a work-tree file is read only when
// the blob's size, asked of the object store, is the file's: below it,
// reading and hashing a file that turns out to differ costs less than
// the question. A question is a round trip to cat-file, 0.25–0.5 ms in
// a run whose cores are busy, where a 64 KiB file is read and hashed in
// ~0.05 ms: hugo's range asked it of 22 files of 32–65 KiB, 5–12 ms of
// its grep's workers' time.
const askSizeFrom = 256 << 10

// worktreeBlobBuf is worktreeBlob reading into buf when it has room.
func (r *Repo) worktreeBlobBuf(ctx context.Context, p string, id ObjectID, buf []byte) ([]byte, bool) {
	if r.bare || r.Root == "" || r.b == nil || !filepath.IsLocal(filepath.FromSlash(p)) {
		return nil, false
	}
	if _, missed := r.worktreeMisses.Load(p); missed {
		return nil, false
	}
	miss := func() ([]byte, bool) {
		r.worktreeMisses.Store(p, true)
		return nil, false
	}
	// Read inside the work tree only: a directory on the path may be a
	// symlink the repository made, leading anywhere.
	r.worktreeOnce.Do(func() { r.worktree, _ = fsutil.OpenRoot(r.Root) })
	if r.worktree == nil {
		return miss()
	}
	data, st, err := r.worktree.ReadRegular(p, buf, func(size int64) bool {
		if size < askSizeFrom {
			return true
		}
		n, err := r.b.size(ctx, id)
		return err == nil && n == size
	})
	if err != nil {
		return miss()
	}
	// A file as the index recorded it when it added the blob is the blob
	// (git's own test, loadIndexStats): not hashed again.
	if indexed := r.indexed.Load(); indexed != nil {
		if e, ok := (*indexed)[p]; ok && e.id == id && statClean(st, e) {
			return data, true
		}
	}
	if r.b.hashBlob(data) != id {
		return miss()
	}
	return data, true
}

func notFetched(p string, at ObjectID, nf *NotFetchedError) *pack.Unavailable {
	return &pack.Unavailable{Reason: pack.ReasonNotFetched,
		Detail: fmt.Sprintf("%s at %s: %v; give the promisor remote's access (network, credentials) and pack again, or fetch the objects first (git fetch)", safePath(p), at.Short(), nf)}
}

// entryAt finds the entry at path p of commit c's tree, nil when there is none.
func (r *Repo) entryAt(ctx context.Context, c *Commit, p string) (*treeEntry, error) {
	tree := c.Tree
	parts := splitPath(p)
	if len(parts) == 0 {
		return nil, nil
	}
	for i, name := range parts {
		entries, err := r.tree(ctx, tree)
		if err != nil {
			return nil, fmt.Errorf("read tree %s of %s: %w", tree, c.ID.Short(), err)
		}
		found := entryNamed(entries, name)
		if found == nil || i == len(parts)-1 {
			return found, nil
		}
		if found.Mode != filemode.Dir {
			return nil, nil
		}
		tree = found.ID
	}
	return nil, nil
}

func splitPath(p string) []string {
	var parts []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			parts = append(parts, s)
		}
	}
	return parts
}
