package workers

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestEachCallsEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 4}, {1, 4}, {10, 1}, {1000, 3}, {5, 0}} {
		var mu sync.Mutex
		seen := map[int]int{}
		var running, most atomic.Int64
		err := Each(context.Background(), tc.n, tc.workers, func(_ context.Context, i int) error {
			r := running.Add(1)
			for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
			}
			mu.Lock()
			seen[i]++
			mu.Unlock()
			running.Add(-1)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != tc.n {
			t.Fatalf("n=%d: %d indices called", tc.n, len(seen))
		}
		for i, c := range seen {
			if i < 0 || i >= tc.n || c != 1 {
				t.Fatalf("n=%d: index %d called %d times", tc.n, i, c)
			}
		}
		if limit := int64(max(tc.workers, 1)); most.Load() > limit {
			t.Fatalf("n=%d: %d calls at once, over %d workers", tc.n, most.Load(), limit)
		}
	}
}

// TestEachStopsAtTheFirstError: the error is returned, and the indices
// left when it came are not started (a call may start between the error
// and the cancellation it brings: a handful, never the 10,000).
func TestEachStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int64
	var ctxSeen context.Context
	err := Each(context.Background(), 10000, 2, func(ctx context.Context, i int) error {
		calls.Add(1)
		if i == 10 {
			ctxSeen = ctx
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if n := calls.Load(); n > 100 {
		t.Fatalf("%d calls: the error did not stop the rest", n)
	}
	if ctxSeen.Err() == nil {
		t.Fatal("the context of the calls is not cancelled after the error")
	}
}

// TestEachCancelled: a context that ends before the work does is an
// error, never a silent success with indices left undone.
func TestEachCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int64
	err := Each(ctx, 100, 2, func(context.Context, int) error { calls.Add(1); return nil })
	if !errors.Is(err, context.Canceled) || calls.Load() != 0 {
		t.Fatalf("err = %v after %d calls, want context.Canceled and none", err, calls.Load())
	}
	if err := Each(ctx, 0, 2, func(context.Context, int) error { return nil }); err != nil {
		t.Fatalf("no work: err = %v", err)
	}
}

// TestEachReturnsTheLowestIndexError: when several calls fail, the error
// is the lowest index's, even when a higher one failed first, and a call
// that fails only because the cancellation reached it does not count.
func TestEachReturnsTheLowestIndexError(t *testing.T) {
	for range 50 {
		low, high := errors.New("index 3"), errors.New("index 7")
		highFailed := make(chan struct{})
		err := Each(context.Background(), 100, 4, func(ctx context.Context, i int) error {
			switch i {
			case 3:
				<-highFailed // index 7 fails first
				return low
			case 7:
				close(highFailed)
				return high
			case 1, 2:
				if i == 2 {
					<-highFailed
				}
				<-ctx.Done() // fails from the cancellation alone
				return ctx.Err()
			}
			return nil
		})
		if !errors.Is(err, low) {
			t.Fatalf("err = %v, want index 3's", err)
		}
	}
}
