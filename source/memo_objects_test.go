package source

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/policy"
)

// objectCounter counts the trees, commits and blobs read from the object
// store, and the blobs whose size is asked.
type objectCounter struct {
	backend
	mu      sync.Mutex
	trees   map[ObjectID]int
	commits map[ObjectID]int
	blobs   map[ObjectID]int
	sizes   map[ObjectID]int
}

func (b *objectCounter) size(ctx context.Context, id ObjectID) (int64, error) {
	b.mu.Lock()
	b.sizes[id]++
	b.mu.Unlock()
	return b.backend.size(ctx, id)
}

func (b *objectCounter) blob(ctx context.Context, id ObjectID) ([]byte, error) {
	b.mu.Lock()
	b.blobs[id]++
	b.mu.Unlock()
	return b.backend.blob(ctx, id)
}

// openCounted opens dir with the backend named, an objectCounter between
// the repository and its object store.
func openCounted(t *testing.T, dir, backendName string) (*Repo, *objectCounter) {
	t.Helper()
	r, err := OpenWith(dir, OpenOptions{Backend: backendName})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c := &objectCounter{backend: r.b, trees: map[ObjectID]int{}, commits: map[ObjectID]int{}, blobs: map[ObjectID]int{}, sizes: map[ObjectID]int{}}
	r.b = c
	return r, c
}

// headTreeOf is the tree of r's HEAD commit, and that commit's id.
func headTreeOf(t *testing.T, r *Repo) (*headTree, ObjectID) {
	t.Helper()
	ctx := context.Background()
	head, err := r.ResolveContext(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.commit(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	return r.headTree(c), head
}

func (b *objectCounter) tree(ctx context.Context, id ObjectID) ([]treeEntry, error) {
	b.mu.Lock()
	b.trees[id]++
	b.mu.Unlock()
	return b.backend.tree(ctx, id)
}

func (b *objectCounter) commit(ctx context.Context, id ObjectID) (*Commit, error) {
	b.mu.Lock()
	b.commits[id]++
	b.mu.Unlock()
	return b.backend.commit(ctx, id)
}

// TestObjectMemo: with either backend, looking up the files of a head
// tree one by one reads each tree once, however many files sit below it;
// a commit asked by its id is read once and each caller gets its own copy;
// a commit asked by a name that may move (HEAD) is read every time.
func TestObjectMemo(t *testing.T) {
	for _, backendName := range []string{BackendGoGit, BackendCLI} {
		t.Run(backendName, func(t *testing.T) {
			g := gittest.New(t)
			for i := range 4 {
				g.Write(fmt.Sprintf("a/b/f%d.txt", i), fmt.Sprintf("file %d\n", i))
			}
			g.Write("top.txt", "top\n")
			first := g.Commit("first")
			g.Write("top.txt", "top, again\n")
			g.Commit("second")

			r, counter := openCounted(t, g.Dir, backendName)
			ctx := context.Background()
			tree, head := headTreeOf(t, r)
			c := tree.commit
			for _, p := range []string{"a/b/f0.txt", "a/b/f1.txt", "a/b/f2.txt", "a/b/f3.txt", "top.txt", "a/b/none.txt"} {
				f, ok, err := tree.File(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if ok != (p != "a/b/none.txt") || ok && f.Path != p {
					t.Fatalf("File(%s) = %v, %v", p, f.Path, ok)
				}
			}
			if len(counter.trees) != 3 {
				t.Errorf("trees read: %v, want the root, a and a/b", counter.trees)
			}
			for id, n := range counter.trees {
				if n != 1 {
					t.Errorf("tree %s read %d times, want once", id, n)
				}
			}

			again, err := r.commit(ctx, head)
			if err != nil {
				t.Fatal(err)
			}
			if n := counter.commits[head]; n != 1 {
				t.Errorf("commit %s read %d times, want once", head, n)
			}
			if again.ID != c.ID || again.Tree != c.Tree || len(again.Parents) != 1 || again.Parents[0] != ObjectID(first) {
				t.Fatalf("the memo's commit %+v differs from the one read %+v", again, c)
			}
			again.Parents[0] = "changed by a caller"
			third, err := r.commit(ctx, head)
			if err != nil {
				t.Fatal(err)
			}
			if third.Parents[0] != ObjectID(first) {
				t.Errorf("a caller's change to its commit reached the memo: parents %v", third.Parents)
			}

			if backendName == BackendCLI { // go-git reads ids only
				for range 2 {
					if _, err := r.commit(ctx, "HEAD"); err != nil {
						t.Fatal(err)
					}
				}
				if n := counter.commits["HEAD"]; n != 2 {
					t.Errorf("commit HEAD read %d times, want twice (a name is not kept)", n)
				}
			}
		})
	}
}

// TestObjectMemoBound: the memo stops taking answers once their weights
// reach its bound, keeps those it has and the weightless ones (history
// answers), and a reset (a fetch) empties it and its weights.
func TestObjectMemoBound(t *testing.T) {
	var m memo[ObjectID, int]
	m.put("a", 1, 3, 5)
	m.put("b", 2, 3, 5) // over the bound: not kept
	m.put("c", 3, 2, 5)
	m.put("a", 9, 1, 5) // kept already: unchanged
	m.put("d", 4, 0, 5) // weightless: kept past the bound
	for id, want := range map[ObjectID]int{"a": 1, "c": 3, "d": 4} {
		if v, ok := m.get(id); !ok || v != want {
			t.Errorf("get(%s) = %d, %v; want %d", id, v, ok, want)
		}
	}
	if _, ok := m.get("b"); ok {
		t.Error("b was kept past the bound")
	}
	m.reset()
	if _, ok := m.get("a"); ok {
		t.Error("a was kept past a reset")
	}
	m.put("b", 2, 3, 5) // the weights went with the answers
	if _, ok := m.get("b"); !ok {
		t.Error("b was not kept after a reset")
	}
}

// TestBlobMemo: a range whose commits each change one file reads each
// version of it once, for the commits' diffs and the range's own, with
// either backend; the snapshot has its last version as committed.
func TestBlobMemo(t *testing.T) {
	for _, backendName := range []string{BackendGoGit, BackendCLI} {
		t.Run(backendName, func(t *testing.T) {
			g := gittest.New(t)
			g.Write("f.txt", "version 0\n")
			g.Commit("base")
			for i := 1; i <= 4; i++ {
				g.Write("f.txt", fmt.Sprintf("version %d\n", i))
				g.Commit(fmt.Sprintf("v%d", i))
			}
			r, counter := openCounted(t, g.Dir, backendName)
			snap, err := r.Range(context.Background(), "HEAD~4", "HEAD", policy.ScopeChange)
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Commits) != 4 || len(snap.Changes) != 1 || !strings.Contains(snap.Changes[0].Diff, "+version 4") {
				t.Fatalf("patches %d, changes %+v", len(snap.Commits), snap.Changes)
			}
			if len(counter.blobs) != 5 {
				t.Errorf("blobs read: %v, want the 5 versions", counter.blobs)
			}
			for id, n := range counter.blobs {
				if n != 1 {
					t.Errorf("blob %s read %d times, want once", id, n)
				}
			}
		})
	}
}
