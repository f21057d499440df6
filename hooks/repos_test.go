package hooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
)

// TestPrePushEveryKindOfRepository installs the hook and pushes from the
// repositories only the git CLI reads (SHA-256, a sparse partial clone) and
// from one whose hooks directory comes from an includeIf file: a clean push
// passes and is recorded, a secret blocks it.
func TestPrePushEveryKindOfRepository(t *testing.T) {
	for _, kind := range []string{"sha256", "sparse partial clone", "includeIf hooksPath"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t)
			var g *gittest.Repo
			remote := filepath.Join(t.TempDir(), "remote.git")
			hooksDir := ""
			switch kind {
			case "sha256":
				e.must(t.TempDir(), "git", "init", "-q", "--bare", "-b", "main", "--object-format=sha256", remote)
				g = gittest.NewWith(t, "--object-format=sha256")
				g.Git("remote", "add", "origin", remote)
				g.Write("README.md", "# demo\n")
				g.Write("app/main.go", "package main\n\nfunc main() {}\n")
				g.Commit("init")
				e.must(g.Dir, "git", "push", "-q", "-u", "origin", "main")
			case "sparse partial clone":
				seed := gittest.New(t)
				seed.Write("README.md", "# demo\n")
				seed.Write("app/main.go", "package main\n\nfunc main() {}\n")
				seed.Write("lib/util.go", "package lib\n")
				seed.Commit("init")
				seed.Git("clone", "-q", "--bare", seed.Dir, remote)
				seed.Git("-C", remote, "config", "uploadpack.allowFilter", "true")
				seed.Git("-C", remote, "config", "uploadpack.allowAnySHA1InWant", "true")
				dir := filepath.Join(t.TempDir(), "clone")
				seed.Git("clone", "-q", "--filter=blob:none", "--sparse", "file://"+remote, dir)
				g = seed.At(dir)
				g.Git("sparse-checkout", "set", "app")
			case "includeIf hooksPath":
				e.must(t.TempDir(), "git", "init", "-q", "--bare", "-b", "main", remote)
				g = gittest.New(t)
				inc := filepath.Join(t.TempDir(), "inc.gitconfig")
				if err := os.WriteFile(inc, []byte("[core]\n\thooksPath = included-hooks\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				g.Git("config", "includeIf.gitdir:"+g.Dir+"/.path", inc)
				g.Git("remote", "add", "origin", remote)
				g.Write("README.md", "# demo\n")
				g.Write("app/main.go", "package main\n\nfunc main() {}\n")
				g.Commit("init")
				e.must(g.Dir, "git", "push", "-q", "-u", "origin", "main")
				hooksDir = filepath.Join(g.Dir, "included-hooks")
			}
			out := e.must(g.Dir, ctxpackBin(), "hook", "install")
			if hooksDir != "" && !strings.Contains(out, filepath.Join(hooksDir, "pre-push")) {
				t.Fatalf("install did not follow includeIf: %s", out)
			}

			g.Write("app/main.go", "package main\n\nfunc main() { run() }\n\nfunc run() {}\n")
			head := g.Commit("clean change")
			out = e.must(g.Dir, "git", "push", "origin", "main")
			if !strings.Contains(out, "refs/heads/main: pass") {
				t.Fatalf("clean push:\n%s", out)
			}
			if note := g.Git("notes", "--ref", "ctxpack", "show", head); !strings.Contains(note, head) {
				t.Fatalf("no record noted on %s: %s", head, note)
			}

			g.Write("app/config.py", "GITHUB_TOKEN = \""+fakeToken(9)+"\"\n")
			g.Commit("a secret")
			out, err := e.run(g.Dir, "git", "push", "origin", "main")
			if err == nil || !strings.Contains(out, "refs/heads/main: FAIL") || !strings.Contains(out, "github-pat") {
				t.Fatalf("push with a secret: %v\n%s", err, out)
			}
		})
	}
}
