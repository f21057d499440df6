package source

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// GitDirs returns the repository's git directory and its common directory.
// They differ for a linked worktree (git dir .git/worktrees/<name> of the
// main repository, named by the worktree's `.git` file; common dir the main
// .git, which holds the config, the refs and the hooks). A `.git` file of a
// submodule or of `git init --separate-git-dir` is followed too. For a bare
// repository both are the repository directory.
func (r *Repo) GitDirs() (gitDir, commonDir string, err error) {
	if r.git == nil {
		return "", "", fmt.Errorf("%s is not a git repository", r.Root)
	}
	dotgit := filepath.Join(r.Root, ".git")
	fi, err := os.Stat(dotgit)
	switch {
	case err == nil && fi.IsDir():
		gitDir = dotgit
	case err == nil:
		data, err := os.ReadFile(dotgit)
		if err != nil {
			return "", "", fmt.Errorf("read %s: %w", dotgit, err)
		}
		s, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return "", "", fmt.Errorf("%s is a file without a gitdir: line", dotgit)
		}
		gitDir = strings.TrimSpace(s)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(r.Root, gitDir)
		}
	case os.IsNotExist(err):
		if _, herr := os.Stat(filepath.Join(r.Root, "HEAD")); herr != nil {
			return "", "", fmt.Errorf("%s has no .git", r.Root)
		}
		gitDir = r.Root // bare
	default:
		return "", "", fmt.Errorf("stat %s: %w", dotgit, err)
	}
	gitDir = filepath.Clean(gitDir)
	commonDir = gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(data))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		commonDir = filepath.Clean(c)
	}
	return gitDir, commonDir, nil
}

// Bare reports whether the repository has no work tree.
func (r *Repo) Bare() bool {
	if r.git == nil {
		return false
	}
	_, err := r.git.Worktree()
	return err != nil
}
