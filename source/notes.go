package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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

// WriteNote stores data as the note of commit under the notes ref,
// replacing any note it had; writing the note a commit already has is a
// no-op. The notes commit is made by `git notes` as the configured user
// (ctxpack when none is), at SOURCE_DATE_EPOCH when it is set.
func (r *Repo) WriteNote(ctx context.Context, notesRef string, commit ObjectID, data []byte) error {
	b, isCLI := r.cli()
	if !isCLI {
		return errors.New("notes of this repository are written with go-git (package transparency)")
	}
	out, err := b.run(ctx, data, "hash-object", "-w", "--stdin")
	if err != nil {
		return fmt.Errorf("write the note of %s: %w", commit.Short(), err)
	}
	blob := strings.TrimSpace(string(out))
	if old, err := b.run(ctx, nil, "notes", "--ref="+notesRef, "list", string(commit)); err == nil && strings.TrimSpace(string(old)) == blob {
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
	if _, err := runGit(ctx, env, "", nil, "notes", "--ref="+notesRef, "add", "-f", "-C", blob, string(commit)); err != nil {
		return fmt.Errorf("write the note of %s in %s: %w", commit.Short(), notesRef, err)
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
