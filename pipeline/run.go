package pipeline

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/transparency"
	"github.com/go-git/go-git/v5/plumbing"
)

// Run is a full pipeline run: the built pack, the per-commit history scan,
// the verdict and the transparency record.
type Run struct {
	*Outcome
	History    []HistoryFinding
	Verdict    *audit.Verdict
	Record     *transparency.Record
	RecordJSON []byte
}

// Execute runs source → policy → scan → build → history scan → audit → record.
func Execute(ctx context.Context, opts PackOptions) (*Run, error) {
	out, err := Pack(ctx, opts)
	if err != nil {
		return nil, err
	}
	history, herr := ScanHistory(ctx, out.Scanner, out.Snapshot)
	v, err := Judge(ctx, out, history, herr)
	if err != nil {
		return nil, err
	}
	run := &Run{Outcome: out, History: history, Verdict: v}
	previous, err := run.previousDigest()
	if err != nil {
		return nil, err
	}
	historyAction := "warn"
	if out.Policy.Secrets.History == "fail" {
		historyAction = "fail"
	}
	sum := sha256.Sum256(out.Result.JSON)
	run.Record = transparency.Build(transparency.BuildInput{
		Result:          out.Result,
		PackSHA256:      hex.EncodeToString(sum[:]),
		PolicyDigest:    out.Policy.Digest(),
		ToolVersion:     Version,
		GitleaksVersion: out.Scanner.Version(),
		GitleaksRules:   out.Scanner.RuleCount(),
		RulesDigest:     out.Scanner.RulesDigest(),
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

// previousDigest is the digest of the first parent's record in the notes, "" when unknown.
func (r *Run) previousDigest() (string, error) {
	head := r.Snapshot.Source.Head
	if !r.Repo.IsGit() || head == "" {
		return "", nil
	}
	d, err := transparency.PreviousDigest(r.Repo.Git(), plumbing.NewHash(head))
	if err != nil {
		return "", fmt.Errorf("read the parent's record from refs/notes/ctxpack: %w", err)
	}
	return d, nil
}

// WriteNote stores the record as the head commit's note under refs/notes/ctxpack.
func (r *Run) WriteNote() error {
	head := r.Snapshot.Source.Head
	if !r.Repo.IsGit() || head == "" {
		return fmt.Errorf("--notes needs a commit: this pack has no head commit")
	}
	if r.Snapshot.Source.Dirty {
		return fmt.Errorf("--notes records commits: the work tree has uncommitted changes; pack --commit HEAD instead")
	}
	return transparency.WriteNote(r.Repo.Git(), plumbing.NewHash(head), r.RecordJSON)
}

// Attestation returns the in-toto statement of the record, signed into a DSSE
// envelope when key is set.
func (r *Run) Attestation(packName string, key ed25519.PrivateKey) ([]byte, error) {
	stmt, err := transparency.Attest(r.Record, packName, r.Record.Digests.PackSHA256)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return stmt, nil
	}
	return transparency.Sign(stmt, key)
}
