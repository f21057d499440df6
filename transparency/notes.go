package transparency

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// NotesRef is where records are kept, one git note per commit. Notes travel
// with `git push origin 'refs/notes/*:refs/notes/*'` and
// `git fetch origin 'refs/notes/*:refs/notes/*'`.
const NotesRef = plumbing.ReferenceName("refs/notes/ctxpack")

// Notes of a repository go-git reads are written here with go-git (it has
// no notes API; package source writes them with git notes otherwise), and
// the chain is read through Objects, with either reader: a note
// is a blob, named in the notes tree by the full hex of the commit it
// annotates, and every change is a commit on NotesRef whose parent is the
// previous tip, exactly as `git notes` does. Git switches to a fan-out layout
// (ab/cdef…) for large notes trees; reading accepts both, writing keeps every
// other entry as it is and adds the note at the top level.

// notesTip returns the current notes commit, nil when the ref does not exist.
func notesTip(repo *git.Repository) (*plumbing.Reference, *object.Commit, error) {
	ref, err := repo.Reference(NotesRef, true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", NotesRef, err)
	}
	c, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: commit %s: %w", NotesRef, ref.Hash(), err)
	}
	return ref, c, nil
}

// findNote looks up the note blob for the object named hex in a notes tree,
// at the top level or under any depth of two-character fan-out directories.
func findNote(repo *git.Repository, tree *object.Tree, hex string) (plumbing.Hash, bool, error) {
	for _, e := range tree.Entries {
		if e.Mode.IsFile() && e.Name == hex {
			return e.Hash, true, nil
		}
	}
	for _, e := range tree.Entries {
		if e.Mode == filemode.Dir && len(e.Name) == 2 && len(hex) > 2 && strings.HasPrefix(hex, e.Name) {
			sub, err := repo.TreeObject(e.Hash)
			if err != nil {
				return plumbing.ZeroHash, false, fmt.Errorf("notes tree %s: %w", e.Name, err)
			}
			if h, ok, err := findNote(repo, sub, hex[2:]); err != nil || ok {
				return h, ok, err
			}
		}
	}
	return plumbing.ZeroHash, false, nil
}

func readBlob(repo *git.Repository, h plumbing.Hash) ([]byte, error) {
	b, err := repo.BlobObject(h)
	if err != nil {
		return nil, fmt.Errorf("note blob %s: %w", h, err)
	}
	r, err := b.Reader()
	if err != nil {
		return nil, fmt.Errorf("note blob %s: %w", h, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("note blob %s: %w", h, err)
	}
	return data, nil
}

// ReadNote returns the note stored for commit under NotesRef; ok is false
// when there is none.
func ReadNote(repo *git.Repository, commit plumbing.Hash) ([]byte, bool, error) {
	_, tip, err := notesTip(repo)
	if err != nil || tip == nil {
		return nil, false, err
	}
	tree, err := tip.Tree()
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", NotesRef, err)
	}
	h, ok, err := findNote(repo, tree, commit.String())
	if err != nil || !ok {
		return nil, false, err
	}
	data, err := readBlob(repo, h)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// WriteNote stores data as the note of commit under NotesRef, replacing any
// note the commit had (in either layout) and keeping every other entry.
// Concurrent writers (two `ctxpack pack --notes`, the pre-push hook, git
// notes) never lose a note: the ref is created atomically (O_EXCL) when
// there is none, and moved with a compare-and-swap when there is; when
// another writer got there first, the note is rebuilt on the new tip and
// written again. Writing the note a commit already has is a no-op.
func WriteNote(repo *git.Repository, commit plumbing.Hash, data []byte) error {
	return WriteRecordNote(repo, commit, func(string) ([]byte, error) { return data, nil })
}

// WriteRecordNote is WriteNote for a record that names its first parent's
// record: build gets the digest of the parent's note in the very state of
// the notes ref the note is written on ("" when it has none), so a record
// is always bound to what its parent's record is when it is stored, even
// when another run stored that record a moment before.
func WriteRecordNote(repo *git.Repository, commit plumbing.Hash, build func(previous string) ([]byte, error)) error {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return fmt.Errorf("write note: commit %s: %w", commit, err)
	}
	for attempt := 1; attempt <= maxNoteAttempts; attempt++ {
		if err = writeNoteOnce(repo, c, build); !errors.Is(err, errRefMoved) {
			return err
		}
		// Another writer moved the ref: wait a little, jittered, and rebuild.
		time.Sleep(time.Duration(attempt*(5+rand.IntN(20))) * time.Millisecond)
	}
	return fmt.Errorf("write note: %s kept moving under %d attempts: %w", NotesRef, maxNoteAttempts, err)
}

// maxNoteAttempts bounds WriteNote's retries on a moved ref.
const maxNoteAttempts = 20

// errRefMoved is a compare-and-swap or an exclusive create that lost to
// another writer.
var errRefMoved = errors.New("the notes ref moved")

func writeNoteOnce(repo *git.Repository, commit *object.Commit, build func(string) ([]byte, error)) error {
	oldRef, tip, err := notesTip(repo)
	if err != nil {
		// A ref file another writer has just created and not yet filled.
		return fmt.Errorf("%w: %v", errRefMoved, err)
	}
	hex := commit.Hash.String()
	var entries []object.TreeEntry
	var parents []plumbing.Hash
	var tree *object.Tree
	if tip != nil {
		if tree, err = tip.Tree(); err != nil {
			return fmt.Errorf("write note: %s tree: %w", NotesRef, err)
		}
	}
	previous := ""
	if tree != nil && commit.NumParents() > 0 {
		h, ok, err := findNote(repo, tree, commit.ParentHashes[0].String())
		if err != nil {
			return fmt.Errorf("write note: %w", err)
		}
		if ok {
			b, err := readBlob(repo, h)
			if err != nil {
				return fmt.Errorf("write note: %w", err)
			}
			previous = DigestOf(b)
		}
	}
	data, err := build(previous)
	if err != nil {
		return fmt.Errorf("write note: %w", err)
	}
	if tree != nil {
		if h, ok, err := findNote(repo, tree, hex); err != nil {
			return fmt.Errorf("write note: %w", err)
		} else if ok {
			if old, err := readBlob(repo, h); err == nil && bytes.Equal(old, data) {
				return nil
			}
		}
		entries, err = withoutNote(repo, tree, hex)
		if err != nil {
			return fmt.Errorf("write note: %w", err)
		}
		parents = []plumbing.Hash{tip.Hash}
	}
	blob, err := storeBlob(repo, data)
	if err != nil {
		return fmt.Errorf("write note: %w", err)
	}
	entries = append(entries, object.TreeEntry{Name: hex, Mode: filemode.Regular, Hash: blob})
	treeHash, err := storeTree(repo, entries)
	if err != nil {
		return fmt.Errorf("write note: %w", err)
	}
	sig := notesSignature(repo)
	c := &object.Commit{
		Author:       sig,
		Committer:    sig,
		Message:      "ctxpack: record for " + hex + "\n",
		TreeHash:     treeHash,
		ParentHashes: parents,
	}
	obj := repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return fmt.Errorf("write note: encode commit: %w", err)
	}
	ch, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return fmt.Errorf("write note: store commit: %w", err)
	}
	newRef := plumbing.NewHashReference(NotesRef, ch)
	if oldRef == nil {
		return createRef(repo, newRef)
	}
	if err := repo.Storer.CheckAndSetReference(newRef, oldRef); err != nil {
		if errors.Is(err, storage.ErrReferenceHasChanged) {
			return errRefMoved
		}
		return fmt.Errorf("write note: update %s: %w", NotesRef, err)
	}
	return nil
}

// createRef creates a ref that does not exist yet, atomically: the loose
// ref file is created with O_EXCL, so of two writers that both saw no ref,
// one creates it and the other gets errRefMoved (and rebuilds on it).
func createRef(repo *git.Repository, ref *plumbing.Reference) error {
	st, ok := repo.Storer.(*filesystem.Storage)
	if !ok { // an in-memory repository has one writer
		return repo.Storer.SetReference(ref)
	}
	fs := st.Filesystem() // routes refs/ to the common dir of a linked worktree
	name := ref.Name().String()
	if err := fs.MkdirAll(path.Dir(name), 0o755); err != nil {
		return fmt.Errorf("write note: create %s: %w", name, err)
	}
	f, err := fs.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, os.ErrExist) {
		return errRefMoved
	}
	if err != nil {
		return fmt.Errorf("write note: create %s: %w", name, err)
	}
	if _, err := f.Write([]byte(ref.Hash().String() + "\n")); err != nil {
		f.Close()
		return fmt.Errorf("write note: create %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write note: create %s: %w", name, err)
	}
	return nil
}

// withoutNote returns the entries of tree with the note for hex removed,
// wherever it sits; fan-out directories that become empty are dropped.
func withoutNote(repo *git.Repository, tree *object.Tree, hex string) ([]object.TreeEntry, error) {
	var out []object.TreeEntry
	for _, e := range tree.Entries {
		switch {
		case e.Mode.IsFile() && e.Name == hex:
			continue
		case e.Mode == filemode.Dir && len(e.Name) == 2 && len(hex) > 2 && strings.HasPrefix(hex, e.Name):
			sub, err := repo.TreeObject(e.Hash)
			if err != nil {
				return nil, fmt.Errorf("notes tree %s: %w", e.Name, err)
			}
			if _, ok, err := findNote(repo, sub, hex[2:]); err != nil {
				return nil, err
			} else if ok {
				subEntries, err := withoutNote(repo, sub, hex[2:])
				if err != nil {
					return nil, err
				}
				if len(subEntries) == 0 {
					continue
				}
				h, err := storeTree(repo, subEntries)
				if err != nil {
					return nil, err
				}
				e.Hash = h
			}
		}
		out = append(out, e)
	}
	return out, nil
}

func storeBlob(repo *git.Repository, data []byte) (plumbing.Hash, error) {
	obj := repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store blob: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return plumbing.ZeroHash, fmt.Errorf("store blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store blob: %w", err)
	}
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store blob: %w", err)
	}
	return h, nil
}

func storeTree(repo *git.Repository, entries []object.TreeEntry) (plumbing.Hash, error) {
	sorted := append([]object.TreeEntry(nil), entries...)
	sort.Sort(object.TreeEntrySorter(sorted))
	t := &object.Tree{Entries: sorted}
	obj := repo.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode tree: %w", err)
	}
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store tree: %w", err)
	}
	return h, nil
}

// notesSignature is the identity of notes commits: the repository's
// user.name and user.email (local, then global config), else ctxpack's own;
// the time is SOURCE_DATE_EPOCH when set, else now. The notes commit is
// bookkeeping: the record it holds does not depend on it.
func notesSignature(repo *git.Repository) object.Signature {
	sig := object.Signature{Name: "ctxpack", Email: "ctxpack@localhost"}
	if cfg, err := repo.ConfigScoped(config.GlobalScope); err == nil {
		if cfg.User.Name != "" {
			sig.Name = cfg.User.Name
		}
		if cfg.User.Email != "" {
			sig.Email = cfg.User.Email
		}
	}
	sig.When = time.Now().UTC().Truncate(time.Second)
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			sig.When = time.Unix(n, 0).UTC()
		}
	}
	return sig
}

// PreviousDigest is the digest the record of commit must carry as previous:
// the digest of the exact note bytes of its first parent ("" when commit is
// a root or its first parent has no note). For a note ctxpack wrote, that is
// the parent record's Digest().
func PreviousDigest(repo *git.Repository, commit plumbing.Hash) (string, error) {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return "", fmt.Errorf("previous record: commit %s: %w", commit, err)
	}
	if len(c.ParentHashes) == 0 {
		return "", nil
	}
	data, ok, err := ReadNote(repo, c.ParentHashes[0])
	if err != nil || !ok {
		return "", err
	}
	return DigestOf(data), nil
}
