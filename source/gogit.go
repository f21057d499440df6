package source

import (
	"bufio"
	"compress/flate"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// gogitBackend reads a repository in process with go-git. Pack files stay
// open between reads (KeepDescriptors): reopening them per object was a
// quarter of a range pack's time on long histories.
type gogitBackend struct {
	// mu serializes access: a go-git Repository is not safe for concurrent use.
	mu      sync.Mutex
	repo    *git.Repository
	storage *filesystem.Storage
	root    string // work tree, "" when bare
}

// openGoGit opens the repository go-git found (opened) again over a
// storage that keeps its pack files open.
func openGoGit(opened *git.Repository) (*gogitBackend, error) {
	fs, ok := opened.Storer.(*filesystem.Storage)
	if !ok {
		return nil, errors.New("go-git opened an unexpected storage")
	}
	st := filesystem.NewStorageWithOptions(bufferedIndexes{fs.Filesystem()}, cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	b := &gogitBackend{storage: st}
	var err error
	if w, werr := opened.Worktree(); werr == nil {
		b.root = w.Filesystem.Root()
		b.repo, err = git.Open(st, w.Filesystem)
	} else {
		b.repo, err = git.Open(st, nil)
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	return b, nil
}

// bufferedIndexes is a repository's filesystem whose pack indexes are read
// through a buffer: go-git decodes an index with a read call for each
// fan-out entry and for each bucket of names, checksums and offsets, about
// 1,000 system calls an index before the first object is read.
type bufferedIndexes struct{ billy.Filesystem }

func (fs bufferedIndexes) Open(name string) (billy.File, error) {
	f, err := fs.Filesystem.Open(name)
	if err != nil || !strings.HasSuffix(name, ".idx") {
		return f, err
	}
	return &bufferedIndex{File: f, r: bufio.NewReaderSize(f, 64<<10)}, nil
}

// bufferedIndex reads a pack index from start to end through r: the
// decoder only reads it so. (Like billy's files, it has no Stat: the
// decoder checks an index's size only when its file has one.)
type bufferedIndex struct {
	billy.File
	r *bufio.Reader
}

func (f *bufferedIndex) Read(p []byte) (int, error) { return f.r.Read(p) }

func (b *gogitBackend) name() string         { return "go-git" }
func (b *gogitBackend) objectFormat() string { return "sha1" }

func (b *gogitBackend) close() error { return b.storage.Close() }

func (b *gogitBackend) hashBlob(data []byte) ObjectID { return blobID("sha1", data) }

func hashOf(id ObjectID) plumbing.Hash { return plumbing.NewHash(string(id)) }

// notFound maps go-git's read errors to the backend's: a missing object is
// errMissing, an object whose bytes do not decode is errDamaged.
func notFound(err error) error {
	var pe *packfile.Error
	var ce flate.CorruptInputError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, plumbing.ErrObjectNotFound):
		return errMissing
	case errors.As(err, &pe), errors.As(err, &ce), errors.Is(err, zlib.ErrHeader), errors.Is(err, zlib.ErrChecksum),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, objfile.ErrHeader), errors.Is(err, objfile.ErrNegativeSize),
		errors.Is(err, plumbing.ErrInvalidType):
		return fmt.Errorf("%w (%v)", errDamaged, err)
	}
	return err
}

func (b *gogitBackend) resolve(ctx context.Context, rev string) (ObjectID, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var h *plumbing.Hash
	if len(rev) == 40 && fullID(ObjectID(rev)) {
		// A whole object id names that object, as in git, which takes it
		// before a ref of the same name: go-git's ResolveRevision looks
		// among the refs too, reading packed-refs and each ref directory
		// (~1 ms of a range whose ends are ids).
		id := plumbing.NewHash(rev)
		h = &id
	} else {
		var err error
		if h, err = b.repo.ResolveRevision(plumbing.Revision(rev)); err != nil {
			if strings.HasPrefix(rev, "HEAD") {
				if _, herr := b.repo.Head(); errors.Is(herr, plumbing.ErrReferenceNotFound) {
					return "", ErrNoCommits
				}
			}
			return "", errUnknownRevision
		}
	}
	for range 32 { // tags of tags, bounded
		obj, err := b.repo.Storer.EncodedObject(plumbing.AnyObject, *h)
		if err != nil {
			return "", notFound(err) // a whole id not here: missing, as the git backend says
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			return ObjectID(h.String()), nil
		case plumbing.TagObject:
			tag, err := object.DecodeTag(b.repo.Storer, obj)
			if err != nil {
				return "", err
			}
			*h = tag.Target
		default:
			return "", errNotCommit
		}
	}
	return "", errNotCommit
}

func (b *gogitBackend) commit(ctx context.Context, id ObjectID) (*Commit, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, err := b.repo.CommitObject(hashOf(id))
	if err != nil {
		return nil, notFound(err)
	}
	out := &Commit{ID: id, Tree: ObjectID(c.TreeHash.String()), Committer: c.Committer.When, Message: c.Message}
	for _, p := range c.ParentHashes {
		out.Parents = append(out.Parents, ObjectID(p.String()))
	}
	return out, nil
}

func (b *gogitBackend) tree(ctx context.Context, id ObjectID) ([]treeEntry, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.repo.TreeObject(hashOf(id))
	if err != nil {
		return nil, notFound(err)
	}
	out := make([]treeEntry, len(t.Entries))
	for i, e := range t.Entries {
		out[i] = treeEntry{Name: e.Name, Mode: e.Mode, ID: ObjectID(e.Hash.String())}
	}
	return out, nil
}

func (b *gogitBackend) blob(ctx context.Context, id ObjectID) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	obj, err := b.repo.Storer.EncodedObject(plumbing.BlobObject, hashOf(id))
	if err != nil {
		return nil, notFound(err)
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, notFound(err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	return data, notFound(err)
}

func (b *gogitBackend) size(ctx context.Context, id ObjectID) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.repo.Storer.EncodedObjectSize(hashOf(id))
	return n, notFound(err)
}

func (b *gogitBackend) has(ctx context.Context, id ObjectID) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.repo.Storer.HasEncodedObject(hashOf(id)) == nil, nil
}

func (b *gogitBackend) kind(ctx context.Context, id ObjectID) (string, ObjectID, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	obj, err := b.repo.Storer.EncodedObject(plumbing.AnyObject, hashOf(id))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return KindMissing, "", nil
	}
	if err != nil {
		return "", "", err
	}
	switch obj.Type() {
	case plumbing.TagObject:
		tag, err := object.DecodeTag(b.repo.Storer, obj)
		if err != nil {
			return "", "", fmt.Errorf("read tag %s: %w", id, err)
		}
		return KindTag, ObjectID(tag.Target.String()), nil
	default:
		return obj.Type().String(), "", nil
	}
}

func (b *gogitBackend) head(ctx context.Context) (string, ObjectID, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sym, err := b.repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", "", fmt.Errorf("read HEAD: %w", err)
	}
	branch := ""
	if sym.Type() == plumbing.SymbolicReference && sym.Target().IsBranch() {
		branch = sym.Target().Short()
	}
	ref, err := b.repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return branch, "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("read HEAD: %w", err)
	}
	return branch, ObjectID(ref.Hash().String()), nil
}

func (b *gogitBackend) refs(ctx context.Context, prefix string) ([]ref, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	iter, err := b.repo.References()
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	var out []ref
	err = iter.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference && strings.HasPrefix(r.Name().String(), prefix) {
			out = append(out, ref{Name: r.Name().String(), ID: ObjectID(r.Hash().String())})
		}
		return nil
	})
	return out, err
}

func (b *gogitBackend) mergeBases(ctx context.Context, x, y ObjectID) ([]ObjectID, error) {
	return mergeBasesWalk(ctx, loader(b), x, y)
}

func (b *gogitBackend) revList(ctx context.Context, head ObjectID, exclude []ObjectID) ([]ObjectID, error) {
	return revListWalk(ctx, loader(b), head, exclude)
}

// beforeIndex reports whether an entry's modification time is before the
// index's (written): to the nanosecond when the entry has them, else to
// the second, as git without nanoseconds decides racily clean entries.
func beforeIndex(modified, written time.Time) bool {
	if modified.Nanosecond() == 0 {
		return modified.Unix() < written.Unix()
	}
	return modified.Before(written)
}

// worktree reads the index (an entry is clean as git's own test decides:
// the work tree's file has the size, modification time, inode and change
// time the index recorded, and that time is before the index was written:
// a file changed in the tick git indexed it can keep all of them, which
// git calls racily clean and reads again; an entry without sub-second
// times, from a coarse file system or a git that does not keep them, is
// racy through the second the index was written in) and walks the work
// tree for untracked files, with .gitignore semantics.
func (b *gogitBackend) worktree(ctx context.Context) ([]indexEntry, []string, error) {
	b.mu.Lock()
	// The index's time is read before the index: an index written in
	// between has entries no older than this time, which are then read.
	var written time.Time
	if fi, err := b.storage.Filesystem().Stat("index"); err == nil {
		written = fi.ModTime()
	}
	idx, err := b.repo.Storer.Index()
	b.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	out := make([]indexEntry, 0, len(idx.Entries))
	tracked := make(map[string]bool, len(idx.Entries))
	for _, e := range idx.Entries {
		tracked[e.Name] = true
		ie := indexEntry{Path: e.Name, Mode: e.Mode, ID: ObjectID(e.Hash.String()), Stage: int(e.Stage), SkipWorktree: e.SkipWorktree}
		// Stage 0, not index.Merged: go-git names stage 1 (the merge
		// base's) so, and an entry no merge left unresolved is stage 0.
		if e.Stage == 0 && !e.SkipWorktree && !e.ModifiedAt.IsZero() {
			fi, err := os.Lstat(filepath.Join(b.root, filepath.FromSlash(e.Name)))
			ie.Clean = err == nil && beforeIndex(e.ModifiedAt, written) &&
				statClean(fi.Sys(), indexStat{size: e.Size, mtime: e.ModifiedAt, ctime: e.CreatedAt, inode: e.Inode})
			if err == nil {
				ie.Info = fi
			}
		}
		out = append(out, ie)
	}
	files, err := walkTree(ctx, b.root, tracked, true)
	if err != nil {
		return nil, nil, err
	}
	untracked := make([]string, 0, len(files))
	for _, f := range files {
		p := f.rel
		if f.nested {
			p += "/"
		}
		untracked = append(untracked, p)
	}
	return out, untracked, nil
}
