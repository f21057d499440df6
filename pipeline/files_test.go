package pipeline

import (
	"context"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
)

func TestExecuteSnapshotRecordsSkippedChecks(t *testing.T) {
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	base := g.Commit("base")
	g.Write("util.go", "package main\n\nfunc util() {}\n")
	head := g.Commit("util")
	repo, err := source.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	snapshot := func(*policy.Policy) (*pack.Snapshot, error) {
		return repo.TreeWithChanges(context.Background(), head, base, []pack.Change{{Path: "util.go", Status: "added", Added: 3}}, policy.ScopeTree)
	}
	skip := audit.Check{Kind: audit.KindSecret, Code: audit.CodeHistorySkipped, Message: "shallow"}
	run, err := ExecuteSnapshot(context.Background(), repo, PackOptions{Trigger: "pull_request"}, snapshot, []audit.Check{skip})
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict.Status != audit.StatusPass || len(run.Verdict.Skipped) != 1 || run.Record.Verdict == nil || len(run.Record.Verdict.Skipped) != 1 {
		t.Fatalf("verdict %+v", run.Verdict)
	}
	if p := run.Result.Pack; p.Source.Trigger != "pull_request" || p.Source.Base != base || len(p.Changes) != 1 {
		t.Fatalf("source %+v", p.Source)
	}
	// The pack agrees with the repository's own view of base..head.
	v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, run.Result.JSON), RepoDir: g.Dir})
	if err != nil || v.Status != audit.StatusPass {
		t.Fatalf("audit %v %+v", err, v)
	}
	if _, err := ExecuteSnapshot(context.Background(), repo, PackOptions{Type: "tiny"}, snapshot, nil); err == nil {
		t.Fatal("a bad override was accepted")
	}
}
