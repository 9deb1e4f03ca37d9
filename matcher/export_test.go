package matcher

import "reconcile"

// AddEarlier takes a row of an earlier date's file with a key of this
// file, whole, where a run has only what a night's memory keeps of it
// (Nights). Call it after the rows of this file; rows of other keys are
// ignored.
func (m *Matcher) AddEarlier(tx reconcile.Transaction) {
	if gi := m.store.Find(tx.Kind, tx.Key()); gi >= 0 && (tx.Kind == reconcile.KindPayment || tx.Kind == reconcile.KindRefund) {
		m.earlier[gi] = append(m.earlier[gi], tx)
	}
}

// AddLocal is AddLocalRow for a record held as a value, as tests write
// them.
func (m *Matcher) AddLocal(rec reconcile.LocalRecord) {
	r := rec.Row()
	m.addLocalRow(&r, true)
}

// Keys returns the order numbers and refund numbers of the rows seen so
// far, sorted.
func (m *Matcher) Keys() (orders, refunds []string) {
	return m.keys(false)
}

// New returns a matcher the tests feed by the calls below, as an Intake
// does.
func New(day reconcile.BusinessDay, opts Options) *Matcher { return newMatcher(day, opts) }

func (m *Matcher) AddRow(tx reconcile.Transaction)                { m.addRow(tx) }
func (m *Matcher) AddLocalRows(rs []reconcile.LocalRow)           { m.addLocalRows(rs) }
func (m *Matcher) Interleave()                                    { m.interleave() }
func (m *Matcher) RowsDone()                                      { m.rowsDone() }
func (m *Matcher) AddContextRow(tx reconcile.Transaction)         { m.addContextRow(tx) }
func (m *Matcher) AddSettledElsewhere(tx reconcile.Transaction)   { m.addSettledElsewhere(tx) }
func (m *Matcher) UnkeyedRefunds() []string                       { return m.unkeyedRefunds() }
func (m *Matcher) ResolveRefunds(refunds []reconcile.LocalRecord) { m.resolveRefunds(refunds) }
func (m *Matcher) UnplacedDisputes() []string                     { return m.unplacedDisputes() }
func (m *Matcher) PlaceDisputes(owners []reconcile.LocalRecord)   { m.placeDisputes(owners) }
