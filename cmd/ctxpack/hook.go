package main

import (
	"errors"
	"fmt"
	"github.com/ctxpack/ctxpack/internal/safetext"
	"os"
	"path/filepath"

	"github.com/ctxpack/ctxpack/hooks"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/spf13/cobra"
)

func newHookCmd(io ioStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Install, remove or run the git pre-push hook",
		Long: `The pre-push hook packs and audits what every "git push" publishes, keeps
the pack and record under .git/ctxpack/prepush/ and as a git note, and blocks
the push when a verdict fails. "git push --no-verify" bypasses it once.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newHookInstallCmd(io), newHookUninstallCmd(io), newHookPrePushCmd(io))
	return cmd
}

func newHookInstallCmd(io ioStreams) *cobra.Command {
	var opts hooks.InstallOptions
	var binary string
	var pathOnly bool
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install the pre-push hook (keeping an existing one, run first)",
		Long: `Install ctxpack's pre-push hook in the repository's hooks directory
(core.hooksPath when set; a linked worktree uses the main repository's). An
existing pre-push hook is kept as pre-push.ctxpack-orig and run first with the
same arguments and input. Installing again only updates ctxpack's hook.

The hook runs the ctxpack binary whose absolute path is recorded now (the
running one, or --binary), else ctxpack on PATH; with --path-only it records
none.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pathOnly && binary != "" {
				return usageErr("--path-only and --binary exclude each other")
			}
			switch {
			case pathOnly:
			case binary != "":
				abs, err := absExecutable(binary)
				if err != nil {
					return usageErr("--binary: %v", err)
				}
				opts.Binary = abs
			default:
				var note string
				opts.Binary, note = hooks.RunningBinary()
				if note != "" {
					fmt.Fprintln(io.ErrOut, "note:", safetext.Line(note))
				}
			}
			res, err := hooks.Install(opts)
			if err != nil {
				return err
			}
			verb := "installed"
			switch {
			case res.Unchanged:
				verb = "already installed"
			case res.Updated:
				verb = "updated"
			}
			fmt.Fprintf(io.Out, "pre-push hook %s: %s (hooks directory from %s)\n", verb, safetext.Line(res.Hook), safetext.Line(res.Location.From))
			if res.Kept != "" {
				fmt.Fprintf(io.Out, "the existing hook was kept as %s and runs first\n", safetext.Line(res.Kept))
			} else if res.Previous != "" {
				fmt.Fprintf(io.Out, "the previous hook %s runs first\n", safetext.Line(res.Previous))
			}
			if res.Binary != "" {
				fmt.Fprintf(io.Out, "it runs %s (or ctxpack on PATH if that is gone)\n", safetext.Line(res.Binary))
			} else {
				fmt.Fprintln(io.Out, "it runs ctxpack from PATH")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Dir, "dir", "C", ".", "repository")
	f.StringVar(&opts.HooksDir, "hooks-dir", "", "hooks directory (default: core.hooksPath, else <git common dir>/hooks)")
	f.StringVar(&binary, "binary", "", "ctxpack binary the hook runs (default: this one)")
	f.BoolVar(&pathOnly, "path-only", false, "record no binary: the hook runs ctxpack from PATH")
	return cmd
}

func absExecutable(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", abs)
	}
	return abs, nil
}

func newHookUninstallCmd(io ioStreams) *cobra.Command {
	var dir, hooksDir string
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove the pre-push hook and restore the one it replaced",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := hooks.Uninstall(dir, hooksDir)
			if errors.Is(err, hooks.ErrNotOurs) {
				return &exitError{code: exitFailure, err: err}
			}
			if err != nil {
				return err
			}
			switch {
			case res.Foreign:
				fmt.Fprintf(io.Out, "ctxpack's pre-push hook is not installed; %s is another hook, left as it is\n", safetext.Line(res.Hook))
			case res.Removed && res.Restored:
				fmt.Fprintf(io.Out, "pre-push hook removed; the previous hook is back at %s\n", safetext.Line(res.Hook))
			case res.Removed:
				fmt.Fprintf(io.Out, "pre-push hook removed: %s\n", safetext.Line(res.Hook))
			case res.Restored:
				fmt.Fprintf(io.Out, "ctxpack's hook was not installed; the kept hook is back at %s\n", safetext.Line(res.Hook))
			default:
				fmt.Fprintf(io.Out, "ctxpack's pre-push hook is not installed (%s)\n", safetext.Line(res.Hook))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "C", ".", "repository")
	cmd.Flags().StringVar(&hooksDir, "hooks-dir", "", "hooks directory (default: core.hooksPath, else <git common dir>/hooks)")
	return cmd
}

func newHookPrePushCmd(io ioStreams) *cobra.Command {
	var opts hooks.Options
	var fromPreCommit bool
	cmd := &cobra.Command{
		Use:   "pre-push [<remote> <url>]",
		Short: "Run the pre-push check (git runs this through the installed hook)",
		Long: `Check a push as git's pre-push hook: <remote> and <url> are git's arguments,
standard input has one line per ref, "<local ref> <local sha> <remote ref>
<remote sha>". Each pushed range is packed, scanned commit by commit and
audited; the pack and record are kept under .git/ctxpack/prepush/ and as a git
note (refs/notes/ctxpack). The exit status is 1 when a verdict fails or the
push cannot be checked: the push is blocked. "git push --no-verify" bypasses
the check once.

With --from-pre-commit the push is read from the pre-commit framework's
environment (PRE_COMMIT_FROM_REF, PRE_COMMIT_TO_REF, PRE_COMMIT_REMOTE_NAME, …)
instead of standard input.`,
		Args: usageArgs(cobra.MaximumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Remote = args[0]
				opts.URL = opts.Remote
			}
			if len(args) > 1 {
				opts.URL = args[1]
			}
			var err error
			if fromPreCommit {
				if opts.Remote, opts.URL, opts.Updates, err = hooks.PreCommitUpdates(opts.Pack.Dir, os.Getenv); err != nil {
					return blocked(err)
				}
			} else {
				if len(args) == 0 {
					return usageErr("pre-push needs git's <remote> and <url> arguments (or --from-pre-commit)")
				}
				if opts.Updates, err = hooks.ParseUpdates(io.In); err != nil {
					return blocked(err)
				}
			}
			rep, err := hooks.PrePush(cmd.Context(), opts)
			if err != nil {
				return blocked(err)
			}
			rep.Write(io.ErrOut)
			if rep.Failed() {
				return &exitError{code: exitFailure, err: errors.New("pre-push check failed: push blocked")}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Pack.Dir, "dir", "C", ".", "repository")
	f.StringVar(&opts.Pack.PolicyFile, "policy", "", "policy file (default: .ctxpack.yml in the repository, else built-in defaults)")
	f.BoolVar(&opts.NoNotes, "no-notes", false, "do not store the records as git notes")
	f.BoolVar(&fromPreCommit, "from-pre-commit", false, "read the push from the pre-commit framework's environment")
	return cmd
}

// blocked wraps an error that kept the push from being checked: fail closed.
func blocked(err error) error {
	code := exitFailure
	var ue *pipeline.UsageError
	if errors.As(err, &ue) {
		code = exitUsage
	}
	return &exitError{code: code, err: fmt.Errorf("%w\nthe push could not be checked, so it is blocked; to push anyway, once: git push --no-verify", err)}
}
