package main

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/internal/safetext"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/store"
	"github.com/ctxpack/ctxpack/transparency"
	"github.com/spf13/cobra"
)

type packOptions struct {
	pipeline.PackOptions
	worktree bool
	output   string
	record   string
	noRecord bool
	attest   string
	signKey  string
	notes    bool
	format   string
	// store keeps the pack in the pack store under storeName.
	store     bool
	storeName string
	storeDir  string
	// taskFile is --task: a task file whose goal and acceptance criteria
	// become the pack's intent.
	taskFile string
	// query builds a query pack of the tree instead (--query, --max-chars).
	query    string
	maxChars int
}

func newPackCmd(io ioStreams) *cobra.Command {
	opts := &packOptions{}
	cmd := &cobra.Command{
		Use:   "pack",
		Short: "Pack the working tree, a commit or a range",
		Long: `Pack the working tree (default), one commit (--commit REV) or a range
(--base REV --head REV) into a context pack. REV is a branch, tag, full or
short SHA, or HEAD~N.

A commit or range pack lists the change scope of the head tree by default:
the changed files, the top-level files (manifests, READMEs, key files) and
the .ctxpackignore files on the way to a change, so its cost follows the
change, not the size of the repository. --scope tree (or pack.scope: tree
in the policy) lists every file of the head tree instead.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.worktree && (opts.Commit != "" || opts.Base != "" || opts.Head != "") {
				return usageErr("--worktree cannot be combined with --commit or --base/--head")
			}
			if opts.output == "-" && !cmd.Flags().Changed("output") && io.OutTerminal {
				return usageErr("refusing to print the pack on a terminal: write it to a file with -o FILE, pipe it, or print it anyway with -o -")
			}
			return runPack(cmd, io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Dir, "dir", "C", ".", "repository (or plain directory) to pack")
	f.BoolVar(&opts.worktree, "worktree", false, "pack the working tree (the default)")
	f.StringVar(&opts.Commit, "commit", "", "pack one commit against its first parent")
	f.StringVar(&opts.Base, "base", "", "range base (with --head; default head HEAD)")
	f.StringVar(&opts.Head, "head", "", "range head")
	f.StringVar(&opts.PolicyFile, "policy", "", "policy file (default: .ctxpack.yml in the repository, else built-in defaults)")
	f.StringVar(&opts.Type, "type", "", "pack type: auto, full or summary (default from policy: auto)")
	f.StringVar(&opts.Scope, "scope", "", "commit and range packs: change (the change scope) or tree (every file; default from policy: change)")
	f.StringVar(&opts.Tier, "tier", "", "size tier: strong (120,000 chars), default (60,000), cheap (25,000) or none")
	f.StringArrayVar(&opts.Include, "include", nil, "only pack files matching this glob (repeatable)")
	f.StringArrayVar(&opts.Exclude, "exclude", nil, "never pack files matching this glob (repeatable)")
	f.Int64Var(&opts.MaxContentBytes, "max-content-bytes", 0, "content budget in bytes (default 512000)")
	f.IntVar(&opts.MaxFiles, "max-files", 0, "most files with content (default 200)")
	f.Int64Var(&opts.MaxFileBytes, "max-file-bytes", 0, "files over this are truncated head/tail (default 50000)")
	f.IntVar(&opts.MaxTokens, "max-tokens", 0, "token budget of a change pack (default from policy: sized to the change, 6,000-20,000)")
	f.StringVar(&opts.SecretsAction, "secrets-action", "", "what to do with a secret: redact, exclude or fail")
	f.StringVar(&opts.Goal, "goal", "", "the change's objective, first in the pack's intent")
	f.StringVar(&opts.query, "query", "", "write a query pack instead: the most relevant code chunks of the tree for an identifier, a path or a phrase")
	f.IntVar(&opts.maxChars, "max-chars", 0, "character budget of a --query pack (default 20,000)")
	f.StringVar(&opts.taskFile, "task", "", "task file (markdown, or JSON/YAML with title, goal, body, acceptance, files) for the pack's intent; - reads markdown from standard input")
	f.StringVarP(&opts.output, "output", "o", "-", "write the pack to FILE atomically; - for stdout (on a terminal only when given)")
	f.StringVar(&opts.record, "record", "", "write the transparency record to FILE (default <output>.record.json; - for stdout when the pack goes to a file)")
	f.BoolVar(&opts.noRecord, "no-record", false, "write no transparency record file")
	f.StringVar(&opts.attest, "attest", "", "write the record as an in-toto statement to FILE (a signed DSSE envelope with --sign-key; - for stdout when the pack goes to a file)")
	f.StringVar(&opts.signKey, "sign-key", "", "ed25519 private key (PKCS#8 PEM) to sign the attestation; default $CTXPACK_SIGNING_KEY")
	f.BoolVar(&opts.notes, "notes", false, "store the record as the head commit's note under refs/notes/ctxpack")
	f.StringVar(&opts.format, "format", "json", "pack format: json (canonical), markdown or xml")
	f.BoolVar(&opts.store, "store", false, "also keep the pack (when its verdict passes) in the pack store that ctxpack serve serves")
	f.StringVar(&opts.storeName, "store-name", "", "name of the stored entry (default pr-<n> for a pull request ref, else <repo>@<ref>)")
	f.StringVar(&opts.storeDir, "store-dir", "", "store directory (default: the repository's .git/ctxpack/store)")
	return cmd
}

func runPack(cmd *cobra.Command, io ioStreams, opts *packOptions) error {
	switch opts.format {
	case "json", "markdown", "xml":
	default:
		return usageErr("--format %q: use json, markdown or xml", opts.format)
	}
	if opts.attest != "" && opts.format != "json" {
		return usageErr("--attest describes the canonical JSON pack: use it with --format json")
	}
	if opts.signKey == "" {
		opts.signKey = os.Getenv("CTXPACK_SIGNING_KEY")
	}
	var key ed25519.PrivateKey
	if opts.signKey != "" {
		if opts.attest == "" {
			return usageErr("--sign-key signs the attestation: add --attest FILE")
		}
		var err error
		if key, err = transparency.LoadPrivateKey(opts.signKey); err != nil {
			return fmt.Errorf("--sign-key: %w", err)
		}
	}
	if err := checkPackOutputs(opts); err != nil {
		return err
	}
	if opts.query != "" {
		return runQuery(cmd, io, opts)
	}
	if opts.maxChars != 0 {
		return usageErr("--max-chars is the budget of a --query pack")
	}
	if opts.taskFile != "" {
		var in stdinOnce
		data, err := in.file(io, "--task", opts.taskFile, pack.MaxTaskBytes)
		name := opts.taskFile
		if name == "-" {
			name = "standard input"
		}
		if err != nil {
			return usageErr("--task: %v", err)
		}
		if opts.Task, err = pack.ParseTask(name, data); err != nil {
			return usageErr("--task: %v", err)
		}
	}
	opts.Repository = os.Getenv("GITHUB_REPOSITORY")
	progress := newProgress(io, io.vb())
	if progress != nil {
		opts.Progress = progress.update
	}
	// The JSON pack is written (to its temporary file) while it is audited;
	// it is put in place with the record, or removed if the run fails.
	var written *fsutil.Prepared
	if opts.format == "json" && opts.output != "-" {
		opts.Built = func(res *pack.Result) { written = fsutil.Prepare(opts.output, res.JSON, 0o644) }
	}
	defer func() {
		if written != nil {
			written.Discard() // nothing to remove once committed
		}
	}()
	defer pipeline.PausePackGC(opts.PackOptions)()
	run, err := pipeline.Execute(cmd.Context(), opts.PackOptions)
	progress.stop()
	if err != nil {
		return err
	}
	defer run.Close()
	// The pack is written whatever the verdict: it is clean (secrets redacted
	// or kept out); the verdict says whether the change may leave.
	data := run.Result.JSON
	if opts.format != "json" {
		if data, err = transparency.Render(run.Result.Pack, opts.format); err != nil {
			return err
		}
	}
	// The note first: storing it binds the record to its parent's record as
	// it is then, which the files must carry too.
	if opts.notes {
		if err := run.WriteNote(); err != nil {
			return err
		}
	}
	// Record, attestation and pack are written as one unit (see
	// fsutil.Batch); the pack goes last, and the record names its digest,
	// so an interrupted write never pairs a new pack with an old record
	// unnoticed (read and audit check the pair).
	var files fsutil.Batch
	// stdout gets at most one document: the pack, the record or the
	// attestation (checkPackOutputs).
	var stdout []byte
	recordFile := opts.record
	if recordFile == "" && opts.output != "-" && !opts.noRecord {
		recordFile = opts.output + ".record.json"
	}
	switch recordFile {
	case "":
	case "-":
		stdout = run.RecordJSON
	default:
		files.Add(recordFile, run.RecordJSON, 0o644)
	}
	if opts.attest != "" {
		name := filepath.Base(opts.output)
		if opts.output == "-" {
			name = "pack.json"
		}
		att, err := run.Attestation(name, key)
		if err != nil {
			return err
		}
		if opts.attest == "-" {
			stdout = att
		} else {
			files.Add(opts.attest, att, 0o644)
		}
	}
	switch {
	case opts.output == "-":
		stdout = data
	case written != nil:
		files.AddPrepared(written)
	default:
		files.Add(opts.output, data, 0o644)
	}
	if err := files.Commit(cmd.Context()); err != nil {
		return err
	}
	if stdout != nil {
		if _, err := io.Out.Write(stdout); err != nil {
			return err
		}
	}
	if opts.store {
		if err := storePack(cmd, io, opts, run); err != nil {
			return err
		}
	}
	p := run.Result.Pack
	if !io.vb().quiet {
		fmt.Fprintf(io.ErrOut, "%s: %s pack %s, %d files included, %d excluded, %d content bytes, ~%d tokens\n",
			displayName(opts.output, "stdout"), p.Type, p.PackID, p.Metadata.FilesIncluded, p.Metadata.FilesExcluded, p.Budget.ContentBytes, p.Budget.EstimatedTokens)
	}
	printVerdict(io.ErrOut, run.Verdict, io.vb())
	if run.Verdict.Status != audit.StatusPass {
		return &exitError{code: exitFailure, err: fmt.Errorf("verdict fail: %d check(s) failed", len(run.Verdict.Failed))}
	}
	return nil
}

// storePack keeps a passing pack in the pack store; a failing verdict is
// reported and the pack is not stored (the store hands packs to agents).
func storePack(cmd *cobra.Command, io ioStreams, opts *packOptions, run *pipeline.Run) error {
	if run.Verdict.Status != audit.StatusPass {
		fmt.Fprintln(io.ErrOut, "--store: the verdict failed, so the pack is not stored")
		return nil
	}
	sf := storeFlags{dir: opts.Dir, storeDir: opts.storeDir, policy: opts.PolicyFile}
	st, err := sf.open(os.Getenv)
	if err != nil {
		return err
	}
	res, err := st.Put(cmd.Context(), store.PutInput{Pack: run.Result.JSON, Record: run.RecordJSON, Name: opts.storeName})
	if err != nil {
		return storeError(io, false, err)
	}
	verb := "stored"
	if !res.Stored {
		verb = "already stored"
	}
	if !io.vb().quiet {
		fmt.Fprintf(io.ErrOut, "--store: %s %s as %s in %s\n", verb, res.View.ID, safetext.Line(res.View.Name), safetext.Line(st.Dir()))
	}
	return nil
}

// runQuery writes a query pack: the most relevant chunks of the tree for
// the query, within --max-chars.
func runQuery(cmd *cobra.Command, io ioStreams, opts *packOptions) error {
	if opts.format != "json" || opts.notes || opts.attest != "" || opts.store || opts.record != "" || opts.Goal != "" || opts.taskFile != "" {
		return usageErr("--query writes a query pack (JSON) only: it takes -C, --commit, --policy, --include/--exclude, --max-chars and -o")
	}
	qp, data, err := pipeline.Query(cmd.Context(), opts.PackOptions, opts.query, opts.maxChars)
	if err != nil {
		return err
	}
	if opts.output == "-" {
		if _, err := io.Out.Write(data); err != nil {
			return err
		}
	} else {
		var files fsutil.Batch
		files.Add(opts.output, data, 0o644)
		if err := files.Commit(cmd.Context()); err != nil {
			return err
		}
	}
	if !io.vb().quiet {
		fmt.Fprintf(io.ErrOut, "%s: query pack, %d items, %d of %d characters, %d dropped\n",
			displayName(opts.output, "stdout"), len(qp.Items), qp.Budget.UsedChars, qp.Budget.MaxChars, qp.Budget.DroppedItems)
	}
	return nil
}

// checkPackOutputs refuses output flags that contradict each other: a
// record turned off and named, and two documents on stdout.
func checkPackOutputs(opts *packOptions) error {
	if opts.noRecord && opts.record != "" {
		return usageErr("--no-record and --record %s contradict each other: give one", safetext.Line(opts.record))
	}
	if opts.record == "none" {
		return usageErr("--record none: to write no record use --no-record; for a file named none write --record ./none")
	}
	onStdout := 0
	for _, f := range []string{opts.output, opts.record, opts.attest} {
		if f == "-" {
			onStdout++
		}
	}
	if onStdout > 1 {
		return usageErr("only one of -o, --record and --attest can be - (stdout): write the others to files")
	}
	return nil
}
