package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/transparency"
)

// buildCLI builds the ctxpack binary for tests that need a real process.
func buildCLI(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "ctxpack")
	cmd := exec.Command("go", "build", "-o", exe, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return exe
}

// TestKillDuringWrite kills `ctxpack pack` at random moments, again and
// again, alternating two commits whose packs differ: whatever is left on
// disk, a pack and a record from two runs are never taken for a pair (read
// refuses them), a SIGTERM leaves no temporary file, and the next run
// removes what a SIGKILL left.
func TestKillDuringWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it 24 times")
	}
	exe := buildCLI(t)
	g := gittest.New(t)
	for i := range 300 {
		g.Write(filepath.Join("src", "f"+string(rune('a'+i%26))+strings.Repeat("x", i/26)+".go"), "package src\n\n"+strings.Repeat("// filler line of text\n", 200))
	}
	first := g.Commit("first")
	g.Write("src/new.go", "package src\n")
	second := g.Commit("second")
	out := t.TempDir()
	packFile := filepath.Join(out, "pack.json")
	r := rand.New(rand.NewPCG(1, 2))

	run := func(commit string) *exec.Cmd {
		cmd := exec.Command(exe, "pack", "-C", g.Dir, "--commit", commit, "--scope", "tree", "--type", "full", "-o", packFile)
		cmd.Env = append(gittest.Env(t.TempDir()), "SOURCE_DATE_EPOCH=1700000000")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	start := time.Now()
	if err := run(first).Wait(); err != nil {
		t.Fatal(err)
	}
	full := time.Since(start)
	temps := func() []string {
		var names []string
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".ctxpack-tmp-") {
				names = append(names, e.Name())
			}
		}
		return names
	}
	mismatches := 0
	for i := range 24 {
		commit := []string{first, second}[i%2]
		cmd := run(commit)
		time.Sleep(time.Duration(r.Int64N(int64(full + full/4))))
		sig := syscall.SIGTERM
		if i%3 == 2 {
			sig = syscall.SIGKILL
		}
		_ = cmd.Process.Signal(sig)
		_ = cmd.Wait()
		if sig == syscall.SIGTERM {
			if left := temps(); len(left) > 0 {
				t.Fatalf("run %d: SIGTERM left %v", i, left)
			}
		}
		data, err := os.ReadFile(packFile)
		if err != nil {
			t.Fatalf("run %d: the pack is gone: %v", i, err)
		}
		rd, err := os.ReadFile(packFile + ".record.json")
		if err != nil {
			t.Fatalf("run %d: the record is gone: %v", i, err)
		}
		rec, err := transparency.ParseRecord(rd)
		if err != nil {
			t.Fatalf("run %d: half-written record: %v", i, err)
		}
		var p pack.Pack
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatalf("run %d: half-written pack: %v", i, err)
		}
		code, _, stderr := runCLI(t, "read", packFile)
		if transparency.CheckPair(rec, data, p.PackID) != nil {
			mismatches++
			if code == 0 || !strings.Contains(stderr, "is not the record of") {
				t.Fatalf("run %d: read took a record of another pack: exit %d %s", i, code, stderr)
			}
		} else if code != 0 {
			t.Fatalf("run %d: read of a matching pair: exit %d %s", i, code, stderr)
		}
	}
	if err := run(second).Wait(); err != nil {
		t.Fatal(err)
	}
	if left := temps(); len(left) > 0 {
		t.Fatalf("a complete run left %v", left)
	}
	t.Logf("%d of 24 kills left a pack and a record of two runs (refused by read)", mismatches)
}

// TestReadAndAuditRefuseAnotherPacksRecord pairs a pack with the record of
// another pack: read refuses it and audit fails with record_mismatch.
func TestReadAndAuditRefuseAnotherPacksRecord(t *testing.T) {
	g := fixtureRepo(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, c := range []struct{ file, commit string }{{a, "HEAD"}, {b, "HEAD~1"}} {
		if code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", c.commit, "-o", c.file); code != 0 {
			t.Fatalf("pack: %s", stderr)
		}
	}
	if code, _, stderr := runCLI(t, "read", a); code != 0 {
		t.Fatalf("read of a matching pair: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "audit", a); code != 0 {
		t.Fatalf("audit of a matching pair: %d %s", code, stderr)
	}
	rec, _ := os.ReadFile(b + ".record.json")
	os.WriteFile(a+".record.json", rec, 0o644)
	code, _, stderr := runCLI(t, "read", a)
	if code != 1 || !strings.Contains(stderr, "is not the record of") {
		t.Fatalf("read: %d %s", code, stderr)
	}
	code, stdout, _ := runCLI(t, "audit", a)
	if code != 1 || !strings.Contains(stdout, "record_mismatch") {
		t.Fatalf("audit: %d %s", code, stdout)
	}
	if code, _, _ := runCLI(t, "audit", a, "--record", b+".record.json"); code != 1 {
		t.Fatal("audit with another pack's --record passed")
	}
}

// TestConcurrentNotes runs two `ctxpack pack --notes` at once, on a
// repository with no notes ref yet: both records are stored, and verify
// finds no break (a record written before its parent's is reported as
// such, not as a broken chain).
func TestConcurrentNotes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	exe := buildCLI(t)
	for round := 0; round < 4; round++ {
		g := fixtureRepo(t)
		var cmds []*exec.Cmd
		var outs []*bytes.Buffer
		for _, rev := range []string{"HEAD~1", "HEAD"} {
			cmd := exec.Command(exe, "pack", "-C", g.Dir, "--commit", rev, "--notes", "-o", filepath.Join(t.TempDir(), "p.json"))
			cmd.Env = gittest.Env(t.TempDir())
			var out bytes.Buffer
			cmd.Stderr = &out
			cmds, outs = append(cmds, cmd), append(outs, &out)
		}
		for _, c := range cmds {
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
		}
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("round %d: %v\n%s", round, err, outs[i])
			}
		}
		code, stdout, stderr := runCLI(t, "log", "-C", g.Dir)
		if code != 0 || strings.Count(stdout, "pk_") != 2 {
			t.Fatalf("round %d: a record was lost:\n%s%s", round, stdout, stderr)
		}
		code, stdout, _ = runCLI(t, "verify", "-C", g.Dir)
		if code != 0 || strings.Contains(stdout, "BREAK") || !strings.Contains(stdout, "2 record(s), chain intact") {
			t.Fatalf("round %d: verify %d\n%s", round, code, stdout)
		}
	}
}
