package hooks_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/hooks"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack/schema"
)

// binDir holds the ctxpack binary, built once for the whole test run.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ctxpack-hooks-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	exe := "ctxpack"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, exe), "github.com/ctxpack/ctxpack/cmd/ctxpack")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build ctxpack:", err)
		return 1
	}
	binDir = dir
	return m.Run()
}

func ctxpackBin() string { return filepath.Join(binDir, "ctxpack") }

// fakeToken builds a realistic GitHub token at run time, so no token literal
// sits in the repository (gitleaks' rules allowlist values ending in EXAMPLE,
// so a made-up placeholder would not be found).
func fakeToken(seed uint64) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b strings.Builder
	b.WriteString("ghp_")
	for range 36 {
		b.WriteByte(alnum[r.IntN(len(alnum))])
	}
	return b.String()
}

// env is the environment git and the hook run with: no user or system git
// config, and PATH led by path (the ctxpack binary's directory unless the
// test says otherwise).
type env struct {
	t    *testing.T
	home string
	path string
}

func newEnv(t *testing.T) *env {
	return &env{t: t, home: t.TempDir(), path: binDir + string(os.PathListSeparator) + os.Getenv("PATH")}
}

func (e *env) vars() []string {
	vars := gittest.Env(e.home)
	out := vars[:0:0]
	for _, kv := range vars {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return append(out, "PATH="+e.path)
}

// run runs a command in dir and returns its combined output.
func (e *env) run(dir string, name string, args ...string) (string, error) {
	e.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = e.vars()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (e *env) must(dir, name string, args ...string) string {
	e.t.Helper()
	out, err := e.run(dir, name, args...)
	if err != nil {
		e.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// fixture is a working repository with a bare remote "origin" and the hook
// installed.
type fixture struct {
	*env
	g      *gittest.Repo
	remote string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	e := newEnv(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	e.must(t.TempDir(), "git", "init", "-q", "--bare", "-b", "main", remote)
	g := gittest.New(t)
	g.Git("remote", "add", "origin", remote)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.Write("README.md", "# demo\n")
	g.Commit("init")
	f := &fixture{env: e, g: g, remote: remote}
	f.must(g.Dir, ctxpackBin(), "hook", "install")
	return f
}

func (f *fixture) push(args ...string) (string, error) {
	f.t.Helper()
	return f.run(f.g.Dir, "git", append([]string{"push"}, args...)...)
}

func (f *fixture) mustPush(args ...string) string {
	f.t.Helper()
	out, err := f.push(args...)
	if err != nil {
		f.t.Fatalf("git push %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// remoteRef is the remote's value of ref, "" when it has none.
func (f *fixture) remoteRef(ref string) string {
	f.t.Helper()
	out := f.must(f.g.Dir, "git", "ls-remote", f.remote, ref)
	if fields := strings.Fields(out); len(fields) > 0 {
		return fields[0]
	}
	return ""
}

func short(sha string) string { return sha[:12] }

// assertRecorded checks the pack and record files and the note of head.
func (f *fixture) assertRecorded(head string) {
	f.t.Helper()
	dir := filepath.Join(f.g.Dir, ".git", "ctxpack", "prepush")
	packData, err := os.ReadFile(filepath.Join(dir, short(head)+".pack.json"))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := schema.ValidatePack(packData); err != nil {
		f.t.Fatalf("pack: %v", err)
	}
	record, err := os.ReadFile(filepath.Join(dir, short(head)+".record.json"))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := schema.ValidateRecord(record); err != nil {
		f.t.Fatalf("record: %v", err)
	}
	note := f.g.Git("notes", "--ref", "ctxpack", "show", head)
	if note != strings.TrimSpace(string(record)) {
		f.t.Fatalf("the note of %s is not the record file", short(head))
	}
	if !strings.Contains(string(packData), `"trigger":"pre-push"`) {
		f.t.Fatalf("pack trigger is not pre-push")
	}
	// The pack, written beside its audit, was renamed into place.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".ctxpack-tmp-") {
			f.t.Fatalf("a temporary file is left: %s", e.Name())
		}
	}
}

func TestCleanPushPassesAndRecords(t *testing.T) {
	f := newFixture(t)
	out := f.mustPush("-u", "origin", "main")
	head := f.g.Git("rev-parse", "HEAD")
	for _, want := range []string{"refs/heads/main: pass", "1 new commit (whole tree)", "no tracking refs for origin"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if f.remoteRef("refs/heads/main") != head {
		t.Fatal("main was not pushed")
	}
	f.assertRecorded(head)

	// An update covers remote..local and diffs from the remote's commit.
	f.g.Write("util.go", "package main\n\nfunc util() {}\n")
	next := f.g.Commit("util")
	out = f.mustPush()
	for _, want := range []string{"refs/heads/main: pass", "1 new commit from " + short(head), "1 changed file", "3 files packed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	f.assertRecorded(next)
	// A push with nothing new does not run the hook's check at all (git
	// does not call it, or calls it with no refs).
	out = f.mustPush()
	if strings.Contains(out, "FAIL") {
		t.Fatalf("up-to-date push: %s", out)
	}
}

func TestSecretAddedThenRemovedBlocks(t *testing.T) {
	f := newFixture(t)
	f.mustPush("-u", "origin", "main")
	before := f.remoteRef("refs/heads/main")
	token := fakeToken(1)

	f.g.Write("docs/notes.md", "# notes\n\nsome notes\n")
	f.g.Commit("notes")
	f.g.Write("app/config.py", "DEBUG = False\nGITHUB_TOKEN = \""+token+"\"\n")
	second := f.g.Commit("add config")
	f.g.Write("app/config.py", "DEBUG = False\nGITHUB_TOKEN = os.environ[\"GITHUB_TOKEN\"]\n")
	f.g.Commit("read the token from the environment")

	out, err := f.push()
	if err == nil {
		t.Fatalf("push with a secret in its history passed:\n%s", out)
	}
	if got := f.remoteRef("refs/heads/main"); got != before {
		t.Fatalf("remote main moved to %s", got)
	}
	for _, want := range []string{
		"refs/heads/main: FAIL", "3 new commits", "push blocked",
		short(second) + " app/config.py:2 github-pat",
		"gitleaks:allow", ".gitleaksignore", "rotate", "git push --no-verify",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, token) {
		t.Fatal("the secret value is in the hook's output")
	}
	head := f.g.Git("rev-parse", "HEAD")
	f.assertRecorded(head)
	for _, name := range []string{short(head) + ".pack.json", short(head) + ".record.json"} {
		data, err := os.ReadFile(filepath.Join(f.g.Dir, ".git", "ctxpack", "prepush", name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), token) {
			t.Fatalf("the secret value is in %s", name)
		}
	}

	// The bypass the message names works.
	f.mustPush("--no-verify")
	if f.remoteRef("refs/heads/main") != head {
		t.Fatal("--no-verify did not push")
	}
}

func TestGitleaksIgnoreFingerprintAllows(t *testing.T) {
	f := newFixture(t)
	f.mustPush("-u", "origin", "main")
	f.g.Write("fixtures/token.txt", "token: "+fakeToken(2)+"\n")
	added := f.g.Commit("fixture token")
	f.g.Remove("fixtures/token.txt")
	f.g.Commit("drop it")
	if out, err := f.push(); err == nil {
		t.Fatalf("passed:\n%s", out)
	}
	// A push that brings its own .gitleaksignore does not loosen its own
	// check: the configuration of the push's base applies.
	f.g.Write(".gitleaksignore", added+":fixtures/token.txt:github-pat:1\n")
	f.g.Commit("ignore the fixture token")
	if out, err := f.push(); err == nil || !strings.Contains(out, "refs/heads/main: FAIL") || !strings.Contains(out, "the base's applies") {
		t.Fatalf("the push's own .gitleaksignore applied:\n%s", out)
	}
	// Once the remote has the ignore file, it applies to what follows.
	f.g.Git("reset", "-q", "--hard", "HEAD~3")
	f.g.Write(".gitleaksignore", "fixtures/token.txt:github-pat:1\n")
	f.g.Commit("ignore the fixture token")
	f.mustPush()
	f.g.Write("fixtures/token.txt", "token: "+fakeToken(2)+"\n")
	f.g.Commit("fixture token")
	f.g.Remove("fixtures/token.txt")
	f.g.Commit("drop it")
	out := f.mustPush()
	if !strings.Contains(out, "refs/heads/main: pass") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestNewBranch(t *testing.T) {
	f := newFixture(t)
	f.mustPush("-u", "origin", "main")
	mainHead := f.g.Git("rev-parse", "HEAD")

	f.g.Git("checkout", "-q", "-b", "feature")
	f.g.Write("feature.go", "package main\n\nfunc feature() {}\n")
	f.g.Commit("feature")
	f.g.Write("feature_test.go", "package main\n")
	f.g.Commit("feature test")
	out := f.mustPush("-u", "origin", "feature")
	for _, want := range []string{"refs/heads/feature: pass", "2 new commits", "from " + short(mainHead), "new ref: checking the commits not on origin's"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	f.assertRecorded(f.g.Git("rev-parse", "HEAD"))

	// A new branch at a commit the remote has publishes nothing new.
	out = f.mustPush("origin", "main:refs/heads/copy")
	if !strings.Contains(out, "refs/heads/copy: skipped, no new commits") {
		t.Errorf("output:\n%s", out)
	}

	// A new branch with a secret in a new commit is blocked; commits the
	// remote already has are not scanned again.
	f.g.Git("checkout", "-q", "-b", "leaky", "main")
	f.g.Write("deploy.sh", "#!/bin/sh\nexport GH_TOKEN="+fakeToken(3)+"\n")
	leak := f.g.Commit("deploy")
	out, err := f.push("origin", "leaky")
	if err == nil {
		t.Fatalf("passed:\n%s", out)
	}
	if !strings.Contains(out, "1 new commit") || !strings.Contains(out, short(leak)+" deploy.sh:2 github-pat") {
		t.Fatalf("output:\n%s", out)
	}
	if f.remoteRef("refs/heads/leaky") != "" {
		t.Fatal("leaky was pushed")
	}
}

func TestBranchDeletion(t *testing.T) {
	f := newFixture(t)
	f.g.Git("branch", "old")
	f.mustPush("origin", "main", "old")
	out := f.mustPush("origin", "--delete", "old")
	if !strings.Contains(out, "refs/heads/old: skipped, deleted") {
		t.Fatalf("output:\n%s", out)
	}
	if f.remoteRef("refs/heads/old") != "" {
		t.Fatal("old was not deleted")
	}
}

func TestTwoRefsInOnePush(t *testing.T) {
	f := newFixture(t)
	f.mustPush("-u", "origin", "main")
	f.g.Write("a.go", "package main\n")
	f.g.Commit("a")
	f.g.Git("checkout", "-q", "-b", "topic")
	f.g.Write("b.go", "package main\n")
	f.g.Commit("b")
	out := f.mustPush("origin", "main", "topic")
	if !strings.Contains(out, "refs/heads/main: pass · 1 new commit") || !strings.Contains(out, "refs/heads/topic: pass") {
		t.Fatalf("output:\n%s", out)
	}
	// topic is new: main's old value is on the remote, and main's new commit
	// is not yet, so topic covers 2 commits.
	if !strings.Contains(out, "refs/heads/topic: pass · 2 new commits") {
		t.Fatalf("output:\n%s", out)
	}

	// One bad ref blocks the whole push.
	f.g.Git("checkout", "-q", "main")
	f.g.Write("c.go", "package main\n")
	f.g.Commit("c")
	mainHead := f.g.Git("rev-parse", "HEAD")
	f.g.Git("checkout", "-q", "topic")
	f.g.Write("secret.env", "GITHUB_TOKEN="+fakeToken(4)+"\n")
	f.g.Commit("env")
	mainBefore, topicBefore := f.remoteRef("refs/heads/main"), f.remoteRef("refs/heads/topic")
	out, err := f.push("origin", "main", "topic")
	if err == nil {
		t.Fatalf("passed:\n%s", out)
	}
	if !strings.Contains(out, "refs/heads/main: pass") || !strings.Contains(out, "refs/heads/topic: FAIL") {
		t.Fatalf("output:\n%s", out)
	}
	if f.remoteRef("refs/heads/main") != mainBefore || f.remoteRef("refs/heads/topic") != topicBefore || mainBefore == mainHead {
		t.Fatal("a ref moved on the remote")
	}
}

func TestTags(t *testing.T) {
	f := newFixture(t)
	f.mustPush("-u", "origin", "main")
	// A lightweight tag of a pushed commit publishes nothing new.
	f.g.Git("tag", "v0")
	out := f.mustPush("origin", "v0")
	if !strings.Contains(out, "refs/tags/v0: skipped, no new commits") {
		t.Fatalf("output:\n%s", out)
	}
	// An annotated tag of a new commit is checked like a branch.
	f.g.Write("release.txt", "1.0\n")
	c := f.g.Commit("release")
	f.g.Git("tag", "-a", "-m", "v1", "v1")
	out = f.mustPush("origin", "v1")
	if !strings.Contains(out, "refs/tags/v1: pass · 1 new commit") {
		t.Fatalf("output:\n%s", out)
	}
	f.assertRecorded(c)
	// A tag on a commit that adds a secret is blocked.
	f.g.Write("ci.yml", "token: "+fakeToken(5)+"\n")
	leak := f.g.Commit("ci")
	f.g.Git("tag", "v2")
	out, err := f.push("origin", "v2")
	if err == nil || !strings.Contains(out, short(leak)+" ci.yml:1 github-pat") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	if f.remoteRef("refs/tags/v2") != "" {
		t.Fatal("v2 was pushed")
	}
}

func TestExistingHookKeptRunAndRestored(t *testing.T) {
	e := newEnv(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	e.must(t.TempDir(), "git", "init", "-q", "--bare", remote)
	g := gittest.New(t)
	g.Git("remote", "add", "origin", remote)
	g.Write("main.go", "package main\n")
	g.Commit("init")
	logFile := filepath.Join(t.TempDir(), "orig.log")
	hook := filepath.Join(g.Dir, ".git", "hooks", "pre-push")
	orig := "#!/bin/sh\necho \"args: $*\" >>'" + logFile + "'\ncat >>'" + logFile + "'\nexit ${ORIG_EXIT:-0}\n"
	if err := os.WriteFile(hook, []byte(orig), 0o750); err != nil {
		t.Fatal(err)
	}
	out := e.must(g.Dir, ctxpackBin(), "hook", "install")
	if !strings.Contains(out, "kept as "+hook+".ctxpack-orig") {
		t.Fatalf("install: %s", out)
	}
	// Idempotent: a second install changes nothing.
	out = e.must(g.Dir, ctxpackBin(), "hook", "install")
	if !strings.Contains(out, "already installed") {
		t.Fatalf("second install: %s", out)
	}
	if data, _ := os.ReadFile(hook + ".ctxpack-orig"); string(data) != orig {
		t.Fatal("the kept hook changed")
	}

	f := &fixture{env: e, g: g, remote: remote}
	out = f.mustPush("origin", "main")
	if !strings.Contains(out, "refs/heads/main: pass") {
		t.Fatalf("push: %s", out)
	}
	head := g.Git("rev-parse", "HEAD")
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	want := "args: origin " + remote + "\nrefs/heads/main " + head + " refs/heads/main " + strings.Repeat("0", 40) + "\n"
	if string(log) != want {
		t.Fatalf("the previous hook saw\n%q\nwant\n%q", log, want)
	}

	// Its failure blocks the push, before ctxpack runs.
	g.Write("x.go", "package main\n")
	g.Commit("x")
	e.path = binDir + string(os.PathListSeparator) + os.Getenv("PATH")
	cmd := exec.Command("git", "push", "origin", "main")
	cmd.Dir = g.Dir
	cmd.Env = append(e.vars(), "ORIG_EXIT=3")
	outb, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(outb), "the previous pre-push hook") || !strings.Contains(string(outb), "exit 3") {
		t.Fatalf("err %v:\n%s", err, outb)
	}
	if strings.Contains(string(outb), "ctxpack pre-push →") {
		t.Fatalf("ctxpack ran after the previous hook failed:\n%s", outb)
	}
	if f.remoteRef("refs/heads/main") != head {
		t.Fatal("main moved")
	}

	// Uninstall restores it exactly: content and mode.
	out = e.must(g.Dir, ctxpackBin(), "hook", "uninstall")
	if !strings.Contains(out, "the previous hook is back") {
		t.Fatalf("uninstall: %s", out)
	}
	data, err := os.ReadFile(hook)
	if err != nil || string(data) != orig {
		t.Fatalf("restored hook %q, %v", data, err)
	}
	fi, err := os.Stat(hook)
	if err != nil || fi.Mode().Perm() != 0o750 {
		t.Fatalf("restored mode %v, %v", fi.Mode(), err)
	}
	if _, err := os.Lstat(hook + ".ctxpack-orig"); !os.IsNotExist(err) {
		t.Fatalf("the kept copy is still there: %v", err)
	}
	// Uninstalling again does nothing; a foreign hook is never removed.
	out = e.must(g.Dir, ctxpackBin(), "hook", "uninstall")
	if !strings.Contains(out, "is another hook, left as it is") {
		t.Fatalf("second uninstall: %s", out)
	}
}

func TestMissingBinaryBlocksWithMessage(t *testing.T) {
	e := newEnv(t)
	// A PATH without ctxpack: only the directories of git and sh.
	var dirs []string
	for _, tool := range []string{"git", "sh", "mktemp", "cat", "rm", "dirname"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s not found", tool)
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	e.path = strings.Join(dirs, string(os.PathListSeparator))
	t.Setenv("PATH", e.path)
	if p, err := exec.LookPath("ctxpack"); err == nil {
		t.Skipf("a ctxpack is installed system-wide (%s)", p)
	}
	// Install with a copy of the binary, then remove the copy.
	copyDir := t.TempDir()
	data, err := os.ReadFile(ctxpackBin())
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(copyDir, "ctxpack")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	e.must(t.TempDir(), "git", "init", "-q", "--bare", remote)
	g := gittest.New(t)
	g.Git("remote", "add", "origin", remote)
	g.Write("main.go", "package main\n")
	g.Commit("init")
	e.must(g.Dir, bin, "hook", "install")
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	f := &fixture{env: e, g: g, remote: remote}
	out, err := f.push("origin", "main")
	if err == nil {
		t.Fatalf("push passed without ctxpack:\n%s", out)
	}
	for _, want := range []string{"the ctxpack binary was not found", "installed as " + bin, "no ctxpack on PATH", "git push --no-verify", "ctxpack hook uninstall"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if f.remoteRef("refs/heads/main") != "" {
		t.Fatal("main was pushed")
	}
	// With ctxpack back on PATH, the hook falls back to it.
	f.path = binDir + string(os.PathListSeparator) + e.path
	out = f.mustPush("origin", "main")
	if !strings.Contains(out, "refs/heads/main: pass") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestTagAndBranchAtOneCommitShareARun(t *testing.T) {
	f := newFixture(t)
	f.mustPush("-u", "origin", "main")
	f.g.Write("d.txt", "d\n")
	c := f.g.Commit("d")
	f.g.Git("tag", "v3")
	out := f.mustPush("origin", "main", "v3")
	if !strings.Contains(out, "refs/heads/main: pass · 1 new commit") || !strings.Contains(out, "refs/tags/v3: pass, its commits are checked with refs/heads/main") {
		t.Fatalf("output:\n%s", out)
	}
	f.assertRecorded(c)
	// The note holds main's record (the tag's run was not a separate one).
	if note := f.g.Git("notes", "--ref", "ctxpack", "show", c); !strings.Contains(note, `"ref":"refs/heads/main"`) {
		t.Fatalf("note: %s", note)
	}
}

// TestHooksPathAndWorktree installs where git looks for hooks: core.hooksPath
// (relative to the work tree) and, from a linked worktree, the main
// repository's hooks; the push from the worktree runs the hook.
func TestHooksPathAndWorktree(t *testing.T) {
	f := newFixture(t) // installed in .git/hooks
	g := f.g
	// Locate reads the config files of this process's environment: make it
	// the one git runs with.
	t.Setenv("HOME", f.home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	os.Unsetenv("GIT_CONFIG_GLOBAL")
	t.Setenv("GIT_CONFIG_COUNT", "")
	wt := filepath.Join(t.TempDir(), "wt")
	g.Git("worktree", "add", "-q", "-b", "wt-branch", wt)
	gitPath := func(dir string) string {
		out := f.must(dir, "git", "rev-parse", "--path-format=absolute", "--git-path", "hooks")
		return strings.TrimSpace(out)
	}
	loc, err := hooks.Locate(wt)
	if err != nil {
		t.Fatal(err)
	}
	if want := gitPath(wt); loc.Dir != want || loc.From != "default" {
		t.Fatalf("worktree hooks %s (%s), git says %s", loc.Dir, loc.From, want)
	}
	if _, err := os.Stat(filepath.Join(wt, ".git")); err != nil {
		t.Fatal(err)
	}
	out := f.must(wt, ctxpackBin(), "hook", "install")
	if !strings.Contains(out, "already installed") {
		t.Fatalf("install from the worktree: %s", out)
	}
	if err := os.WriteFile(filepath.Join(wt, "wt.txt"), []byte("wt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.must(wt, "git", "add", "-A")
	f.must(wt, "git", "commit", "-q", "-m", "wt")
	out = f.must(wt, "git", "push", "origin", "wt-branch")
	if !strings.Contains(out, "refs/heads/wt-branch: pass") {
		t.Fatalf("push from the worktree:\n%s", out)
	}
	// The state and records are in the common dir.
	head := strings.TrimSpace(f.must(wt, "git", "rev-parse", "HEAD"))
	if _, err := os.Stat(filepath.Join(g.Dir, ".git", "ctxpack", "prepush", short(head)+".record.json")); err != nil {
		t.Fatal(err)
	}

	// core.hooksPath, relative: the hook goes there, and git runs it.
	g.Git("config", "core.hooksPath", "githooks")
	loc, err = hooks.Locate(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := gitPath(g.Dir); loc.Dir != want || !strings.HasSuffix(loc.From, "config") {
		t.Fatalf("hooksPath %s (%s), git says %s", loc.Dir, loc.From, want)
	}
	out = f.must(g.Dir, ctxpackBin(), "hook", "install")
	if !strings.Contains(out, filepath.Join(g.Dir, "githooks", "pre-push")) {
		t.Fatalf("install: %s", out)
	}
	g.Write("hp.txt", "x\n")
	g.Commit("hp")
	out = f.mustPush("origin", "main")
	if !strings.Contains(out, "ctxpack pre-push → origin") {
		t.Fatalf("hook in core.hooksPath did not run:\n%s", out)
	}
	// Global config, with ~ expanded; the repository's setting wins over it.
	global := filepath.Join(f.home, ".gitconfig")
	if err := os.WriteFile(global, []byte("[core]\n\thooksPath = ~/global-hooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if loc, _ := hooks.Locate(g.Dir); loc.Dir != filepath.Join(g.Dir, "githooks") {
		t.Fatalf("local config should win: %s", loc.Dir)
	}
	g.Git("config", "--unset", "core.hooksPath")
	loc, err = hooks.Locate(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := gitPath(g.Dir); loc.Dir != filepath.Join(f.home, "global-hooks") || loc.Dir != want || loc.From != global {
		t.Fatalf("global hooksPath %s (%s), git says %s", loc.Dir, loc.From, want)
	}
}

func TestPreCommitFramework(t *testing.T) {
	f := newFixture(t)
	f.mustPush("-u", "origin", "main")
	from := f.g.Git("rev-parse", "HEAD")
	f.g.Write("k.txt", "key: "+fakeToken(6)+"\n")
	to := f.g.Commit("k")
	cmd := exec.Command(ctxpackBin(), "hook", "pre-push", "--from-pre-commit")
	cmd.Dir = f.g.Dir
	cmd.Env = append(f.vars(),
		"PRE_COMMIT_FROM_REF="+from, "PRE_COMMIT_TO_REF="+to,
		"PRE_COMMIT_REMOTE_NAME=origin", "PRE_COMMIT_REMOTE_URL="+f.remote,
		"PRE_COMMIT_LOCAL_BRANCH=refs/heads/main", "PRE_COMMIT_REMOTE_BRANCH=refs/heads/main")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), short(to)+" k.txt:1 github-pat") {
		t.Fatalf("err %v:\n%s", err, out)
	}
	// Without the refs (pre-commit run --hook-stage pre-push): HEAD as a new ref.
	cmd = exec.Command(ctxpackBin(), "hook", "pre-push", "--from-pre-commit")
	cmd.Dir = f.g.Dir
	cmd.Env = f.vars()
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "new ref: checking the commits not on origin's 1 tracking ref") {
		t.Fatalf("err %v:\n%s", err, out)
	}
}

// TestPushingNotes checks the records themselves can be pushed: the notes ref
// is checked, but no note is written on a notes commit (that would move the
// ref being pushed).
func TestPushingNotes(t *testing.T) {
	f := newFixture(t)
	f.mustPush("-u", "origin", "main")
	tip := f.g.Git("rev-parse", "refs/notes/ctxpack")
	out := f.mustPush("origin", "refs/notes/*:refs/notes/*")
	if !strings.Contains(out, "refs/notes/ctxpack: pass") || strings.Contains(out, "note refs/notes/ctxpack on") {
		t.Fatalf("output:\n%s", out)
	}
	if f.g.Git("rev-parse", "refs/notes/ctxpack") != tip || f.remoteRef("refs/notes/ctxpack") != tip {
		t.Fatal("the notes ref moved during its push")
	}
}

// TestForcePush covers the commits since the merge base, diffed from it.
func TestForcePush(t *testing.T) {
	f := newFixture(t)
	base := f.g.Git("rev-parse", "HEAD")
	f.g.Write("a.txt", "a\n")
	f.g.Commit("a")
	f.g.Write("b.txt", "b\n")
	f.g.Commit("b")
	f.mustPush("-u", "origin", "main")
	f.g.Git("reset", "-q", "--hard", base)
	f.g.Write("c.txt", "c\n")
	f.g.Commit("c")
	f.g.Write("d.txt", "d\n")
	d := f.g.Commit("d")
	out := f.mustPush("--force", "origin", "main")
	if !strings.Contains(out, "refs/heads/main: pass · 2 new commits from "+short(base)+" · 2 changed files") {
		t.Fatalf("output:\n%s", out)
	}
	if f.remoteRef("refs/heads/main") != d {
		t.Fatal("not pushed")
	}
}

// The hook's state directories are not followed where the repository
// planted a link (a repository from a tarball or a restored CI cache
// brings its .git): the push is blocked with a message naming the link,
// and nothing is written where it points.
func TestPlantedStateLinkBlocks(t *testing.T) {
	for _, link := range []string{"ctxpack", "ctxpack/prepush"} {
		t.Run(link, func(t *testing.T) {
			f := newFixture(t)
			outside := t.TempDir()
			path := filepath.Join(f.g.Dir, ".git", filepath.FromSlash(link))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, path); err != nil {
				t.Skip(err)
			}
			out, err := f.push("-u", "origin", "main")
			if err == nil {
				t.Fatalf("push through a planted link passed:\n%s", out)
			}
			if !strings.Contains(out, path+" is a symbolic link") || !strings.Contains(out, "remove it") {
				t.Errorf("output does not name the link and the fix:\n%s", out)
			}
			if f.remoteRef("refs/heads/main") != "" {
				t.Error("main was pushed")
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Fatalf("wrote %s where .git/%s points", entries[0].Name(), link)
			}
			// Removed, the directory is made again and the push goes.
			os.Remove(path)
			f.mustPush("-u", "origin", "main")
			f.assertRecorded(f.g.Git("rev-parse", "HEAD"))
		})
	}
}
