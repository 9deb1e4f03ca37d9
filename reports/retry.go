package reports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/slack-go/slack"
)

// Retry bounds how hard a notifier tries. The zero value means the defaults.
//
// Each API call is retried on its own, so a step that succeeded is never
// repeated because a later one failed. A call that times out may still
// have reached Slack, and Slack has no idempotency key for a message: a
// timed-out post that is retried can show twice, which is the price of
// not losing the alert.
type Retry struct {
	Attempts int           // per call, first try included (default 5)
	Budget   time.Duration // total time for one Notify (default 2m)
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

func (r Retry) withDefaults() Retry {
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
		r.Sleep = sleepTimer
	}
	return r
}

func sleepTimer(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retrier runs the calls of one Notify against one shared time budget.
type retrier struct {
	r        Retry
	parent   context.Context // the caller's context: its end is not ours to retry
	ctx      context.Context // parent bounded by the budget
	deadline time.Time
}

// start begins the budget of one Notify; the caller must call the cancel
// function it returns.
func (r Retry) start(ctx context.Context) (*retrier, context.CancelFunc) {
	r = r.withDefaults()
	deadline := time.Now().Add(r.Budget)
	bctx, cancel := context.WithDeadline(ctx, deadline)
	return &retrier{r: r, parent: ctx, ctx: bctx, deadline: deadline}, cancel
}

// do runs call until it succeeds, fails for good, or the attempts or the
// budget run out. name says which call it was in the error.
func (rt *retrier) do(name string, call func(ctx context.Context) error) error {
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
			// The budget ran out during this attempt: the attempt before,
			// when there was one, says why the call kept failing.
			if last == nil {
				last = err
			}
			return &gaveUpError{call: name, attempts: attempt, budget: rt.r.Budget, last: last}
		}
		last = err
		retry, after := transient(err)
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

// transient reports whether err is worth another try, and the least wait
// the server asked for. Slack's own ok:false answers (invalid_auth,
// channel_not_found, …) and other 4xx say the request itself is wrong,
// so repeating it would only fail again.
func transient(err error) (bool, time.Duration) {
	if rl, ok := errors.AsType[*slack.RateLimitedError](err); ok {
		return true, rl.RetryAfter
	}
	if sc, ok := errors.AsType[slack.StatusCodeError](err); ok {
		return sc.Code >= 500 || sc.Code == http.StatusTooManyRequests, 0
	}
	if _, ok := errors.AsType[slack.SlackErrorResponse](err); ok {
		return false, 0
	}
	if errors.Is(err, context.Canceled) {
		return false, 0
	}
	// A DNS failure is wrapped in a dial error, so it is looked at first:
	// a name that does not exist is configuration, not weather.
	if dns, ok := errors.AsType[*net.DNSError](err); ok {
		return dns.IsTimeout || dns.IsTemporary, 0
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return true, 0
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return true, 0 // refused, reset, broken pipe: the connection, not the request
	}
	// The server closed the connection before it answered.
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true, 0
	}
	return false, 0
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
