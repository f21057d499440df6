package main

import (
	"fmt"
	"os"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/transparency"
	"github.com/spf13/cobra"
)

// readOptions are read's flags and arguments.
type readOptions struct {
	transparency.ReadOptions
	packFile   string
	recordFile string
	asJSON     bool
}

func newReadCmd(io ioStreams) *cobra.Command {
	opts := &readOptions{}
	cmd := &cobra.Command{
		Use:   "read PACK",
		Short: "Read a pack page by page with a profile (orchestrator, reviewer, executor)",
		Long: `Read a pack page by page with a read profile: orchestrator (compact, bounded
pages), reviewer (full content) or executor. PACK - reads the pack from
standard input.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.packFile = args[0]
			return runRead(io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Profile, "profile", "", "orchestrator (default, compact), reviewer (full content) or executor")
	f.IntVar(&opts.Limit, "limit", 0, "chunks per page (default: 6 orchestrator, 20 executor, all reviewer)")
	f.IntVar(&opts.Offset, "offset", 0, "first chunk of the page")
	f.StringVar(&opts.PageToken, "page-token", "", "continue from a LEGEND next_page_token")
	f.StringVar(&opts.Contains, "contains", "", "keep chunks containing this text (case-insensitive)")
	f.StringVar(&opts.recordFile, "record", "", "the pack's transparency record (default <PACK>.record.json when present; - for standard input)")
	f.BoolVar(&opts.asJSON, "json", false, "print errors as JSON (kind, code, details, message)")
	return cmd
}

func runRead(io ioStreams, opts *readOptions) error {
	var in stdinOnce
	name := displayName(opts.packFile, "standard input")
	data, err := in.file(io, "PACK", opts.packFile, maxStdin)
	if err != nil {
		return fmt.Errorf("read pack: %w", err)
	}
	var p pack.Pack
	if err := pack.Unmarshal(data, &p); err != nil {
		return usageErr("%s is not a pack: %v", name, err)
	}
	recordFile := opts.recordFile
	if recordFile == "" && opts.packFile != "-" {
		if _, err := os.Stat(opts.packFile + ".record.json"); err == nil {
			recordFile = opts.packFile + ".record.json"
		}
	}
	var rec *transparency.Record
	if recordFile != "" {
		rd, err := in.file(io, "--record", recordFile, maxStdin)
		if err != nil {
			return fmt.Errorf("read record: %w", err)
		}
		rname := displayName(recordFile, "standard input")
		if rec, err = transparency.ParseRecord(rd); err != nil {
			return fmt.Errorf("%s: %w", rname, err)
		}
		if err := transparency.CheckPair(rec, data, p.PackID); err != nil {
			return fmt.Errorf("%s is not the record of %s: %w (rebuild both, or pass the right --record)", rname, name, err)
		}
	}
	out, err := transparency.Read(&p, rec, opts.ReadOptions)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(io.Out, out)
	return err
}
