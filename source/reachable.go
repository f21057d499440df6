package source

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Reachability for pushes: which commits does pushing a ref publish, given
// the commits the remote is known to have? The walk is git's own (rev-list
// head --not known…): commits are visited newest first by committer time,
// "known" propagates from the known commits to their ancestors, and the walk
// stops once everything still queued is known and older than the oldest
// new commit (plus a few commits of slop for clock skew, as git does). Its
// cost is proportional to the new commits and to how far the known side has
// moved since they forked, not to the length of the history.
//
// Clock skew can only make the walk stop early on the known side, which
// makes the new set larger (a commit the remote has is scanned again),
// never smaller.

const (
	flagNew   uint8 = 1 << iota // reachable from the pushed head
	flagKnown                   // reachable from a commit the remote has
)

// walkSlop is how many extra commits are visited once the walk looks done,
// against committer clocks that run backwards (git uses 5).
const walkSlop = 5

// Unpublished is what pushing a head publishes.
type Unpublished struct {
	// Head is the pushed commit.
	Head plumbing.Hash
	// Commits are the commits reachable from Head and from none of the known
	// commits, parents before children (oldest first).
	Commits []*object.Commit
	// Base is the diff base: the first commit on Head's first-parent line
	// that a known commit reaches (Head itself when nothing is new); nil when
	// the line has none, so the whole tree is new.
	Base *object.Commit
}

// Unpublished lists the commits reachable from head and not from any of the
// known commits. Known commits missing from the repository are ignored (a
// remote tracking ref can name a commit that was never fetched).
func (r *Repo) Unpublished(ctx context.Context, head plumbing.Hash, known []plumbing.Hash) (*Unpublished, error) {
	if r.git == nil {
		return nil, fmt.Errorf("%s is not a git repository", r.Root)
	}
	w := &walker{r: r, flags: map[plumbing.Hash]uint8{}, commits: map[plumbing.Hash]*object.Commit{}, popped: map[plumbing.Hash]bool{}}
	if err := w.push(head, flagNew); err != nil {
		return nil, err
	}
	if w.commits[head] == nil {
		return nil, fmt.Errorf("read commit %s: %w", head, plumbing.ErrObjectNotFound)
	}
	for _, k := range known {
		if err := w.push(k, flagKnown); err != nil {
			return nil, err
		}
	}
	if err := w.run(ctx); err != nil {
		return nil, err
	}
	out := &Unpublished{Head: head}
	boundary := map[plumbing.Hash]*object.Commit{}
	for h, f := range w.flags {
		if f&flagKnown != 0 {
			boundary[h] = w.commits[h] // nil for commits missing from the repository
		}
	}
	if w.flags[head]&flagKnown == 0 {
		commits, err := r.topo(ctx, head, boundary)
		if err != nil {
			return nil, err
		}
		out.Commits = commits
	}
	// The diff base: walk the first-parent line down to the first known commit.
	c := w.commits[head]
	for c != nil && w.flags[c.Hash]&flagKnown == 0 {
		if c.NumParents() == 0 {
			c = nil
			break
		}
		// Every parent of a new commit was loaded by the walk; nil is a
		// shallow boundary or a missing commit: no known base on this line.
		c = w.commits[c.ParentHashes[0]]
	}
	out.Base = c
	return out, nil
}

type walker struct {
	r       *Repo
	flags   map[plumbing.Hash]uint8
	commits map[plumbing.Hash]*object.Commit // nil value: not in the repository
	popped  map[plumbing.Hash]bool
	queue   commitQueue
	queued  map[plumbing.Hash]bool
	// pendingNew counts queued commits that are not (yet) known.
	pendingNew int
	// oldestNew is the committer time of the oldest new commit visited.
	oldestNew time.Time
	haveNew   bool
}

// load reads a commit once; a commit missing from the repository (shallow
// boundary, unfetched tracking ref) is remembered as nil.
func (w *walker) load(h plumbing.Hash) (*object.Commit, error) {
	if c, ok := w.commits[h]; ok {
		return c, nil
	}
	c, err := w.r.commit(h)
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			w.commits[h] = nil
			return nil, nil
		}
		return nil, err
	}
	w.commits[h] = c
	return c, nil
}

// push adds flag to h and queues it when it has not been visited.
func (w *walker) push(h plumbing.Hash, flag uint8) error {
	old := w.flags[h]
	if old&flag == flag {
		return nil
	}
	c, err := w.load(h)
	if err != nil {
		return err
	}
	if flag == flagKnown && old&flagKnown == 0 {
		if w.queued[h] && old != 0 {
			w.pendingNew-- // a queued new commit turns out to be known
		}
		if w.popped[h] {
			w.flags[h] = old | flag
			w.markKnown(h)
			return nil
		}
	}
	w.flags[h] = old | flag
	if c == nil || w.popped[h] || w.queued[h] {
		return nil
	}
	if w.queued == nil {
		w.queued = map[plumbing.Hash]bool{}
	}
	w.queued[h] = true
	if w.flags[h]&flagKnown == 0 {
		w.pendingNew++
	}
	heap.Push(&w.queue, c)
	return nil
}

// markKnown propagates "known" from an already visited commit to its
// visited ancestors (only clock skew makes this necessary).
func (w *walker) markKnown(h plumbing.Hash) {
	stack := []plumbing.Hash{h}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c := w.commits[x]
		if c == nil {
			continue
		}
		for _, p := range c.ParentHashes {
			f, seen := w.flags[p]
			if !seen || f&flagKnown != 0 {
				continue
			}
			w.flags[p] = f | flagKnown
			if w.queued[p] {
				w.pendingNew--
			}
			if w.popped[p] {
				stack = append(stack, p)
			}
		}
	}
}

func (w *walker) run(ctx context.Context) error {
	slop := walkSlop
	for w.queue.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.pendingNew == 0 {
			top := w.queue[0]
			if w.haveNew && !top.Committer.When.Before(w.oldestNew) {
				slop = walkSlop
			} else if slop--; slop < 0 {
				return nil
			}
		} else {
			slop = walkSlop
		}
		c := heap.Pop(&w.queue).(*object.Commit)
		delete(w.queued, c.Hash)
		w.popped[c.Hash] = true
		f := w.flags[c.Hash]
		if f&flagKnown == 0 {
			w.pendingNew--
			if !w.haveNew || c.Committer.When.Before(w.oldestNew) {
				w.oldestNew, w.haveNew = c.Committer.When, true
			}
		}
		flag := flagNew
		if f&flagKnown != 0 {
			flag = flagKnown
		}
		for _, p := range c.ParentHashes {
			if err := w.push(p, flag); err != nil {
				return err
			}
		}
	}
	return nil
}

// commitQueue is a max-heap of commits by committer time (newest first),
// ties broken by hash so the walk is deterministic.
type commitQueue []*object.Commit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	a, b := q[i].Committer.When, q[j].Committer.When
	if !a.Equal(b) {
		return a.After(b)
	}
	return q[i].Hash.String() < q[j].Hash.String()
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*object.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// TrackingRefs returns the commits of a remote's tracking refs
// (refs/remotes/<remote>/*), sorted and without duplicates; symbolic refs
// (refs/remotes/<remote>/HEAD) are skipped, their targets are listed anyway.
func (r *Repo) TrackingRefs(remote string) ([]plumbing.Hash, error) {
	if r.git == nil {
		return nil, fmt.Errorf("%s is not a git repository", r.Root)
	}
	if remote == "" || strings.ContainsAny(remote, "*?[\\") {
		return nil, nil
	}
	prefix := "refs/remotes/" + remote + "/"
	r.mu.Lock()
	defer r.mu.Unlock()
	iter, err := r.git.References()
	if err != nil {
		return nil, fmt.Errorf("list references: %w", err)
	}
	defer iter.Close()
	seen := map[plumbing.Hash]bool{}
	var out []plumbing.Hash
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference || !strings.HasPrefix(ref.Name().String(), prefix) {
			return nil
		}
		if h := ref.Hash(); !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list references: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// Object kinds Peel reports.
const (
	KindCommit  = "commit"
	KindTree    = "tree"
	KindBlob    = "blob"
	KindMissing = "missing"
)

// Peel follows tag objects from h to what they finally name, and says what
// that is: a commit (the hash returned), a tree, a blob, or missing.
func (r *Repo) Peel(h plumbing.Hash) (plumbing.Hash, string, error) {
	if r.git == nil {
		return plumbing.ZeroHash, "", fmt.Errorf("%s is not a git repository", r.Root)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for range 32 { // tags of tags, bounded
		obj, err := r.git.Storer.EncodedObject(plumbing.AnyObject, h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return h, KindMissing, nil
		}
		if err != nil {
			return h, "", fmt.Errorf("read object %s: %w", h, err)
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			return h, KindCommit, nil
		case plumbing.TreeObject:
			return h, KindTree, nil
		case plumbing.BlobObject:
			return h, KindBlob, nil
		case plumbing.TagObject:
			tag, err := object.DecodeTag(r.git.Storer, obj)
			if err != nil {
				return h, "", fmt.Errorf("read tag %s: %w", h, err)
			}
			h = tag.Target
		default:
			return h, obj.Type().String(), nil
		}
	}
	return h, "", fmt.Errorf("tag %s: too many levels of tags", h)
}
