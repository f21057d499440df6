package main

import (
	"errors"
	"fmt"
	"github.com/ctxpack/ctxpack/internal/safetext"
	"os"
	"path/filepath"

	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
	"github.com/spf13/cobra"
)

func newInitCmd(io ioStreams) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented default policy (.ctxpack.yml); never overwrites",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := filepath.Join(dir, policy.FileName)
			if _, err := os.Lstat(path); err == nil {
				return &exitError{code: exitFailure, err: fmt.Errorf("%s already exists: edit it, or remove it first to start over", path)}
			} else if !errors.Is(err, os.ErrNotExist) {
				return err
			}
			if err := fsutil.WriteFile(path, []byte(policy.Template), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(io.Out, "wrote %s\n", safetext.Line(path))
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "C", ".", "directory to write the policy in")
	return cmd
}

func newPolicyCmd(io ioStreams) *cobra.Command {
	opts := pipeline.PackOptions{}
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Print the effective policy and its sha256",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			repo, err := source.Open(opts.Dir)
			if err != nil {
				return err
			}
			defer repo.Close()
			pol, file, err := pipeline.LoadPolicy(repo.Root, opts)
			if err != nil {
				return err
			}
			if file == "" {
				file = "built-in defaults"
			}
			fmt.Fprintf(io.Out, "# source: %s\n# sha256: %s\n", safetext.Line(file), pol.Digest())
			_, err = io.Out.Write(pol.YAML())
			return err
		},
	}
	cmd.Flags().StringVarP(&opts.Dir, "dir", "C", ".", "repository directory")
	cmd.Flags().StringVar(&opts.PolicyFile, "policy", "", "policy file (default: .ctxpack.yml in the repository)")
	return cmd
}
