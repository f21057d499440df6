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
	skip := audit.Check{Kind: audit.KindIntegrity, Code: "change_list_unavailable", Message: "shallow"}
	cfg, err := ChangeConfig(context.Background(), PackOptions{}, GitTree(repo, base), GitTree(repo, head))
	if err != nil {
		t.Fatal(err)
	}
	run, err := ExecuteSnapshot(context.Background(), repo, cfg, "pull_request", snapshot, NotRun{Skipped: []audit.Check{skip}})
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
	if _, err := ChangeConfig(context.Background(), PackOptions{Type: "tiny"}, GitTree(repo, base), GitTree(repo, head)); err == nil {
		t.Fatal("a bad override was accepted")
	}
	// A history scan that could not run fails the verdict, unless the
	// policy downgrades it.
	unavailable := &audit.Check{Kind: audit.KindSecret, Code: audit.CodeHistoryUnavailable, Message: "no history"}
	run, err = ExecuteSnapshot(context.Background(), repo, cfg, "pull_request", snapshot, NotRun{History: unavailable})
	if err != nil || run.Verdict.Status != audit.StatusFail || run.Verdict.Failed[0].Code != audit.CodeHistoryUnavailable {
		t.Fatalf("history unavailable: %v %+v", err, run.Verdict)
	}
	cfg.Policy.Secrets.HistoryUnavailable = "warn"
	run, err = ExecuteSnapshot(context.Background(), repo, cfg, "pull_request", snapshot, NotRun{History: &audit.Check{Kind: audit.KindSecret, Code: audit.CodeHistoryUnavailable, Message: "no history"}})
	if err != nil || run.Verdict.Status != audit.StatusPass || len(run.Verdict.Skipped) != 1 {
		t.Fatalf("downgraded: %v %+v", err, run.Verdict)
	}
}
