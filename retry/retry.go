// Package retry is the job's one policy for calls that cross a network:
// how often a failed call is tried again, how long it may take in all, and
// the jittered backoff between tries. The Slack client and the channel
// clients use it alike; each says which of its failures are worth another
// try.
package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Policy bounds how hard a client tries. The zero value means the defaults.
//
// Each call is retried on its own, so a step that succeeded is never
// repeated because a later one failed.
type Policy struct {
	Attempts int           // per call, first try included (default 5)
	Budget   time.Duration // total time for the calls of one Start (default 2m)
	Base     time.Duration // first backoff (default 1s)
	Cap      time.Duration // longest single backoff (default 30s)
	// Sleep waits between attempts. nil means a real timer that gives up
	// when ctx ends; tests pass one that records the wait and returns.
	Sleep func(ctx context.Context, d time.Duration) error
}

const (
	defaultAttempts = 5
	defaultBudget   = 2 * time.Minute
	defaultBase     = time.Second
	defaultCap      = 30 * time.Second
)

func (r Policy) withDefaults() Policy {
	if r.Attempts <= 0 {
		r.Attempts = defaultAttempts
	}
	if r.Budget <= 0 {
		r.Budget = defaultBudget
	}
	if r.Base <= 0 {
		r.Base = defaultBase
	}
	if r.Cap <= 0 {
		r.Cap = defaultCap
	}
	if r.Cap < r.Base {
		r.Cap = r.Base
	}
	if r.Sleep == nil {
		r.Sleep = Sleep
	}
	return r
}

// Sleep waits d, or until ctx ends: the real wait of a Policy whose Sleep
// is nil.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Transient says whether a failed call is worth another try, and the
// least wait the server asked for (a Retry-After).
type Transient func(err error) (retry bool, after time.Duration)

// Run runs the calls of one Start against one shared time budget.
type Run struct {
	r        Policy
	classify Transient
	parent   context.Context // the caller's context: its end is not ours to retry
	ctx      context.Context // parent bounded by the budget
	deadline time.Time
}

// Start begins the budget of a series of calls (one alert, one download),
// whose failures classify tells apart; the caller must call the cancel
// function it returns.
func (r Policy) Start(ctx context.Context, classify Transient) (*Run, context.CancelFunc) {
	r = r.withDefaults()
	deadline := time.Now().Add(r.Budget)
	bctx, cancel := context.WithDeadline(ctx, deadline)
	return &Run{r: r, classify: classify, parent: ctx, ctx: bctx, deadline: deadline}, cancel
}

// Do runs call until it succeeds, fails for good, or the attempts or the
// budget run out. name says which call it was in the error.
func (rt *Run) Do(name string, call func(ctx context.Context) error) error {
	var last error
	for attempt := 1; ; attempt++ {
		err := call(rt.ctx)
		if err == nil {
			return nil
		}
		if rt.parent.Err() != nil {
			return fmt.Errorf("%s: stopped after %d %s: %w", name, attempt, plural(attempt, "attempt", "attempts"), err)
		}
		if rt.ctx.Err() != nil {
			// The budget ran out during this attempt. An answer no retry
			// mends (a refusal) says why for itself; otherwise the attempt
			// before, when there was one, says why the call kept failing.
			if retry, _ := rt.classify(err); !retry {
				return fmt.Errorf("%s: %w", name, err)
			}
			if last == nil {
				last = err
			}
			return &gaveUpError{call: name, attempts: attempt, budget: rt.r.Budget, last: last}
		}
		last = err
		retry, after := rt.classify(err)
		if !retry {
			return fmt.Errorf("%s: %w", name, err)
		}
		if attempt >= rt.r.Attempts {
			return &gaveUpError{call: name, attempts: attempt, last: last}
		}
		wait := max(backoff(rt.r.Base, rt.r.Cap, attempt-1), after)
		// Waiting past the deadline would only end in the budget's error
		// after a pointless sleep, so it ends here.
		if time.Until(rt.deadline) < wait {
			return &gaveUpError{call: name, attempts: attempt, budget: rt.r.Budget, last: last}
		}
		if err := rt.r.Sleep(rt.ctx, wait); err != nil {
			if rt.parent.Err() != nil {
				return fmt.Errorf("%s: stopped after %d %s: %w", name, attempt, plural(attempt, "attempt", "attempts"), last)
			}
			return &gaveUpError{call: name, attempts: attempt, budget: rt.r.Budget, last: last}
		}
	}
}

// backoff is full jitter: a random wait in [0, min(cap, base·2^n)], which
// spreads the retries of many clients instead of bunching them.
func backoff(base, longest time.Duration, n int) time.Duration {
	ceiling := longest
	if n < 62 && base <= longest>>n {
		ceiling = base << n
	}
	if ceiling <= 0 {
		return 0
	}
	if ceiling == math.MaxInt64 {
		return rand.N(ceiling)
	}
	return rand.N(ceiling + 1)
}

// gaveUpError is a call that kept failing until the attempts or the
// budget ran out. It unwraps to the last failure.
type gaveUpError struct {
	call     string
	attempts int
	budget   time.Duration // set when the budget, not the attempts, ran out
	last     error
}

func (e *gaveUpError) Error() string {
	s := fmt.Sprintf("%s: gave up after %d %s", e.call, e.attempts, plural(e.attempts, "attempt", "attempts"))
	if e.budget > 0 {
		s += fmt.Sprintf(", out of its %s budget", e.budget)
	}
	return s + "; last error: " + e.last.Error()
}

func (e *gaveUpError) Unwrap() error { return e.last }

// Network says whether err is a failure of the connection rather than of
// the request, the same for every client: a timeout, a refused or reset
// connection, a server that closed it before it answered. A name that does
// not resolve is configuration, not weather, and is not retried; nor is a
// cancelled context.
func Network(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	// A DNS failure is wrapped in a dial error, so it is looked at first.
	if dns, ok := errors.AsType[*net.DNSError](err); ok {
		return dns.IsTimeout || dns.IsTemporary
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return true
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return true // refused, reset, broken pipe: the connection, not the request
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// RetryAfter reads an HTTP Retry-After header: seconds, or an HTTP date
// (measured from now). Anything else, or a wait past max, is 0 or max.
func RetryAfter(h string, now time.Time, longest time.Duration) time.Duration {
	if h == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(longest/time.Second) {
			return longest
		}
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(h); err == nil {
		d = at.Sub(now)
	}
	return min(max(d, 0), longest)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
