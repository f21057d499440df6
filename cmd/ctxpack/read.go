package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/transparency"
	"github.com/spf13/cobra"
)

func newReadCmd(io ioStreams) *cobra.Command {
	var opts transparency.ReadOptions
	var recordFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "read PACK",
		Short: "Read a pack page by page with a profile (orchestrator, reviewer, executor)",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("read pack: %w", err)
			}
			var p pack.Pack
			if err := json.Unmarshal(data, &p); err != nil {
				return fmt.Errorf("%s is not a pack: %w", args[0], err)
			}
			if recordFile == "" {
				if _, err := os.Stat(args[0] + ".record.json"); err == nil {
					recordFile = args[0] + ".record.json"
				}
			}
			var rec *transparency.Record
			if recordFile != "" {
				rd, err := os.ReadFile(recordFile)
				if err != nil {
					return fmt.Errorf("read record: %w", err)
				}
				if rec, err = transparency.ParseRecord(rd); err != nil {
					return fmt.Errorf("%s: %w", recordFile, err)
				}
				if err := transparency.CheckPair(rec, data, p.PackID); err != nil {
					return fmt.Errorf("%s is not the record of %s: %w (rebuild both, or pass the right --record)", recordFile, args[0], err)
				}
			}
			out, err := transparency.Read(&p, rec, opts)
			var re *transparency.ReadError
			if errors.As(err, &re) {
				if asJSON {
					b, _ := json.MarshalIndent(re, "", "  ")
					fmt.Fprintln(io.Out, string(b))
				}
				return &exitError{code: exitUsage, err: err}
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(io.Out, out)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Profile, "profile", "", "orchestrator (default, compact), reviewer (full content) or executor")
	f.IntVar(&opts.Limit, "limit", 0, "chunks per page (default: 6 orchestrator, 20 executor, all reviewer)")
	f.IntVar(&opts.Offset, "offset", 0, "first chunk of the page")
	f.StringVar(&opts.PageToken, "page-token", "", "continue from a LEGEND next_page_token")
	f.StringVar(&opts.Contains, "contains", "", "keep chunks containing this text (case-insensitive)")
	f.StringVar(&recordFile, "record", "", "the pack's transparency record (default <PACK>.record.json when present)")
	f.BoolVar(&asJSON, "json", false, "print errors as JSON (kind, code, details, message)")
	return cmd
}
