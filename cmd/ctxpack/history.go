package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/ctxpack/ctxpack/internal/safetext"
	"github.com/ctxpack/ctxpack/source"
	"github.com/ctxpack/ctxpack/transparency"
	"github.com/spf13/cobra"
)

func openGit(dir string) (*source.Repo, error) {
	repo, err := source.Open(dir)
	if err != nil {
		return nil, err
	}
	if !repo.IsGit() {
		repo.Close()
		return nil, fmt.Errorf("%s is not a git repository: records live in its refs/notes/ctxpack", dir)
	}
	return repo, nil
}

// openRev opens the repository and resolves the optional REV argument (HEAD).
func openRev(dir string, args []string) (*source.Repo, source.ObjectID, error) {
	repo, err := openGit(dir)
	if err != nil {
		return nil, "", err
	}
	rev := "HEAD"
	if len(args) == 1 {
		rev = args[0]
	}
	h, err := repo.Resolve(rev)
	if err != nil {
		repo.Close()
		return nil, "", err
	}
	return repo, h, nil
}

func newLogCmd(io ioStreams) *cobra.Command {
	var dir string
	var n int
	cmd := &cobra.Command{
		Use:   "log [REV]",
		Short: "List the transparency records of REV's first-parent history, newest first",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			repo, h, err := openRev(dir, args)
			if err != nil {
				return err
			}
			defer repo.Close()
			entries, err := transparency.LogWith(cmd.Context(), repo, h, n)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "COMMIT\tPACK\tTYPE\tVERDICT\tINCLUDED\tEXCLUDED\tSECRETS")
			for _, e := range entries {
				if !e.HasNote {
					fmt.Fprintf(tw, "%s\t(no record)\t\t\t\t\t\n", e.Commit[:12])
					continue
				}
				if e.Error != "" {
					fmt.Fprintf(tw, "%s\t(unreadable: %s)\t\t\t\t\t\n", e.Commit[:12], safetext.Line(e.Error))
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\n", e.Commit[:12], safetext.Line(e.PackID), safetext.Line(e.Type), safetext.Line(e.Verdict), e.Included, e.Excluded, e.Secrets)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "C", ".", "repository directory")
	cmd.Flags().IntVarP(&n, "max-count", "n", 20, "list at most N commits (0 = all)")
	return cmd
}

func newVerifyCmd(io ioStreams) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "verify [REV]",
		Short: "Walk the hash chain of records from REV and report every break",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			repo, h, err := openRev(dir, args)
			if err != nil {
				return err
			}
			defer repo.Close()
			rep, err := transparency.VerifyChainWith(cmd.Context(), repo, h)
			if err != nil {
				return err
			}
			if rep.Records == 0 {
				return &exitError{code: exitFailure, err: fmt.Errorf("no records in refs/notes/ctxpack for %s's history (fetch them: git fetch origin 'refs/notes/*:refs/notes/*')", h.Short())}
			}
			for _, b := range rep.Breaks {
				fmt.Fprintf(io.Out, "BREAK %s %s: %s\n", b.Commit[:12], b.Kind, safetext.Line(b.Message))
			}
			// A missing record is a commit the chain does not cover; nothing
			// recorded was changed: reported, not a break.
			for _, m := range rep.Missing {
				fmt.Fprintf(io.Out, "MISSING %s %s: %s\n", m.Commit[:12], m.Kind, safetext.Line(m.Message))
			}
			if len(rep.Breaks) > 0 {
				return &exitError{code: exitFailure, err: fmt.Errorf("%d break(s) in the chain of %d record(s)", len(rep.Breaks), rep.Records)}
			}
			if len(rep.Missing) > 0 {
				fmt.Fprintf(io.Out, "%d record(s), chain intact; %d commit(s) without a record of their own in it\n", rep.Records, len(rep.Missing))
				return nil
			}
			fmt.Fprintf(io.Out, "%d record(s), chain intact\n", rep.Records)
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "C", ".", "repository directory")
	return cmd
}

func newVerifyAttestationCmd(io ioStreams) *cobra.Command {
	var packFile, pubFile string
	cmd := &cobra.Command{
		Use:   "verify-attestation FILE --pack PACK [--pub KEY]",
		Short: "Check an attestation's signature and that it names this pack",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if packFile == "" {
				return usageErr("--pack is required: the pack the attestation is about")
			}
			att, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("read attestation: %w", err)
			}
			data, err := os.ReadFile(packFile)
			if err != nil {
				return fmt.Errorf("read pack: %w", err)
			}
			var pub []byte
			if pubFile != "" {
				key, err := transparency.LoadPublicKey(pubFile)
				if err != nil {
					return fmt.Errorf("--pub: %w", err)
				}
				pub = key
			}
			rec, err := transparency.VerifyAttestation(att, data, pub)
			if err != nil {
				return &exitError{code: exitFailure, err: fmt.Errorf("attestation does not verify: %w", err)}
			}
			verdict := "none"
			if rec.Verdict != nil {
				verdict = rec.Verdict.Status
			}
			fmt.Fprintf(io.Out, "ok: %s attests pack %s (%s), verdict %s\n", safetext.Line(args[0]), safetext.Line(rec.PackID), safetext.Line(rec.Digests.PackSHA256), safetext.Line(verdict))
			return nil
		},
	}
	cmd.Flags().StringVar(&packFile, "pack", "", "the pack file")
	cmd.Flags().StringVar(&pubFile, "pub", "", "ed25519 public key (PKIX PEM) that signed the envelope")
	return cmd
}
