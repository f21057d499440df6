package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/hooks"
	"github.com/ctxpack/ctxpack/pack"
)

func runCLIStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, ioStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestHookInstallUninstallInProcess(t *testing.T) {
	g := fixtureRepo(t)
	hook := filepath.Join(g.Dir, ".git", "hooks", "pre-push")
	// The test binary is a temporary build: no path is recorded.
	code, stdout, stderr := runCLI(t, "hook", "install", "-C", g.Dir)
	if code != 0 || !strings.Contains(stderr, "temporary build") || !strings.Contains(stdout, "runs ctxpack from PATH") {
		t.Fatalf("install: %d %q %q", code, stdout, stderr)
	}
	data, err := os.ReadFile(hook)
	if err != nil || !hooks.IsOurs(data) || !strings.Contains(string(data), "ctxpack_bin=''") {
		t.Fatalf("hook %q %v", data, err)
	}
	// --binary records an absolute path, quoted for sh.
	dir := filepath.Join(t.TempDir(), "it's here")
	os.MkdirAll(dir, 0o755)
	bin := filepath.Join(dir, "ctxpack")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	code, stdout, _ = runCLI(t, "hook", "install", "-C", g.Dir, "--binary", bin)
	if code != 0 || !strings.Contains(stdout, "updated") {
		t.Fatalf("reinstall: %d %q", code, stdout)
	}
	data, _ = os.ReadFile(hook)
	if !strings.Contains(string(data), `ctxpack_bin='`+strings.ReplaceAll(bin, "'", `'\''`)+`'`) {
		t.Fatalf("hook:\n%s", data)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"hook", "install", "-C", g.Dir, "--binary", "/no/such/ctxpack"}, 2, "--binary"},
		{[]string{"hook", "install", "-C", g.Dir, "--binary", bin, "--path-only"}, 2, "exclude each other"},
		{[]string{"hook", "install", "extra"}, 2, "unknown command"},
		{[]string{"hook", "pre-push", "-C", g.Dir}, 2, "needs git's <remote> and <url>"},
		{[]string{"hook", "pre-push", "a", "b", "c"}, 2, "accepts at most 2 arg"},
	} {
		code, _, stderr := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d %q; want %d %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
	code, stdout, _ = runCLI(t, "hook", "uninstall", "-C", g.Dir)
	if code != 0 || !strings.Contains(stdout, "removed") {
		t.Fatalf("uninstall: %d %q", code, stdout)
	}
	if _, err := os.Lstat(hook); !os.IsNotExist(err) {
		t.Fatal("hook still there")
	}
	code, stdout, _ = runCLI(t, "hook", "uninstall", "-C", g.Dir)
	if code != 0 || !strings.Contains(stdout, "not installed") {
		t.Fatalf("uninstall again: %d %q", code, stdout)
	}
}

func TestHookPrePushInProcess(t *testing.T) {
	g := fixtureRepo(t)
	head := g.Git("rev-parse", "HEAD")
	base := g.Git("rev-parse", "HEAD~1")
	zero := strings.Repeat("0", 40)
	stdin := "refs/heads/main " + head + " refs/heads/main " + base + "\n" +
		"(delete) " + zero + " refs/heads/gone " + base + "\n"
	code, stdout, stderr := runCLIStdin(t, stdin, "hook", "pre-push", "-C", g.Dir, "origin", "https://example.com/r.git")
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	for _, want := range []string{"ctxpack pre-push → origin (https://example.com/r.git)", "refs/heads/main: pass · 1 new commit from " + base[:12], "refs/heads/gone: skipped, deleted"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Nothing to push (git may call the hook with no lines).
	if code, _, stderr := runCLIStdin(t, "", "hook", "pre-push", "-C", g.Dir, "origin", "u"); code != 0 || !strings.Contains(stderr, "nothing to push") {
		t.Fatalf("empty: %d %s", code, stderr)
	}
	// Input that cannot be read blocks the push.
	code, _, stderr = runCLIStdin(t, "garbage\n", "hook", "pre-push", "-C", g.Dir, "origin", "u")
	if code != 1 || !strings.Contains(stderr, "could not be checked") || !strings.Contains(stderr, "--no-verify") {
		t.Fatalf("garbage: %d %s", code, stderr)
	}
	// A tag of a tree is not a commit: blocked.
	tree := g.Git("rev-parse", "HEAD^{tree}")
	code, _, stderr = runCLIStdin(t, "refs/tags/t "+tree+" refs/tags/t "+zero+"\n", "hook", "pre-push", "-C", g.Dir, "origin", "u")
	if code != 1 || !strings.Contains(stderr, "names a tree, not a commit") {
		t.Fatalf("tree tag: %d %s", code, stderr)
	}
	// An unknown remote commit (not fetched): falls back to tracking refs.
	code, _, stderr = runCLIStdin(t, "refs/heads/main "+head+" refs/heads/main "+strings.Repeat("ab", 20)+"\n", "hook", "pre-push", "-C", g.Dir, "origin", "u")
	if code != 0 || !strings.Contains(stderr, "is not in this repository") {
		t.Fatalf("unknown remote sha: %d %s", code, stderr)
	}
}

// TestTaskFromStdinIsBounded: --task - reads standard input under the
// bound a --task file has (it stops reading there), and over it is a
// usage error, before any pack.
func TestTaskFromStdinIsBounded(t *testing.T) {
	g := fixtureRepo(t)
	big := "- [ ] " + strings.Repeat("x", pack.MaxTaskBytes) + "\n"
	code, _, stderr := runCLIStdin(t, big, "pack", "-C", g.Dir, "--task", "-", "-o", filepath.Join(t.TempDir(), "p.json"))
	if code != 2 || !strings.Contains(stderr, "--task: standard input is over") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
