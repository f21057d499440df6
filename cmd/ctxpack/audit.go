package main

import (
	"encoding/json"
	"fmt"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/safetext"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/spf13/cobra"
)

func newAuditCmd(io ioStreams) *cobra.Command {
	opts := pipeline.AuditOptions{}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "audit PACK",
		Short: "Check a finished pack against the policy, independently of how it was built",
		Long: `Audit re-derives everything from the pack bytes: schema, pack id and digests,
every content sha256, a fresh secret scan of every string, excluded and
forbidden paths, size, tier and destination limits. With --repo it also checks
each item against the commit's blob and that every changed file is accounted
for. Every failed check is reported. Exit 0 pass, 1 fail, 2 usage.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.PackFile = args[0]
			v, err := pipeline.Audit(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if asJSON {
				data, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(io.Out, string(data))
			} else {
				printVerdict(io, v)
			}
			if v.Status != audit.StatusPass {
				return &exitError{code: exitFailure, err: fmt.Errorf("audit failed: %d check(s) failed", len(v.Failed))}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.PolicyFile, "policy", "", "policy file (default: the repository's .ctxpack.yml with --repo, else built-in defaults)")
	cmd.Flags().StringVar(&opts.RecordFile, "record", "", "the pack's transparency record, checked to be this pack's (default <PACK>.record.json when present)")
	cmd.Flags().StringVar(&opts.RepoDir, "repo", "", "the repository the pack describes: check blobs and changes against it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verdict as JSON (seed 001 error contract: kind, code, details, message)")
	return cmd
}

// printVerdict writes a verdict for people.
func printVerdict(io ioStreams, v *audit.Verdict) {
	fmt.Fprintf(io.Out, "verdict: %s (%d failed, %d warnings, %d skipped)\n", v.Status, len(v.Failed), len(v.Warnings), len(v.Skipped))
	for _, c := range v.Failed {
		fmt.Fprintf(io.Out, "  FAIL %s: %s\n", c.Code, safetext.Line(c.Message))
	}
	for _, c := range v.Warnings {
		fmt.Fprintf(io.Out, "  warn %s: %s\n", c.Code, safetext.Line(c.Message))
	}
	for _, c := range v.Skipped {
		fmt.Fprintf(io.Out, "  skip %s: %s\n", c.Code, safetext.Line(c.Message))
	}
}
