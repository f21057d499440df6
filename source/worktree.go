package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// Worktree snapshots the working tree: tracked files as they are on disk
// (uncommitted edits included) plus untracked files that git does not ignore.
// Changes are the differences from HEAD. A plain directory is walked whole,
// honouring its .gitignore files.
func (r *Repo) Worktree(ctx context.Context) (*pack.Snapshot, error) {
	if r.git == nil {
		return r.plain(ctx)
	}
	snap := &pack.Snapshot{Source: pack.Source{Repository: r.Name, Kind: "git", Trigger: "worktree", Scope: policy.ScopeTree}}
	var headTree *object.Tree
	headTime := time.Unix(0, 0)
	ref, err := r.git.Head()
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		// no commits yet: everything is new
	case err != nil:
		return nil, fmt.Errorf("read HEAD: %w", err)
	default:
		c, err := r.commit(ref.Hash())
		if err != nil {
			return nil, err
		}
		if headTree, err = c.Tree(); err != nil {
			return nil, fmt.Errorf("read tree of HEAD: %w", err)
		}
		headTime = c.Committer.When
		snap.Source.Head = c.Hash.String()
		snap.Source.Ref = "HEAD"
		if ref.Name().IsBranch() {
			snap.Source.Ref = ref.Name().Short()
		}
	}
	if snap.Time, err = epoch(headTime); err != nil {
		return nil, err
	}

	idx, err := r.git.Storer.Index()
	if err != nil {
		return nil, fmt.Errorf("read git index: %w", err)
	}
	tracked := map[string]bool{}
	current := map[string]*side{}
	for _, e := range idx.Entries {
		if e.Stage != index.Merged && tracked[e.Name] {
			continue // unmerged entry: one listing per path
		}
		tracked[e.Name] = true
		f, s, err := r.trackedFile(e)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue // deleted in the work tree
		}
		snap.Files = append(snap.Files, *f)
		current[f.Path] = s
	}
	untracked, err := walkTree(ctx, r.Root, tracked, true)
	if err != nil {
		return nil, err
	}
	for _, f := range untracked {
		s := &side{path: f.Path, mode: fileMode(f.Mode)}
		if f.Read != nil {
			data, err := f.Read(ctx)
			if err != nil {
				return nil, err
			}
			s.data = data
			s.hash = plumbing.ComputeHash(plumbing.BlobObject, data)
			f.Blob = s.hash.String()
		}
		snap.Files = append(snap.Files, f)
		current[f.Path] = s
	}
	sortFiles(snap.Files)

	changes, err := r.worktreeChanges(ctx, headTree, current)
	if err != nil {
		return nil, err
	}
	snap.Changes = changes
	if len(changes) > 0 {
		snap.Source.Dirty = true
	} else if headTree != nil {
		snap.Source.Tree = headTree.Hash.String()
	}
	return snap, nil
}

// trackedFile builds the snapshot entry of an index entry from the disk.
func (r *Repo) trackedFile(e *index.Entry) (*pack.File, *side, error) {
	abs := filepath.Join(r.Root, filepath.FromSlash(e.Name))
	name := safePath(e.Name)
	if e.Mode == filemode.Submodule {
		f := &pack.File{Path: name, Mode: pack.ModeSubmodule, Blob: e.Hash.String()}
		return f, &side{path: name, mode: filemode.Submodule, hash: e.Hash,
			data: []byte("Subproject commit " + e.Hash.String() + "\n")}, nil
	}
	fi, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("stat %s: %w", e.Name, err)
	}
	f := &pack.File{Path: name, Size: fi.Size(), Mode: diskMode(fi)}
	s := &side{path: name, disk: e.Name, mode: fileMode(f.Mode)}
	var data []byte
	if f.Mode == pack.ModeSymlink {
		target, err := os.Readlink(abs)
		if err != nil {
			return nil, nil, fmt.Errorf("read link %s: %w", e.Name, err)
		}
		data = []byte(filepath.ToSlash(target))
	} else {
		f.Read = diskReader(abs)
		// The index hash is trusted only when size and mtime match, as git does.
		if uint32(fi.Size()) == e.Size && fi.ModTime().Equal(e.ModifiedAt) && !e.ModifiedAt.IsZero() {
			f.Blob = e.Hash.String()
			s.hash = e.Hash
			s.data = nil // read on demand when a diff needs it
			return f, s, nil
		}
		if data, err = os.ReadFile(abs); err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", e.Name, err)
		}
	}
	s.data = data
	s.hash = plumbing.ComputeHash(plumbing.BlobObject, data)
	f.Blob = s.hash.String()
	return f, s, nil
}

// worktreeChanges compares the current files with HEAD's tree.
func (r *Repo) worktreeChanges(ctx context.Context, headTree *object.Tree, current map[string]*side) ([]pack.Change, error) {
	head := map[string]*side{}
	if headTree != nil {
		walker := object.NewTreeWalker(headTree, true, nil)
		defer walker.Close()
		for {
			name, entry, err := walker.Next()
			if err != nil {
				break
			}
			if entry.Mode == filemode.Dir {
				continue
			}
			head[safePath(name)] = &side{path: safePath(name), mode: entry.Mode, hash: entry.Hash}
		}
	}
	var changes []pack.Change
	load := func(s *side, fromDisk bool) error {
		if s == nil || s.data != nil || s.mode == filemode.Submodule {
			return nil
		}
		var err error
		if fromDisk {
			s.data, err = os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(s.disk)))
		} else {
			s.data, err = r.readBlob(s.hash)
		}
		return err
	}
	for p, cur := range current {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		old := head[p]
		if old != nil && old.hash == cur.hash && old.mode == cur.mode {
			continue
		}
		if old != nil && old.mode == filemode.Submodule {
			old.data = []byte("Subproject commit " + old.hash.String() + "\n")
		}
		if err := load(old, false); err != nil {
			return nil, err
		}
		if err := load(cur, true); err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		ch, _ := fileDiff(old, cur)
		changes = append(changes, ch)
	}
	for p, old := range head {
		if _, ok := current[p]; ok {
			continue
		}
		if err := load(old, false); err != nil {
			return nil, err
		}
		ch, _ := fileDiff(old, nil)
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
	files, err := walkTree(ctx, r.Root, nil, false)
	if err != nil {
		return nil, err
	}
	sortFiles(files)
	return &pack.Snapshot{
		Source: pack.Source{Repository: r.Name, Kind: "plain", Trigger: "worktree", Scope: policy.ScopeTree},
		Time:   t,
		Files:  files,
	}, nil
}

// walkTree lists the files under root that are not in skip and not ignored by
// .gitignore files (and .git/info/exclude when inRepo). Symlinks are listed,
// never followed; a directory holding its own .git is listed as a submodule.
func walkTree(ctx context.Context, root string, skip map[string]bool, inRepo bool) ([]pack.File, error) {
	patterns := map[string][]gitignore.Pattern{}
	var rootPatterns []gitignore.Pattern
	if inRepo {
		rootPatterns = readIgnore(filepath.Join(root, ".git", "info", "exclude"), nil)
	}
	var files []pack.File
	err := filepath.WalkDir(root, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walk %s: %w", abs, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, abs)
		rel = filepath.ToSlash(rel)
		display := safePath(rel)
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
					files = append(files, pack.File{Path: display, Mode: pack.ModeSubmodule})
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
		f := pack.File{Path: display, Size: fi.Size(), Mode: diskMode(fi)}
		if f.Mode == pack.ModeRegular || f.Mode == pack.ModeExecutable {
			if !fi.Mode().IsRegular() {
				return nil // sockets, devices, fifos: not content
			}
			f.Read = diskReader(abs)
		}
		files = append(files, f)
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
