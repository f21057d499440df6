package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pipeline"
)

// runWith runs ctxpack in-process with the given standard input and
// terminal flags.
func runWith(t *testing.T, ios ioStreams, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ios.Out, ios.ErrOut = &out, &errOut
	if ios.In == nil {
		ios.In = strings.NewReader("")
	}
	code := run(context.Background(), args, ios)
	return code, out.String(), errOut.String()
}

// secretRepo is a repository whose last commit adds a secret.
func secretRepo(t *testing.T) *gittest.Repo {
	g := fixtureRepo(t)
	g.Write("config.go", "package main\n\nvar token = \""+secrettest.Make(7).GitHub+"\"\n")
	g.Commit("config")
	return g
}

// TestExitCodeTable is README's exit-code table: 0 success, 1 a failing
// verdict or a run that failed, 2 a usage error (unknown commands too).
func TestExitCodeTable(t *testing.T) {
	g := fixtureRepo(t)
	bad := secretRepo(t)
	dir := t.TempDir()
	packFile := filepath.Join(dir, "pack.json")
	if code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", packFile); code != 0 {
		t.Fatalf("pack: %d %s", code, stderr)
	}
	notJSON := filepath.Join(dir, "notjson")
	os.WriteFile(notJSON, []byte("{oops"), 0o644)
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"help", []string{"--help"}, exitOK},
		{"bare root prints help", nil, exitOK},
		{"version", []string{"--version"}, exitOK},
		{"pack", []string{"pack", "-C", g.Dir, "--commit", "HEAD", "-o", filepath.Join(dir, "p2.json")}, exitOK},
		{"audit pass", []string{"audit", packFile}, exitOK},
		{"read", []string{"read", packFile}, exitOK},
		{"pack verdict fail", []string{"pack", "-C", bad.Dir, "--commit", "HEAD", "--secrets-action", "fail", "-o", filepath.Join(dir, "p3.json")}, exitFailure},
		{"audit verdict fail", []string{"audit", notJSON}, exitFailure},
		{"missing pack file", []string{"audit", filepath.Join(dir, "nope.json")}, exitFailure},
		{"unknown revision", []string{"pack", "-C", g.Dir, "--commit", "nosuch"}, exitFailure},
		{"unknown command", []string{"nope"}, exitUsage},
		{"unknown store command", []string{"store", "nope"}, exitUsage},
		{"unknown hook command", []string{"hook", "nope"}, exitUsage},
		{"unknown flag", []string{"pack", "--nope"}, exitUsage},
		{"missing argument", []string{"audit"}, exitUsage},
		{"extra argument", []string{"read", packFile, "extra"}, exitUsage},
		{"bad flag value", []string{"pack", "-C", g.Dir, "--format", "yaml"}, exitUsage},
		{"record none", []string{"pack", "-C", g.Dir, "--record", "none", "-o", filepath.Join(dir, "p4.json")}, exitUsage},
		{"record and no-record", []string{"pack", "-C", g.Dir, "--record", "r.json", "--no-record"}, exitUsage},
		{"two documents on stdout", []string{"pack", "-C", g.Dir, "-o", "-", "--record", "-"}, exitUsage},
		{"bad page token", []string{"read", packFile, "--page-token", "garbage"}, exitUsage},
		{"not a pack to read", []string{"read", notJSON}, exitUsage},
		{"stdin twice", []string{"audit", "-", "--record", "-"}, exitUsage},
		{"empty stdin", []string{"audit", "-"}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
		})
	}
}

// TestJSONErrors: with --json every error is one JSON document on stdout in
// the error contract's shape, and the exit code agrees with its code.
func TestJSONErrors(t *testing.T) {
	g := fixtureRepo(t)
	dir := t.TempDir()
	packFile := filepath.Join(dir, "pack.json")
	if code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", packFile); code != 0 {
		t.Fatalf("pack: %d %s", code, stderr)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		kind     string
		wantCode string
	}{
		{"missing pack", []string{"read", "--json", filepath.Join(dir, "nope.json")}, exitFailure, "not_found", "not_found"},
		{"bad page token", []string{"read", "--json", packFile, "--page-token", "garbage"}, exitUsage, "validation", "invalid_data"},
		{"bad profile", []string{"read", "--json", packFile, "--profile", "boss"}, exitUsage, "validation", "invalid_data"},
		{"usage", []string{"read", "--json"}, exitUsage, "validation", "invalid_data"},
		{"audit missing pack", []string{"audit", "--json", filepath.Join(dir, "nope.json")}, exitFailure, "not_found", "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			dec := json.NewDecoder(strings.NewReader(stdout))
			var e map[string]any
			if err := dec.Decode(&e); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
			}
			if dec.More() {
				t.Fatalf("more than one document on stdout:\n%s", stdout)
			}
			if len(e) != 4 || e["kind"] != tt.kind || e["code"] != tt.wantCode || e["message"] == "" {
				t.Fatalf("not the contract shape (kind %s, code %s): %v", tt.kind, tt.wantCode, e)
			}
			if _, ok := e["details"].(map[string]any); !ok {
				t.Fatalf("details is not an object: %v", e)
			}
		})
	}
}

// TestAuditOfNonJSONReportsOnce: a file that is not JSON is one
// schema_invalid failure, not two.
func TestAuditOfNonJSONReportsOnce(t *testing.T) {
	code, stdout, _ := runWith(t, ioStreams{In: strings.NewReader("{not json")}, "audit", "--json", "-")
	if code != exitFailure {
		t.Fatalf("exit %d", code)
	}
	var v audit.Verdict
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Failed) != 1 || v.Failed[0].Code != audit.CodeSchemaInvalid {
		t.Fatalf("failed: %+v", v.Failed)
	}
}

// TestStdinAndStdout: - is standard input for audit and read, and standard
// output for -o, --record and --attest (one of them at a time).
func TestStdinAndStdout(t *testing.T) {
	g := fixtureRepo(t)
	dir := t.TempDir()
	code, packJSON, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", "-")
	if code != 0 || !strings.HasPrefix(stderr, "stdout: ") {
		t.Fatalf("pack -o -: %d %q", code, stderr)
	}
	code, stdout, stderr := runWith(t, ioStreams{In: strings.NewReader(packJSON)}, "audit", "-")
	if code != 0 || !strings.Contains(stdout, "verdict: pass") {
		t.Fatalf("audit -: %d %s %s", code, stdout, stderr)
	}
	code, stdout, stderr = runWith(t, ioStreams{In: strings.NewReader(packJSON)}, "read", "-")
	if code != 0 || !strings.Contains(stdout, "# ctxpack read") {
		t.Fatalf("read -: %d %s %s", code, stdout, stderr)
	}

	// The record on stdout, the pack in a file; no record file beside it.
	packFile := filepath.Join(dir, "pack.json")
	code, record, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", packFile, "--record", "-")
	if code != 0 {
		t.Fatalf("--record -: %d %s", code, stderr)
	}
	if _, err := os.Stat(packFile + ".record.json"); !os.IsNotExist(err) {
		t.Fatalf("a record file was written beside the pack: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); !os.IsNotExist(err) {
		t.Fatalf("a file named - was written: %v", err)
	}
	// The record read from stdin pairs with the pack file.
	code, stdout, stderr = runWith(t, ioStreams{In: strings.NewReader(record)}, "audit", packFile, "--record", "-")
	if code != 0 || !strings.Contains(stdout, "verdict: pass") {
		t.Fatalf("audit --record -: %d %s %s", code, stdout, stderr)
	}
	// Another pack's record read from stdin is caught.
	other := strings.Replace(record, `"pack_sha256":"sha256:`, `"pack_sha256":"sha256:0`, 1)
	if other == record {
		t.Fatal("no pack_sha256 in the record")
	}
	code, stdout, _ = runWith(t, ioStreams{In: strings.NewReader(other)}, "audit", packFile, "--record", "-")
	if code != exitFailure || !strings.Contains(stdout, audit.CodeRecordMismatch) {
		t.Fatalf("a foreign record passed: %d %s", code, stdout)
	}

	// --no-record writes no record file.
	noRec := filepath.Join(dir, "norec.json")
	if code, _, stderr := runCLI(t, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", noRec, "--no-record"); code != 0 {
		t.Fatalf("--no-record: %d %s", code, stderr)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "norec.json pack.json" {
		t.Fatalf("files written: %v", names)
	}
}

// TestTerminalOutput: the pack is not printed on a terminal unless -o - is
// given; on a pipe it is.
func TestTerminalOutput(t *testing.T) {
	g := fixtureRepo(t)
	tty := ioStreams{OutTerminal: true}
	code, stdout, stderr := runWith(t, tty, "pack", "-C", g.Dir, "--commit", "HEAD")
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "-o -") {
		t.Fatalf("pack on a terminal: %d %q %q", code, stdout, stderr)
	}
	code, stdout, _ = runWith(t, tty, "pack", "-C", g.Dir, "--commit", "HEAD", "-o", "-")
	if code != 0 || !strings.HasPrefix(stdout, "{") {
		t.Fatalf("pack -o - on a terminal: %d", code)
	}
	code, stdout, _ = runWith(t, ioStreams{}, "pack", "-C", g.Dir, "--commit", "HEAD")
	if code != 0 || !strings.HasPrefix(stdout, "{") {
		t.Fatalf("pack on a pipe: %d", code)
	}
}

// TestQuiet: -q prints nothing on success and the failures of a failing
// verdict.
func TestQuiet(t *testing.T) {
	g := fixtureRepo(t)
	code, _, stderr := runCLI(t, "-q", "pack", "-C", g.Dir, "--commit", "HEAD", "-o", filepath.Join(t.TempDir(), "p.json"))
	if code != 0 || stderr != "" {
		t.Fatalf("quiet pass: %d %q", code, stderr)
	}
	bad := secretRepo(t)
	code, _, stderr = runCLI(t, "pack", "-q", "-C", bad.Dir, "--commit", "HEAD", "--secrets-action", "fail", "-o", filepath.Join(t.TempDir(), "p.json"))
	if code != exitFailure || !strings.Contains(stderr, "FAIL ") || strings.Contains(stderr, "files included") {
		t.Fatalf("quiet fail: %d %q", code, stderr)
	}
}

// TestVerdictListsAreCapped: at most maxListed warnings and skipped checks
// are listed, the rest counted; -v lists them all; failures are never cut.
func TestVerdictListsAreCapped(t *testing.T) {
	v := audit.NewVerdict()
	for i := range 15 {
		v.Warn(audit.Check{Code: "w", Message: fmt.Sprintf("warning %d", i)})
		v.Fail(audit.Check{Code: "f", Message: fmt.Sprintf("failure %d", i)})
	}
	v.Skip(audit.Check{Code: "s", Message: "skipped\x1b[2J"})
	tests := []struct {
		name          string
		vb            verbosity
		warns, fails  int
		more, skipped bool
	}{
		{"default", verbosity{}, maxListed, 15, true, true},
		{"verbose", verbosity{verbose: true}, 15, 15, false, true},
		{"quiet", verbosity{quiet: true}, 0, 15, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			printVerdict(&b, v, tt.vb)
			out := b.String()
			if n := strings.Count(out, "  warn "); n != tt.warns {
				t.Fatalf("%d warnings listed, want %d:\n%s", n, tt.warns, out)
			}
			if n := strings.Count(out, "  FAIL "); n != tt.fails {
				t.Fatalf("%d failures listed, want %d", n, tt.fails)
			}
			if got := strings.Contains(out, "… and 5 more warnings"); got != tt.more {
				t.Fatalf("count line %v, want %v:\n%s", got, tt.more, out)
			}
			if got := strings.Contains(out, `skipped\u001B[2J`); got != tt.skipped {
				t.Fatalf("escaped skipped line %v, want %v:\n%s", got, tt.skipped, out)
			}
			if strings.Contains(out, "\x1b") {
				t.Fatalf("raw escape in %q", out)
			}
		})
	}
}

// TestProgressLine: a long run's stage is drawn on one line and erased at
// the end; nothing is drawn when stderr is not a terminal or -q is given.
func TestProgressLine(t *testing.T) {
	if newProgress(ioStreams{ErrTerminal: false}, verbosity{}) != nil {
		t.Fatal("progress on a pipe")
	}
	if newProgress(ioStreams{ErrTerminal: true}, verbosity{quiet: true}) != nil {
		t.Fatal("progress with -q")
	}
	var b bytes.Buffer
	p := startProgress(&b, 0)
	p.update(pipeline.Progress{Stage: "scanning and packing", Files: 3, Bytes: 3 << 20})
	p.stop()
	p.update(pipeline.Progress{Stage: "after stop"})
	out := b.String()
	if !strings.Contains(out, "ctxpack: scanning and packing (3 files, 3.0 MiB)") || !strings.HasSuffix(out, "\r\x1b[K") || strings.Contains(out, "after stop") {
		t.Fatalf("progress output %q", out)
	}
	var quiet bytes.Buffer
	p = startProgress(&quiet, 1<<40)
	p.update(pipeline.Progress{Stage: "reading the repository"})
	p.stop()
	if quiet.Len() != 0 {
		t.Fatalf("a short run drew %q", quiet.String())
	}
}
