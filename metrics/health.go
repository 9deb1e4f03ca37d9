package metrics

import (
	"fmt"
	"sync"
	"time"
)

// Heartbeat tells a health check whether a loop is alive. The loop beats
// while it waits for its next tick (Idle), and at every step of a tick
// (Begin, Beat, End). A tick in progress is alive only through its own
// beats, so a tick stuck on one step goes stale however well the rest of
// the process is doing.
type Heartbeat struct {
	Now func() time.Time // default time.Now

	mu    sync.Mutex
	last  time.Time // the last sign of life; zero before the first
	ticks int       // ticks in progress
}

func (h *Heartbeat) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Beat is progress within a tick, or the loop's proof of life.
func (h *Heartbeat) Beat() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.now()
}

// Idle beats unless a tick is in progress: it is for the part of the loop
// that waits, which must not vouch for a tick that is stuck.
func (h *Heartbeat) Idle() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ticks == 0 {
		h.last = h.now()
	}
}

// Begin marks the start of a tick; End its end. Both beat.
func (h *Heartbeat) Begin() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ticks++
	h.last = h.now()
}

// End marks the end of a tick begun with Begin.
func (h *Heartbeat) End() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ticks--
	h.last = h.now()
}

// Check returns nil when the last sign of life is at most staleAfter old,
// else an error that says, in one line, what is wrong.
func (h *Heartbeat) Check(staleAfter time.Duration) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last.IsZero() {
		return fmt.Errorf("scheduler has not started")
	}
	age := h.now().Sub(h.last)
	if age <= staleAfter {
		return nil
	}
	age = age.Round(time.Second)
	if h.ticks > 0 {
		return fmt.Errorf("scheduler: a tick has made no progress for %s (limit %s)", age, staleAfter)
	}
	return fmt.Errorf("scheduler: no sign of life for %s (limit %s)", age, staleAfter)
}
