// Command startup measures the fixed costs of a ctxpack run, each in fresh
// processes (a cost paid once per process is invisible to go test -bench,
// which repeats it in one process): the process itself (package
// initialization), building the secret scanner with gitleaks' default rules
// and with a repository's config that extends them, loading the tokenizer's
// vocabulary, and compiling the pack's JSON schema. It prints the median CPU
// time (user+sys, from getrusage) of each over -n runs, less the process
// start, and its share of -total when given (the CPU of a whole run, e.g.
// the pr-range rows of bench/run).
//
//	go run ./bench/cmd/startup [-n 15] [-total MS] [-pausegc=false]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"syscall"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pack/schema"
)

// components are the fixed costs measured, each run alone in a process.
// loading says which load with the collector paused in a run
// (pipeline.pauseGC).
var components = []struct {
	name    string
	loading bool
	run     func() error
}{
	{"process start (package init)", false, func() error { return nil }},
	{"secret scanner, default rules", true, func() error {
		_, err := audit.NewScanner(audit.ScannerOptions{})
		return err
	}},
	{"secret scanner, repo config", true, func() error {
		// A repository's .gitleaks.toml that adds a rule to the defaults.
		_, err := audit.NewScanner(audit.ScannerOptions{Files: &audit.GitleaksFiles{
			Config: &audit.ConfigFile{Name: ".gitleaks.toml", Data: []byte(repoConfig)},
		}})
		return err
	}},
	{"tokenizer, first count", false, func() error { _, err := pack.CountTokens("func main() { fmt.Println(\"hello, world\") }"); return err }},
	{"pack JSON schema", false, func() error {
		// Any document compiles the schema; this one fails validation.
		if schema.ValidatePack([]byte(`{}`)) == nil {
			return fmt.Errorf("an empty object passed the pack schema")
		}
		return nil
	}},
}

const repoConfig = `[extend]
useDefault = true

[[rules]]
id = "startup-example-token"
regex = '''startup_[0-9a-f]{32}'''
keywords = ["startup_"]
`

func main() {
	n := flag.Int("n", 15, "runs per component")
	total := flag.Float64("total", 0, "CPU ms of a whole run, for the shares")
	pause := flag.Bool("pausegc", true, "pause the collector while the scanner and the vocabulary load, as a run does (false: as runs did before)")
	child := flag.Int("component", -1, "run this component once and exit (internal)")
	flag.Parse()
	if *child >= 0 {
		if *pause && components[*child].loading {
			debug.SetGCPercent(-1)
		}
		if err := components[*child].run(); err != nil {
			fmt.Fprintln(os.Stderr, "startup:", err)
			os.Exit(1)
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	var base float64
	fmt.Printf("%-32s %10s %10s %8s\n", "component", "CPU ms", "alone ms", "share")
	for i, c := range components {
		var ms []float64
		for range *n {
			cmd := exec.Command(self, "-component", fmt.Sprint(i), fmt.Sprintf("-pausegc=%t", *pause))
			cmd.Stderr = os.Stderr
			if err := cmd.Run(); err != nil {
				fail(fmt.Errorf("%s: %w", c.name, err))
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			ms = append(ms, float64(ru.Utime.Nano()+ru.Stime.Nano())/1e6)
		}
		slices.Sort(ms)
		med := ms[len(ms)/2]
		alone := med - base // the process start is in every row
		if i == 0 {
			base, alone = med, med
		}
		share := ""
		if *total > 0 {
			share = fmt.Sprintf("%.0f%%", 100*alone / *total)
		}
		fmt.Printf("%-32s %10.1f %10.1f %8s\n", c.name, med, alone, share)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "startup:", err)
	os.Exit(1)
}
