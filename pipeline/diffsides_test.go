package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
)

// TestDiffShowsNoLineOfAKey: a change that edits a file holding a private
// key away from its BEGIN and END lines has a diff whose own text holds no
// key, yet shows its lines: as context (new and old versions), as the
// hunk's heading, as removed lines (the old version), and from an old
// version the builder never scanned as a file (classed binary); for a
// commit, a range and the work tree. No line of the key leaves in anything
// a run lets out, in every secrets action; the verdict passes under redact
// and fails under fail; the audit against the repository accepts the
// redacted pack, and fails one that sends the repository's lines instead.
func TestDiffShowsNoLineOfAKey(t *testing.T) {
	key := secrettest.Make(1214).RSAKey
	lines := strings.Split(key, "\n")
	body := lines[1 : len(lines)-1]
	keyFile := func(k []string) string { return "first\n" + strings.Join(k, "\n") + "\nz1\nz2\nz3\nz4\n" }
	edited := append([]string(nil), lines...)
	edited[7] = "X" + edited[7][1:]
	shortened := append(append([]string(nil), lines[:4]...), lines[9:]...)
	var control strings.Builder // control bytes: the file is classed binary, never scanned as one
	for range 20 {
		control.WriteString(strings.Repeat("\x01", 20) + "\n")
	}
	tests := []struct {
		name, old, new string
		// version is the version whose secret a diff shows that has the
		// repository's lines where the pack's has placeholders: on every
		// line, or on removed lines only (removed).
		version string
		removed bool
	}{
		{"a line in the middle of the key edited", keyFile(lines), keyFile(edited), "new", false},
		{"lines of the key removed", keyFile(lines), keyFile(shortened), "old", true},
		{"the old version classed binary", control.String() + keyFile(lines), keyFile(edited), "old", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := gittest.New(t)
			g.Write("main.go", "package main\n\nfunc main() {}\n")
			g.Write("deploy/key.txt", tt.old)
			g.Commit("base")
			g.Write("deploy/key.txt", tt.new)
			g.Commit("edit the key file")
			for _, action := range []string{"redact", "exclude", "fail"} {
				for _, opts := range []PackOptions{{Commit: "HEAD"}, {Base: "HEAD~1", Head: "HEAD"}} {
					opts.Dir, opts.SecretsAction = g.Dir, action
					run, err := Execute(context.Background(), opts)
					if err != nil {
						t.Fatal(err)
					}
					for where, data := range outputs(t, run) {
						assertNoFragment(t, action+" "+where, data, body)
					}
					switch action {
					case "redact":
						if run.Verdict.Status != audit.StatusPass {
							t.Errorf("redact %+v: verdict %s: %+v", opts, run.Verdict.Status, run.Verdict.Failed)
						}
						auditRepo(t, run, g.Dir, tt.version, tt.removed)
					case "fail":
						if run.Verdict.Status != audit.StatusFail {
							t.Errorf("fail %+v: verdict %s", opts, run.Verdict.Status)
						}
					}
				}
			}
			// The work tree's edit of another line, against HEAD.
			g.Write("deploy/key.txt", strings.Replace(tt.new, body[1], "Y"+body[1][1:], 1))
			run, err := Execute(context.Background(), PackOptions{Dir: g.Dir})
			if err != nil {
				t.Fatal(err)
			}
			for where, data := range outputs(t, run) {
				assertNoFragment(t, "work tree "+where, data, body)
			}
			if run.Verdict.Status != audit.StatusPass {
				t.Errorf("work tree: verdict %s: %+v", run.Verdict.Status, run.Verdict.Failed)
			}
			auditRepo(t, run, g.Dir, "new", false)
		})
	}
}

// auditRepo audits the run's pack against the repository, which must pass,
// and then the pack with the key file's diff as the repository has it (its
// removed lines only, when removed), which must fail: secret_unredacted,
// for the secret of the version given.
func auditRepo(t *testing.T, run *Run, dir, version string, removed bool) {
	t.Helper()
	check := func(data []byte) *audit.Verdict {
		packFile := filepath.Join(t.TempDir(), "pack.json")
		if err := os.WriteFile(packFile, data, 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := Audit(context.Background(), AuditOptions{PackFile: packFile, RepoDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := check(run.Result.JSON); len(v.Failed) > 0 {
		t.Fatalf("audit --repo of the pack built: %+v", v.Failed)
	}
	var raw string
	for _, c := range run.Snapshot.Changes {
		if c.Path == "deploy/key.txt" {
			raw, _ = pack.DropIndexLine(c.Diff)
		}
	}
	var forged pack.Pack
	if err := pack.Unmarshal(run.Result.JSON, &forged); err != nil {
		t.Fatal(err)
	}
	found := false
	for i := range forged.Changes {
		c := &forged.Changes[i]
		if c.Path != "deploy/key.txt" || c.Diff == "" {
			continue
		}
		sent, repo := strings.Split(c.Diff, "\n"), strings.Split(raw, "\n")
		if len(sent) != len(repo) || c.DiffTruncated {
			t.Fatalf("the pack's diff of the key file is not the repository's, redacted:\n%s", c.Diff)
		}
		for k := range repo {
			if !removed || strings.HasPrefix(repo[k], "-") {
				sent[k] = repo[k]
			}
		}
		c.Diff, c.Redactions, found = strings.Join(sent, "\n"), nil, true
	}
	if !found || raw == "" {
		t.Fatal("the pack sends no diff of the key file")
	}
	data, err := pack.Finalize(&forged)
	if err != nil {
		t.Fatal(err)
	}
	v := check(data)
	var unredacted *audit.Check
	for i, c := range v.Failed {
		if c.Code == audit.CodeSecretUnredacted && c.Details["where"] == "diff" {
			unredacted = &v.Failed[i]
		}
	}
	if unredacted == nil || unredacted.Details["version"] != version {
		t.Fatalf("audit --repo of the pack sending the raw diff: %+v", v.Failed)
	}
	for _, c := range v.Failed {
		assertNoFragment(t, "audit message", []byte(c.Message), []string{raw[strings.Index(raw, "@@"):]})
	}
}
