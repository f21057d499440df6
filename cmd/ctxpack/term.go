package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/safetext"
	"github.com/ctxpack/ctxpack/pipeline"
	"golang.org/x/term"
)

// isTerminal reports whether f is a terminal (false for pipes, files and
// anything that is not an *os.File).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// verbosity is the root's -q / -v.
type verbosity struct {
	quiet   bool
	verbose bool
}

// maxListed is how many warnings (and skipped checks) a verdict lists
// without -v; the rest are counted.
const maxListed = 10

// printVerdict writes a verdict for people: every failure, and at most
// maxListed warnings and skipped checks each unless verbose. Quiet prints
// only a failing verdict.
func printVerdict(w io.Writer, v *audit.Verdict, vb verbosity) {
	if vb.quiet && v.Status == audit.StatusPass {
		return
	}
	fmt.Fprintf(w, "verdict: %s (%d failed, %d warnings, %d skipped)\n", v.Status, len(v.Failed), len(v.Warnings), len(v.Skipped))
	for _, c := range v.Failed {
		fmt.Fprintf(w, "  FAIL %s: %s\n", c.Code, safetext.Line(c.Message))
	}
	if vb.quiet {
		return
	}
	list := func(label, noun string, checks []audit.Check) {
		n := len(checks)
		if !vb.verbose && n > maxListed {
			checks = checks[:maxListed]
		}
		for _, c := range checks {
			fmt.Fprintf(w, "  %s %s: %s\n", label, c.Code, safetext.Line(c.Message))
		}
		if more := n - len(checks); more > 0 {
			fmt.Fprintf(w, "  … and %d more %s (-v lists them all; --json and the record hold every one)\n", more, noun)
		}
	}
	list("warn", "warnings", v.Warnings)
	list("skip", "skipped checks", v.Skipped)
}

// progressDelay is how long a run goes before it shows a progress line:
// a short run prints nothing it would have to erase.
const progressDelay = 1500 * time.Millisecond

// progressLine shows the stage of a long run on one terminal line of
// stderr, rewritten in place, and erases it when the run ends.
type progressLine struct {
	w       io.Writer
	start   time.Time
	delay   time.Duration
	mu      sync.Mutex
	last    pipeline.Progress
	shown   bool
	stopped bool
	timer   *time.Timer
}

// newProgress returns a progress reporter for stderr, or nil when stderr is
// not a terminal or the run is quiet (pipeline.PackOptions.Progress nil).
func newProgress(ios ioStreams, vb verbosity) *progressLine {
	if !ios.ErrTerminal || vb.quiet {
		return nil
	}
	return startProgress(ios.ErrOut, progressDelay)
}

// startProgress shows the progress on w once delay has passed.
func startProgress(w io.Writer, delay time.Duration) *progressLine {
	p := &progressLine{w: w, start: time.Now(), delay: delay}
	p.timer = time.AfterFunc(delay, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.draw()
	})
	return p
}

// update is a pipeline.PackOptions.Progress.
func (p *progressLine) update(pr pipeline.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = pr
	if time.Since(p.start) >= p.delay {
		p.draw()
	}
}

func (p *progressLine) draw() {
	if p.stopped || p.last.Stage == "" {
		return
	}
	line := fmt.Sprintf("ctxpack: %s", p.last.Stage)
	if p.last.Files > 0 {
		line += fmt.Sprintf(" (%d files, %s)", p.last.Files, humanBytes(p.last.Bytes))
	}
	line += fmt.Sprintf(" %ds", int(time.Since(p.start).Seconds()))
	// \r and erase-line: the next update or the final output replaces it.
	fmt.Fprint(p.w, "\r\x1b[K"+line)
	p.shown = true
}

// stop erases the line; nothing is drawn after it.
func (p *progressLine) stop() {
	if p == nil {
		return
	}
	p.timer.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// displayName is a file argument as messages show it: "-" is stdout or
// stdin, anything else the escaped name.
func displayName(name, stdio string) string {
	if name == "-" {
		return stdio
	}
	return safetext.Line(name)
}
