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
	if ids, ok := r.history.get(q); ok {
		return slices.Clone(ids), nil
	}
	if linear() {
		ids, _ := r.history.get(q)
		return slices.Clone(ids), nil
	}
	ids, err := ask()
	if err != nil {
		return nil, err
	}
	r.history.put(q, slices.Clone(ids), 0, 0)
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
	_, ok := r.cli()
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
	if _, known := r.history.get(notLinear); known {
		return false // walked already: both questions go to git
	}
	var above []ObjectID
	id := head
	for range maxLinearWalk + 1 {
		if id == base {
			sort.Slice(above, func(i, j int) bool { return above[i] < above[j] })
			r.history.put(question("merge-base", head, base), []ObjectID{base}, 0, 0)
			r.history.put(question("rev-list", head, base), above, 0, 0)
			return true
		}
		c, err := r.commit(ctx, id) // the range's diffs read these commits again
		if err != nil || len(c.Parents) != 1 {
			break
		}
		above = append(above, id)
		id = c.Parents[0]
	}
	r.history.put(notLinear, nil, 0, 0)
	return false
}

// Bounds of the objects memo keeps: a full tree's walk reads each tree once
// and gains nothing from keeping them (a tree entry is about 100 bytes).
const (
	maxMemoTreeEntries = 1 << 16
	maxMemoCommits     = 1 << 12
	maxMemoBlobBytes   = 8 << 20
)

// memo keeps what a run has asked and asks again, each answer with a
// weight, until the weights reach the bound put is given (an answer of
// weight 0 is always kept); only answers are kept, never errors.
//
// The repository's history answers: the configuration is read at a range's
// merge base before the range is snapshotted, and the pre-push hook lists
// a push's new commits to plan it, to find its diff base and to snapshot
// it. Between given ids they cannot change while the repository is open
// (a fetch, which can deepen a shallow history, resets them).
//
// Its objects: a range's commits share most of their trees, its commits
// are read to walk it, to diff them and to snapshot it, and the files its
// relations need are looked up from the root of the head tree one by one:
// express's 14-commit range asked cat-file 722 times for 301 objects, its
// root tree 101 times. An id names its content, so an answer never goes
// stale.
type memo[K comparable, V any] struct {
	mu      sync.Mutex
	answers map[K]V
	weight  int
}

func (m *memo[K, V]) get(k K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.answers[k]
	return v, ok
}

func (m *memo[K, V]) put(k K, v V, weight, max int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.answers[k]; ok || weight > 0 && m.weight+weight > max {
		return
	}
	if m.answers == nil {
		m.answers = map[K]V{}
	}
	m.answers[k] = v
	m.weight += weight
}

func (m *memo[K, V]) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.answers, m.weight = nil, 0
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
