package pipeline

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

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
	defer pauseGC(heapLimitFor(opts))()
	out, err := Pack(ctx, opts)
	if err != nil {
		return nil, err
	}
	run, err := complete(ctx, out, NotRun{})
	if err != nil {
		out.Close()
		return nil, err
	}
	return run, nil
}

// PausePackGC keeps the collector off around Execute(opts), as Execute
// keeps it off for itself, for a caller that goes on with the run (the
// pack command writes its files): Execute's pause ends as it returns, the
// heap is then far over the GC percent's goal, and the collection that
// starts marks what the caller is about to let go, beside its writes
// (hugo's 1-file range: 80.1 → 74.3 ms of CPU, 63.5 → 59.0 ms of wall
// time).
func PausePackGC(opts PackOptions) (resume func()) { return pauseGC(heapLimitFor(opts)) }

// NotRun are checks that could not run, for reasons the caller knows.
type NotRun struct {
	// Skipped are reported as skipped checks (never as passed).
	Skipped []audit.Check
	// History, when set, says why the per-commit secret scan could not run
	// (code history_scan_unavailable): it fails the verdict unless the
	// policy's secrets.history_unavailable is warn, which reports it as
	// skipped.
	History *audit.Check
}

// ExecuteSnapshot runs the pipeline of Execute on a snapshot the caller
// makes with snapshot under the configuration cfg (for example a shallow
// clone's head tree, in the policy's scope, with a change list and
// per-commit patches from GitHub's API), with notRun reported. trigger,
// when set, is the snapshot's trigger.
func ExecuteSnapshot(ctx context.Context, repo *source.Repo, cfg *Config, trigger string, snapshot func(*policy.Policy) (*pack.Snapshot, error), notRun NotRun) (*Run, error) {
	// As Execute: the rules, patterns and schema prepared on another core
	// while the snapshot is made, the collector paused (to a tree's bound:
	// the snapshot may hold the whole head tree).
	repo.Prestart() // the snapshot reads the head's tree
	Preload()
	defer pauseGC(treeHeapLimit)()
	snap, err := snapshot(cfg.Policy)
	if err != nil {
		return nil, err
	}
	if trigger != "" {
		snap.Source.Trigger = trigger
	}
	snap.Source.Config = cfg.Origin
	scanner, err := NewScanner(ctx, repo, cfg)
	if err != nil {
		return nil, err
	}
	out, err := build(ctx, repo, snap, cfg, scanner)
	if err != nil {
		return nil, err
	}
	return complete(ctx, out, notRun)
}

// complete runs the stages after the build: the per-commit history scan, the
// verdict (with the checks that did not run reported as such) and the
// record.
func complete(ctx context.Context, out *Outcome, notRun NotRun) (*Run, error) {
	if out.built != nil {
		out.built(out.Result)
	}
	if out.progress != nil {
		out.progress("scanning the commits' history and auditing", out.Snapshot)
	}
	// The record's digest of the pack (a full tree's 20 MB: ~15 ms of one
	// core) is taken while the audit leaves a core idle.
	packSum := make(chan [32]byte, 1)
	go func() { packSum <- sha256.Sum256(out.Result.JSON) }()
	history, herr := ScanHistory(ctx, out.Scanner, out.Snapshot)
	v, err := Judge(ctx, out, history, herr)
	if err != nil {
		return nil, err
	}
	for _, c := range notRun.Skipped {
		v.Skip(c)
	}
	// A blob the per-commit scan did not read is a scan that could not
	// run: it fails, as history that could not be read does, unless the
	// policy reports such scans as skipped.
	limit := out.Policy.HistoryBlobLimit()
	for _, cp := range out.Snapshot.Commits {
		for _, f := range cp.Skipped {
			c := audit.Check{Kind: audit.KindSecret, Code: audit.CodeHistoryBlobSkipped,
				Message: fmt.Sprintf("commit %s: %s is %d bytes, over secrets.history_max_blob_bytes %d: the per-commit secret scan did not read it",
					short(cp.Commit), f.Path, f.Size, limit),
				Details: map[string]any{"commit": cp.Commit, "path": f.Path, "bytes": f.Size, "limit": limit}}
			if out.Policy.HistoryUnavailableFails() {
				c.Message += " (secrets.history_unavailable: warn in the policy reports this as skipped instead)"
				v.Fail(c)
			} else {
				v.Skip(c)
			}
		}
	}
	if c := notRun.History; c != nil {
		if out.Policy.HistoryUnavailableFails() {
			c.Message += " (secrets.history_unavailable: warn in the policy reports this as skipped instead)"
			v.Fail(*c)
		} else {
			v.Skip(*c)
		}
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
	sum := <-packSum
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
	if r.Repo.Git() == nil { // the git CLI reads this repository
		return r.previousDigestCLI(context.Background(), head)
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
	// The record is bound to its parent's record as it is when the note is
	// stored (another run may have stored it since this one read it): its
	// previous, and so RecordJSON, may change here. Write the record's
	// files after this.
	bind := func(previous string) ([]byte, error) {
		if previous != r.Record.Previous {
			r.Record.Previous = previous
			data, err := r.Record.JSON()
			if err != nil {
				return nil, err
			}
			r.RecordJSON = data
		}
		return r.RecordJSON, nil
	}
	if r.Repo.Git() == nil {
		return r.writeNoteCLI(context.Background(), head, bind)
	}
	return transparency.WriteRecordNote(r.Repo.Git(), plumbing.NewHash(head), bind)
}

// previousDigestCLI is previousDigest through the git CLI.
func (r *Run) previousDigestCLI(ctx context.Context, head string) (string, error) {
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

// writeNoteCLI is WriteNote through git notes: the record is bound to the
// parent's record in the notes state it is stored on, and rebuilt when
// another writer moved the notes ref meanwhile.
func (r *Run) writeNoteCLI(ctx context.Context, head string, bind func(previous string) ([]byte, error)) error {
	var err error
	for attempt := 1; attempt <= 20; attempt++ {
		err = r.Repo.WriteNote(ctx, string(transparency.NotesRef), source.ObjectID(head), func(parent []byte, ok bool) ([]byte, error) {
			previous := ""
			if ok {
				previous = transparency.DigestOf(parent)
			}
			return bind(previous)
		})
		if !errors.Is(err, source.ErrNotesMoved) {
			return err
		}
		time.Sleep(time.Duration(attempt*(5+rand.IntN(20))) * time.Millisecond)
	}
	return fmt.Errorf("write note: %s kept moving: %w", transparency.NotesRef, err)
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
