package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain lets a test run this binary as ctxpack (for serve over stdio).
func TestMain(m *testing.M) {
	if os.Getenv("CTXPACK_TEST_AS_CTXPACK") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], ioStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
	}
	os.Exit(m.Run())
}

// storedFixture is a repository whose HEAD pack is stored as pr-1.
func storedFixture(t *testing.T) string {
	t.Helper()
	g := fixtureRepo(t)
	out := filepath.Join(t.TempDir(), "pack.json")
	code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", out, "--store", "--store-name", "pr-1")
	if code != 0 || !strings.Contains(stderr, "--store: stored pk_") {
		t.Fatalf("pack --store: exit %d\n%s", code, stderr)
	}
	return g.Dir
}

// ctxpack serve over stdio, driven by the Go SDK's client in a subprocess.
func TestServeStdio(t *testing.T) {
	dir := storedFixture(t)
	cmd := exec.Command(os.Args[0], "serve", "-C", dir)
	cmd.Env = append(os.Environ(), "CTXPACK_TEST_AS_CTXPACK=1")
	cmd.Stderr = os.Stderr
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 3 { // input, output, query
		t.Fatalf("tools: %+v %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "output", Arguments: map[string]any{"action": "read", "name": "pr-1", "profile": "reviewer"}})
	if err != nil || res.IsError {
		t.Fatalf("read: %+v %v", res, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	for _, want := range []string{"- selected_by: name:only_candidate", "func util() {}", "- profile: reviewer"} {
		if !strings.Contains(text, want) {
			t.Fatalf("missing %q in:\n%s", want, text)
		}
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "output", Arguments: map[string]any{"action": "get", "name": "pr-1", "mode": "full"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"code":"invalid_data"`) {
		t.Fatalf("legacy get: %+v %v", res, err)
	}
}

// The default store, .git/ctxpack/store, is not followed where the
// repository planted a link: the command fails naming it, and nothing is
// stored where it points.
func TestStoreLinkedDefaultDirRefused(t *testing.T) {
	g := fixtureRepo(t)
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(g.Dir, ".git", "ctxpack"), 0o755)
	link := filepath.Join(g.Dir, ".git", "ctxpack", "store")
	if err := os.Symlink(outside, link); err != nil {
		t.Skip(err)
	}
	out := filepath.Join(t.TempDir(), "pack.json")
	code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", out, "--store")
	if code == 0 || !strings.Contains(stderr, link+" is a symbolic link") {
		t.Fatalf("pack --store: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "store", "import", out, "-C", g.Dir)
	if code == 0 || !strings.Contains(stderr, link+" is a symbolic link") {
		t.Fatalf("store import: exit %d\n%s", code, stderr)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("wrote %s where the link points", entries[0].Name())
	}
}

func TestStoreCommands(t *testing.T) {
	dir := storedFixture(t)
	code, out, stderr := runCLI(t, "store", "list", "-C", dir, "--json")
	var list struct {
		Packs []struct {
			ID, Name string
			Revision int
		} `json:"packs"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Packs) != 1 || list.Packs[0].Name != "pr-1" {
		t.Fatalf("list: exit %d %s %s", code, out, stderr)
	}
	id := list.Packs[0].ID
	docFile := filepath.Join(t.TempDir(), "review.json")
	os.WriteFile(docFile, []byte(`{"scope":{"description":"util"},"findings":[{"description":"unused","refs":["util.go:3"]}],"qa":{"verdict":"pass"}}`), 0o644)
	// An update without --expected-revision is a usage error.
	if code, _, _ := runCLI(t, "store", "write", "pr-1", "-C", dir, "--document", docFile); code != exitUsage {
		t.Fatalf("write without --expected-revision: exit %d", code)
	}
	if code, out, stderr := runCLI(t, "store", "write", "pr-1", "-C", dir, "--expected-revision", "1", "--document", docFile); code != 0 || !strings.Contains(out, `"revision": 2`) {
		t.Fatalf("write: exit %d %s %s", code, out, stderr)
	}
	// A stale revision: the v3 error on stdout, exit 1.
	code, out, _ = runCLI(t, "store", "write", id, "-C", dir, "--expected-revision", "1", "--document", docFile)
	if code != exitFailure || !strings.Contains(out, `"code": "revision_conflict"`) {
		t.Fatalf("stale write: exit %d %s", code, out)
	}
	if code, out, stderr := runCLI(t, "store", "finalize", "pr-1", "-C", dir, "--expected-revision", "2"); code != 0 || !strings.Contains(out, `"status": "finalized"`) {
		t.Fatalf("finalize: exit %d %s %s", code, out, stderr)
	}
	if code, out, _ := runCLI(t, "store", "read", "pr-1", "-C", dir); code != 0 || !strings.Contains(out, "selected_status: finalized") || !strings.Contains(out, "ctxpack store read "+id) {
		t.Fatalf("read: exit %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "store", "ttl", id, "-C", dir, "--extend-minutes", "60"); code != 0 || !strings.Contains(out, `"freshness_state": "fresh"`) {
		t.Fatalf("ttl: exit %d %s", code, out)
	}
	// Import the pack file into another store: idempotent, then delete.
	other := t.TempDir()
	packFile := filepath.Join(dir, ".git", "ctxpack", "store", "packs", id, "pack.json")
	recFile := filepath.Join(dir, ".git", "ctxpack", "store", "packs", id, "record.json")
	imp := t.TempDir()
	data, _ := os.ReadFile(packFile)
	rec, _ := os.ReadFile(recFile)
	os.WriteFile(filepath.Join(imp, "pack.json"), data, 0o644)
	os.WriteFile(filepath.Join(imp, "pack.record.json"), rec, 0o644)
	for i, want := range []string{`"stored": true`, `"stored": false`} {
		if code, out, stderr := runCLI(t, "store", "import", imp, "-C", dir, "--store-dir", other, "--name", "pr-9"); code != 0 || !strings.Contains(out, want) {
			t.Fatalf("import %d: exit %d %s %s", i, code, out, stderr)
		}
	}
	if code, out, _ := runCLI(t, "store", "delete", "pr-9", "-C", dir, "--store-dir", other); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("delete: exit %d %s", code, out)
	}
	if code, _, _ := runCLI(t, "store", "get", "pk_aaaaaaaa", "-C", dir); code != exitFailure {
		t.Fatalf("get of a missing entry: exit %d", code)
	}
}
