package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Notes of repositories only the git CLI reads (package transparency keeps
// them with go-git otherwise): the same layout, written by `git notes`.

// ReadNote returns the note of commit under the notes ref (the exact bytes
// of its blob); ok is false when there is none.
func (r *Repo) ReadNote(ctx context.Context, notesRef string, commit ObjectID) (data []byte, ok bool, err error) {
	b, isCLI := r.cli()
	if !isCLI {
		return nil, false, errors.New("notes of this repository are read with go-git (package transparency)")
	}
	if strings.HasPrefix(notesRef, "refs/notes/") && b.noRefNamed(notesRef) {
		return nil, false, nil // git notes would find no notes at all
	}
	out, err := b.run(ctx, nil, "notes", "--ref="+notesRef, "list", string(commit))
	if err != nil {
		if exitCode(err) == 1 {
			return nil, false, nil // no note
		}
		return nil, false, fmt.Errorf("read the note of %s in %s: %w", commit.Short(), notesRef, err)
	}
	blob := ObjectID(strings.TrimSpace(string(out)))
	data, err = b.blob(ctx, blob)
	if err != nil {
		return nil, false, fmt.Errorf("read the note of %s in %s: blob %s: %w", commit.Short(), notesRef, blob, err)
	}
	return data, true, nil
}

// noRefNamed reports whether no reference exists that git could take
// the full ref name for, so that `git notes --ref=<name>` would find no
// notes and need not run: git looks name up as every revision, by its
// rules (name, refs/name, refs/tags/name, refs/heads/name,
// refs/remotes/name, refs/remotes/name/HEAD). False whenever it cannot
// tell: a ref store other than files (reftable), a file or directory at
// any of those names, packed-refs holding the name anywhere, or an error.
func (b *cliBackend) noRefNamed(name string) bool {
	if _, err := os.Lstat(filepath.Join(b.commonDir, "reftable")); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	for _, rule := range []string{"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"} {
		p := filepath.FromSlash(fmt.Sprintf(rule, name))
		for _, dir := range []string{b.commonDir, b.gitDir} {
			if _, err := os.Lstat(filepath.Join(dir, p)); !errors.Is(err, fs.ErrNotExist) {
				return false
			}
		}
	}
	packed, err := os.ReadFile(filepath.Join(b.commonDir, "packed-refs"))
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return !bytes.Contains(packed, []byte(name))
}

// ErrNotesMoved is returned by WriteNote when another writer moved the
// notes ref while the note was being made: build it again.
var ErrNotesMoved = errors.New("the notes ref moved")

// WriteNote stores the note of commit under the notes ref, as build makes
// it from the note the commit's first parent has (parentOK false when it has
// none) in the very state the note is stored on: the ref's tip T is read,
// the parent's note read at T, the note added on a private copy of T, and
// the ref moved from T to the result by compare-and-swap (git update-ref),
// so a concurrent writer makes this call fail with ErrNotesMoved rather
// than lose a note or bind to a stale record. Writing the note a commit
// already has is a no-op. The notes commit is made by git notes as the
// configured user (ctxpack when none is), at SOURCE_DATE_EPOCH when set.
func (r *Repo) WriteNote(ctx context.Context, notesRef string, commit ObjectID, build func(parentNote []byte, parentOK bool) ([]byte, error)) error {
	b, isCLI := r.cli()
	if !isCLI {
		return errors.New("notes of this repository are written with go-git (package transparency)")
	}
	c, err := r.commit(ctx, commit)
	if err != nil {
		return fmt.Errorf("write the note of %s: %w", commit.Short(), err)
	}
	tip := ""
	if out, err := b.run(ctx, nil, "rev-parse", "--verify", "--quiet", notesRef); err == nil {
		tip = strings.TrimSpace(string(out))
	} else if exitCode(err) != 1 {
		return fmt.Errorf("read %s: %w", notesRef, err)
	}
	// A private notes ref at T: git notes writes only under refs/notes/.
	private := fmt.Sprintf("%s-write-%d-%d", notesRef, os.Getpid(), rand.Int64())
	if tip != "" {
		if _, err := b.run(ctx, nil, "update-ref", private, tip); err != nil {
			return fmt.Errorf("write the note of %s: %w", commit.Short(), err)
		}
	}
	defer b.run(context.WithoutCancel(ctx), nil, "update-ref", "-d", private) //nolint:errcheck // best effort
	noteOf := func(id ObjectID) (ObjectID, []byte, bool, error) {
		if tip == "" {
			return "", nil, false, nil
		}
		out, err := b.run(ctx, nil, "notes", "--ref="+private, "list", string(id))
		if exitCode(err) == 1 {
			return "", nil, false, nil
		}
		if err != nil {
			return "", nil, false, err
		}
		blob := ObjectID(strings.TrimSpace(string(out)))
		data, err := b.blob(ctx, blob)
		return blob, data, err == nil, err
	}
	var parentNote []byte
	parentOK := false
	if len(c.Parents) > 0 {
		if _, parentNote, parentOK, err = noteOf(c.Parents[0]); err != nil {
			return fmt.Errorf("read the note of %s: %w", c.Parents[0].Short(), err)
		}
	}
	data, err := build(parentNote, parentOK)
	if err != nil {
		return err
	}
	out, err := b.run(ctx, data, "hash-object", "-w", "--stdin")
	if err != nil {
		return fmt.Errorf("write the note of %s: %w", commit.Short(), err)
	}
	blob := ObjectID(strings.TrimSpace(string(out)))
	if old, _, ok, err := noteOf(commit); err == nil && ok && old == blob {
		return nil
	}
	env := b.env()
	if _, err := b.run(ctx, nil, "config", "user.name"); err != nil {
		env = append(env, "GIT_AUTHOR_NAME=ctxpack", "GIT_COMMITTER_NAME=ctxpack")
	}
	if _, err := b.run(ctx, nil, "config", "user.email"); err != nil {
		env = append(env, "GIT_AUTHOR_EMAIL=ctxpack@localhost", "GIT_COMMITTER_EMAIL=ctxpack@localhost")
	}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		env = append(env, "GIT_AUTHOR_DATE="+s+" +0000", "GIT_COMMITTER_DATE="+s+" +0000")
	}
	if _, err := runGit(ctx, env, "", nil, "notes", "--ref="+private, "add", "-f", "-C", string(blob), string(commit)); err != nil {
		return fmt.Errorf("write the note of %s in %s: %w", commit.Short(), notesRef, err)
	}
	out, err = b.run(ctx, nil, "rev-parse", "--verify", private)
	if err != nil {
		return fmt.Errorf("write the note of %s in %s: %w", commit.Short(), notesRef, err)
	}
	old := tip
	if old == "" {
		old = strings.Repeat("0", len(commit)) // the ref must not exist yet
	}
	if _, err := b.run(ctx, nil, "update-ref", notesRef, strings.TrimSpace(string(out)), old); err != nil {
		return fmt.Errorf("%w: %v", ErrNotesMoved, err)
	}
	return nil
}

// cli is the git CLI backend, when it reads the repository's objects.
func (r *Repo) cli() (*cliBackend, bool) {
	switch b := r.b.(type) {
	case *cliBackend:
		return b, true
	case *routedBackend:
		return b.cliBackend, true
	}
	return nil, false
}

// ReadCommit reads a commit: its tree, parents and committer time.
func (r *Repo) ReadCommit(ctx context.Context, id ObjectID) (*Commit, error) {
	if r.b == nil {
		return nil, fmt.Errorf("%s is not a git repository", r.Root)
	}
	return r.commit(ctx, id)
}

// TreeEntry is one entry of a tree object.
type TreeEntry struct {
	Name string
	Mode filemode.FileMode
	ID   ObjectID
}

// ReadTree lists the entries of the tree id, in the order git stores them.
func (r *Repo) ReadTree(ctx context.Context, id ObjectID) ([]TreeEntry, error) {
	if r.b == nil {
		return nil, fmt.Errorf("%s is not a git repository", r.Root)
	}
	entries, err := r.tree(ctx, id)
	if err != nil {
		return nil, r.objectError("tree", id, err)
	}
	out := make([]TreeEntry, len(entries))
	for i, e := range entries {
		out[i] = TreeEntry(e)
	}
	return out, nil
}

// ReadBlob reads the blob id (fetched on demand in a partial clone).
func (r *Repo) ReadBlob(ctx context.Context, id ObjectID) ([]byte, error) {
	if r.b == nil {
		return nil, fmt.Errorf("%s is not a git repository", r.Root)
	}
	data, err := r.b.blob(ctx, id)
	if err != nil {
		return nil, r.objectError("blob", id, err)
	}
	return data, nil
}

// RefID returns the object the reference name (a full name: refs/…)
// points at; ok is false when there is no such reference.
func (r *Repo) RefID(ctx context.Context, name string) (id ObjectID, ok bool, err error) {
	if r.b == nil {
		return "", false, fmt.Errorf("%s is not a git repository", r.Root)
	}
	refs, err := r.b.refs(ctx, name)
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", name, err)
	}
	for _, ref := range refs {
		if ref.Name == name {
			return ref.ID, true, nil
		}
	}
	return "", false, nil
}

// objectError says which object could not be read, and what to do.
func (r *Repo) objectError(kind string, id ObjectID, err error) error {
	var nf *NotFetchedError
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nf):
		return fmt.Errorf("read %s %s: %w", kind, id, err)
	case errors.Is(err, errMissing):
		return fmt.Errorf("read %s %s: not in the repository: fetch it (git fetch), or check the repository (git fsck): %w", kind, id, err)
	case errors.Is(err, errDamaged):
		return fmt.Errorf("read %s %s: it is damaged in the object store: %s: %w", kind, id, damagedHelp, err)
	}
	return fmt.Errorf("read %s %s: %w", kind, id, err)
}
