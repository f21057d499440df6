package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	stdio "io"
	"os"
	"strconv"
	"time"

	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/source"
	"github.com/ctxpack/ctxpack/store"
	"github.com/spf13/cobra"
)

// graceEnv is seed 001's setting of the expired grace, in seconds.
const graceEnv = "CONTEXT_PACK_EXPIRED_GRACE_SECONDS"

// storeFlags say which pack store to open.
type storeFlags struct {
	dir      string
	storeDir string
	policy   string
	ttl      time.Duration
	grace    time.Duration
}

func (f *storeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&f.dir, "dir", "C", ".", "repository the packs describe (its secret rules scan what is written; refs resolve against it)")
	fl.StringVar(&f.storeDir, "store-dir", "", "store directory (default: the repository's .git/ctxpack/store)")
	fl.StringVar(&f.policy, "policy", "", "policy file whose secrets settings apply (default: the repository's .ctxpack.yml)")
	fl.DurationVar(&f.ttl, "ttl", 0, "time to live of new entries (default 168h)")
	fl.DurationVar(&f.grace, "expired-grace", 0, "how long expired entries stay readable with freshness=expired (default $"+graceEnv+" seconds, else 15m)")
}

// open opens the store of the repository containing f.dir, scanning what is
// written with the repository's secret scanner (pipeline.NewScanner) and
// resolving refs against the repository.
func (f *storeFlags) open(getenv func(string) string) (*store.Store, error) {
	repo, err := source.Open(f.dir)
	if err != nil {
		return nil, err
	}
	dir := f.storeDir
	if dir == "" {
		if repo.StateDir() == "" {
			return nil, usageErr("%s is not a git repository: name a store directory with --store-dir", repo.Root)
		}
		if dir, err = repo.MakeStateDir("store"); err != nil {
			return nil, err
		}
	}
	grace := f.grace
	if grace == 0 {
		if s := getenv(graceEnv); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return nil, usageErr("%s=%q: a whole number of seconds, 0 or more", graceEnv, s)
			}
			grace = time.Duration(n) * time.Second
			if n == 0 {
				grace = -1 // no grace at all
			}
		}
	}
	pol, _, err := pipeline.LoadPolicy(repo.Root, pipeline.PackOptions{PolicyFile: f.policy})
	if err != nil {
		return nil, err
	}
	// The work tree's configuration: building its scanner reads no commit.
	scanner, err := pipeline.NewScanner(context.Background(), repo, &pipeline.Config{Policy: pol})
	if err != nil {
		return nil, err
	}
	return store.Open(store.Options{Dir: dir, TTL: f.ttl, ExpiredGrace: grace, Scanner: scanner, Files: store.NewRepoFiles(repo, repo.Root)})
}

// storeError reports a store error: as JSON on stdout with --json, and as
// the command's error (exit 2 for invalid_data, else 1).
func storeError(io ioStreams, asJSON bool, err error) error {
	var se *store.Error
	if !errors.As(err, &se) {
		return err
	}
	if asJSON {
		writeJSON(io, se)
	}
	code := exitFailure
	if se.Code == store.CodeInvalidData {
		code = exitUsage
	}
	return &exitError{code: code, reported: asJSON, err: fmt.Errorf("%s (%s)", se.Message, se.Code)}
}

func writeJSON(io ioStreams, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = io.Out.Write(append(data, '\n'))
	return err
}

// readDocument reads a document file, - for standard input.
func readDocument(in stdio.Reader, path string) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = stdio.ReadAll(stdio.LimitReader(in, store.MaxDocumentBytes+1))
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, usageErr("--document %s: %v", path, err)
	}
	return data, nil
}
