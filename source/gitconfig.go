package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// gitEnv is the environment of git commands run for a repository found by
// path: the caller's, without a GIT_DIR or GIT_WORK_TREE that would point
// git elsewhere.
func gitEnv() []string {
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_DIR=") && !strings.HasPrefix(kv, "GIT_WORK_TREE=") {
			env = append(env, kv)
		}
	}
	return env
}

// HooksDir asks git where it runs this repository's hooks (core.hooksPath
// from every config file git reads, includes and includeIf too, else the
// common dir's hooks/), and which config file set core.hooksPath:
// "default" when none did, "GIT_CONFIG_COUNT" for the environment or the
// command line. It fails when git cannot be run.
func (r *Repo) HooksDir(ctx context.Context) (dir, from string, err error) {
	if r.b == nil {
		return "", "", fmt.Errorf("%s is not a git repository", r.Root)
	}
	at := r.Root
	if r.bare {
		at = r.gitDir
	}
	out, err := runGit(ctx, gitEnv(), at, nil, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		return "", "", err
	}
	dir = filepath.Clean(strings.TrimSpace(string(out)))
	out, err = runGit(ctx, gitEnv(), at, nil, "config", "--show-origin", "--get", "core.hooksPath")
	switch {
	case err != nil && exitCode(err) == 1:
		return dir, "default", nil
	case err != nil:
		return "", "", err
	}
	origin, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if f, ok := strings.CutPrefix(origin, "file:"); ok {
		if !filepath.IsAbs(f) {
			f = filepath.Join(at, f)
		}
		return dir, filepath.Clean(f), nil
	}
	return dir, "GIT_CONFIG_COUNT", nil
}

// hasIncludes reports whether a config file holds include or includeIf
// sections, whose settings go-git does not read.
func hasIncludes(configFile string) bool {
	data, err := os.ReadFile(configFile)
	if err != nil {
		return false
	}
	s := strings.ToLower(string(data))
	return strings.Contains(s, "[include")
}

// cliOriginName is the origin remote's name as git reads its URL (includes
// followed), "" when there is none or git cannot be run.
func cliOriginName(ctx context.Context, root string) string {
	out, err := runGit(ctx, gitEnv(), root, nil, "config", "--get", "remote.origin.url")
	if err != nil {
		return ""
	}
	return urlName(strings.TrimSpace(string(out)))
}
