package nightly

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"reconcile"
	"reconcile/bankfeed"
	"reconcile/channelfeed"
	"reconcile/config"
	"reconcile/matcher/payouts"
)

// A bank statement's night (rule 15): its entries read (readStatement),
// the payouts the channels' files told of and the credits earlier
// statements left unexplained brought in (openPayouts), the payouts'
// money looked for among the entries (matchPayouts), and the night
// committed with its findings, entries and arrivals, as a channel's
// night is. Its lifecycle (lock, lease, replay, supersede, one alert) is
// every run's.

// statement is what a statement's night carries from stage to stage.
type statement struct {
	entries []reconcile.KeyedEntry
	open    []reconcile.OpenPayout
	earlier []reconcile.KeyedEntry
	terms   map[string]reconcile.PayoutTerms // of every channel with a payout open
	matched payouts.Result
}

func (n *night) statementStages() []stage {
	return []stage{
		{"parse", n.readStatement},
		{"payouts", n.openPayouts},
		{"match", n.matchPayouts},
		{"still open", n.gather},
	}
}

// readStatement reads the statement file whole: every statement must be
// of the configured account, and the file the one fingerprinted. Two
// entries of one key are told apart by their order ("-2", "-3"), never
// taking a key another entry holds.
func (n *night) readStatement(ctx context.Context) error {
	spec := n.spec
	seen := map[string]int{}
	st := &statement{}
	stmts, sha, err := bankfeed.ReadFile(spec.File, spec.Format, bankfeed.Options{}, func(e reconcile.BankEntry) error {
		if err := n.ownAccount(e.Account, e.Currency, e.Line); err != nil {
			return err
		}
		key := e.Key()
		// A repeat is told apart by its number, past any key the
		// statement holds already (a bank reference may end in "-2").
		for base := key; seen[key] > 0; {
			seen[base]++
			key = base + "-" + strconv.Itoa(seen[base])
		}
		seen[key]++
		st.entries = append(st.entries, reconcile.KeyedEntry{BankEntry: e, Key: key})
		if len(st.entries)%4096 == 0 {
			return ctx.Err()
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if err := n.ownAccount(s.Account, s.Currency, s.Line); err != nil {
			return err
		}
	}
	if fp := spec.fingerprint; fp != nil && fp.SHA256 != sha {
		return fmt.Errorf("%s: %w", spec.File, channelfeed.ErrFileChanged)
	}
	n.statement = st
	n.progress.Rows(int64(len(st.entries)))
	n.log.Debug("bank statement read", "file", spec.File, "format", spec.Format, "statements", len(stmts), "entries", len(st.entries))
	return nil
}

// ownAccount refuses a statement of another account than the night's.
func (n *night) ownAccount(account, currency string, line int) error {
	if n.spec.Account.Holds(account, currency) {
		return nil
	}
	return &reconcile.ParseError{File: n.spec.File, Line: line, Column: "account",
		Err: fmt.Errorf("a statement of account %s, but %s is the bank account %s: a file of another account",
			reconcile.Quote(account), n.spec.Channel, reconcile.Quote(strings.Join(n.spec.Account, ", ")))}
}

// openPayouts brings in what other nights left: the payouts to look for
// and the credits no payout took.
func (n *night) openPayouts(ctx context.Context) error {
	spec, st := n.spec, n.statement
	// Without a config's channels (a run by hand), every channel's.
	var channels []string
	window := config.Channel{}.Terms().Window
	for ch, t := range spec.Terms {
		channels = append(channels, ch)
		window = max(window, t.Window)
	}
	var err error
	if st.open, err = n.db.OpenPayouts(ctx, spec.Channel, spec.Day, channels, window); err != nil {
		return err
	}
	st.terms = maps.Clone(spec.Terms)
	if st.terms == nil {
		st.terms = map[string]reconcile.PayoutTerms{}
	}
	for _, p := range st.open {
		if _, ok := st.terms[p.Channel]; !ok {
			st.terms[p.Channel] = config.Channel{}.Terms() // by reference, the usual window
		}
	}
	st.earlier, err = n.db.EarlierEntries(ctx, spec.Channel, spec.Day)
	return err
}

// matchPayouts applies rule 15 and makes the night's result.
func (n *night) matchPayouts(ctx context.Context) error {
	spec, st := n.spec, n.statement
	st.matched = payouts.Match(payouts.Input{Day: spec.Day.UTCDate(), Terms: st.terms, Payouts: st.open,
		Entries: slices.Concat(st.entries, st.earlier)})
	n.run.Status = reconcile.RunSucceeded
	n.run.FinishedAt = n.now()
	res := reconcile.NewResult(*n.run)
	res.Findings = st.matched.Findings
	for _, f := range res.Findings {
		res.Counts[f.Category]++
	}
	res.ChannelRows, res.LocalRows = len(st.entries), len(st.open)
	res.Payouts = st.matched.Cases
	res.NumberFindings() // in report order already (payouts.Match)
	n.res = res
	return ctx.Err()
}
