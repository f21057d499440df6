package main

import (
	"errors"
	"os"
	"strings"

	"github.com/ctxpack/ctxpack/action"
	"github.com/spf13/cobra"
)

// actionGetenv is the environment the action reads (tests replace it).
var actionGetenv = os.Getenv

func newActionCmd(io ioStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "action",
		Short: "Run as the GitHub Action step (reads the workflow event and INPUT_* variables)",
		Long: `Run as the GitHub Action step: pack and audit the change of the workflow
event (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH), upload pack and record as a
workflow artifact, keep one pull request comment up to date, and write the job
summary, annotations and step outputs. Inputs come from INPUT_* variables as
action.yml declares them. The image's entrypoint runs it; it is not meant to be
run by hand outside a job (it then warns and skips what needs the runner).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := action.Run(cmd.Context(), action.Options{
				Getenv: actionGetenv,
				Stdout: io.Out,
			})
			if err != nil {
				// Run has reported it as an ::error:: annotation.
				return &exitError{code: exitCode(err), err: err, shown: true}
			}
			if res.Failed {
				return &exitError{code: exitFailure, err: errors.New(strings.Join(res.Why, "; "))}
			}
			return nil
		},
	}
}
