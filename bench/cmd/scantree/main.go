// Command scantree runs ctxpack's secret scan (gitleaks rules, credential
// files and password assignments) over every text file of a tree, in
// parallel and without the scan cache: the work `gitleaks dir` does, for a
// side-by-side benchmark.
//
//	go run ./bench/cmd/scantree [-cpuprofile FILE] DIR
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/source"
)

func main() {
	cpu := flag.String("cpuprofile", "", "write a CPU profile of the scan (not the reading) to FILE")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: scantree [-cpuprofile FILE] DIR")
		os.Exit(2)
	}
	if err := run(context.Background(), flag.Arg(0), *cpu); err != nil {
		fmt.Fprintln(os.Stderr, "scantree:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir, cpuprofile string) error {
	repo, err := source.Open(dir)
	if err != nil {
		return err
	}
	defer repo.Close()
	snap, err := repo.Worktree(ctx)
	if err != nil {
		return err
	}
	scanner, err := audit.NewScanner(audit.ScannerOptions{RepoRoot: repo.Root})
	if err != nil {
		return err
	}
	var items []audit.ScanItem
	var total int
	for _, f := range snap.Files {
		if f.Read == nil {
			continue
		}
		data, err := f.Read(ctx)
		if err != nil {
			return err
		}
		head := data
		if len(head) > 8<<10 {
			head = head[:8<<10]
		}
		if bytes.IndexByte(head, 0) >= 0 {
			continue // binary, as gitleaks skips it
		}
		total += len(data)
		items = append(items, audit.ScanItem{Path: f.Path, Content: data})
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	findings, err := scanner.ScanAll(ctx, items)
	if err != nil {
		return err
	}
	fmt.Printf("scanned %d files, %d bytes, %d findings\n", len(items), total, len(findings))
	return nil
}
