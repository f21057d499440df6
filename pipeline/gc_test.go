package pipeline

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// setGC sets the GC percent to 150 and the memory limit to 1 GiB (as
// GOGC=150 and GOMEMLIMIT would) for the test, and puts back the process's
// after it.
func setGC(t *testing.T) {
	prev := debug.SetGCPercent(150)
	prevLimit := debug.SetMemoryLimit(1 << 30)
	t.Cleanup(func() {
		debug.SetGCPercent(prev)
		debug.SetMemoryLimit(prevLimit)
	})
}

// gcPercentNow is the GC percent in force. Reading it sets it twice, so it
// is read under the lock that pauseGC and restoreGC set it under: a window
// ended by its sentinel's finalizer (on another goroutine) between the two
// would otherwise be undone by the second (the collector then stayed off,
// TestPauseGCEndsAtFirstCollection failed once under -race).
func gcPercentNow() int {
	gcPaused.Lock()
	defer gcPaused.Unlock()
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// memoryLimitNow is the memory limit in force.
func memoryLimitNow() int64 { return debug.SetMemoryLimit(-1) }

// TestPauseGC: overlapping runs keep the collector off until the last one
// resumes, a second resume of a run changes nothing, and the GC percent in
// force before (here 150, as GOGC=150 would set) comes back; while paused
// the heap is bounded by a memory limit, and the limit in force before (here
// 1 GiB, as GOMEMLIMIT would set) comes back too.
func TestPauseGC(t *testing.T) {
	setGC(t)

	a := pauseGC(treeHeapLimit)
	b := pauseGC(treeHeapLimit)
	if p := gcPercentNow(); p != -1 {
		t.Fatalf("GC percent %d while two runs start, want -1 (off)", p)
	}
	if l := memoryLimitNow(); l != treeHeapLimit {
		t.Fatalf("memory limit %d while paused, want %d", l, treeHeapLimit)
	}
	a()
	a()
	if p := gcPercentNow(); p != -1 {
		t.Fatalf("GC percent %d after one of two runs resumed (twice), want -1 (off)", p)
	}
	b()
	if p := gcPercentNow(); p != 150 {
		t.Fatalf("GC percent %d after both runs resumed, want 150", p)
	}
	if l := memoryLimitNow(); l != 1<<30 {
		t.Fatalf("memory limit %d after both runs resumed, want %d", l, 1<<30)
	}
}

// TestPauseGCEndsAtFirstCollection: the first collection after a pause
// starts (which only the memory limit forces while the percent is off)
// ends it, restoring the percent and the limit; a later resume changes
// nothing, the end of an earlier window does not end the current one, and
// the next pause starts paused again.
func TestPauseGCEndsAtFirstCollection(t *testing.T) {
	setGC(t)

	resume := pauseGC(treeHeapLimit)
	gcPaused.Lock()
	gen := gcPaused.gen
	gcPaused.Unlock()
	restoreGC(gen - 1) // an earlier window's sentinel
	if p := gcPercentNow(); p != -1 {
		t.Fatalf("GC percent %d after an earlier window ended, want -1 (off)", p)
	}
	deadline := time.Now().Add(10 * time.Second)
	for gcPercentNow() != 150 {
		if time.Now().After(deadline) {
			t.Fatal("the collector is still paused after collections")
		}
		runtime.GC() // the finalizer runs on its own goroutine, after it
		time.Sleep(time.Millisecond)
	}
	if l := memoryLimitNow(); l != 1<<30 {
		t.Fatalf("memory limit %d after the first collection, want %d", l, 1<<30)
	}
	resume()
	if p := gcPercentNow(); p != 150 {
		t.Fatalf("GC percent %d after the run resumed too, want 150", p)
	}
	again := pauseGC(treeHeapLimit)
	if p := gcPercentNow(); p != -1 {
		t.Fatalf("GC percent %d in the next pause, want -1 (off)", p)
	}
	again()
}

// TestHeapLimitFor: a commit's or a range's run pauses the collector up to
// the larger limit, a tree's (work tree, directory) up to the smaller one,
// and the limit asked for is the one in force while paused (PausePackGC,
// the pause of a caller around Execute).
func TestHeapLimitFor(t *testing.T) {
	setGC(t)
	for _, tc := range []struct {
		name string
		opts PackOptions
		want int64
	}{
		{"work tree", PackOptions{}, treeHeapLimit},
		{"work tree, full", PackOptions{Type: "full"}, treeHeapLimit},
		{"commit", PackOptions{Commit: "HEAD"}, changeHeapLimit},
		{"range", PackOptions{Base: "main", Head: "HEAD"}, changeHeapLimit},
	} {
		got := heapLimitFor(tc.opts)
		if got != tc.want {
			t.Errorf("%s: heap limit %d, want %d", tc.name, got, tc.want)
		}
		resume := PausePackGC(tc.opts)
		if l := memoryLimitNow(); l != tc.want {
			t.Errorf("%s: memory limit %d while paused, want %d", tc.name, l, tc.want)
		}
		resume()
	}
}

// TestLargeLiveHeapLowersGCPercent: after the pause window, a live heap
// under largeLiveHeap keeps the percent the run found; one that reaches it
// lowers the percent to largeHeapGCPercent until the run resumes, which
// puts back the percent it found. A GOGC the user set is left alone.
func TestLargeLiveHeapLowersGCPercent(t *testing.T) {
	setGC(t)
	t.Setenv("GOGC", "")
	collect := func(until func() bool) bool {
		for range 200 {
			if until() {
				return true
			}
			runtime.GC() // the finalizers run on their own goroutines, after it
			time.Sleep(time.Millisecond)
		}
		return until()
	}
	resume := pauseGC(treeHeapLimit)
	if !collect(func() bool { return gcPercentNow() == 150 }) {
		t.Fatal("the pause window did not end at the first collections")
	}
	collect(func() bool { return false }) // a small live heap: watched, not lowered
	if p := gcPercentNow(); p != 150 {
		t.Fatalf("GC percent %d with a small live heap, want 150", p)
	}
	live := make([][]byte, 0, 80)
	for range 80 {
		live = append(live, make([]byte, 1<<20))
	}
	if !collect(func() bool { return gcPercentNow() == largeHeapGCPercent }) {
		t.Fatalf("GC percent %d with %d MB live, want %d", gcPercentNow(), len(live), largeHeapGCPercent)
	}
	runtime.KeepAlive(live)
	resume()
	if p := gcPercentNow(); p != 150 {
		t.Fatalf("GC percent %d after the run resumed, want 150", p)
	}

	t.Setenv("GOGC", "150") // the user's: never lowered
	resume = pauseGC(treeHeapLimit)
	live = live[:0]
	for range 80 {
		live = append(live, make([]byte, 1<<20))
	}
	collect(func() bool { return false })
	if p := gcPercentNow(); p != 150 {
		t.Fatalf("GC percent %d under GOGC=150, want 150", p)
	}
	runtime.KeepAlive(live)
	resume()
}
