// Command profpack runs the pipeline of `ctxpack pack` (pipeline.Execute, then
// the pack and record written like the CLI does) under the CPU and heap
// profilers, for finding where a benchmarked run spends its time.
//
//	go run ./bench/cmd/profpack -cpuprofile cpu.out [-commit HEAD] [-unlimited] [-n N] DIR
//	go tool pprof -top cpu.out
//	go run ./bench/cmd/profpack -trace trace.out … DIR; go tool trace -pprof=sync trace.out > sync.pprof
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"

	"github.com/ctxpack/ctxpack/pipeline"
)

func main() {
	cpu := flag.String("cpuprofile", "", "write a CPU profile to FILE")
	mem := flag.String("memprofile", "", "write a heap (alloc) profile to FILE")
	peak := flag.String("peakprofile", "", "write the heap profile taken when the live heap was largest to FILE")
	traceOut := flag.String("trace", "", "write an execution trace to FILE (go tool trace -pprof=sync|syscall|sched FILE: where a run waits)")
	commit := flag.String("commit", "", "pack this commit (default: the working tree)")
	base := flag.String("base", "", "pack the range base..head (with -head)")
	head := flag.String("head", "", "head of the range (default HEAD)")
	typ := flag.String("type", "", "pack type (full, summary, auto)")
	unlimited := flag.Bool("unlimited", false, "raise every limit so each text file is packed")
	out := flag.String("o", os.DevNull, "write the pack here")
	n := flag.Int("n", 1, "run the pipeline N times (each with a cold scan cache), for enough samples on a small change")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: profpack [flags] DIR")
		os.Exit(2)
	}
	opts := pipeline.PackOptions{Dir: flag.Arg(0), Commit: *commit, Base: *base, Head: *head, Type: *typ}
	if *unlimited {
		opts.MaxContentBytes, opts.MaxFiles, opts.MaxFileBytes = 1e12, 1e9, 1e9
	}
	if *cpu != "" {
		record(*cpu, pprof.StartCPUProfile)
		defer pprof.StopCPUProfile()
	}
	if *peak != "" {
		go peakProfile(*peak)
	}
	if *traceOut != "" {
		record(*traceOut, trace.Start)
		defer trace.Stop()
	}
	start := time.Now()
	var run *pipeline.Run
	for i := 0; i < max(*n, 1); i++ {
		if run != nil {
			run.Close()
		}
		// Cold like every ratio of bench/run: the scan cache a previous run left goes.
		if dir := gitStateDir(flag.Arg(0)); dir != "" {
			if err := os.RemoveAll(filepath.Join(dir, "scan-cache")); err != nil {
				fail(err)
			}
		}
		var err error
		if run, err = pipeline.Execute(context.Background(), opts); err != nil {
			fail(err)
		}
	}
	defer run.Close()
	if err := os.WriteFile(*out, run.Result.JSON, 0o644); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "%s pack, %d files included, verdict %s, %v\n",
		run.Result.Pack.Type, run.Result.Pack.Metadata.FilesIncluded, run.Verdict.Status, time.Since(start).Round(time.Millisecond))
	if *mem != "" {
		f, err := os.Create(*mem)
		if err != nil {
			fail(err)
		}
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fail(err)
		}
		f.Close()
	}
}

// gitStateDir is ctxpack's state directory of the repository at dir (where
// the scan cache lives), or "" outside a repository.
func gitStateDir(dir string) string {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--path-format=absolute", "--git-common-dir").Output()
	if err != nil {
		return ""
	}
	return filepath.Join(strings.TrimSpace(string(out)), "ctxpack")
}

func fail(err error) {
	pprof.StopCPUProfile()
	trace.Stop()
	fmt.Fprintln(os.Stderr, "profpack:", err)
	os.Exit(1)
}

// peakProfile writes the heap profile of the largest live heap seen (after a
// GC), polling every 20 ms.
func peakProfile(file string) {
	var best uint64
	var last uint32
	for {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.NumGC != last {
			last = ms.NumGC
			if live := ms.HeapAlloc; live > best*11/10 {
				best = live
				if f, err := os.Create(file); err == nil {
					pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// record creates the file at path and starts a recorder writing to it
// (pprof.StartCPUProfile, trace.Start).
func record(path string, start func(io.Writer) error) {
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	if err := start(f); err != nil {
		fail(err)
	}
}
