package pipeline

import (
	"runtime/debug"
	"testing"
)

// TestPauseGC: overlapping runs keep the collector off until the last one
// resumes, a second resume of a run changes nothing, and the GC percent in
// force before (here 150, as GOGC=150 would set) comes back.
func TestPauseGC(t *testing.T) {
	prev := debug.SetGCPercent(150)
	defer debug.SetGCPercent(prev)
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }

	a := pauseGC()
	b := pauseGC()
	if p := percent(); p != -1 {
		t.Fatalf("GC percent %d while two runs start, want -1 (off)", p)
	}
	a()
	a()
	if p := percent(); p != -1 {
		t.Fatalf("GC percent %d after one of two runs resumed (twice), want -1 (off)", p)
	}
	b()
	if p := percent(); p != 150 {
		t.Fatalf("GC percent %d after both runs resumed, want 150", p)
	}
}
