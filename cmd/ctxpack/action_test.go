package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/secrettest"
)

func withActionEnv(t *testing.T, env map[string]string) {
	t.Helper()
	old := actionGetenv
	actionGetenv = func(k string) string { return env[k] }
	t.Cleanup(func() { actionGetenv = old })
}

func TestActionCommand(t *testing.T) {
	g := fixtureRepo(t)
	head := g.Git("rev-parse", "HEAD")
	base := g.Git("rev-parse", "HEAD~1")
	dir := t.TempDir()
	event := filepath.Join(dir, "event.json")
	env := map[string]string{
		"GITHUB_WORKSPACE":    g.Dir,
		"GITHUB_EVENT_NAME":   "push",
		"GITHUB_EVENT_PATH":   event,
		"GITHUB_SHA":          head,
		"GITHUB_OUTPUT":       filepath.Join(dir, "out"),
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
	}
	withActionEnv(t, env)

	// A deleted branch: nothing to do, exit 0.
	os.WriteFile(event, []byte(`{"ref":"refs/heads/x","before":"`+head+`","after":"0000000000000000000000000000000000000000","deleted":true,"commits":[],"head_commit":null}`), 0o644)
	code, stdout, stderr := runCLI(t, "action")
	if code != 0 || !strings.Contains(stdout, "nothing to pack") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}

	// A push: packs, warns that it cannot upload outside Actions, exit 0.
	os.WriteFile(event, []byte(`{"ref":"refs/heads/main","before":"`+base+`","after":"`+head+`","commits":[{"id":"`+head+`"}],"head_commit":{"id":"`+head+`"}}`), 0o644)
	code, stdout, stderr = runCLI(t, "action")
	if code != 0 || !strings.Contains(stdout, "artifact not uploaded") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	out, _ := os.ReadFile(env["GITHUB_OUTPUT"])
	if !strings.Contains(string(out), "verdict<<") || !strings.Contains(string(out), "\npass\n") {
		t.Fatalf("outputs %q", out)
	}

	// A missing payload is a clear error, exit 1, shown once in the job's
	// log: as the ::error:: annotation, not again on stderr.
	env["GITHUB_EVENT_PATH"] = filepath.Join(dir, "missing.json")
	code, stdout, stderr = runCLI(t, "action")
	if code != 1 || strings.Count(stdout+stderr, "read the event payload") != 1 || !strings.Contains(stdout, "::error::") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}

	// Arguments are a usage error.
	if code, _, _ := runCLI(t, "action", "extra"); code != 2 {
		t.Fatalf("exit %d", code)
	}
}

func TestActionCommandFailsOnViolation(t *testing.T) {
	g := fixtureRepo(t)
	base := g.Git("rev-parse", "HEAD")
	g.Write("deploy.go", "package main\n\nconst token = \""+secrettest.Make(3).GitHub+"\"\n")
	head := g.Commit("oops")
	dir := t.TempDir()
	event := filepath.Join(dir, "event.json")
	os.WriteFile(event, []byte(`{"ref":"refs/heads/main","before":"`+base+`","after":"`+head+`","commits":[],"head_commit":{"id":"`+head+`"}}`), 0o644)
	withActionEnv(t, map[string]string{
		"GITHUB_WORKSPACE": g.Dir, "GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": event, "GITHUB_SHA": head,
		"GITHUB_OUTPUT": filepath.Join(dir, "out"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
	})
	code, stdout, stderr := runCLI(t, "action")
	if code != 1 || !strings.Contains(stderr, "failed the policy") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}
