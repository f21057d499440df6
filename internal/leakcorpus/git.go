package leakcorpus

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Commit writes the corpus as four commits — base; the range's changes,
// with c.Message; a middle commit adding scratch files and lines; the last
// commit removing them — and returns the base and head commits.
func (c *Corpus) Commit(dir string) (string, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@corp.io", "GIT_COMMITTER_NAME=bench",
			"GIT_COMMITTER_EMAIL=bench@corp.io", "GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %v: %s", args[0], err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	write := func(files map[string]string) error {
		for p, s := range files {
			full := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	commit := func(msg string) (string, error) {
		if _, err := git("add", "-A"); err != nil {
			return "", err
		}
		if _, err := git("commit", "-q", "--no-verify", "-m", msg); err != nil {
			return "", err
		}
		return git("rev-parse", "HEAD")
	}
	if _, err := git("init", "-q", "-b", "main"); err != nil {
		return "", "", err
	}
	if err := write(c.Base); err != nil {
		return "", "", err
	}
	base, err := commit("base")
	if err != nil {
		return "", "", err
	}
	for p := range c.Base {
		if _, ok := c.Head[p]; !ok {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
				return "", "", err
			}
		}
	}
	if err := write(c.Head); err != nil {
		return "", "", err
	}
	if _, err := commit(c.Message); err != nil {
		return "", "", err
	}
	extra := map[string]string{}
	for p, add := range c.InterimExtra {
		extra[p] = c.Head[p] + add
	}
	if err := write(c.Interim); err != nil {
		return "", "", err
	}
	if err := write(extra); err != nil {
		return "", "", err
	}
	if _, err := commit("wip"); err != nil {
		return "", "", err
	}
	for p := range c.Interim {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return "", "", err
		}
	}
	restore := map[string]string{}
	for p := range c.InterimExtra {
		restore[p] = c.Head[p]
	}
	if err := write(restore); err != nil {
		return "", "", err
	}
	head, err := commit("cleanup")
	if err != nil {
		return "", "", err
	}
	return base, head, nil
}

// Leaked reports whether data holds any probe of p: the planted secret, or
// a 12-byte window of its random part.
func (p Plant) Leaked(data []byte) bool {
	s := string(data)
	for _, pr := range p.Probes {
		if strings.Contains(s, pr) {
			return true
		}
	}
	return false
}
