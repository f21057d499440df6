// Package source turns a repository state into a pack.Snapshot: a working
// tree, one commit, or a range base..head of a git repository (read with
// go-git), or a plain directory. It is the only package that knows git.
package source

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Repo is an opened source directory: a git repository or a plain tree.
type Repo struct {
	// Root is the absolute path of the work tree (or plain directory).
	Root string
	// Name is the repository's name: the origin remote's last path element,
	// else the directory name, so that clones name themselves alike.
	Name string
	// HistoryBlobLimit is the largest blob the per-commit patches read
	// (0: no limit); a commit's change with a larger side is listed as
	// skipped instead (pack.CommitPatch.Skipped).
	HistoryBlobLimit int64
	git              *git.Repository // nil for a plain directory
	// mu serializes object reads: a go-git Repository is not safe for
	// concurrent use.
	mu sync.Mutex
}

// ErrNoCommits is returned when a commit is asked of a repository that has none.
var ErrNoCommits = errors.New("the repository has no commits yet")

// Open opens dir. A directory inside a git work tree opens that repository;
// any other directory is a plain tree.
func Open(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open %s: not a directory", dir)
	}
	r, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return &Repo{Root: abs, Name: filepath.Base(abs)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", dir, err)
	}
	root := abs
	if wt, err := r.Worktree(); err == nil {
		root = wt.Filesystem.Root()
	}
	repo := &Repo{Root: root, Name: filepath.Base(root), git: r}
	if name := originName(r); name != "" {
		repo.Name = name
	}
	return repo, nil
}

// IsGit reports whether the source is a git repository.
func (r *Repo) IsGit() bool { return r.git != nil }

// Git returns the go-git repository, nil for a plain directory.
func (r *Repo) Git() *git.Repository { return r.git }

func originName(r *git.Repository) string {
	rem, err := r.Remote("origin")
	if err != nil || len(rem.Config().URLs) == 0 {
		return ""
	}
	u := rem.Config().URLs[0]
	if parsed, err := url.Parse(u); err == nil && parsed.Path != "" {
		u = parsed.Path
	} else if i := strings.LastIndex(u, ":"); i >= 0 { // scp-like git@host:org/repo.git
		u = u[i+1:]
	}
	u = strings.TrimSuffix(strings.TrimRight(filepath.ToSlash(u), "/"), ".git")
	return path.Base(u)
}

// Resolve turns a revision (branch, tag, full or short SHA, HEAD~N) into a
// commit hash.
func (r *Repo) Resolve(rev string) (plumbing.Hash, error) {
	if r.git == nil {
		return plumbing.ZeroHash, fmt.Errorf("revision %q: %s is not a git repository", rev, r.Root)
	}
	if rev == "" {
		return plumbing.ZeroHash, errors.New("empty revision")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.git.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		if rev == "HEAD" || strings.HasPrefix(rev, "HEAD") {
			if _, herr := r.git.Head(); errors.Is(herr, plumbing.ErrReferenceNotFound) {
				return plumbing.ZeroHash, fmt.Errorf("revision %q: %w", rev, ErrNoCommits)
			}
		}
		return plumbing.ZeroHash, fmt.Errorf("unknown revision %q: check the branch, tag or commit exists (git log --oneline)", rev)
	}
	if _, err := r.git.CommitObject(*h); err != nil {
		// An annotated tag resolves to the tag object in some go-git paths.
		if tag, terr := r.git.TagObject(*h); terr == nil {
			c, cerr := tag.Commit()
			if cerr == nil {
				return c.Hash, nil
			}
		}
		return plumbing.ZeroHash, fmt.Errorf("revision %q is not a commit", rev)
	}
	return *h, nil
}

// epoch returns SOURCE_DATE_EPOCH when set, else fallback.
func epoch(fallback time.Time) (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds", s)
		}
		return time.Unix(n, 0).UTC(), nil
	}
	return fallback.UTC(), nil
}

func sortFiles(files []pack.File) {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
}

func sortChanges(changes []pack.Change) {
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
}

// StateDir is where ctxpack keeps local state (packs, records, scan cache):
// .git/ctxpack of the repository, "" for a plain directory.
func (r *Repo) StateDir() string {
	if r.git == nil {
		return ""
	}
	// The common dir is shared by linked worktrees.
	gitDir := filepath.Join(r.Root, ".git")
	if fi, err := os.Stat(gitDir); err == nil && !fi.IsDir() {
		if data, err := os.ReadFile(gitDir); err == nil {
			if s, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:"); ok {
				gitDir = strings.TrimSpace(s)
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(r.Root, gitDir)
				}
				if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
					common := strings.TrimSpace(string(data))
					if !filepath.IsAbs(common) {
						common = filepath.Join(gitDir, common)
					}
					gitDir = common
				}
			}
		}
	}
	return filepath.Join(filepath.Clean(gitDir), "ctxpack")
}

// safePath makes a path valid UTF-8 for JSON, reversibly (RawPath undoes
// it): each byte of an invalid sequence becomes a visible \xNN escape, and
// so does the backslash of a name that could otherwise be read as holding
// such an escape (\x5c). Any other name — every valid UTF-8 name without
// a "\xNN" in it — is itself, so distinct names stay distinct and none
// collapses into U+FFFD.
func safePath(p string) string {
	if utf8.ValidString(p) && !hexEscape.MatchString(p) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\\':
			fmt.Fprintf(&b, `\x%02x`, p[i])
		default:
			b.WriteString(p[i : i+size])
		}
		i += size
	}
	return b.String()
}

// hexEscape is what safePath writes for one byte.
var hexEscape = regexp.MustCompile(`\\x[0-9a-fA-F]{2}`)

// RawPath returns the name git holds for a path of a snapshot or a pack
// (the inverse of the escaping of names that are not valid UTF-8).
func RawPath(p string) string {
	if !hexEscape.MatchString(p) {
		return p
	}
	return hexEscape.ReplaceAllStringFunc(p, func(m string) string {
		n, _ := strconv.ParseUint(m[2:], 16, 8)
		return string([]byte{byte(n)})
	})
}
