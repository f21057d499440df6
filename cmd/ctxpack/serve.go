package main

import (
	"context"
	"fmt"
	"github.com/ctxpack/ctxpack/internal/safetext"
	stdio "io"
	"net"
	"os"

	"github.com/ctxpack/ctxpack/mcpserver"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

func newServeCmd(io ioStreams) *cobra.Command {
	var sf storeFlags
	var httpAddr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the pack store over MCP (stdio, or streamable HTTP on 127.0.0.1)",
		Long: `Serve speaks the Model Context Protocol on standard input and output (or,
with --http, streamable HTTP on a loopback address) and serves the pack store
(ctxpack store --help): the tools "input" (list, get, write, ttl, delete) and
"output" (list, read), "query" (the most relevant code chunks of the
repository for an identifier, a path or a phrase, as ctxpack pack --query),
and every stored pack and document as a resource (ctxpack://packs/<id>,
ctxpack://packs/<id>/document).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := sf.open(os.Getenv)
			if err != nil {
				return err
			}
			query := func(ctx context.Context, text string, maxChars int, commit string) ([]byte, error) {
				_, data, err := pipeline.Query(ctx, pipeline.PackOptions{Dir: sf.dir, Commit: commit, PolicyFile: sf.policy}, text, maxChars)
				return data, err
			}
			srv := mcpserver.New(mcpserver.Options{Store: st, Version: pipeline.Version, Query: query})
			if httpAddr == "" {
				return srv.Run(cmd.Context(), &mcp.IOTransport{Reader: stdio.NopCloser(io.In), Writer: nopWriteCloser{io.Out}})
			}
			return mcpserver.ServeHTTP(cmd.Context(), srv, httpAddr, func(a net.Addr) {
				fmt.Fprintf(io.ErrOut, "ctxpack serve: MCP streamable HTTP on http://%s (store %s)\n", a, safetext.Line(st.Dir()))
			})
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on this loopback address (e.g. 127.0.0.1:8765) instead of stdio")
	return cmd
}

// nopWriteCloser leaves standard output open when the session ends.
type nopWriteCloser struct{ stdio.Writer }

func (nopWriteCloser) Close() error { return nil }
