// Package workers runs a function over many indices on a few goroutines.
package workers

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// Each calls fn(ctx, i) for every i in [0, n), in increasing order of
// start, on at most workers goroutines, each of which takes the next index
// until none is left. errgroup with SetLimit starts a goroutine per index
// instead, and a goroutine's stack grows by copying as deep code (a
// regexp's backtracker, a secret scan) runs on it: a cost each of
// thousands of new goroutines paid again (8% of the CPU of examining a
// 10,000-file tree).
//
// The first error cancels ctx and no index is started after it. The error
// returned is that of the lowest index that failed, the same on every run
// whichever call failed first: indices start in order and each call runs
// to its end, so every index below a failed one was called (a call that
// fails only because the cancellation reached it does not count). When ctx
// ends before every index is done, its error is returned.
func Each(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	var mu sync.Mutex
	first, firstErr := n, error(nil)
	for range min(max(workers, 1), n) {
		g.Go(func() error {
			for {
				if err := gctx.Err(); err != nil {
					return err // another index's error, or the caller's cancellation
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					return nil
				}
				err := fn(gctx, i)
				if err == nil {
					continue
				}
				if !(errors.Is(err, context.Canceled) && gctx.Err() != nil && ctx.Err() == nil) {
					mu.Lock()
					if i < first {
						first, firstErr = i, err
					}
					mu.Unlock()
				}
				return err
			}
		})
	}
	err := g.Wait()
	if firstErr != nil {
		return firstErr
	}
	return err
}
