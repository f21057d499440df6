package source

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// historyMemo keeps the answers of the history questions a run asks more
// than once: the configuration is read at a range's merge base before the
// range is snapshotted, and the pre-push hook lists a push's new commits
// to plan it, to find its diff base and to snapshot it. Between given ids
// the answers cannot change while the repository is open (a fetch
// reopens it, with an empty memo); only answers are kept, never errors.
type historyMemo struct {
	mu      sync.Mutex
	answers map[string][]ObjectID // question → sorted ids
}

// question names one call: its kind and its ids, in order.
func question(kind string, ids ...ObjectID) string {
	var b strings.Builder
	b.WriteString(kind)
	for _, id := range ids {
		b.WriteByte(' ')
		b.WriteString(string(id))
	}
	return b.String()
}

func (m *historyMemo) get(q string) ([]ObjectID, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids, ok := m.answers[q]
	return slices.Clone(ids), ok
}

func (m *historyMemo) put(q string, ids []ObjectID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.answers == nil {
		m.answers = map[string][]ObjectID{}
	}
	m.answers[q] = slices.Clone(ids)
}

func (m *historyMemo) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.answers = nil
}

// mergeBases is the backend's mergeBases of x and y, asked once.
func (r *Repo) mergeBases(ctx context.Context, x, y ObjectID) ([]ObjectID, error) {
	return r.answer(question("merge-base", x, y),
		func() bool { return r.linearRange(ctx, x, y) },
		func() ([]ObjectID, error) { return r.b.mergeBases(ctx, x, y) })
}

// revList is the backend's revList of head without exclude, asked once.
func (r *Repo) revList(ctx context.Context, head ObjectID, exclude []ObjectID) ([]ObjectID, error) {
	return r.answer(question("rev-list", append([]ObjectID{head}, exclude...)...),
		func() bool { return len(exclude) == 1 && r.linearRange(ctx, head, exclude[0]) },
		func() ([]ObjectID, error) { return r.b.revList(ctx, head, exclude) })
}

// answer is the memo's answer to q; else, when linear walks the range (and
// stores both answers), its answer; else ask's, stored.
func (r *Repo) answer(q string, linear func() bool, ask func() ([]ObjectID, error)) ([]ObjectID, error) {
	if ids, ok := r.memo.get(q); ok {
		return ids, nil
	}
	if linear() {
		ids, _ := r.memo.get(q)
		return ids, nil
	}
	ids, err := ask()
	if err != nil {
		return nil, err
	}
	r.memo.put(q, ids)
	return ids, nil
}

// maxLinearWalk bounds linearRange's walk: a pull request's or a push's
// commits, read through the running cat-file, cost less than starting
// git merge-base and git rev-list; a walk that finds no base wastes
// about as much as one of them.
const maxLinearWalk = 32

// linearRange answers, without starting git, `git merge-base --all head
// base` and `git rev-list head --not base` when the git CLI reads the
// repository and base is on head's parent line, at most maxLinearWalk
// commits down, with one parent to every commit above it (a linear
// branch): the merge base is base, the list the commits above it. It
// reports whether it stored those answers in the memo. Where git reads
// other parents than the commit objects name (a shallow clone's
// boundary, grafts) it leaves the questions to git, and so it does on any
// error: git gives the error.
func (r *Repo) linearRange(ctx context.Context, head, base ObjectID) bool {
	b, ok := r.cli()
	if !ok || os.Getenv("GIT_GRAFT_FILE") != "" || os.Getenv("GIT_SHALLOW_FILE") != "" {
		return false
	}
	for _, f := range []string{
		filepath.Join(r.commonDir, "shallow"), filepath.Join(r.gitDir, "shallow"),
		filepath.Join(r.commonDir, "info", "grafts"), filepath.Join(r.gitDir, "info", "grafts"),
	} {
		if _, err := os.Lstat(f); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	notLinear := question("not linear", head, base)
	if _, known := r.memo.get(notLinear); known {
		return false // walked already: both questions go to git
	}
	var above []ObjectID
	id := head
	for range maxLinearWalk + 1 {
		if id == base {
			sort.Slice(above, func(i, j int) bool { return above[i] < above[j] })
			r.memo.put(question("merge-base", head, base), []ObjectID{base})
			r.memo.put(question("rev-list", head, base), above)
			return true
		}
		c, err := b.commit(ctx, id)
		if err != nil || len(c.Parents) != 1 {
			break
		}
		above = append(above, id)
		id = c.Parents[0]
	}
	r.memo.put(notLinear, nil)
	return false
}

// Bounds of the objects memo keeps: a full tree's walk reads each tree once
// and gains nothing from keeping them (a tree entry is about 100 bytes).
const (
	maxMemoTreeEntries = 1 << 16
	maxMemoCommits     = 1 << 12
	maxMemoBlobBytes   = 8 << 20
)

// objectMemo keeps objects a run has read and reads again. A range's
// commits share most of their trees, its commits are read to walk it, to
// diff them and to snapshot it, and the files its relations need are looked
// up from the root of the head tree one by one: express's 14-commit range
// asked cat-file 722 times for 301 objects, its root tree 101 times. An id
// names its content, so an answer never goes stale. It stops taking objects
// once their weights reach max.
type objectMemo[T any] struct {
	mu      sync.Mutex
	objects map[ObjectID]T
	weight  int
}

func (m *objectMemo[T]) get(id ObjectID) (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.objects[id]
	return v, ok
}

func (m *objectMemo[T]) put(id ObjectID, v T, weight, max int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objects[id]; ok || m.weight+weight > max {
		return
	}
	if m.objects == nil {
		m.objects = map[ObjectID]T{}
	}
	m.objects[id] = v
	m.weight += weight
}

// tree reads the tree id, once while the memo has room. The entries are
// shared: callers only read them.
func (r *Repo) tree(ctx context.Context, id ObjectID) ([]treeEntry, error) {
	if entries, ok := r.trees.get(id); ok {
		return entries, nil
	}
	entries, err := r.b.tree(ctx, id)
	if err != nil {
		return nil, err
	}
	r.trees.put(id, entries, len(entries), maxMemoTreeEntries)
	return entries, nil
}

// blob reads the blob id of a side of a diff, once while the memo has room:
// a file changed by consecutive commits of a range is read as the new side
// of one and the old side of the next, and the range's own diff reads its
// first and last versions again (express: 50 of 427 reads). Each caller
// gets its own copy.
func (r *Repo) blob(ctx context.Context, id ObjectID) ([]byte, error) {
	if data, ok := r.blobs.get(id); ok {
		return bytes.Clone(data), nil
	}
	data, err := r.b.blob(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(data) <= maxMemoBlobBytes/64 { // a large blob would crowd the rest out
		r.blobs.put(id, bytes.Clone(data), len(data), maxMemoBlobBytes)
	}
	return data, nil
}
