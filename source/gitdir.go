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
// .git, which holds the config, the refs and the hooks). For a bare
// repository both are the repository directory.
func (r *Repo) GitDirs() (gitDir, commonDir string, err error) {
	if r.b == nil {
		return "", "", fmt.Errorf("%s is not a git repository", r.Root)
	}
	return r.gitDir, r.commonDir, nil
}

// gitDirs finds the git directory and common directory of the work tree
// root (or of the bare repository root): a `.git` directory, or a `.git`
// file (linked worktree, submodule, `git init --separate-git-dir`) and the
// commondir file it leads to.
func gitDirs(root string, bare bool) (gitDir, commonDir string, err error) {
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Stat(dotgit)
	switch {
	case bare:
		gitDir = root
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
			gitDir = filepath.Join(root, gitDir)
		}
	default:
		return "", "", fmt.Errorf("find the git directory of %s: %w", root, err)
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
func (r *Repo) Bare() bool { return r.b != nil && r.bare }
