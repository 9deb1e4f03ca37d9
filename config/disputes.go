package config

import (
	"regexp"
	"time"

	"reconcile"
)

// Disputes names the merchant's own record of disputes, where it keeps
// one (rule 14): a table or view with the columns dispute_id, channel,
// order_no, amount_minor, currency, status and opened_at. With it, a
// chargeback nothing recorded, and a recorded dispute no channel file
// settled within Window, are findings; without it nothing of the kind is
// asked.
type Disputes struct {
	// Relation is the table or view, "disputes" or "schema.disputes".
	Relation string `json:"relation"`
	// Window is how long after it was opened a recorded dispute may wait
	// for its chargeback in a channel's file (default 168h, seven days:
	// a channel debits a dispute within a day or two).
	Window Duration `json:"window,omitempty"`
}

const (
	defaultDisputeWindow = 7 * 24 * time.Hour
	maxDisputeWindow     = 180 * 24 * time.Hour
)

// relationName is a relation as the config may name it: an identifier,
// or a schema and an identifier, each of letters, digits and underscores
// and at most 63 bytes, as PostgreSQL keeps them.
var relationName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$`)

// On reports whether the merchant's disputes are checked: a relation is
// named, as the config may name one.
func (d *Disputes) On() bool { return d != nil && relationName.MatchString(d.Relation) }

// Wait is the window, its default when unset.
func (d *Disputes) Wait() time.Duration {
	if d == nil || d.Window == 0 {
		return defaultDisputeWindow
	}
	return time.Duration(d.Window)
}

func (d *Disputes) problems() []error {
	if d == nil {
		return nil
	}
	var errs []error
	if !relationName.MatchString(d.Relation) {
		errs = append(errs, fieldErrorf("disputes.relation", "disputes.relation %s: want a table or view name such as \"disputes\" or \"shop.disputes\" (letters, digits, underscores)",
			reconcile.Quote(d.Relation)))
	}
	if w := time.Duration(d.Window); w < 0 || w > maxDisputeWindow {
		errs = append(errs, fieldErrorf("disputes.window", "disputes.window %s: want up to %s (0 for the default, %s)", w, hours(maxDisputeWindow), hours(defaultDisputeWindow)))
	}
	return errs
}
