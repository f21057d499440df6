package pack_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/ctxpack/ctxpack/pipeline"
)

// BenchmarkFullTreePackMemory runs what `ctxpack pack --type full` with
// every limit raised does on the 5,000-file repository (build, audit,
// record; bench/run's full-tree task) and reports the peak memory it
// needs: peak-live-MB is the largest live heap after a GC, peak-heap-MB
// the most heap memory the runtime held from the OS (what peak RSS
// follows), pack-MB the serialized pack. Each run starts with a cold scan
// cache. Peak RSS of the binary on public repositories: bench/run
// (TASKS=full-tree-pack).
func BenchmarkFullTreePackMemory(b *testing.B) {
	dir := benchRepo(b)
	opts := pipeline.PackOptions{Dir: dir, Type: "full", MaxContentBytes: 1e12, MaxFiles: 1e9, MaxFileBytes: 1e9}
	var peak peakMemory
	var packBytes int
	for b.Loop() {
		b.StopTimer()
		if err := os.RemoveAll(filepath.Join(dir, ".git", "ctxpack", "scan-cache")); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		debug.FreeOSMemory()
		stop := peak.watch()
		b.StartTimer()
		run, err := pipeline.Execute(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		packBytes = len(run.Result.JSON)
		run.Close()
		stop()
	}
	b.ReportMetric(float64(peak.live)/(1<<20), "peak-live-MB")
	b.ReportMetric(float64(peak.heap)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(packBytes)/(1<<20), "pack-MB")
}

// peakMemory keeps the largest live heap and the largest heap footprint
// (mapped heap memory not yet returned to the OS) seen while watching.
type peakMemory struct{ live, heap uint64 }

// watch samples runtime/metrics every millisecond until the returned
// function is called.
func (p *peakMemory) watch() (stop func()) {
	samples := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(samples)
			p.live = max(p.live, samples[0].Value.Uint64())
			p.heap = max(p.heap, samples[1].Value.Uint64()+samples[2].Value.Uint64()+samples[3].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
