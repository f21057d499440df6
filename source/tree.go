package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ctxpack/ctxpack/internal/workers"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sync/errgroup"
)

// headTree is a commit's whole tree behind pack.Tree: what a change-scope
// snapshot reaches beyond the files it lists. Listing and search use the
// git CLI where it is on PATH (git ls-tree and git grep read a large tree
// many times faster than a walk of its objects), and the repository reader
// otherwise.
type headTree struct {
	r      *Repo
	commit *Commit

	once  sync.Once
	files []listedFile // every file, by raw path
	paths []string
	err   error

	mu sync.Mutex
	// trees are the directories looked up so far: raw path → tree.
	trees map[string]ObjectID
}

func (r *Repo) headTree(commit *Commit) *headTree {
	return &headTree{r: r, commit: commit}
}

// gitCLI reports whether the git CLI can serve this repository.
func (r *Repo) gitCLI() bool {
	_, err := exec.LookPath("git")
	return err == nil && r.b != nil
}

// listedFile is one non-directory entry of the tree.
type listedFile struct {
	path string // raw, slash-separated
	id   ObjectID
	mode filemode.FileMode
}

// list reads every file of the tree once: through git ls-tree where the
// CLI serves the repository (hugo's 433 trees: ~4 ms, where a walk asks
// cat-file for each), else by a walk of the tree objects.
func (t *headTree) list(ctx context.Context) ([]listedFile, error) {
	t.once.Do(func() {
		if t.r.gitCLI() {
			out, err := t.r.fetchGit(ctx, nil, "ls-tree", "-r", "-z", "--full-tree", t.commit.ID.String())
			if err == nil {
				if t.files, err = parseLsTree(out); err == nil {
					t.setPaths()
					return
				}
			}
			if ctx.Err() != nil {
				t.err = ctx.Err()
				return
			}
		}
		t.files = nil
		t.err = t.r.walkTree(ctx, t.commit.Tree, t.commit.ID.Short(), func(p string, e treeEntry) error {
			t.files = append(t.files, listedFile{path: p, id: e.ID, mode: e.Mode})
			return nil
		})
		t.setPaths()
	})
	return t.files, t.err
}

// prefetch starts listing the tree through git ls-tree, on another core,
// when a change pack will search it (searchesTree). The listing was ~5 ms
// of a range's wall time, waited for at the search.
func (t *headTree) prefetch(ctx context.Context, changes []pack.Change, scope string) {
	if t.r.gitCLI() && searchesTree(changes, scope) {
		go t.list(ctx) // its result is kept for the search
	}
}

// searchesTree reports whether a change pack of changes is likely to
// search the head tree: a change scope whose changed code calls a name
// worth looking up (pack.MaySearchTree).
func searchesTree(changes []pack.Change, scope string) bool {
	return scope == policy.ScopeChange && pack.MaySearchTree(changes)
}

func (t *headTree) setPaths() {
	t.paths = make([]string, 0, len(t.files))
	for _, f := range t.files {
		t.paths = append(t.paths, safePath(f.path))
	}
	sort.Strings(t.paths)
}

// parseLsTree reads `git ls-tree -r -z` records: "<mode> <type> <id>\t<path>\0".
func parseLsTree(out []byte) ([]listedFile, error) {
	var files []listedFile
	for len(out) > 0 {
		nul := bytes.IndexByte(out, 0)
		if nul < 0 {
			return nil, errors.New("git ls-tree: a record without its NUL")
		}
		rec := out[:nul]
		out = out[nul+1:]
		tab := bytes.IndexByte(rec, '\t')
		if tab < 0 || tab == len(rec)-1 {
			return nil, fmt.Errorf("git ls-tree: no path in %q", rec)
		}
		meta := strings.Fields(string(rec[:tab]))
		if len(meta) != 3 {
			return nil, fmt.Errorf("git ls-tree: bad record %q", rec[:tab])
		}
		mode, err := filemode.New(meta[0])
		if err != nil {
			return nil, fmt.Errorf("git ls-tree: bad mode in %q: %w", rec[:tab], err)
		}
		id, err := ParseID(meta[2])
		if err != nil {
			return nil, fmt.Errorf("git ls-tree: bad object id in %q: %w", rec[:tab], err)
		}
		files = append(files, listedFile{path: string(rec[tab+1:]), id: id, mode: mode})
	}
	return files, nil
}

// Paths lists every path of the tree, sorted, in the snapshot's spelling.
func (t *headTree) Paths(ctx context.Context) ([]string, error) {
	if _, err := t.list(ctx); err != nil {
		return nil, err
	}
	return t.paths, nil
}

// Dir lists the files directly in dir, sorted.
func (t *headTree) Dir(ctx context.Context, dir string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tree, ok, err := t.treeOf(ctx, RawPath(dir))
	if err != nil {
		return nil, fmt.Errorf("look up %s in the tree of %s: %w", dir, t.commit.ID.Short(), err)
	}
	if !ok {
		return nil, nil
	}
	entries, err := t.r.tree(ctx, tree)
	if err != nil {
		return nil, fmt.Errorf("read tree %s (%s/) of %s: %w", tree, dir, t.commit.ID.Short(), err)
	}
	var out []string
	for _, e := range entries {
		if e.Mode == filemode.Dir {
			continue
		}
		out = append(out, safePath(path.Join(RawPath(dir), e.Name)))
	}
	sort.Strings(out)
	return out, nil
}

// treeOf returns the tree of the directory dir (a raw path), walking down
// from its deepest ancestor already looked up: listing every ancestor of a
// path 5,000 directories deep reads 5,000 trees, not 12.5 million.
func (t *headTree) treeOf(ctx context.Context, dir string) (ObjectID, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.trees == nil {
		t.trees = map[string]ObjectID{"": t.commit.Tree}
	}
	dir = strings.Join(splitPath(dir), "/")
	known := dir
	for {
		if _, ok := t.trees[known]; ok {
			break
		}
		i := strings.LastIndexByte(known, '/')
		if i < 0 {
			known = ""
			break
		}
		known = known[:i]
	}
	tree := t.trees[known]
	for len(known) < len(dir) {
		start := len(known)
		if start > 0 {
			start++ // the "/" after known
		}
		end := len(dir)
		if i := strings.IndexByte(dir[start:], '/'); i >= 0 {
			end = start + i
		}
		entries, err := t.r.tree(ctx, tree)
		if err != nil {
			return "", false, err
		}
		e := entryNamed(entries, dir[start:end])
		if e == nil || e.Mode != filemode.Dir {
			return "", false, nil
		}
		known, tree = dir[:end], e.ID
		t.trees[known] = tree
	}
	return tree, true, nil
}

// File returns the tree's entry at p.
func (t *headTree) File(ctx context.Context, p string) (pack.File, bool, error) {
	if err := ctx.Err(); err != nil {
		return pack.File{}, false, err
	}
	entry, err := t.r.entryAt(ctx, t.commit, p)
	if err != nil {
		return pack.File{}, false, fmt.Errorf("look up %s in the tree of %s: %w", p, t.commit.ID.Short(), err)
	}
	if entry == nil || entry.Mode == filemode.Dir {
		return pack.File{}, false, nil
	}
	f, err := t.r.treeFile(ctx, RawPath(p), *entry, t.commit.ID)
	if err != nil {
		return pack.File{}, false, err
	}
	return f, true, nil
}

// Grep returns, for each word, the paths holding it (see pack.GrepOptions).
// A repository with a work tree is searched here, each file read from the
// work tree when it holds the tree's blob (worktreeBlob): git grep of a
// commit inflates every blob it searches, hugo's 907 Go files in ~31 ms,
// as long as all of gitleaks' run over the change. A bare repository is
// left to git grep where the CLI serves it.
func (t *headTree) Grep(ctx context.Context, words []string, opts pack.GrepOptions) (map[string][]string, error) {
	out := map[string][]string{}
	if len(words) == 0 {
		return out, nil
	}
	if t.r.bare && t.r.gitCLI() {
		if res, ok, err := t.gitGrep(ctx, words, opts); ok || err != nil {
			return res, err
		}
	}
	return t.grepFiles(ctx, words, opts)
}

// gitGrep searches the tree with git grep; ok is false when git could not.
func (t *headTree) gitGrep(ctx context.Context, words []string, opts pack.GrepOptions) (map[string][]string, bool, error) {
	out := map[string][]string{}
	// One thread: grepping a commit's tree, git's threads take turns at
	// the object store behind one lock, and inflating the blobs is nearly
	// all of the work (zlib 69% of its cycles), so more threads only add
	// CPU: hugo's 907 Go files, task-clock medians, 31 ms with one
	// thread, 34 with two, 37 with eight.
	args := []string{"grep", "--threads=1", "-z", "-o", "-I", "--no-color", "--no-textconv"}
	where := []string{t.commit.ID.String(), "--"}
	for _, x := range opts.Exts {
		where = append(where, "*"+x)
	}
	if pattern, ok := wordPattern(words, opts); ok {
		res, err := t.r.fetchGit(ctx, nil, slices.Concat(args, []string{"-P", "-e", pattern}, where)...)
		if err == nil || isNoMatch(err) {
			return parseGrep(res, t.commit.ID.String()+":", false, out), true, nil
		}
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		// A git built without PCRE: the fixed strings below.
	}
	args = append(args, "-F")
	if !opts.Substring {
		args = append(args, "-w")
	}
	if opts.IgnoreCase {
		args = append(args, "-i")
	}
	for _, w := range words {
		args = append(args, "-e", w)
	}
	res, err := t.r.fetchGit(ctx, nil, append(args, where...)...)
	if err == nil || isNoMatch(err) {
		return parseGrep(res, t.commit.ID.String()+":", opts.IgnoreCase, out), true, nil
	}
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	return nil, false, nil
}

// wordPattern is one Perl pattern for whole words that finds what -F -w
// with one -e a word finds: git's -w is slow at finding every occurrence
// of many words (-o), where one alternation, bounded by lookarounds on
// git's word characters, is not (express's range: 17.7 → 5.6 ms of git
// grep). Only for case-sensitive whole words made of word characters
// alone: then no two words can match at one place, so which one git would
// print there never arises, and nothing in a word needs escaping.
func wordPattern(words []string, opts pack.GrepOptions) (string, bool) {
	if opts.Substring || opts.IgnoreCase {
		return "", false
	}
	var b strings.Builder
	b.WriteString("(?<![0-9A-Za-z_])(?:")
	for i, w := range words {
		if w == "" || strings.ContainsFunc(w, func(r rune) bool { return !isGrepWordRune(r) }) {
			return "", false
		}
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(w)
	}
	b.WriteString(")(?![0-9A-Za-z_])")
	return b.String(), true
}

// isGrepWordRune is git grep's word character: an ASCII letter, digit or _.
func isGrepWordRune(r rune) bool {
	return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// isNoMatch recognises git grep's exit status 1: nothing matched.
func isNoMatch(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 1
}

// parseGrep reads "rev:path\0word\n" records, once per path and word.
func parseGrep(res []byte, prefix string, lower bool, out map[string][]string) map[string][]string {
	seen := map[string]bool{}
	for len(res) > 0 {
		nul := bytes.IndexByte(res, 0)
		if nul < 0 {
			break
		}
		name := strings.TrimPrefix(string(res[:nul]), prefix)
		res = res[nul+1:]
		nl := bytes.IndexByte(res, '\n')
		if nl < 0 {
			nl = len(res)
		}
		word := string(res[:nl])
		if lower {
			word = strings.ToLower(word)
		}
		res = res[min(nl+1, len(res)):]
		p := safePath(name)
		if key := word + "\x00" + p; !seen[key] {
			seen[key] = true
			out[word] = append(out[word], p)
		}
	}
	for w := range out {
		sort.Strings(out[w])
	}
	return out
}

// grepFiles searches the tree's regular files with the extensions asked
// for, on every core, as git grep -I does: a file with a NUL in its first
// 8,000 bytes is binary and not searched. Each is read from the work tree
// when it holds the blob, else from the object store; a blob a partial
// clone has not fetched is not searched.
func (t *headTree) grepFiles(ctx context.Context, words []string, opts pack.GrepOptions) (map[string][]string, error) {
	files, err := t.list(ctx)
	if err != nil {
		return nil, err
	}
	var todo []listedFile
	for _, f := range files {
		if (f.mode == filemode.Regular || f.mode == filemode.Executable) && hasExt(f.path, opts.Exts) {
			todo = append(todo, f)
		}
	}
	keys := make([]string, len(words))
	for i, w := range words {
		keys[i] = w
		if opts.IgnoreCase {
			keys[i] = strings.ToLower(w)
		}
	}
	t.r.loadIndexStats(len(todo))
	found := make([][]int, len(todo)) // per file, the indexes of the words it holds
	// The work tree's files are searched on every core; the others (the
	// work tree holds another version) are read from the object store
	// (searchStore).
	ask, searched := t.searchStore(ctx, todo, func(i int, data []byte) {
		found[i] = matchWords(data, keys, opts)
		t.keepFound(todo[i].id, data, found[i])
	})
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		g.Go(func() error {
			var buf []byte // a file read from the work tree is looked at, then let go
			for {
				i := int(next.Add(1) - 1)
				if i >= len(todo) {
					return nil
				}
				if err := gctx.Err(); err != nil {
					return err
				}
				f := todo[i]
				data, ok := t.r.worktreeBlobBuf(gctx, f.path, f.id, buf)
				if !ok {
					ask(i)
					continue
				}
				buf = data
				found[i] = matchWords(data, keys, opts)
				t.keepFound(f.id, data, found[i])
			}
		})
	}
	err = g.Wait()
	if serr := searched(); err == nil {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for i, ws := range found {
		for _, w := range ws {
			out[keys[w]] = append(out[keys[w]], safePath(todo[i].path))
		}
	}
	for k, ps := range out {
		sort.Strings(ps)
		out[k] = slices.Compact(ps)
	}
	return out, nil
}

// keepFound keeps the content of a file the search found a word in, in
// the repository's blob memo (Repo.blob; blobReader looks there first):
// the relations read such files next (express's range: 60 of them, read
// again one at a time through cat-file or from the work tree, hashed
// again, ~6 ms). The memo keeps what its bound lets it; the content is
// the blob's (read from the object store, or from the work tree where it
// hashed to the blob's id), so the memo's answer is the same either way.
func (t *headTree) keepFound(id ObjectID, data []byte, found []int) {
	if len(found) > 0 {
		t.r.keepBlob(id, data)
	}
}

// searchStore reads files of todo from the object store and hands each to
// search: ask(i) asks for todo[i], searched returns once every file asked
// for is searched, with the error of the first (in todo's order) that
// could not be read; a blob a partial clone has not fetched is left out.
// Where the backend reads many blobs in one exchange (blobBatcher), the
// exchange runs beside the caller's work, each file read as soon as it is
// asked for: hugo's 64 files of 907 the work tree holds another version
// of were read after the work tree's were searched, ~6 ms of a ~60 ms
// range. Else they are read when all are asked for, on every core.
func (t *headTree) searchStore(ctx context.Context, todo []listedFile, search func(i int, data []byte)) (ask func(i int), searched func() error) {
	var mu sync.Mutex
	failed := map[int]error{}
	read := func(i int, data []byte, err error) {
		if err == nil {
			search(i, data)
			return
		}
		var nf *NotFetchedError
		if !errors.As(err, &nf) {
			f := todo[i]
			mu.Lock()
			failed[i] = t.r.blobError(f.path, t.commit.ID, f.id, err)
			mu.Unlock()
		}
	}
	first := func() error {
		if len(failed) == 0 {
			return nil
		}
		return failed[slices.Min(slices.Collect(maps.Keys(failed)))]
	}
	if bb, ok := t.r.b.(blobBatcher); ok {
		asks := make(chan blobAsk, 64)
		done := make(chan error, 1)
		go func() {
			done <- bb.blobs(ctx, asks, func(i int, data []byte, err error) error {
				read(i, data, err)
				return nil
			})
		}()
		ask = func(i int) { asks <- blobAsk{key: i, id: todo[i].id} }
		searched = func() error {
			close(asks)
			if err := <-done; err != nil {
				return err
			}
			return first()
		}
		return ask, searched
	}
	var stored []int
	ask = func(i int) {
		mu.Lock()
		stored = append(stored, i)
		mu.Unlock()
	}
	searched = func() error {
		err := workers.Each(ctx, len(stored), runtime.GOMAXPROCS(0), func(ctx context.Context, k int) error {
			data, err := t.r.b.blob(ctx, todo[stored[k]].id)
			read(stored[k], data, err)
			return nil
		})
		if err != nil {
			return err
		}
		return first()
	}
	return ask, searched
}

// matchWords returns the indexes of the keys data holds, as git grep -I
// -F finds them (with -w unless opts.Substring; keys already in lower
// case with opts.IgnoreCase); none in binary data.
func matchWords(data []byte, keys []string, opts pack.GrepOptions) []int {
	if bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 {
		return nil
	}
	if opts.IgnoreCase {
		data = bytes.ToLower(data)
	}
	var out []int
	for i, k := range keys {
		var ok bool
		if opts.Substring {
			ok = bytes.Contains(data, []byte(k))
		} else {
			ok = containsWord(data, k)
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}

func hasExt(p string, exts []string) bool {
	if len(exts) == 0 {
		return true
	}
	x := path.Ext(p)
	for _, e := range exts {
		if x == e {
			return true
		}
	}
	return false
}

// containsWord reports whether data holds w with no word character (letter,
// digit, _) on either side, as git grep -w does.
func containsWord(data []byte, w string) bool {
	word := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(w))
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(w)
		if (at == 0 || !word(data[at-1])) && (end >= len(data) || !word(data[end])) {
			return true
		}
		i = at + 1
	}
}
