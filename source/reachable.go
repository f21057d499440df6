package source

import (
	"container/heap"
	"context"
	"errors"
	"sort"
)

// History walks in process, for the go-git backend (the git CLI backend
// asks `git merge-base` and `git rev-list`). Both are git's own date-ordered
// walks: commits are visited newest first by committer time and the walk
// stops as soon as the answer cannot change, so their cost is proportional
// to the commits between the ends, not to the length of the history.
// Committer clocks that run backwards can make the walks visit more
// commits, and make rev-list's set larger (a commit the remote has is
// scanned again), never smaller — as in git.

// loadFunc reads a commit; nil without error for a commit missing from the
// repository (a shallow boundary, a tracking ref that was never fetched).
type loadFunc func(context.Context, ObjectID) (*Commit, error)

// loader adapts a backend's commit reader into a loadFunc.
func loader(b backend) loadFunc {
	return func(ctx context.Context, id ObjectID) (*Commit, error) {
		c, err := b.commit(ctx, id)
		if errors.Is(err, errMissing) {
			return nil, nil
		}
		return c, err
	}
}

const (
	flagNew    uint8 = 1 << iota // rev-list: reachable from head; merge-base: from a
	flagKnown                    // rev-list: reachable from an excluded commit; merge-base: from b
	flagStale                    // merge-base: below a common commit
	flagResult                   // merge-base: a candidate
)

// walkSlop is how many extra commits are visited once the walk looks done,
// against committer clocks that run backwards (git uses 5).
const walkSlop = 5

// walker is a date-ordered walk with flags, shared by revList and
// mergeBases.
type walker struct {
	load    loadFunc
	flags   map[ObjectID]uint8
	commits map[ObjectID]*Commit // nil value: not in the repository
	popped  map[ObjectID]bool
	queued  map[ObjectID]bool
	queue   commitQueue
}

func newWalker(load loadFunc) *walker {
	return &walker{load: load, flags: map[ObjectID]uint8{}, commits: map[ObjectID]*Commit{},
		popped: map[ObjectID]bool{}, queued: map[ObjectID]bool{}}
}

// get reads a commit once.
func (w *walker) get(ctx context.Context, id ObjectID) (*Commit, error) {
	if c, ok := w.commits[id]; ok {
		return c, nil
	}
	c, err := w.load(ctx, id)
	if err != nil {
		return nil, err
	}
	w.commits[id] = c
	return c, nil
}

func (w *walker) enqueue(c *Commit) {
	w.queued[c.ID] = true
	heap.Push(&w.queue, c)
}

func (w *walker) pop() *Commit {
	c := heap.Pop(&w.queue).(*Commit)
	delete(w.queued, c.ID)
	w.popped[c.ID] = true
	return c
}

// revListWalk is `git rev-list head --not exclude…`: the commits reachable
// from head and from none of exclude. Excluded commits missing from the
// repository are ignored.
func revListWalk(ctx context.Context, load loadFunc, head ObjectID, exclude []ObjectID) ([]ObjectID, error) {
	w := newWalker(load)
	rl := &revLister{walker: w}
	if err := rl.push(ctx, head, flagNew); err != nil {
		return nil, err
	}
	if w.commits[head] == nil {
		return nil, errMissing
	}
	for _, k := range exclude {
		if err := rl.push(ctx, k, flagKnown); err != nil {
			return nil, err
		}
	}
	if err := rl.run(ctx); err != nil {
		return nil, err
	}
	var out []ObjectID
	for id, f := range w.flags {
		if f&flagNew != 0 && f&flagKnown == 0 && w.commits[id] != nil {
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

type revLister struct {
	*walker
	// pendingNew counts queued commits that are not (yet) known.
	pendingNew int
	// oldestNew is the committer time of the oldest new commit visited.
	oldestNew *Commit
}

// push adds flag to id and queues it when it has not been visited.
func (w *revLister) push(ctx context.Context, id ObjectID, flag uint8) error {
	old := w.flags[id]
	if old&flag == flag {
		return nil
	}
	c, err := w.get(ctx, id)
	if err != nil {
		return err
	}
	if flag == flagKnown && old&flagKnown == 0 {
		if w.queued[id] && old != 0 {
			w.pendingNew-- // a queued new commit turns out to be known
		}
		if w.popped[id] {
			w.flags[id] = old | flag
			w.markKnown(id)
			return nil
		}
	}
	w.flags[id] = old | flag
	if c == nil || w.popped[id] || w.queued[id] {
		return nil
	}
	if w.flags[id]&flagKnown == 0 {
		w.pendingNew++
	}
	w.enqueue(c)
	return nil
}

// markKnown propagates "known" from an already visited commit to its
// visited ancestors (only clock skew makes this necessary).
func (w *revLister) markKnown(id ObjectID) {
	stack := []ObjectID{id}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c := w.commits[x]
		if c == nil {
			continue
		}
		for _, p := range c.Parents {
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

func (w *revLister) run(ctx context.Context) error {
	slop := walkSlop
	for w.queue.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.pendingNew == 0 {
			top := w.queue[0]
			if w.oldestNew != nil && !top.Committer.Before(w.oldestNew.Committer) {
				slop = walkSlop
			} else if slop--; slop < 0 {
				return nil
			}
		} else {
			slop = walkSlop
		}
		c := w.pop()
		f := w.flags[c.ID]
		if f&flagKnown == 0 {
			w.pendingNew--
			if w.oldestNew == nil || c.Committer.Before(w.oldestNew.Committer) {
				w.oldestNew = c
			}
		}
		flag := flagNew
		if f&flagKnown != 0 {
			flag = flagKnown
		}
		for _, p := range c.Parents {
			if err := w.push(ctx, p, flag); err != nil {
				return err
			}
		}
	}
	return nil
}

// mergeBasesWalk is `git merge-base --all a b`: the common ancestors of a
// and b that no other common ancestor reaches, sorted. It paints down from
// both ends, newest first, and stops when every queued commit is below a
// common one (git's paint_down_to_common).
func mergeBasesWalk(ctx context.Context, load loadFunc, a, b ObjectID) ([]ObjectID, error) {
	if a == b {
		return []ObjectID{a}, nil
	}
	w := newWalker(load)
	var queue commitQueue // a commit may be queued more than once, as in git
	for _, s := range []struct {
		id   ObjectID
		flag uint8
	}{{a, flagNew}, {b, flagKnown}} {
		c, err := w.get(ctx, s.id)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, errMissing
		}
		w.flags[s.id] |= s.flag
		heap.Push(&queue, c)
	}
	hasNonStale := func() bool {
		for _, c := range queue {
			if w.flags[c.ID]&flagStale == 0 {
				return true
			}
		}
		return false
	}
	var candidates []ObjectID
	for hasNonStale() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := heap.Pop(&queue).(*Commit)
		flags := w.flags[c.ID] & (flagNew | flagKnown | flagStale)
		if flags == flagNew|flagKnown {
			if w.flags[c.ID]&flagResult == 0 {
				w.flags[c.ID] |= flagResult
				candidates = append(candidates, c.ID)
			}
			flags |= flagStale
		}
		for _, p := range c.Parents {
			if w.flags[p]&flags == flags {
				continue
			}
			pc, err := w.get(ctx, p)
			if err != nil {
				return nil, err
			}
			if pc == nil {
				continue // beyond a shallow boundary
			}
			w.flags[p] |= flags
			heap.Push(&queue, pc)
		}
	}
	var bases []ObjectID
	for _, id := range candidates {
		if w.flags[id]&flagStale == 0 {
			bases = append(bases, id)
		}
	}
	return removeRedundant(ctx, w, bases)
}

// removeRedundant drops every candidate that another candidate reaches
// (criss-cross merges leave several; usually there is one).
func removeRedundant(ctx context.Context, w *walker, candidates []ObjectID) ([]ObjectID, error) {
	sort.Slice(candidates, func(i, j int) bool { return candidates[i] < candidates[j] })
	if len(candidates) < 2 {
		return candidates, nil
	}
	var out []ObjectID
	for i, c := range candidates {
		redundant := false
		for j, other := range candidates {
			if i == j {
				continue
			}
			reaches, err := reaches(ctx, w, other, c)
			if err != nil {
				return nil, err
			}
			if reaches {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, c)
		}
	}
	return out, nil
}

// reaches reports whether target is an ancestor of from. The walk does not
// descend below commits older than target (git bounds it by generation
// numbers; a skewed clock can only keep a redundant base).
func reaches(ctx context.Context, w *walker, from, target ObjectID) (bool, error) {
	t, err := w.get(ctx, target)
	if err != nil || t == nil {
		return false, err
	}
	seen := map[ObjectID]bool{}
	stack := []ObjectID{from}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[id] {
			continue
		}
		seen[id] = true
		if id == target {
			return true, nil
		}
		c, err := w.get(ctx, id)
		if err != nil {
			return false, err
		}
		if c == nil || c.Committer.Before(t.Committer) {
			continue
		}
		stack = append(stack, c.Parents...)
	}
	return false, nil
}

// commitQueue is a max-heap of commits by committer time (newest first),
// ties broken by id so the walk is deterministic.
type commitQueue []*Commit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	a, b := q[i].Committer, q[j].Committer
	if !a.Equal(b) {
		return a.After(b)
	}
	return q[i].ID < q[j].ID
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// topoOrder orders a set of commits parents before children (oldest
// first), ties by committer time then id: the order of the snapshots'
// per-commit patches, whichever backend listed the set.
func topoOrder(set map[ObjectID]*Commit) []*Commit {
	children := map[ObjectID][]ObjectID{}
	pending := map[ObjectID]int{}
	for id, c := range set {
		for _, p := range c.Parents {
			if _, ok := set[p]; ok {
				pending[id]++
				children[p] = append(children[p], id)
			}
		}
	}
	var ready []*Commit
	for id, c := range set {
		if pending[id] == 0 {
			ready = append(ready, c)
		}
	}
	out := make([]*Commit, 0, len(set))
	for len(ready) > 0 {
		sort.Slice(ready, func(i, j int) bool {
			a, b := ready[i], ready[j]
			if !a.Committer.Equal(b.Committer) {
				return a.Committer.Before(b.Committer)
			}
			return a.ID < b.ID
		})
		c := ready[0]
		ready = ready[1:]
		out = append(out, c)
		for _, ch := range children[c.ID] {
			pending[ch]--
			if pending[ch] == 0 {
				ready = append(ready, set[ch])
			}
		}
	}
	return out
}
