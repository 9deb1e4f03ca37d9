package reports

import (
	"errors"
	"net/http"
	"time"

	"github.com/slack-go/slack"

	"reconcile/retry"
)

// transient says which failures of a Slack call are worth another try
// under the job's retry policy, and the least wait Slack asked for.
// Slack's own ok:false answers (invalid_auth, channel_not_found, …) and
// other 4xx say the request itself is wrong, so repeating it would only
// fail again.
//
// A call that times out may still have reached Slack, and Slack has no
// idempotency key for a message: a timed-out post that is retried can show
// twice, which is the price of not losing the alert.
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
	return retry.Network(err), 0
}
