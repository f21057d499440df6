// Package hooks installs ctxpack's git pre-push hook and implements the
// pre-push protocol: for every ref git is about to push, pack and audit what
// it publishes, keep the pack and record, and block the push when a verdict
// fails.
package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxpack/ctxpack/source"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// Location is where a repository's hooks live.
type Location struct {
	// Root is the work tree (the repository directory when bare).
	Root string
	// GitDir and CommonDir are the repository's git directories; they
	// differ in a linked worktree. Hooks and state live in the common dir.
	GitDir, CommonDir string
	// Dir is the hooks directory: core.hooksPath when set, else
	// <common dir>/hooks.
	Dir string
	// From says where Dir comes from: "default", or the config file that
	// sets core.hooksPath ("GIT_CONFIG_COUNT" for the environment).
	From string
	// StateDir is ctxpack's local state directory (<common dir>/ctxpack).
	StateDir string
}

// Locate finds the hooks directory of the repository containing dir, as git
// does: core.hooksPath from the system, global, repository and worktree
// config (includes and includeIf too) and GIT_CONFIG_COUNT/KEY_n/VALUE_n
// (last one wins; "~/" expanded; a relative path is relative to the work
// tree, where git runs hooks), else the common dir's hooks/ (so a linked
// worktree shares the main repository's hooks). git itself is asked
// (git rev-parse --git-path hooks); when it cannot run, the config files are
// parsed with go-git's config decoder, which does not follow include.path
// and includeIf.
func Locate(dir string) (*Location, error) {
	repo, err := source.Open(dir)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	if !repo.IsGit() {
		return nil, fmt.Errorf("%s is not inside a git repository", dir)
	}
	gitDir, commonDir, err := repo.GitDirs()
	if err != nil {
		return nil, err
	}
	loc := &Location{Root: repo.Root, GitDir: gitDir, CommonDir: commonDir, StateDir: repo.StateDir()}
	if dir, from, err := repo.HooksDir(context.Background()); err == nil {
		loc.Dir, loc.From = dir, from
		return loc, nil
	}
	// git could not be asked: read the config files as git would, but for
	// include.path and includeIf.
	hooksPath, from, err := hooksPathConfig(gitDir, commonDir)
	if err != nil {
		return nil, err
	}
	if hooksPath == "" {
		loc.Dir, loc.From = filepath.Join(commonDir, "hooks"), "default"
		return loc, nil
	}
	p, err := expandPath(hooksPath)
	if err != nil {
		return nil, fmt.Errorf("core.hooksPath %q (%s): %w", hooksPath, from, err)
	}
	if !filepath.IsAbs(p) {
		base := repo.Root
		if repo.Bare() {
			base = gitDir
		}
		p = filepath.Join(base, p)
	}
	loc.Dir, loc.From = filepath.Clean(p), from
	return loc, nil
}

// configFiles lists the config files git reads, lowest precedence first.
func configFiles(commonDir string) []string {
	var files []string
	if !truthy(os.Getenv("GIT_CONFIG_NOSYSTEM")) {
		if s, ok := os.LookupEnv("GIT_CONFIG_SYSTEM"); ok {
			files = append(files, s)
		} else {
			files = append(files, "/etc/gitconfig")
		}
	}
	if g, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		files = append(files, g)
	} else {
		home, _ := os.UserHomeDir()
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	return append(files, filepath.Join(commonDir, "config"))
}

// hooksPathConfig returns the effective core.hooksPath and the file that sets it.
func hooksPathConfig(gitDir, commonDir string) (string, string, error) {
	files := configFiles(commonDir)
	var value, from string
	var local *format.Config
	for _, f := range files {
		cfg, err := readConfig(f)
		if err != nil {
			return "", "", err
		}
		if cfg == nil {
			continue
		}
		if f == filepath.Join(commonDir, "config") {
			local = cfg
		}
		if core := cfg.Section("core"); core.HasOption("hooksPath") {
			value, from = core.Option("hooksPath"), f
		}
	}
	// Per-worktree config (git worktree's extensions.worktreeConfig).
	if local != nil && truthy(local.Section("extensions").Option("worktreeConfig")) {
		f := filepath.Join(gitDir, "config.worktree")
		cfg, err := readConfig(f)
		if err != nil {
			return "", "", err
		}
		if cfg != nil && cfg.Section("core").HasOption("hooksPath") {
			value, from = cfg.Section("core").Option("hooksPath"), f
		}
	}
	// git -c style environment: GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>.
	if n, err := strconv.Atoi(os.Getenv("GIT_CONFIG_COUNT")); err == nil {
		for i := range n {
			if strings.EqualFold(os.Getenv(fmt.Sprintf("GIT_CONFIG_KEY_%d", i)), "core.hooksPath") {
				value, from = os.Getenv(fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)), "GIT_CONFIG_COUNT"
			}
		}
	}
	return value, from, nil
}

// readConfig parses one config file; a missing file is nil, not an error.
func readConfig(path string) (*format.Config, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read git config %s: %w", path, err)
	}
	defer f.Close()
	cfg := format.New()
	if err := format.NewDecoder(f).Decode(cfg); err != nil {
		return nil, fmt.Errorf("parse git config %s: %w", path, err)
	}
	return cfg, nil
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

// expandPath expands a leading "~/" (or a lone "~") as git does for paths.
func expandPath(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
	}
	if strings.HasPrefix(p, "~") {
		return "", errors.New("~user paths are not supported; use an absolute path")
	}
	return p, nil
}
