package pack

import (
	"context"
	"github.com/ctxpack/ctxpack/lang"
	"time"
)

// Mode is the kind of a snapshot entry, as git records it.
type Mode int

const (
	ModeRegular Mode = iota
	ModeExecutable
	ModeSymlink
	ModeSubmodule
)

// File is one entry of the head tree. Content is read lazily, so files that
// are excluded by path are never read.
type File struct {
	// Path is relative to the repository root, with forward slashes. A name
	// that is not valid UTF-8 is kept as its bytes; JSON output escapes it.
	Path string
	Size int64
	Mode Mode
	// Blob is the git blob id of the content, when known without reading it
	// (40 hex digits, or 64 in a SHA-256 repository).
	Blob string
	// Read returns the file's bytes; nil for symlinks and submodules.
	Read func(ctx context.Context) ([]byte, error)
}

// Snapshot is a repository state ready to be packed: what pack.Build takes.
// It carries no git handles; sources (package source) fill it.
type Snapshot struct {
	Source Source
	// Time is the head commit's committer time, or SOURCE_DATE_EPOCH.
	Time time.Time
	// Files is every entry of the head tree, sorted by path.
	Files []File
	// Changes is the changed files of the commit, range or worktree edit, sorted
	// by path, each with its full unified diff (pack.Build bounds it).
	Changes []Change
	// Intent is what the change is for, as the source and the caller know
	// it (commit messages, pull request, goal, task); pack.Build bounds,
	// completes and scans it.
	Intent Intent
	// Tree, when set, reaches the whole head tree beyond Files (a change
	// scope lists only part of it): the builder looks up the definitions,
	// callers, tests and importers of the change there.
	Tree Tree
	// Commits is, for a commit or range, each commit's added lines, oldest
	// first, for the per-commit secret scan. A source may read them in the
	// background (ReadCommitsAside): they are set once AwaitCommits
	// returns, which RedactNames and the history scan call first.
	Commits []CommitPatch
	// commitsRead is that read, when one was started.
	commitsRead *commitsRead
}

// commitsRead is a read of a snapshot's commits in the background.
type commitsRead struct {
	cancel  context.CancelFunc
	done    chan struct{}
	commits []CommitPatch
	err     error
}

// ReadCommitsAside runs read in the background, for AwaitCommits to set
// Commits to: a range's per-commit patches are read beside its tree diff
// and listing, which do not need them.
func (s *Snapshot) ReadCommitsAside(ctx context.Context, read func(context.Context) ([]CommitPatch, error)) {
	ctx, cancel := context.WithCancel(ctx)
	r := &commitsRead{cancel: cancel, done: make(chan struct{})}
	s.commitsRead = r
	go func() {
		defer close(r.done)
		defer cancel()
		r.commits, r.err = read(ctx)
	}()
}

// AwaitCommits waits for the read ReadCommitsAside started, sets Commits
// to what it read and returns its error; at once, nil, when none was
// started. Whatever reads Commits of a snapshot from a source calls it
// first. It is not safe for concurrent use.
func (s *Snapshot) AwaitCommits() error {
	r := s.commitsRead
	if r == nil {
		return nil
	}
	<-r.done
	s.Commits = r.commits
	return r.err
}

// StopCommits stops the read ReadCommitsAside started and waits for it to
// end, for a snapshot nothing will read the commits of (its packing
// failed): the read leaves the repository before it is closed.
func (s *Snapshot) StopCommits() {
	if r := s.commitsRead; r != nil {
		r.cancel()
		<-r.done
	}
}

// CommitPatch is the lines one commit added, per file.
type CommitPatch struct {
	Commit string
	Files  []AddedLines
	// Unread lists the files whose added lines could not be read (content
	// a partial clone could not fetch): the commit's history scan is
	// incomplete without them.
	Unread []string
	// Skipped are the files of the commit whose lines were not read: a
	// blob over the size limit of the per-commit scan.
	Skipped []SkippedFile
}

// SkippedFile is a file a bounded read left out, with its size.
type SkippedFile struct {
	Path string
	Size int64
}

// AddedLines is the lines a commit added to one file, with their line numbers
// in the commit's version of the file.
type AddedLines struct {
	Path  string
	Lines []Line
}

// CommonAddedLines is the lines a and b both hold, by path and by line
// (number and text), in a's order: a merge's own lines are those added
// against every one of its parents.
func CommonAddedLines(a, b []AddedLines) []AddedLines {
	in := make(map[string]map[Line]bool, len(b))
	for _, f := range b {
		set := make(map[Line]bool, len(f.Lines))
		for _, l := range f.Lines {
			set[l] = true
		}
		in[f.Path] = set
	}
	var out []AddedLines
	for _, f := range a {
		set := in[f.Path]
		var kept []Line
		for _, l := range f.Lines {
			if set[l] {
				kept = append(kept, l)
			}
		}
		if len(kept) > 0 {
			out = append(out, AddedLines{Path: f.Path, Lines: kept})
		}
	}
	return out
}

// Line is one numbered line of text.
type Line struct {
	Number int
	Text   string
}

// langFiles is the snapshot's files as package lang reads them.
func langFiles(files []File) []lang.File {
	out := make([]lang.File, len(files))
	for i, f := range files {
		out[i] = lang.File{Path: f.Path, Size: f.Size, Regular: f.Mode == ModeRegular || f.Mode == ModeExecutable, Read: f.Read}
	}
	return out
}

// Tree is lazy access to a whole head tree. Every file taken from it goes
// through the same classification, exclusion and secret scan as Files.
type Tree interface {
	// Paths lists every path of the tree, sorted.
	Paths(ctx context.Context) ([]string, error)
	// Dir lists the files directly in a directory ("" for the root),
	// sorted; none when there is no such directory.
	Dir(ctx context.Context, dir string) ([]string, error)
	// File returns the entry at path; false when there is none.
	File(ctx context.Context, path string) (File, bool, error)
	// Grep returns, for each word, the paths whose text holds it, sorted
	// (see GrepOptions).
	Grep(ctx context.Context, words []string, opts GrepOptions) (map[string][]string, error)
}

// GrepOptions say how Tree.Grep matches.
type GrepOptions struct {
	// Exts limits the search to paths ending in one of them (".go"; none
	// means every path).
	Exts []string
	// Substring matches a word anywhere (else only as a whole word:
	// letters, digits and _ delimit words), and IgnoreCase in any case;
	// the result is then keyed by the word in lower case.
	Substring  bool
	IgnoreCase bool
}
