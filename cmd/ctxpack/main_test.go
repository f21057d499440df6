package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack/schema"
)

// runCLI runs ctxpack in-process and returns exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func fixtureRepo(t *testing.T) *gittest.Repo {
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.Write("README.md", "# tool\n\nA tool.\n")
	g.Commit("init")
	g.Write("util.go", "package main\n\nfunc util() {}\n")
	g.Commit("util")
	return g
}

func TestPackCommand(t *testing.T) {
	g := fixtureRepo(t)
	outFile := filepath.Join(t.TempDir(), "pack.json")
	code, stdout, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", outFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" || !strings.Contains(stderr, outFile) {
		t.Fatalf("stdout %q stderr %q", stdout, stderr)
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.ValidatePack(data); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", "-")
	if code != 0 || stdout != string(data) {
		t.Fatalf("stdout pack differs from file pack (exit %d)", code)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatal(err)
	}
}

// The JSON pack is written to its temporary file while it is audited: a
// run whose files cannot all be written (here the record's target is a
// directory) leaves neither the pack nor a temporary file, and a run that
// succeeds leaves the pack and its record, nothing else.
func TestPackWrittenBesideTheAudit(t *testing.T) {
	g := fixtureRepo(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "pack.json")
	recordDir := filepath.Join(dir, "record")
	if err := os.Mkdir(recordDir, 0o755); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		var ns []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			ns = append(ns, e.Name())
		}
		return ns
	}
	code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", out, "--record", recordDir)
	if code != 1 || !strings.Contains(stderr, "not a regular file") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := names(); strings.Join(got, " ") != "record" {
		t.Fatalf("a failed run left %v", got)
	}
	if code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := names(); strings.Join(got, " ") != "pack.json pack.json.record.json record" {
		t.Fatalf("a run left %v", got)
	}
	data, _ := os.ReadFile(out)
	if code, stdout, _ := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", "-"); code != 0 || stdout != string(data) {
		t.Fatalf("the file's pack is not the one written to stdout (exit %d)", code)
	}
}

func TestPackCommandErrors(t *testing.T) {
	g := fixtureRepo(t)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"pack", "--nope"}, 2, "unknown flag: --nope"},
		{"unknown revision", []string{"pack", "-C", g.Dir, "--commit", "nosuch"}, 1, `unknown revision "nosuch"`},
		{"commit and range", []string{"pack", "-C", g.Dir, "--commit", "HEAD", "--base", "HEAD~1"}, 2, "--commit cannot be combined"},
		{"worktree and commit", []string{"pack", "-C", g.Dir, "--worktree", "--commit", "HEAD"}, 2, "--worktree cannot be combined"},
		{"head without base", []string{"pack", "-C", g.Dir, "--head", "HEAD"}, 2, "--head needs --base"},
		{"bad glob", []string{"pack", "-C", g.Dir, "--exclude", "[oops"}, 2, `bad glob "[oops"`},
		{"bad type", []string{"pack", "-C", g.Dir, "--type", "tiny"}, 2, `--type "tiny"`},
		{"missing dir", []string{"pack", "-C", filepath.Join(g.Dir, "nope")}, 1, "no such file or directory"},
		{"unwritable output", []string{"pack", "-C", g.Dir, "-o", filepath.Join(g.Dir, "no", "dir", "p.json")}, 1, "write "},
		{"args", []string{"pack", "extra"}, 2, "unknown command"},
		{"device output", []string{"pack", "-C", g.Dir, "--commit", "HEAD", "-o", "/dev/null"}, 1, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d stderr %q; want exit %d containing %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}

func TestInitAndPolicyCommands(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "init", "-C", dir); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "init", "-C", dir); code != 1 || !strings.Contains(stderr, "already exists") {
		t.Fatalf("second init: %d %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "policy", "-C", dir)
	if code != 0 || !strings.Contains(stdout, "# sha256: sha256:") || !strings.Contains(stdout, "max_files: 200") {
		t.Fatalf("policy: %d %s %s", code, stdout, stderr)
	}
	os.WriteFile(filepath.Join(dir, ".ctxpack.yml"), []byte("version: 1\nlimits:\n  max_filez: 1\n"), 0o644)
	code, _, stderr = runCLI(t, "policy", "-C", dir)
	if code != 1 || !strings.Contains(stderr, `.ctxpack.yml:3: key "limits.max_filez": unknown key`) {
		t.Fatalf("bad policy: %d %s", code, stderr)
	}
}

// TestHostileNamesOnTheTerminal: names reach the verdict lines escaped: no
// terminal escape rewrites them, and no line can start a workflow command.
func TestHostileNamesOnTheTerminal(t *testing.T) {
	g := gittest.New(t)
	g.Write("README.md", "# x\n")
	g.Commit("base")
	name := "x\n::warning::pwned\x1b[2K\rverdict: pass.go"
	g.Write(name, "package x\n\nvar token = \""+secrettest.Make(41).GitHub+"\"\n")
	g.Commit("hostile name")
	code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", filepath.Join(t.TempDir(), "p.json"))
	if code != 1 || !strings.Contains(stderr, "secret_in_history") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "::") || strings.ContainsAny(line, "\x1b\r") {
			t.Fatalf("unsafe line %q in:\n%s", line, stderr)
		}
	}
	if !strings.Contains(stderr, `x\n::warning::pwned\u001B[2K\rverdict: pass.go`) {
		t.Fatalf("the name is not shown escaped:\n%s", stderr)
	}
}
