package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/internal/workers"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// Worktree snapshots the working tree: tracked files as they are on disk
// (uncommitted edits included) plus untracked files that git does not ignore.
// Changes are the differences from HEAD. In a sparse checkout, the files
// outside the sparse set are listed with their index blob and excluded as
// not_checked_out (they are not in the work tree; --commit reads them from
// the commit). A plain directory is walked whole, honouring its .gitignore
// files.
func (r *Repo) Worktree(ctx context.Context) (*pack.Snapshot, error) {
	if r.b == nil {
		return r.plain(ctx)
	}
	if r.bare {
		return nil, fmt.Errorf("%s is a bare repository: it has no work tree; pack a commit (--commit HEAD) or a range instead", r.Root)
	}
	snap := &pack.Snapshot{Source: pack.Source{Repository: r.Name, Kind: "git", Trigger: "worktree", Scope: policy.ScopeTree}}
	var listing *headTree // the head tree, listed by git
	var headTreeID ObjectID
	headTime := time.Unix(0, 0)
	branch, headID, err := r.b.head(ctx)
	if err != nil {
		return nil, err
	}
	if headID != "" {
		c, err := r.commit(ctx, headID)
		if err != nil {
			return nil, err
		}
		headTreeID, headTime = c.Tree, c.Committer
		if r.gitListsWorktree() {
			// The head tree, which the changes are found against, is
			// listed by git ls-tree beside the index's listing: a walk
			// read each tree after it (hugo's 433 through cat-file: 8-27
			// ms of a full-tree pack's wall time).
			listing = r.headTree(c)
			go listing.list(ctx)
		}
		snap.Source.Head = c.ID.String()
		snap.Source.Ref = "HEAD"
		if branch != "" {
			snap.Source.Ref = branch
		}
	}
	if snap.Time, err = epoch(headTime); err != nil {
		return nil, err
	}

	entries, untracked, err := r.worktreeBackend().worktree(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the git index and work tree of %s: %w", r.Root, err)
	}
	// An unmerged path has an entry per stage, listed together (git lists
	// the index in path order): one listing per path.
	listed := entries[:0:0]
	for i, e := range entries {
		if e.Stage != 0 && i > 0 && entries[i-1].Path == e.Path {
			continue
		}
		listed = append(listed, e)
	}
	// Stat each file on every core: a large tree's listing is mostly
	// lstat calls (100,000 files: ~170 ms of them). The error is the
	// first file's by path (workers.Each), as when they were stat'ed in
	// turn.
	files := make([]*pack.File, len(listed))
	sides := make([]*side, len(listed))
	err = workers.Each(ctx, len(listed), runtime.GOMAXPROCS(0), func(_ context.Context, i int) error {
		var err error
		files[i], sides[i], err = r.trackedFile(listed[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	current := make(map[string]*side, len(listed)+len(untracked))
	snap.Files = make([]pack.File, 0, len(listed)+len(untracked))
	for i, f := range files {
		if f == nil {
			continue // deleted in the work tree
		}
		snap.Files = append(snap.Files, *f)
		current[f.Path] = sides[i]
	}
	for _, p := range untracked {
		f, s, err := r.untrackedFile(p)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue
		}
		snap.Files = append(snap.Files, *f)
		current[f.Path] = s
	}
	sortFiles(snap.Files)

	changes, err := r.worktreeChanges(ctx, headID, headTreeID, listing, current)
	if err != nil {
		return nil, err
	}
	snap.Changes = changes
	if len(changes) > 0 {
		snap.Source.Dirty = true
	} else if headTreeID != "" {
		snap.Source.Tree = headTreeID.String()
	}
	return snap, nil
}

// zeroID is the repository's all-zero object id.
func (r *Repo) zeroID() ObjectID {
	if r.b.objectFormat() == "sha256" {
		return ObjectID(strings.Repeat("0", 64))
	}
	return ObjectID(strings.Repeat("0", 40))
}

// trackedFile builds the snapshot entry of an index entry from the disk.
func (r *Repo) trackedFile(e indexEntry) (*pack.File, *side, error) {
	abs := filepath.Join(r.Root, filepath.FromSlash(e.Path))
	name := safePath(e.Path)
	if e.Mode == filemode.Submodule {
		f := &pack.File{Path: name, Mode: pack.ModeSubmodule, Blob: e.ID.String()}
		return f, &side{path: name, mode: filemode.Submodule, id: e.ID,
			text: "Subproject commit " + e.ID.String() + "\n", loaded: true}, nil
	}
	if e.SkipWorktree {
		f := &pack.File{Path: name, Mode: modeOf(e.Mode), Blob: e.ID.String()}
		if f.Mode == pack.ModeRegular || f.Mode == pack.ModeExecutable {
			f.Read = func(context.Context) ([]byte, error) {
				return nil, &pack.Unavailable{Reason: pack.ReasonNotCheckedOut,
					Detail: name + " is outside the sparse checkout (git sparse-checkout): not in the work tree; pack --commit HEAD reads it from the commit"}
			}
		}
		return f, &side{path: name, mode: e.Mode, id: e.ID}, nil
	}
	fi := e.Info
	var err error
	if fi == nil {
		fi, err = os.Lstat(abs)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("stat %s: %w", e.Path, err)
		}
	}
	f := &pack.File{Path: name, Size: fi.Size(), Mode: diskMode(fi)}
	s := &side{path: name, disk: e.Path, mode: fileMode(f.Mode)}
	var data []byte
	if f.Mode == pack.ModeSymlink {
		target, err := os.Readlink(abs)
		if err != nil {
			return nil, nil, fmt.Errorf("read link %s: %w", e.Path, err)
		}
		data = []byte(filepath.ToSlash(target))
	} else {
		if e.Clean {
			f.Blob = e.ID.String()
			f.Read = r.indexedReader(e.Path, abs, e.ID)
			s.id = e.ID // the content is read on demand when a diff needs it
			return f, s, nil
		}
		f.Read = diskReader(abs)
		if data, err = fsutil.ReadNoFollow(abs); err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", e.Path, err)
		}
	}
	s.text, s.loaded = string(data), true
	s.id = r.b.hashBlob(data)
	f.Blob = s.id.String()
	return f, s, nil
}

// untrackedFile builds the snapshot entry of an untracked path ("dir/" is a
// nested repository); nil for what is not a file (a socket, a fifo).
func (r *Repo) untrackedFile(p string) (*pack.File, *side, error) {
	if dir, ok := strings.CutSuffix(p, "/"); ok {
		name := safePath(dir)
		return &pack.File{Path: name, Mode: pack.ModeSubmodule},
			&side{path: name, mode: filemode.Submodule, id: r.zeroID()}, nil
	}
	abs := filepath.Join(r.Root, filepath.FromSlash(p))
	fi, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil // gone since it was listed
	}
	if err != nil {
		return nil, nil, fmt.Errorf("stat %s: %w", p, err)
	}
	name := safePath(p)
	f := &pack.File{Path: name, Size: fi.Size(), Mode: diskMode(fi)}
	s := &side{path: name, disk: p, mode: fileMode(f.Mode)}
	switch {
	case f.Mode == pack.ModeSymlink:
		target, err := os.Readlink(abs)
		if err != nil {
			return nil, nil, fmt.Errorf("read link %s: %w", p, err)
		}
		s.text = filepath.ToSlash(target)
	case !fi.Mode().IsRegular():
		return nil, nil, nil // sockets, devices, fifos: not content
	default:
		f.Read = diskReader(abs)
		data, err := fsutil.ReadNoFollow(abs)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", p, err)
		}
		s.text = string(data)
	}
	s.loaded = true
	s.id = r.b.hashBlob([]byte(s.text))
	f.Blob = s.id.String()
	return f, s, nil
}

// gitListsWorktree reports whether git's commands list the work tree: a
// large index, a repository whose objects git reads, or the CLI backend.
func (r *Repo) gitListsWorktree() bool { return r.worktreeBackend().name() == BackendCLI }

// worktreeChanges compares the current files with HEAD's tree: its
// listing when there is one, else a walk of the tree headTreeID.
func (r *Repo) worktreeChanges(ctx context.Context, headID, headTreeID ObjectID, listing *headTree, current map[string]*side) ([]pack.Change, error) {
	head := map[string]*side{}
	switch {
	case listing != nil:
		files, err := listing.list(ctx)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			head[safePath(f.path)] = &side{path: safePath(f.path), disk: f.path, mode: f.mode, id: f.id}
		}
	case headTreeID != "":
		err := r.walkTree(ctx, headTreeID, "HEAD", func(p string, e treeEntry) error {
			head[safePath(p)] = &side{path: safePath(p), disk: p, mode: e.Mode, id: e.ID}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var changes []pack.Change
	loadHead := func(s *side) error {
		if s == nil || s.loaded {
			return nil
		}
		if s.mode == filemode.Submodule {
			s.text, s.loaded = "Subproject commit "+s.id.String()+"\n", true
			return nil
		}
		data, err := r.b.blob(ctx, s.id)
		var nf *NotFetchedError
		if errors.As(err, &nf) {
			s.unavailable = err
			return nil
		}
		if err != nil {
			return r.blobError(s.disk, headID, s.id, err)
		}
		s.text, s.loaded = string(data), true
		return nil
	}
	loadCurrent := func(s *side) error {
		if s.loaded || s.mode == filemode.Submodule {
			return nil
		}
		if s.disk == "" { // outside a sparse checkout: the index's blob
			return loadHead(s)
		}
		// A side not loaded yet is a clean entry's (trackedFile): its
		// content is the blob the index names, as its item's.
		data, err := r.readIndexed(ctx, s.disk, filepath.Join(r.Root, filepath.FromSlash(s.disk)), s.id, nil)
		if err != nil {
			return fmt.Errorf("read %s: %w", s.disk, err)
		}
		s.text, s.loaded = string(data), true
		return nil
	}
	zero := r.zeroID()
	for p, cur := range current {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		old := head[p]
		if old != nil && old.id == cur.id && old.mode == cur.mode {
			continue
		}
		if err := loadHead(old); err != nil {
			return nil, err
		}
		if err := loadCurrent(cur); err != nil {
			return nil, err
		}
		ch, _ := fileDiff(old, cur, zero, false)
		if ch.Diff != "" {
			ch.Old = r.oldFile(old, headID)
		}
		changes = append(changes, ch)
	}
	for p, old := range head {
		if _, ok := current[p]; ok {
			continue
		}
		if err := loadHead(old); err != nil {
			return nil, err
		}
		ch, _ := fileDiff(old, nil, zero, false)
		if ch.Diff != "" {
			ch.Old = r.oldFile(old, headID)
		}
		changes = append(changes, ch)
	}
	sortChanges(changes)
	return changes, nil
}

// plain snapshots a directory that is not a git repository.
func (r *Repo) plain(ctx context.Context) (*pack.Snapshot, error) {
	t, err := epoch(time.Unix(0, 0))
	if err != nil {
		return nil, err
	}
	found, err := walkTree(ctx, r.Root, nil, false)
	if err != nil {
		return nil, err
	}
	files := make([]pack.File, 0, len(found))
	for _, d := range found {
		f := pack.File{Path: safePath(d.rel), Size: d.size, Mode: d.mode}
		if d.nested {
			f.Mode = pack.ModeSubmodule
		} else if f.Mode == pack.ModeRegular || f.Mode == pack.ModeExecutable {
			f.Read = diskReader(filepath.Join(r.Root, filepath.FromSlash(d.rel)))
		}
		files = append(files, f)
	}
	sortFiles(files)
	return &pack.Snapshot{
		Source: pack.Source{Repository: r.Name, Kind: "plain", Trigger: "worktree", Scope: policy.ScopeTree},
		Time:   t,
		Files:  files,
	}, nil
}

// diskFile is a file walkTree found.
type diskFile struct {
	rel  string // slash-separated path under the root, as on disk
	mode pack.Mode
	size int64
	// nested is a directory holding its own .git (a nested repository).
	nested bool
}

// walkTree lists the files under root that are not in skip and not ignored by
// .gitignore files (and .git/info/exclude when inRepo). Symlinks are listed,
// never followed; a directory holding its own .git is listed as nested;
// sockets, devices and fifos are left out.
func walkTree(ctx context.Context, root string, skip map[string]bool, inRepo bool) ([]diskFile, error) {
	patterns := map[string][]gitignore.Pattern{}
	var rootPatterns []gitignore.Pattern
	if inRepo {
		rootPatterns = readIgnore(filepath.Join(root, ".git", "info", "exclude"), nil)
	}
	var files []diskFile
	err := filepath.WalkDir(root, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walk %s: %w", abs, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, abs)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			patterns[""] = append(rootPatterns, readIgnore(filepath.Join(abs, ".gitignore"), nil)...)
			return nil
		}
		parts := strings.Split(rel, "/")
		parent := strings.Join(parts[:len(parts)-1], "/")
		ps := patterns[parent]
		if d.Name() == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		isDir := d.IsDir()
		if gitignore.NewMatcher(ps).Match(parts, isDir) {
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		if isDir {
			if _, err := os.Lstat(filepath.Join(abs, ".git")); err == nil {
				if !skip[rel] {
					files = append(files, diskFile{rel: rel, mode: pack.ModeSubmodule, nested: true})
				}
				return fs.SkipDir
			}
			own := readIgnore(filepath.Join(abs, ".gitignore"), parts)
			if len(own) > 0 {
				merged := make([]gitignore.Pattern, 0, len(ps)+len(own))
				patterns[rel] = append(append(merged, ps...), own...)
			} else {
				patterns[rel] = ps
			}
			return nil
		}
		if skip[rel] {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return fmt.Errorf("stat %s: %w", rel, err)
		}
		mode := diskMode(fi)
		if mode != pack.ModeSymlink && !fi.Mode().IsRegular() {
			return nil // sockets, devices, fifos: not content
		}
		files = append(files, diskFile{rel: rel, mode: mode, size: fi.Size()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

func readIgnore(file string, domain []string) []gitignore.Pattern {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// indexedReader reads the tracked file at abs, clean in the index as blob
// id: its bytes when they are that blob (nearly always), else the blob
// from the object store. A file git converts on checkout (a line-ending
// attribute, a smudge filter) is clean with other bytes than its blob:
// the pack then carries the blob it names, as git holds it, never bytes
// whose id is not the one it states.
//
// Once a read's bytes were the blob, later reads (the audit's, which
// computes the id of what it reads itself) take the file's bytes unhashed:
// a file edited since then fails the audit (blob_mismatch) rather than
// costing every file a second hash.
func (r *Repo) indexedReader(p, abs string, id ObjectID) func(context.Context) ([]byte, error) {
	var same atomic.Bool
	return func(ctx context.Context) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return r.readIndexed(ctx, p, abs, id, &same)
	}
}

// readIndexed reads the tracked file p at abs as blob id (indexedReader);
// same, when set, says a read before found the file's bytes to be the
// blob, and is set when this one does.
func (r *Repo) readIndexed(ctx context.Context, p, abs string, id ObjectID, same *atomic.Bool) ([]byte, error) {
	data, err := fsutil.ReadNoFollow(abs)
	if err != nil {
		return nil, err
	}
	if same != nil && same.Load() {
		return data, nil
	}
	if r.b.hashBlob(data) == id {
		if same != nil {
			same.Store(true)
		}
		return data, nil
	}
	data, err = r.b.blob(ctx, id)
	var nf *NotFetchedError
	if errors.As(err, &nf) {
		return nil, notFetched(p, "", nf)
	}
	if err != nil {
		return nil, r.blobError(p, "", id, err)
	}
	return data, nil
}

func diskReader(abs string) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return fsutil.ReadNoFollow(abs)
	}
}

func diskMode(fi fs.FileInfo) pack.Mode {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return pack.ModeSymlink
	case fi.Mode()&0o111 != 0:
		return pack.ModeExecutable
	default:
		return pack.ModeRegular
	}
}

func fileMode(m pack.Mode) filemode.FileMode {
	switch m {
	case pack.ModeExecutable:
		return filemode.Executable
	case pack.ModeSymlink:
		return filemode.Symlink
	case pack.ModeSubmodule:
		return filemode.Submodule
	default:
		return filemode.Regular
	}
}
