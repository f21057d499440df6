// Package gittest builds fixture git repositories for tests with the git CLI,
// in temporary directories, with fixed identities and dates so that commits
// are reproducible.
package gittest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Repo is a fixture repository.
type Repo struct {
	t    testing.TB
	Dir  string
	tick int
}

// New creates an empty repository (branch main) in a temp directory.
func New(t testing.TB) *Repo {
	t.Helper()
	return Init(t, t.TempDir())
}

// Init creates an empty repository in dir.
func Init(t testing.TB, dir string) *Repo {
	t.Helper()
	return InitWith(t, dir)
}

// NewWith creates an empty repository in a temp directory with extra
// git init arguments (--object-format=sha256).
func NewWith(t testing.TB, initArgs ...string) *Repo {
	t.Helper()
	return InitWith(t, t.TempDir(), initArgs...)
}

// InitWith creates an empty repository in dir with extra git init arguments.
func InitWith(t testing.TB, dir string, initArgs ...string) *Repo {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Repo{t: t, Dir: dir}
	r.Git(append([]string{"init", "-q", "-b", "main"}, initArgs...)...)
	return r
}

// At is the repository (a clone, a linked worktree) the test made in dir,
// its commits continuing from r's clock.
func (r *Repo) At(dir string) *Repo {
	return &Repo{t: r.t, Dir: dir, tick: r.tick}
}

// Env is the environment git runs with: no user or system config, fixed identity.
func Env(home string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Fixture Author", "GIT_AUTHOR_EMAIL=author@example.com",
		"GIT_COMMITTER_NAME=Fixture Committer", "GIT_COMMITTER_EMAIL=committer@example.com",
	)
}

// Git runs git in the repository and returns its trimmed stdout.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	out, err := r.TryGit(nil, args...)
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

// TryGitStdin runs git with stdin, returning an error with stderr on failure.
func (r *Repo) TryGitStdin(stdin string, args ...string) (string, error) {
	return r.tryGit(nil, strings.NewReader(stdin), args...)
}

// TryGit runs git with extra env, returning an error with stderr on failure.
func (r *Repo) TryGit(extraEnv []string, args ...string) (string, error) {
	return r.tryGit(extraEnv, nil, args...)
}

func (r *Repo) tryGit(extraEnv []string, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Stdin = stdin
	cmd.Dir = r.Dir
	cmd.Env = append(Env(r.home()), extraEnv...)
	cmd.Env = append(cmd.Env,
		fmt.Sprintf("GIT_AUTHOR_DATE=%d +0000", 1700000000+r.tick*60),
		fmt.Sprintf("GIT_COMMITTER_DATE=%d +0000", 1700000000+r.tick*60))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

func (r *Repo) home() string {
	h := filepath.Join(os.TempDir(), "ctxpack-gittest-home")
	_ = os.MkdirAll(h, 0o755)
	return h
}

// Write writes a file (creating directories) relative to the repository.
func (r *Repo) Write(path, content string) {
	r.t.Helper()
	r.WriteBytes(path, []byte(content))
}

// WriteBytes writes raw bytes.
func (r *Repo) WriteBytes(path string, data []byte) {
	r.t.Helper()
	abs := filepath.Join(r.Dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(abs, data, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// Remove deletes a file from the work tree.
func (r *Repo) Remove(path string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.Dir, filepath.FromSlash(path))); err != nil {
		r.t.Fatal(err)
	}
}

// DropBlob deletes the loose object of the blob holding content, as a
// damaged repository or a partial clone lacks it; its id.
func (r *Repo) DropBlob(content string) string {
	r.t.Helper()
	out, err := r.TryGitStdin(content, "hash-object", "--stdin")
	if err != nil {
		r.t.Fatal(err)
	}
	id := strings.TrimSpace(out)
	if err := os.Remove(filepath.Join(r.Dir, ".git", "objects", id[:2], id[2:])); err != nil {
		r.t.Fatal(err)
	}
	return id
}

// Symlink creates a symlink at path pointing to target.
func (r *Repo) Symlink(target, path string) {
	r.t.Helper()
	abs := filepath.Join(r.Dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Symlink(target, abs); err != nil {
		r.t.Fatal(err)
	}
}

// Commit stages everything and commits, returning the new commit's hash.
// Each commit is one minute after the previous one.
func (r *Repo) Commit(msg string) string {
	r.t.Helper()
	r.tick++
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "-m", msg)
	return r.Git("rev-parse", "HEAD")
}

// Clone clones the repository into dir.
func (r *Repo) Clone(dir string) *Repo {
	r.t.Helper()
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		r.t.Fatal(err)
	}
	r.Git("clone", "-q", r.Dir, dir)
	return &Repo{t: r.t, Dir: dir, tick: r.tick}
}
