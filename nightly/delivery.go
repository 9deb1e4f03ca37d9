package nightly

import (
	"context"
	"time"

	"reconcile"
	"reconcile/ledger"
	"reconcile/reports"
)

// The one way an alert goes out: claimed where it is recorded, so that of
// several processes one sends it; sent from where an earlier attempt got
// to; its outcome recorded, so that one that failed is sent again.

// alertHold is how long a claim on sending an alert lasts.
const alertHold = 10 * time.Minute

// alertRecord is where an alert is claimed, its delivery recorded as it
// goes, and its outcome kept: a run's (runs) or a report's over shard runs
// (shard_reports).
type alertRecord struct {
	claim    func(ctx context.Context) (bool, reconcile.Delivery, error)
	progress func(ctx context.Context, d reconcile.Delivery) error
	done     func(ctx context.Context, sendErr error) error
}

// runAlert is the alert of run runID.
func runAlert(db *ledger.DB, runID string) *alertRecord {
	return &alertRecord{
		claim: func(ctx context.Context) (bool, reconcile.Delivery, error) {
			return db.ClaimAlert(ctx, runID, alertHold)
		},
		progress: func(ctx context.Context, d reconcile.Delivery) error { return db.AlertProgress(ctx, runID, d) },
		done:     func(ctx context.Context, sendErr error) error { return db.AlertDone(ctx, runID, sendErr) },
	}
}

// reportAlert is the alert of report id over the shard runs runIDs.
func reportAlert(db *ledger.DB, id, channel string, day reconcile.BusinessDay, runIDs []string) *alertRecord {
	return &alertRecord{
		claim: func(ctx context.Context) (bool, reconcile.Delivery, error) {
			return db.ClaimReport(ctx, id, channel, day, runIDs, alertHold)
		},
		progress: func(ctx context.Context, d reconcile.Delivery) error { return db.ReportAlertProgress(ctx, id, d) },
		done:     func(ctx context.Context, sendErr error) error { return db.ReportAlertDone(ctx, id, sendErr) },
	}
}

// sendOnce sends an alert under its claim, resuming from how far an
// earlier attempt got, and records the outcome; it reports whether it
// sent it (false: another process has or had the claim). Without a record
// (nil: there is none to remember the alert by) it is sent at once.
func sendOnce(ctx context.Context, n reports.Notifier, rec *alertRecord, msg reports.Message, attachment string) (bool, error) {
	if rec == nil {
		err := n.Notify(ctx, msg, attachment, nil)
		return err == nil, err
	}
	claimed, from, err := rec.claim(ctx)
	if err != nil || !claimed {
		return false, err
	}
	sendErr := n.Notify(ctx, msg, attachment, recorded(ctx, from, rec.progress))
	// Recorded even when ctx is cancelled: the claim must not sit there.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := rec.done(rctx, sendErr); err != nil && sendErr == nil {
		return false, err
	}
	return sendErr == nil, sendErr
}

// recorded is the delivery of an alert that an earlier attempt took as
// far as from, each step saved by save. A step is saved even when ctx has
// been cancelled meanwhile (a signal right after the message was posted):
// the next attempt must know.
func recorded(ctx context.Context, from reconcile.Delivery, save func(context.Context, reconcile.Delivery) error) *reports.Delivery {
	return &reports.Delivery{Delivery: from, Save: func(d reconcile.Delivery) error {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return save(sctx, d)
	}}
}

type alertChannelKey struct{}

// alertFor names the channel the alerts sent under ctx are about: a
// message does not say, and the count of failed alerts is per channel.
func alertFor(ctx context.Context, channel string) context.Context {
	return context.WithValue(ctx, alertChannelKey{}, channel)
}

// AlertChannel is the channel the alerts sent under ctx are about (see
// alertFor).
func AlertChannel(ctx context.Context) string {
	ch, _ := ctx.Value(alertChannelKey{}).(string)
	return ch
}
