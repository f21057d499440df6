package main

import (
	"fmt"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/spf13/cobra"
)

// auditOptions are audit's flags and arguments.
type auditOptions struct {
	pipeline.AuditOptions
	asJSON bool
}

func newAuditCmd(io ioStreams) *cobra.Command {
	opts := &auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit PACK",
		Short: "Check a finished pack against the policy, independently of how it was built",
		Long: `Audit re-derives everything from the pack bytes: schema, pack id and digests,
every content sha256, a fresh secret scan of every string, excluded and
forbidden paths, size, tier and destination limits. With --repo it also checks
each item against the commit's blob and that every changed file is accounted
for. Every failed check is reported. PACK - reads the pack from standard
input (ctxpack pack -o - | ctxpack audit -). Exit 0 pass, 1 fail, 2 usage.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.PackFile = args[0]
			return runAudit(cmd, io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.PolicyFile, "policy", "", "policy file (default: the repository's .ctxpack.yml with --repo, else built-in defaults)")
	f.StringVar(&opts.RecordFile, "record", "", "the pack's transparency record, checked to be this pack's (default <PACK>.record.json when present; - for standard input)")
	f.StringVar(&opts.RepoDir, "repo", "", "the repository the pack describes: check blobs and changes against it")
	f.BoolVar(&opts.asJSON, "json", false, "print the verdict as JSON: status, and each check's kind, code, details and message")
	return cmd
}

func runAudit(cmd *cobra.Command, io ioStreams, opts *auditOptions) error {
	var in stdinOnce
	var err error
	if opts.PackFile == "-" {
		if opts.Pack, err = in.read(io, "PACK"); err != nil {
			return err
		}
	}
	if opts.RecordFile == "-" {
		if opts.Record, err = in.read(io, "--record"); err != nil {
			return err
		}
	}
	v, err := pipeline.Audit(cmd.Context(), opts.AuditOptions)
	if err != nil {
		return err
	}
	if opts.asJSON {
		if err := writeJSON(io, v); err != nil {
			return err
		}
	} else {
		printVerdict(io.Out, v, io.vb())
	}
	if v.Status != audit.StatusPass {
		return &exitError{code: exitFailure, reported: opts.asJSON, err: fmt.Errorf("audit failed: %d check(s) failed", len(v.Failed))}
	}
	return nil
}
