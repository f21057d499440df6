// Command ctxpack builds auditable context packs of a git repository for an
// external LLM. Each subcommand lives in its own file; they only turn flags
// into options and call the library.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ctxpack/ctxpack/internal/safetext"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/spf13/cobra"
)

// version is stamped at link time (-ldflags "-X main.version=...").
var version = ""

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// ioStreams are the command's I/O, injected so commands test in-process.
type ioStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func main() {
	if version != "" {
		pipeline.Version = version
	}
	// An interrupt or a termination cancels the run: files being written are
	// abandoned and their temporary files removed (fsutil.Batch).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], ioStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	stop()
	os.Exit(code)
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, io ioStreams) int {
	root := newRootCmd(io)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(io.ErrOut, "ctxpack:", safetext.Line(err.Error()))
	return exitCode(err)
}

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue *pipeline.UsageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	var fe *flagError
	if errors.As(err, &fe) {
		return exitUsage
	}
	return exitFailure
}

// flagError marks cobra's flag parsing errors as usage errors.
type flagError struct{ err error }

func (e *flagError) Error() string { return e.err.Error() }

func newRootCmd(io ioStreams) *cobra.Command {
	root := &cobra.Command{
		Use:           "ctxpack",
		Short:         "Build auditable, secret-free context packs of a git repository",
		Long:          "ctxpack packs the changed tree of a git repository for an external LLM, keeps secrets out (gitleaks), enforces the egress and size policy fail-closed, and records what would leave and why.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       pipeline.Version,
	}
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.SetIn(io.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &flagError{fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	root.AddCommand(newPackCmd(io), newAuditCmd(io), newInitCmd(io), newPolicyCmd(io), newLogCmd(io), newVerifyCmd(io), newVerifyAttestationCmd(io), newReadCmd(io), newHookCmd(io), newActionCmd(io), newStoreCmd(io), newServeCmd(io))
	return root
}

// usageArgs makes a positional-argument check a usage error (exit 2).
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())}
		}
		return nil
	}
}
