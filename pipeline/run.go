package pipeline

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
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
	run, err := complete(ctx, out, nil)
	if err != nil {
		out.Close()
		return nil, err
	}
	return run, nil
}

// ExecuteSnapshot runs the pipeline of Execute on a snapshot the caller
// makes with snapshot, given the effective policy (for example a shallow
// clone's head tree, in the policy's scope, with a change list from
// GitHub's API), recording skipped as checks that did not run (never as
// passed). opts' source fields (Commit, Base, Head) are ignored; its policy
// fields apply.
func ExecuteSnapshot(ctx context.Context, repo *source.Repo, opts PackOptions, snapshot func(*policy.Policy) (*pack.Snapshot, error), skipped []audit.Check) (*Run, error) {
	pol, file, err := LoadPolicy(repo.Root, opts)
	if err != nil {
		return nil, err
	}
	snap, err := snapshot(pol)
	if err != nil {
		return nil, err
	}
	if opts.Trigger != "" {
		snap.Source.Trigger = opts.Trigger
	}
	scanner, err := NewScanner(repo, pol)
	if err != nil {
		return nil, err
	}
	out, err := build(ctx, repo, snap, pol, file, scanner)
	if err != nil {
		return nil, err
	}
	return complete(ctx, out, skipped)
}

// complete runs the stages after the build: the per-commit history scan, the
// verdict (with skipped checks reported as such) and the record.
func complete(ctx context.Context, out *Outcome, skipped []audit.Check) (*Run, error) {
	history, herr := ScanHistory(ctx, out.Scanner, out.Snapshot)
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
	// A scan cache that cannot be written only costs a rescan next time.
	_ = out.Scanner.Flush()
	return run, nil
}

// previousDigest is the digest of the first parent's record in the notes, "" when unknown.
func (r *Run) previousDigest() (string, error) {
	head := r.Snapshot.Source.Head
	if !r.Repo.IsGit() || head == "" {
		return "", nil
	}
	if r.Repo.Git() == nil { // a repository only the git CLI reads
		return r.previousDigestCLI(head)
	}
	d, err := transparency.PreviousDigest(r.Repo.Git(), plumbing.NewHash(head))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return "", nil // a shallow clone lacks the parent whose note would be read
	}
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
	if r.Repo.Git() == nil {
		return r.Repo.WriteNote(context.Background(), string(transparency.NotesRef), source.ObjectID(head), r.RecordJSON)
	}
	return transparency.WriteNote(r.Repo.Git(), plumbing.NewHash(head), r.RecordJSON)
}

// previousDigestCLI is previousDigest through the git CLI.
func (r *Run) previousDigestCLI(head string) (string, error) {
	ctx := context.Background()
	c, err := r.Repo.ReadCommit(ctx, source.ObjectID(head))
	if err != nil {
		return "", fmt.Errorf("read the parent's record from refs/notes/ctxpack: %w", err)
	}
	if len(c.Parents) == 0 {
		return "", nil
	}
	data, ok, err := r.Repo.ReadNote(ctx, string(transparency.NotesRef), c.Parents[0])
	if err != nil {
		return "", fmt.Errorf("read the parent's record from refs/notes/ctxpack: %w", err)
	}
	if !ok {
		return "", nil
	}
	return transparency.DigestOf(data), nil
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
