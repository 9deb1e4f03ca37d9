package matcher

import "reconcile"

// AddEarlier takes a row of an earlier date's file with a key of this
// file, whole, where a run has only what a night's memory keeps of it
// (AddMemory). Call it after the rows of this file; rows of other keys are
// ignored.
func (m *Matcher) AddEarlier(tx reconcile.Transaction) {
	m.flush()
	if gi := m.lookup(codeOfKind(tx.Kind), tx.Key()); gi >= 0 && (tx.Kind == reconcile.KindPayment || tx.Kind == reconcile.KindRefund) {
		m.earlier[gi] = append(m.earlier[gi], tx)
	}
}

// AddLocal is AddLocalRow for a record held as a value, as tests write
// them.
func (m *Matcher) AddLocal(rec reconcile.LocalRecord) {
	r := rec.Row()
	m.queueLocal(&r, true)
}

// EncodeMemory returns the memory blob of a night's rows, without a
// matcher: what Memory returns after AddRow of each. Only payments and
// refunds are remembered.
func EncodeMemory(rows []reconcile.Transaction) []byte {
	out := make([]byte, 0, len(rows)*recordSize)
	for _, r := range rows {
		if r.Kind != reconcile.KindPayment && r.Kind != reconcile.KindRefund {
			continue
		}
		out = appendRecord(out, hashKey(r.Kind, r.Key()), rowIDHash(r), r.Amount, curOf(r.Currency), statusCode(r.Status), codeOfKind(r.Kind))
	}
	return sortRecords(out)
}

// Keys returns the order numbers and refund numbers of the rows seen so
// far, sorted.
func (m *Matcher) Keys() (orders, refunds []string) {
	return m.keys(false)
}
