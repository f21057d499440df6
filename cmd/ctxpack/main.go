// Command ctxpack builds auditable context packs of a git repository for an
// external LLM. Each subcommand lives in its own file; they only turn flags
// into options and call the library.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"

	"github.com/ctxpack/ctxpack/internal/safetext"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/store"
	"github.com/ctxpack/ctxpack/transparency"
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
	// OutTerminal and ErrTerminal say whether Out and ErrOut are a
	// terminal: the pack is not printed on one, and a long run shows its
	// progress on one.
	OutTerminal bool
	ErrTerminal bool
	// Verbosity is the root's -q / -v, set when flags are parsed.
	Verbosity *verbosity
}

// vb returns the verbosity the flags asked for.
func (s ioStreams) vb() verbosity {
	if s.Verbosity == nil {
		return verbosity{}
	}
	return *s.Verbosity
}

// exitError carries an exit code through cobra. reported means the
// command already printed the outcome on stdout (a --json verdict or
// error), so no JSON error follows it; shown means it already showed the
// error itself (the action's ::error:: annotation, which the job log
// prints), so it is not printed a second time.
type exitError struct {
	code     int
	err      error
	reported bool
	shown    bool
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
	code := run(ctx, os.Args[1:], ioStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTerminal: isTerminal(os.Stdout), ErrTerminal: isTerminal(os.Stderr)})
	stop()
	os.Exit(code)
}

// run executes the command line and returns the exit code: 0 success, 1 a
// failing verdict or a run that failed, 2 a usage error (see exitCode).
// With --json, an error is also printed once on stdout in the error
// contract's shape (kind, code, details, message).
func run(ctx context.Context, args []string, io ioStreams) int {
	if io.Verbosity == nil {
		io.Verbosity = &verbosity{}
	}
	root := newRootCmd(io)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	var ee *exitError
	reported := errors.As(err, &ee) && ee.reported
	if cmd != nil && !reported && jsonFlag(cmd) {
		_ = writeJSON(io, contractError(err, code))
	}
	if !(ee != nil && ee.shown) {
		fmt.Fprintln(io.ErrOut, "ctxpack:", safetext.Line(err.Error()))
	}
	return code
}

// jsonFlag reports whether the command ran with --json.
func jsonFlag(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("json")
	return f != nil && f.Value.String() == "true"
}

// contractError is err in the error contract's shape: a store or read
// error as it is, a usage error as validation/invalid_data, a missing file
// as not_found, anything else as internal_error.
func contractError(err error, code int) *store.Error {
	var se *store.Error
	var re *transparency.ReadError
	switch {
	case errors.As(err, &se), errors.As(err, &re):
		return store.AsError(err)
	case code == exitUsage:
		return &store.Error{Kind: store.KindValidation, Code: store.CodeInvalidData, Message: err.Error(), Details: map[string]any{}}
	case errors.Is(err, fs.ErrNotExist):
		return &store.Error{Kind: store.KindNotFound, Code: store.CodeNotFound, Message: err.Error(), Details: map[string]any{}}
	}
	return store.AsError(err)
}

// exitCode maps an error to the exit code table: 2 for usage errors (bad
// flags, arguments, unknown commands, invalid data), 1 for everything else.
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
	if store.AsError(err).Code == store.CodeInvalidData { // a store or read error
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
	pf := root.PersistentFlags()
	pf.BoolVarP(&io.Verbosity.quiet, "quiet", "q", false, "print only errors and a failing verdict")
	pf.BoolVarP(&io.Verbosity.verbose, "verbose", "v", false, "list every warning and skipped check")
	root.AddCommand(newPackCmd(io), newAuditCmd(io), newInitCmd(io), newPolicyCmd(io), newLogCmd(io), newVerifyCmd(io), newVerifyAttestationCmd(io), newReadCmd(io), newHookCmd(io), newActionCmd(io), newStoreCmd(io), newServeCmd(io))
	refuseUnknownCommands(root)
	return root
}

// refuseUnknownCommands makes every command that only groups subcommands
// (the root, hook, store) print its help when called bare and fail with a
// usage error (exit 2) on an unknown subcommand, where cobra would exit 1.
func refuseUnknownCommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownCommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return &exitError{code: exitUsage, err: fmt.Errorf("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())}
	}
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
