package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/source"
	"github.com/ctxpack/ctxpack/transparency"
)

// ExecuteSnapshot runs the pipeline of Execute on a snapshot the caller made
// (for example a shallow clone's head tree with a change list from GitHub's
// API), recording skipped as checks that did not run (never as passed).
// opts' source fields (Commit, Base, Head) are ignored; its policy fields
// apply.
func ExecuteSnapshot(ctx context.Context, repo *source.Repo, snap *pack.Snapshot, opts PackOptions, skipped []audit.Check) (*Run, error) {
	if opts.Trigger != "" {
		snap.Source.Trigger = opts.Trigger
	}
	pol, file, err := LoadPolicy(repo.Root, opts)
	if err != nil {
		return nil, err
	}
	scanner, err := NewScanner(repo, pol)
	if err != nil {
		return nil, err
	}
	res, err := pack.Build(ctx, snap, pack.Options{
		Policy:      pol,
		Scanner:     scanner,
		Sensitive:   audit.SensitiveFile,
		ToolVersion: Version,
	})
	if err != nil {
		return nil, err
	}
	out := &Outcome{Repo: repo, Policy: pol, PolicyFile: file, Snapshot: snap, Result: res, Scanner: scanner}
	history, herr := ScanHistory(ctx, scanner, snap)
	v, err := Judge(ctx, out, history, herr)
	if err != nil {
		return nil, err
	}
	for _, c := range skipped {
		v.Skip(c)
	}
	v.Sort()
	run := &Run{Outcome: out, History: history, Verdict: v}
	previous, err := run.previousDigest()
	if err != nil {
		// A shallow clone lacks the parent commit whose note would be read.
		previous = ""
	}
	historyAction := "warn"
	if pol.Secrets.History == "fail" {
		historyAction = "fail"
	}
	sum := sha256.Sum256(res.JSON)
	run.Record = transparency.Build(transparency.BuildInput{
		Result:          res,
		PackSHA256:      hex.EncodeToString(sum[:]),
		PolicyDigest:    pol.Digest(),
		ToolVersion:     Version,
		GitleaksVersion: scanner.Version(),
		GitleaksRules:   scanner.RuleCount(),
		RulesDigest:     scanner.RulesDigest(),
		History:         history,
		HistoryAction:   historyAction,
		Verdict:         v,
		Previous:        previous,
	})
	if run.RecordJSON, err = run.Record.JSON(); err != nil {
		return nil, err
	}
	return run, nil
}
