package config

import (
	"fmt"
	"net"
	"time"

	"reconcile"
)

// Metrics turns on the Prometheus metrics and health check of `reconcile
// schedule`.
type Metrics struct {
	// Listen is the address /metrics and /healthz are served on, such as
	// "127.0.0.1:9464"; empty (the default) serves nothing.
	Listen string `json:"listen,omitempty"`
	// StaleAfter is how long the scheduler may show no sign of life before
	// /healthz fails (default 1h). It beats every few seconds while it waits
	// for a tick, but within a tick only between runs, so this must be
	// longer than the longest run.
	StaleAfter Duration `json:"stale_after,omitempty"`
}

const (
	defaultStaleAfter = time.Hour
	maxStaleAfter     = 7 * 24 * time.Hour
)

// Stale is how long the scheduler may show no sign of life, with its
// default.
func (mc Metrics) Stale() time.Duration {
	if mc.StaleAfter == 0 {
		return defaultStaleAfter
	}
	return time.Duration(mc.StaleAfter)
}

// problems lists what is wrong with the metrics settings, for Problems.
func (mc Metrics) problems() []error {
	var errs []error
	if mc.Listen != "" {
		if err := CheckListen(mc.Listen); err != nil {
			errs = append(errs, fieldErrorf("metrics.listen", "metrics.listen: %s", err))
		}
	}
	if d := time.Duration(mc.StaleAfter); d != 0 && (d < time.Minute || d > maxStaleAfter) {
		errs = append(errs, fieldErrorf("metrics.stale_after", "metrics.stale_after %s: want 1m to %s", d, hours(maxStaleAfter)))
	}
	return errs
}

// CheckListen refuses an address net.Listen would, before anything starts.
func CheckListen(addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%s is not host:port (such as 127.0.0.1:9464, or :9464 for every interface)", reconcile.Quote(addr))
	}
	return nil
}
