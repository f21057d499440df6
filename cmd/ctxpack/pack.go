package main

import (
	"fmt"

	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/spf13/cobra"
)

type packOptions struct {
	pipeline.PackOptions
	worktree bool
	output   string
}

func newPackCmd(io ioStreams) *cobra.Command {
	opts := &packOptions{}
	cmd := &cobra.Command{
		Use:   "pack",
		Short: "Pack the working tree, a commit or a range",
		Long: `Pack the working tree (default), one commit (--commit REV) or a range
(--base REV --head REV) into a context pack. REV is a branch, tag, full or
short SHA, or HEAD~N.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.worktree && (opts.Commit != "" || opts.Base != "" || opts.Head != "") {
				return usageErr("--worktree cannot be combined with --commit or --base/--head")
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
	f.StringVar(&opts.Tier, "tier", "", "size tier: strong (120,000 chars), default (60,000), cheap (25,000) or none")
	f.StringArrayVar(&opts.Include, "include", nil, "only pack files matching this glob (repeatable)")
	f.StringArrayVar(&opts.Exclude, "exclude", nil, "never pack files matching this glob (repeatable)")
	f.Int64Var(&opts.MaxContentBytes, "max-content-bytes", 0, "content budget in bytes (default 512000)")
	f.IntVar(&opts.MaxFiles, "max-files", 0, "most files with content (default 200)")
	f.Int64Var(&opts.MaxFileBytes, "max-file-bytes", 0, "files over this are truncated head/tail (default 50000)")
	f.StringVar(&opts.SecretsAction, "secrets-action", "", "what to do with a secret: redact, exclude or fail")
	f.StringVarP(&opts.output, "output", "o", "-", "write the pack to FILE atomically; - for stdout")
	return cmd
}

func runPack(cmd *cobra.Command, io ioStreams, opts *packOptions) error {
	out, err := pipeline.Pack(cmd.Context(), opts.PackOptions)
	if err != nil {
		return err
	}
	data := out.Result.JSON
	if opts.output == "-" {
		_, err := io.Out.Write(data)
		return err
	}
	if err := fsutil.WriteFile(opts.output, data, 0o644); err != nil {
		return err
	}
	p := out.Result.Pack
	fmt.Fprintf(io.ErrOut, "%s: %s pack %s, %d files included, %d excluded, %d content bytes, ~%d tokens\n",
		opts.output, p.Type, p.PackID, p.Metadata.FilesIncluded, p.Metadata.FilesExcluded, p.Budget.ContentBytes, p.Budget.EstimatedTokens)
	return nil
}
