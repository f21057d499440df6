package source

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unsafe"
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
	q := question("merge-base", x, y)
	return r.answer(ctx, q, x, y,
		func(load loadFunc) ([]ObjectID, error) { return mergeBasesWalk(ctx, load, x, y) },
		func(ctx context.Context) ([]ObjectID, error) { return r.b.mergeBases(ctx, x, y) })
}

// revList is the backend's revList of head without exclude, asked once.
func (r *Repo) revList(ctx context.Context, head ObjectID, exclude []ObjectID) ([]ObjectID, error) {
	q := question("rev-list", append([]ObjectID{head}, exclude...)...)
	var base ObjectID
	var walk func(loadFunc) ([]ObjectID, error) // a range's only: one base
	if len(exclude) == 1 {
		base = exclude[0]
		walk = func(load loadFunc) ([]ObjectID, error) {
			if base == head {
				return nil, nil // nothing to read
			}
			return revListWalk(ctx, load, head, exclude)
		}
	}
	return r.answer(ctx, q, head, base, walk, func(ctx context.Context) ([]ObjectID, error) { return r.b.revList(ctx, head, exclude) })
}

// answer is the memo's answer to q; else, where the git CLI reads the
// repository, walk's through the running cat-file or ask's, whichever
// comes first (walkRange); else ask's. The answer is stored.
func (r *Repo) answer(ctx context.Context, q string, head, base ObjectID, walk func(loadFunc) ([]ObjectID, error), ask func(context.Context) ([]ObjectID, error)) ([]ObjectID, error) {
	if ids, ok := r.history.get(q); ok {
		return slices.Clone(ids), nil
	}
	ids, err := r.walkRange(ctx, head, base, walk, ask)
	if err != nil {
		return nil, err
	}
	r.history.put(q, slices.Clone(ids), 0, 0)
	return ids, nil
}

// raceRangeWalk and maxRangeWalk bound walkRange: a pull request's or a
// push's commits, and those its base moved on by, read through the
// running cat-file (~30 µs a commit) cost less than starting git
// merge-base and git rev-list (~3 and ~2 ms: express's range, whose base
// moved on by 57 commits, walks 86 commits in 2.5 ms where the two take
// 4.8). A walk that reads more than raceRangeWalk commits asks git
// beside it and takes the first answer: flask's range (its base 58 commits on, through
// merges) walks 155 commits in ~4.5 ms, where a walk stopped at 128 and
// then git took ~10. One that reaches maxRangeWalk waits for git.
// (Variables: tests lower them.)
var (
	raceRangeWalk = 128
	maxRangeWalk  = 1024
)

// errLongWalk stops a walk at maxRangeWalk commits; errAnswered stops one
// git answered first.
var (
	errLongWalk = errors.New("range walk over its bound")
	errAnswered = errors.New("git answered first")
)

// walkRange answers a question about the range base..head with walk, the
// walk the go-git backend answers it with (git's algorithms: see
// mergeBasesWalk, revListWalk), when the git CLI reads the repository,
// reading its commits through the running cat-file instead of starting
// git merge-base or git rev-list; past raceRangeWalk commits read, git
// (ask) answers beside it, and the first answer is taken (the two are the
// same: TestRangeWalkAnswersAsGit, TestRangeWalkMatchesGitOnRepos); the
// one not taken is stopped, git before the walk's answer is given. Where git reads other parents than the commit
// objects name (a shallow clone's boundary, grafts) git answers, and so
// it does on any error of the walk: git gives the error. A range walked
// to maxRangeWalk once is not walked again.
func (r *Repo) walkRange(ctx context.Context, head, base ObjectID, walk func(loadFunc) ([]ObjectID, error), ask func(context.Context) ([]ObjectID, error)) ([]ObjectID, error) {
	if walk == nil || !r.walkable() {
		return ask(ctx)
	}
	tooLong := question("walk too long", head, base)
	if _, known := r.history.get(tooLong); known {
		return ask(ctx)
	}
	type reply struct {
		ids []ObjectID
		err error
	}
	var asked chan reply // made when git is asked
	var answered *reply  // git's reply, once taken
	askCtx, stop := context.WithCancel(ctx)
	defer stop() // git, when the walk answered first
	read := 0
	load := func(ctx context.Context, id ObjectID) (*Commit, error) {
		if read++; read == raceRangeWalk+1 {
			asked = make(chan reply, 1)
			go func() {
				ids, err := ask(askCtx)
				asked <- reply{ids, err}
			}()
		}
		if asked != nil && answered == nil {
			select {
			case rep := <-asked:
				answered = &rep
			default:
			}
		}
		switch {
		case answered != nil && answered.err == nil:
			return nil, errAnswered // a failure of git's leaves the walk to answer
		case read > maxRangeWalk:
			return nil, errLongWalk
		}
		return r.commit(ctx, id) // the range's diffs read these commits again
	}
	ids, err := walk(load)
	if err == nil {
		if asked != nil && answered == nil {
			stop()
			<-asked // git stopped, before the answer is given
		}
		return ids, nil
	}
	if errors.Is(err, errLongWalk) {
		r.history.put(tooLong, nil, 0, 0)
	}
	switch {
	case answered != nil:
		return answered.ids, answered.err
	case asked != nil:
		rep := <-asked
		return rep.ids, rep.err
	}
	return ask(ctx)
}

// walkable reports whether walkRange may walk this repository: the git CLI
// reads it, and git reads the parents the commit objects name (no shallow
// file, no grafts). Asked once while the repository is open (a fetch,
// which can make a clone shallow, resets the history memo).
func (r *Repo) walkable() bool {
	for key, answer := range map[string]bool{"walkable": true, "not walkable": false} {
		if _, known := r.history.get(key); known {
			return answer
		}
	}
	ok := r.walkableNow()
	key := "not walkable"
	if ok {
		key = "walkable"
	}
	r.history.put(key, nil, 0, 0)
	return ok
}

func (r *Repo) walkableNow() bool {
	if _, ok := r.cli(); !ok || os.Getenv("GIT_GRAFT_FILE") != "" || os.Getenv("GIT_SHALLOW_FILE") != "" {
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
	return true
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

// readOnce is m's answer for id, else read's, read once: concurrent reads
// of one id (the commits of a range are diffed at once) share one read,
// and the memo is looked at again inside it. The answer is kept with the
// weight read gives it while the memo has room under max (a negative
// weight: not kept).
func readOnce[V any](r *Repo, m *memo[ObjectID, V], kind string, id ObjectID, max int, read func() (V, int, error)) (V, error) {
	if v, ok := m.get(id); ok {
		return v, nil
	}
	v, err, _ := r.reading.Do(kind+" "+string(id), func() (any, error) {
		if v, ok := m.get(id); ok { // read since the look above
			return v, nil
		}
		v, weight, err := read()
		if err != nil {
			return nil, err
		}
		if weight >= 0 {
			m.put(id, v, weight, max)
		}
		return v, nil
	})
	if err != nil {
		var zero V
		return zero, err
	}
	return v.(V), nil
}

// tree reads the tree id, once while the memo has room (readOnce). The
// entries are shared: callers only read them.
func (r *Repo) tree(ctx context.Context, id ObjectID) ([]treeEntry, error) {
	return readOnce(r, &r.trees, "tree", id, maxMemoTreeEntries, func() ([]treeEntry, int, error) {
		entries, err := r.b.tree(ctx, id)
		return entries, len(entries), err
	})
}

// blob reads the blob id of a side of a diff, as text, once while the
// memo has room (readOnce): a file changed by consecutive commits of a
// range is read as the new side of one and the old side of the next, and
// the range's own diff reads its first and last versions again (express:
// 50 of 427 reads). The text is shared: express's changelog, 120 KB,
// changed by 13 of 14 commits, was copied four times a commit when each
// caller had its own bytes.
func (r *Repo) blob(ctx context.Context, id ObjectID) (string, error) {
	return readOnce(r, &r.blobs, "blob", id, maxMemoBlobBytes, func() (string, int, error) {
		data, err := r.b.blob(ctx, id)
		if err != nil {
			return "", 0, err
		}
		return ownedText(data), blobWeight(len(data)), nil
	})
}

// ownedText is data as a string without a copy, for bytes a backend read
// for this caller alone (backend.blob, blobBatcher.blobs), never changed
// after (express's range reads 427 blobs, ~1.4% of its CPU in the
// copies).
func ownedText(data []byte) string { return unsafe.String(unsafe.SliceData(data), len(data)) }

// blobWeight is a blob's weight in the memo: its size, or -1 (not kept)
// for a large blob, which would crowd the rest out.
func blobWeight(size int) int {
	if size > maxMemoBlobBytes/64 {
		return -1
	}
	return size
}

// keepBlob keeps data, blob id's content, in the memo while it has room
// (a search's file the relations read next: see headTree.keepFound).
func (r *Repo) keepBlob(id ObjectID, data []byte) {
	if blobWeight(len(data)) >= 0 {
		r.keepText(id, string(data)) // data may be a buffer read into again
	}
}

// keepText keeps text, blob id's content, in the memo while it has room.
func (r *Repo) keepText(id ObjectID, text string) {
	if w := blobWeight(len(text)); w >= 0 {
		r.blobs.put(id, text, w, maxMemoBlobBytes)
	}
}
