package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retries follow actions/toolkit: at most 5 attempts, the wait before retry
// n (1-based) drawn uniformly from [base·m^(n-1), base·m^n) with base 3 s and
// m 1.5 — the artifact client's getExponentialRetryTimeMilliseconds.
//
// No maintained retry library fits here: cenkalti/backoff/v5 hides its timer
// (the wait cannot be injected, so tests would sleep for real), and
// go-retryablehttp neither lets the wait be injected nor retries a 200 whose
// body is not JSON, as the toolkit's Twirp client does. The loop is small and
// tested on its own (retry_test.go).
const (
	maxAttempts      = 5
	retryBase        = 3 * time.Second
	retryMultiplier  = 1.5
	defaultMaxWait   = 2 * time.Minute
	secondaryLimWait = time.Minute
)

// Sleeper waits d or until ctx is done.
type Sleeper func(ctx context.Context, d time.Duration) error

// RealSleep is the Sleeper of a real run.
func RealSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backoff returns the jittered wait before retry n (1-based); rnd is in [0,1).
func backoff(n int, rnd float64) time.Duration {
	min := float64(retryBase) * math.Pow(retryMultiplier, float64(n-1))
	max := float64(retryBase) * math.Pow(retryMultiplier, float64(n))
	return time.Duration(min + rnd*(max-min))
}

// retryable marks an error the retry loop may try again.
type retryable struct {
	err   error
	after time.Duration // a server-requested wait (Retry-After), 0 for backoff
}

func (e *retryable) Error() string { return e.err.Error() }
func (e *retryable) Unwrap() error { return e.err }

func retryErr(err error) error { return &retryable{err: err} }

// retrier runs an operation up to maxAttempts times, waiting between
// attempts with the injected sleeper.
type retrier struct {
	sleep Sleeper
	rand  func() float64
	logf  func(format string, args ...any)
	// maxWait bounds a server-requested wait; a longer one is not waited for.
	maxWait time.Duration
}

// do runs op until it succeeds, returns a non-retryable error, or the
// attempts are used up. what names the operation in log lines.
func (r *retrier) do(ctx context.Context, what string, op func(attempt int) error) error {
	var last error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		err := op(attempt)
		if err == nil {
			return nil
		}
		var re *retryable
		if !errors.As(err, &re) {
			return err
		}
		last = re.err
		if attempt == maxAttempts {
			break
		}
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("%s: %w (after %v)", what, cerr, last)
		}
		wait := backoff(attempt, r.rnd())
		if re.after > 0 {
			if re.after > r.limit() {
				return fmt.Errorf("%s: %w (the server asked to wait %s, longer than %s)", what, last, re.after.Round(time.Second), r.limit())
			}
			wait = re.after
		}
		if r.logf != nil {
			r.logf("%s: attempt %d of %d failed: %v; retrying in %s", what, attempt, maxAttempts, last, wait.Round(time.Millisecond))
		}
		if err := r.sleeper()(ctx, wait); err != nil {
			return fmt.Errorf("%s: %w (after %v)", what, err, last)
		}
	}
	return fmt.Errorf("%s failed after %d attempts: %w", what, maxAttempts, last)
}

func (r *retrier) rnd() float64 {
	if r.rand == nil {
		return 0.5
	}
	return r.rand()
}

func (r *retrier) limit() time.Duration {
	if r.maxWait <= 0 {
		return defaultMaxWait
	}
	return r.maxWait
}

func (r *retrier) sleeper() Sleeper {
	if r.sleep == nil {
		return RealSleep
	}
	return r.sleep
}

// retryTransport retries GitHub REST calls: 5xx, 429, and 403 rate limits
// (primary: X-RateLimit-Remaining 0, wait until X-RateLimit-Reset;
// secondary: Retry-After, else a minute). Other statuses pass through to
// go-github, which turns them into errors. It sits below go-github, so
// go-github's own "still rate limited" short-circuit never sees a limit that
// a retry cleared.
type retryTransport struct {
	base  http.RoundTripper
	retry *retrier
	now   func() time.Time
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var resp *http.Response
	err := t.retry.do(ctx, req.Method+" "+req.URL.Path, func(attempt int) error {
		r := req
		if attempt > 1 {
			r = req.Clone(ctx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return err
				}
				r.Body = body
			} else if req.Body != nil && req.Body != http.NoBody {
				return errors.New("the request body cannot be replayed")
			}
		}
		res, err := t.base.RoundTrip(r)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !idempotent(req.Method) {
				return err // it may have reached the server: the caller decides
			}
			return retryErr(err)
		}
		wait, again := t.classify(res)
		if again && !idempotent(req.Method) && res.StatusCode >= 500 {
			// A 5xx to a POST may come after the server acted on it (a
			// comment created, then 502): the caller decides (see
			// upsertComment). Rate limits refuse before acting and are
			// retried.
			again = false
		}
		if !again {
			resp = res
			return nil
		}
		if attempt == maxAttempts || (wait > 0 && wait > t.retry.limit()) {
			resp = res // the caller sees the last answer
			return nil
		}
		io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		return &retryable{err: fmt.Errorf("HTTP %d", res.StatusCode), after: wait}
	})
	if resp != nil {
		return resp, nil
	}
	return nil, err
}

// classify says whether a response is worth another attempt and how long the
// server asked to wait (0: backoff).
func (t *retryTransport) classify(res *http.Response) (time.Duration, bool) {
	switch res.StatusCode {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return retryAfter(res.Header, t.now()), true
	case http.StatusTooManyRequests, http.StatusForbidden:
	default:
		return 0, false
	}
	if d := retryAfter(res.Header, t.now()); d > 0 {
		return d, true
	}
	if res.Header.Get("X-RateLimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(res.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			d := time.Unix(reset, 0).Sub(t.now()) + time.Second
			if d < time.Second {
				d = time.Second
			}
			return d, true
		}
		return secondaryLimWait, true
	}
	if res.StatusCode == http.StatusTooManyRequests {
		return 0, true
	}
	// A 403 is a secondary rate limit only when the body says so; anything
	// else (no permission, a fork's read-only token) is final.
	body, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	if err == nil && strings.Contains(strings.ToLower(string(body)), "secondary rate limit") {
		return secondaryLimWait, true
	}
	return 0, false
}

// retryAfter reads a Retry-After header (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		if d := at.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// idempotent reports whether a request may be repeated without effect.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete, http.MethodPatch:
		return true
	}
	return false
}
