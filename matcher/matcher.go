// Package matcher classifies one channel's settlement rows of one business
// date against the local records, by the rules of the product spec. It
// reads no file and no database and asks no clock: the same input gives
// the same findings. It does spend the machine: it starts goroutines (the
// window is read beside the file, rules 10 and 11 run beside the rules by
// key) and waits for every one, and it keeps its largest arrays outside
// the Go heap (internal/offheap), handed back when it is done; before it
// writes the memory of a night of millions of rows it runs the collector
// once, so the records reuse what classification let go of (Memory).
//
// A night feeds it in an order its types keep:
//
//   - an Intake (NewIntake) takes the file's rows (Row) from the parse, and
//     the day's window of local records from StartWindow's loader, on a
//     goroutine of its own; FileRead says the parse is over;
//   - Finish, given the refunds that UnkeyedRefunds' ids name, ends the
//     intake and returns the Matcher;
//   - the Matcher asks for the records of keys the window did not hold
//     (LocalKeys, AddLocalRow), meets the earlier nights' memory through
//     the reader Nights gives, asks the idempotency status of the keys
//     that do not simply match (IdemKeys, MemoryIdemKeys, SetIdem), and
//     says what the ledger is asked of orders and customers (Questions);
//   - Classify, given what the ledger answered (Known), applies the rules;
//     Memory last gives the night's own memory as it is stored.
//
// The rows and local records are kept in a row store
// (matcher/rowstore), indexed by key in a hash table as they arrive;
// local records are streamed past it one at a time, so memory grows with
// the settlement file, not with the local tables. The rules read plain
// values from it: a key's rows and record as reconcile values, or a
// row's or record's numbers; none reads its layout.
//
// Keys have a memory across nights (matcher/memory): rows of earlier
// nights' files with the same keys make a row under a new channel id a
// duplicate of what was settled before, and the same channel id seen
// again the same row. Records settled just before the day's cut-off are
// pending rather than missing, and the next day's run settles them.
package matcher

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"reconcile"
	"reconcile/matcher/internal/offheap"
	"reconcile/matcher/memory"
	"reconcile/matcher/rowstore"
)

// Options tune a matcher to its channel.
type Options struct {
	// Grace is the cut-off window: a local record settled this close to
	// the day's end and missing from the day's file is pending, expected
	// in the next day's file, instead of missing_channel.
	Grace time.Duration
	// RefundWindow and PaymentWindow are the duplicate windows of rules 9
	// and 10: refunds of one order for the same amount settled this close
	// together, and a customer's orders for the same amount created this
	// close together, are suspected duplicates. 0 turns the check off.
	RefundWindow, PaymentWindow time.Duration
	// Fees is the channel's fee contract; nil, no fee is checked.
	Fees *reconcile.FeeContract
	// Shard is the part of the date the run does: an order's refunds are
	// its order's shard's case, a customer's orders its customer's.
	Shard reconcile.Shard
	// ExpectRows, when known, sizes the index once for about that many
	// rows, instead of growing it by doubling: less copying, and no
	// memory reserved for rows that never come.
	ExpectRows int
	// ForeignIDs says the file's channel ids of payments are not the ids
	// our records keep (Stripe's balance transactions, txn_…): a payment
	// whose id our record of its order does not hold is then nothing to
	// look into (PaymentIDs).
	ForeignIDs bool
}

// group is the rows of one key, as values: what classification works on,
// built only for the keys that need more than a glance.
type group struct {
	rows    []reconcile.Transaction
	earlier []reconcile.Transaction
	local   *reconcile.LocalRecord
	// reversed are the findings of rows of this key that an earlier run of
	// the same date reversed, by Finding.RowKey.
	reversed map[string]reconcile.Finding
	// owners are the orders our records hold channel ids under, of the
	// ids PaymentIDs asked about (addPaymentOwners).
	owners map[string]string
	// ownIDs says the rows' channel ids are the ids our records keep
	// (not Options.ForeignIDs), so a row is ours by its id.
	ownIDs bool
	// disputed says the group's order has a chargeback (rule 14), "" when
	// it has none.
	disputed string
}

// Matcher accumulates one run's two sides. Use it from one goroutine.
type Matcher struct {
	day   reconcile.BusinessDay
	opts  Options
	store *rowstore.Store // tonight's rows by key, and their local records
	big   *offheap.Mappings
	// earlier are the rows of earlier nights with tonight's keys, by
	// group; nights is tonight's keys meeting the earlier nights' memory.
	earlier     map[int32][]reconcile.Transaction
	nights      *memory.Reader
	others      []reconcile.Transaction
	prevPending []reconcile.Finding
	reversed    []reconcile.Finding
	// orders are what the ledger knows of the orders a refund touches
	// tonight (addOrderRefunds); owners the orders by the channel ids our
	// records hold (addPaymentOwners); earlierOrders the customers' paid
	// orders settled on earlier nights (addEarlierOrder).
	orders        map[string]*reconcile.OrderRefunds
	owners        map[string]string
	earlierOrders []reconcile.LocalRecord
	// unkeyed are refund rows without our refund number, kept aside until
	// their channel refund id is looked up (resolveRefunds); those nothing
	// links stay here and are reported.
	unkeyed []reconcile.Transaction
	shard   shardContext
	// disputes are tonight's dispute events and refund reversals of the
	// shard (rule 14); disputed the orders with a chargeback, tonight's in
	// any shard or standing from an earlier night, by order, naming the
	// dispute; earlierDisputes the earlier nights' events of tonight's
	// disputes; disputeOwners our orders by the payment ids of events
	// that name no order (placeDisputes).
	disputes        []reconcile.Transaction
	filed           map[string]bool // the disputes of tonight's file, whichever shard's
	disputed        map[string]string
	earlierDisputes []reconcile.Transaction
	disputeOwners   []reconcile.LocalRecord
	recorded        map[string]reconcile.Dispute
	overdue         []reconcile.Dispute
	// unseen are settled local records of the day without rows tonight;
	// unseenSeen marks those an earlier night's file carried.
	unseen     []reconcile.LocalRecord
	unseenSeen []bool
	// While the file is still being read (Interleave until RowsDone), a
	// local record whose key has no row yet waits in early.
	interleaved bool
	early       []reconcile.LocalRecord
	counted     struct{ rows, batchRows, localRows int }
}

// shardContext is what a shard's matcher is told of the other shards:
// context are refund rows of other shards' keys whose orders are this
// shard's; otherOrders the day's orders of other shards' keys whose
// customers are this shard's, and settledElsewhere the hashes of the
// orders other shards' rows settled tonight.
type shardContext struct {
	context          []reconcile.Transaction
	otherOrders      []reconcile.LocalRecord
	settledElsewhere []uint64
	elsewhereSorted  bool
}

// newMatcher returns a matcher for the business day, to be fed through
// its Intake.
func newMatcher(day reconcile.BusinessDay, opts Options) *Matcher {
	m := &Matcher{day: day, opts: opts, earlier: map[int32][]reconcile.Transaction{}, big: &offheap.Mappings{}}
	m.store = rowstore.New(day.Location, opts.ExpectRows, m.big, m.unmatched)
	return m
}

// addRow indexes one settlement row. Rows of a kind the parser did not
// recognise are kept aside and reported, never dropped. Like every Add
// method, it copies what it keeps of the row's text: the caller may
// reuse it once the call returns.
func (m *Matcher) addRow(tx reconcile.Transaction) {
	m.counted.rows++
	if tx.Kind == reconcile.KindBatch {
		m.counted.batchRows++ // fees and payouts of the batch: counted, not matched
		return
	}
	if (tx.Kind.Disputed() || tx.Kind == reconcile.KindRefundReversal) && tx.Status == reconcile.StatusSuccess {
		m.addDispute(tx)
		return
	}
	// A dispute's event the file says did not complete moved no money:
	// it counts nowhere, and is kept aside for a person, as any row of a
	// kind the rules do not take.
	if tx.Kind != reconcile.KindPayment && tx.Kind != reconcile.KindRefund {
		m.others = append(m.others, tx.Clone())
		return
	}
	if tx.Kind == reconcile.KindRefund && tx.RefundNo == "" {
		m.unkeyed = append(m.unkeyed, tx.Clone()) // until its refund id is looked up (resolveRefunds)
		return
	}
	m.store.Add(tx, m.opts.Fees != nil)
}

// LocalKeys returns the keys of tonight's file that no local record has
// been added for yet: after the day's records, the few settled on another
// day, to be looked up by key.
func (m *Matcher) LocalKeys() (orders, refunds []string) {
	return m.keys(true)
}

func (m *Matcher) keys(withoutLocal bool) (orders, refunds []string) {
	for gi := range int32(m.store.Groups()) {
		if withoutLocal && m.store.HasLocal(gi) {
			continue
		}
		orders, refunds = m.appendKey(gi, orders, refunds)
	}
	sort.Strings(orders)
	sort.Strings(refunds)
	return orders, refunds
}

// addPending takes a pending finding of an earlier date: if this file
// carries its key it is resolved, otherwise it becomes missing_channel.
func (m *Matcher) addPending(f reconcile.Finding) {
	m.prevPending = append(m.prevPending, f)
}

// addReversed takes a duplicate that an earlier run of this same date
// reversed. If this file (a corrected one) no longer carries that row, the
// reversal stands on a row that is gone: a person must look.
func (m *Matcher) addReversed(f reconcile.Finding) {
	m.reversed = append(m.reversed, f)
}

// AddLocalRow takes one local record. A record whose key has rows is kept
// for comparison; a settled record of the day without rows is missing from
// the channel's file, or pending when it settled within the grace window
// before the cut-off, unless an earlier night's file carried it (see
// Nights). Other records are not this run's business.
//
// The record may borrow the driver's buffers, which are reused once it
// returns: a record with rows tonight goes into the index without
// allocating.
func (m *Matcher) AddLocalRow(r *reconcile.LocalRow) { m.addLocalRow(r, true) }

// addLocalRows is AddLocalRow for a batch of records whose text the
// caller keeps until it returns, such as a batch it copied out of the
// driver's buffers itself: they are queued as they are, not copied again,
// and taken in before it returns.
func (m *Matcher) addLocalRows(rs []reconcile.LocalRow) {
	for i := range rs {
		m.addLocalRow(&rs[i], false)
	}
	m.store.Flush()
}

// addLocalRow keeps another shard's order aside and queues the rest,
// their text copied when copyText says the caller reuses it.
func (m *Matcher) addLocalRow(r *reconcile.LocalRow, copyText bool) {
	if r.OtherShard {
		m.shard.otherOrders = append(m.shard.otherOrders, r.Record())
		return
	}
	m.counted.localRows++
	m.store.Attach(r, copyText)
}

// unmatched takes a local record whose key has no row: one that may
// still meet its rows (interleave) waits, the others are unseen.
func (m *Matcher) unmatched(r *reconcile.LocalRow) {
	if m.interleaved && rowstore.Keyed(r.Kind) {
		m.early = append(m.early, r.Record())
		m.counted.localRows-- // counted again when it is queued again (rowsDone)
		return
	}
	m.keepUnseen(r.Record())
}

// interleave lets local records come while the file is still being read
// (AddLocalRow between AddRow calls), until RowsDone: the day's window of
// local records then streams beside the parse instead of after it. A
// record whose key has no row yet is held until the rows are all in.
func (m *Matcher) interleave() { m.interleaved = true }

// rowsDone says every row of the file is in, the refunds without our
// refund number resolved (resolveRefunds) among them: the records held
// meet their rows, or none.
func (m *Matcher) rowsDone() {
	if !m.interleaved {
		return
	}
	m.store.Flush()
	m.interleaved = false
	early := m.early
	m.early = nil
	for _, e := range early {
		r := e.Row() // text of its own
		m.counted.localRows++
		m.store.Attach(&r, false)
	}
	m.store.Flush()
}

// addContextRow takes a row of another shard's key that a case of this
// shard needs: a refund of an order of this shard, under a refund number
// of another. It is counted in its order's refunds, not matched.
func (m *Matcher) addContextRow(tx reconcile.Transaction) {
	m.shard.context = append(m.shard.context, tx.Clone())
}

// addSettledElsewhere notes a payment row of another shard's key: the
// order is settled tonight, which a customer's case of this shard may
// need to know (AddLocalRow of an OtherShard order).
func (m *Matcher) addSettledElsewhere(tx reconcile.Transaction) {
	if tx.Kind == reconcile.KindPayment && tx.Status == reconcile.StatusSuccess {
		m.shard.settledElsewhere = append(m.shard.settledElsewhere, m.store.HashOrder(tx.OrderNo))
	}
}

// keepUnseen keeps a settled record of the day that has no rows tonight:
// missing or pending, unless an earlier night's file carried it, which is
// known once the memory is in (Nights).
func (m *Matcher) keepUnseen(rec reconcile.LocalRecord) {
	if !rec.Settled() || rec.SettledAt.IsZero() || !m.day.Contains(rec.SettledAt) {
		return
	}
	m.unseen = append(m.unseen, rec)
	m.unseenSeen = append(m.unseenSeen, false)
}

// IdemKeys returns the keys whose idempotency status can change the
// outcome or its hint: those of groups that are not a plain match. A plain
// match does not depend on it, so the status of the great majority of
// keys is never read. Only earlier nights' memory makes a plain match
// into a case: a run asks for these keys while it reads the memory, and
// for MemoryIdemKeys after.
func (m *Matcher) IdemKeys() (orders, refunds []string) {
	for gi := range int32(m.store.Groups()) {
		if m.store.HasLocal(gi) && !m.plainMatch(gi) {
			orders, refunds = m.appendKey(gi, orders, refunds)
		}
	}
	return orders, refunds
}

// MemoryIdemKeys returns the keys that the earlier nights made cases of,
// whose groups IdemKeys left out as plain matches.
func (m *Matcher) MemoryIdemKeys() (orders, refunds []string) {
	m.store.Flush()
	gis := slices.Sorted(maps.Keys(m.earlier))
	for _, gi := range gis {
		if m.store.HasLocal(gi) && m.agrees(gi) {
			orders, refunds = m.appendKey(gi, orders, refunds)
		}
	}
	return orders, refunds
}

func (m *Matcher) appendKey(gi int32, orders, refunds []string) ([]string, []string) {
	key := strings.Clone(m.store.Key(gi))
	if m.store.Kind(gi) == reconcile.KindRefund {
		return orders, append(refunds, key)
	}
	return append(orders, key), refunds
}

// SetIdem records the idempotency status of a key of the file.
func (m *Matcher) SetIdem(kind reconcile.Kind, key, status string) {
	if gi := m.store.Find(kind, key); gi >= 0 {
		m.store.SetIdem(gi, status)
	}
}

// materialize returns group gi as values, for classification.
func (m *Matcher) materialize(gi int32) *group {
	return &group{rows: m.store.Rows(gi), earlier: m.earlier[gi], local: m.store.Local(gi), owners: m.owners,
		ownIDs: !m.opts.ForeignIDs, disputed: m.disputedOrder(m.store.Order(gi))}
}

// plainMatch reports whether group gi is one row that agrees with its
// local record and has no history: the common case, decided without
// building values.
func (m *Matcher) plainMatch(gi int32) bool {
	return len(m.earlier[gi]) == 0 && m.agrees(gi)
}

// agrees reports whether group gi is one row that agrees with its local
// record, whatever earlier nights said of its key: the one predicate of
// rule 3 (agreement) over the group at a glance. A record whose text is
// not its row's is looked at whole (compare): a refund on another order,
// a payment whose channel id our record holds another of (PaymentIDs).
func (m *Matcher) agrees(gi int32) bool {
	g := m.store.Glance(gi)
	if g.Rows != 1 || !g.HasLocal || g.OtherOrder {
		return false
	}
	if g.OtherID && m.store.Kind(gi) == reconcile.KindPayment && !m.opts.ForeignIDs {
		return false // to be looked into, though it may agree
	}
	return agreement(true, terms{g.Row.Amount, g.Row.Currency, g.RowStatus},
		terms{g.Local.Amount, g.Local.Currency, reconcile.StatusOutcome(g.LocalStatus)}) == reconcile.Matched
}

// curString is a currency as the store codes it, as text.
func curString(c [3]byte) string {
	n := 3
	for n > 0 && c[n-1] == 0 {
		n--
	}
	return string(c[:n])
}

// curOf is a currency as the store codes it.
func curOf(s string) (c [3]byte) {
	copy(c[:], s)
	return c
}

// terms are what rule 3 compares of a row and of a local record: the
// amount, its currency, and the outcome.
type terms struct {
	amount int64
	cur    [3]byte
	status reconcile.TxnStatus
}

// agreement is rule 3 (and 13's order): how a group's original row
// stands to its local record. It is the one predicate of "these agree":
// the plain match decided over the packed rows (agrees) and the full
// comparison (compare) both call it, so a check added here holds for
// both.
func agreement(sameOrder bool, row, local terms) reconcile.Category {
	switch {
	case !sameOrder:
		return reconcile.OrderMismatch
	case row.amount != local.amount || row.cur != local.cur:
		return reconcile.AmountMismatch
	case row.status != local.status:
		return reconcile.StatusMismatch
	}
	return reconcile.Matched
}

// sameOrders reports whether a refund row of order row and our refund of
// order ours are of one order, as far as both say: a side that names no
// order does not disagree.
func sameOrders[R, O ~string | ~[]byte](row R, ours O) bool {
	return len(row) == 0 || len(ours) == 0 || string(row) == string(ours)
}

// know takes what the ledger knows.
func (m *Matcher) know(k Known) {
	for i := range k.OrderRefunds {
		m.addOrderRefunds(&k.OrderRefunds[i])
	}
	for _, o := range k.EarlierOrders {
		m.addEarlierOrder(o)
	}
	m.addPaymentOwners(k.PaymentOwners)
	for _, p := range k.Pending {
		if m.opts.Shard.Has(p.Key()) {
			m.addPending(p)
		}
	}
	for _, f := range k.Reversed {
		m.addReversed(f)
	}
	m.earlierDisputes = k.Disputes
	m.recorded, m.overdue = k.Recorded, k.Overdue
	for order, dispute := range k.Disputed {
		if _, ok := m.disputed[order]; !ok {
			if m.disputed == nil {
				m.disputed = map[string]string{}
			}
			m.disputed[order] = dispute
		}
	}
}

// Questions are what the rules by order and by customer ask the ledger,
// once every local record is in; its answers go to Classify (Known).
type Questions struct {
	// RefundOrders are the orders whose refunds the ledger is asked for
	// by name (ledger.OrderRefunds).
	RefundOrders []string
	// EarlyOrders are tonight's orders that a customer's order settled on
	// an earlier night may pair with (ledger.EarlierOrders).
	EarlyOrders []reconcile.LocalRecord
	// PaymentIDs are the channel ids of payments that do not simply
	// match, to be looked up among our orders (ledger.OrdersByChannelID).
	PaymentIDs []string
	// Disputes are the disputes of tonight's events, whose earlier events
	// the ledger is asked for (ledger.DisputeEvents).
	Disputes []string
}

// Questions returns what the ledger is asked.
func (m *Matcher) Questions() Questions {
	return Questions{RefundOrders: m.refundOrders(), EarlyOrders: m.earlyOrders(), PaymentIDs: m.paymentIDs(),
		Disputes: m.disputeIDs()}
}

// Classification is what the matcher found: the counts and findings of a
// run's result (Result makes it one), and what became of the earlier
// pending findings.
type Classification struct {
	ChannelRows int
	BatchRows   int // of ChannelRows, bookings of the batch itself: not matched
	LocalRows   int
	Counts      map[reconcile.Category]int // every category, zeros included
	Findings    []reconcile.Finding        // all but matched, in report order
	Fees        []reconcile.FeeTotal       // the day's fees by currency
	// Resolved and Escalated are the Refs of earlier pending findings this
	// file carried, or did not (they are in Findings as missing_channel).
	Resolved, Escalated []string
	// DisputeEvents are tonight's dispute events and refund reversals no
	// earlier file carried, for the ledger to keep: they set the standing
	// of earlier nights' chargebacks (ledger.CompleteRun).
	DisputeEvents []reconcile.Transaction
}

// Result is the result of run: the classification's counts and findings,
// the findings numbered by the run (reconcile.Result.NumberFindings). The
// journals are compensate's to plan.
func (c Classification) Result(run reconcile.Run) *reconcile.Result {
	res := &reconcile.Result{
		Run:         run,
		ChannelRows: c.ChannelRows,
		BatchRows:   c.BatchRows,
		LocalRows:   c.LocalRows,
		Counts:      c.Counts,
		Findings:    c.Findings,
		Fees:        c.Fees,
	}
	res.NumberFindings()
	return res
}

// Known is what the ledger answered the Questions, and what earlier runs
// of the channel left that tonight's findings depend on.
type Known struct {
	// OrderRefunds are the orders a refund touches tonight, each with
	// every refund of it: the day's (ledger.DayOrderRefunds) and the ones
	// asked about (Questions.RefundOrders); an order in both is answered
	// alike.
	OrderRefunds []reconcile.OrderRefunds
	// EarlierOrders are the customers' paid orders settled on earlier
	// nights (Questions.EarlyOrders); PaymentOwners our orders holding the
	// channel ids asked about (Questions.PaymentIDs).
	EarlierOrders, PaymentOwners []reconcile.LocalRecord
	// Pending are the pending findings of earlier dates, which this file
	// resolves or makes missing_channel (of a shard, those of its keys
	// count); Reversed the duplicates an earlier run of this same date
	// reversed, which a corrected file may no longer carry.
	Pending, Reversed []reconcile.Finding
	// Disputes are the events of earlier nights' files of tonight's
	// disputes (Questions.Disputes); Disputed the orders whose chargebacks
	// of earlier nights still stand (not reversed), naming the dispute.
	Disputes []reconcile.Transaction
	Disputed map[string]string
	// Recorded are the merchant's records of tonight's disputes, by id,
	// where it keeps them (nil: it does not, and nothing is asked of
	// them); Overdue its recorded disputes whose window for a channel's
	// chargeback ends tonight, not settled by an earlier file.
	Recorded map[string]reconcile.Dispute
	Overdue  []reconcile.Dispute
}

// Classify classifies everything added so far, with what the ledger
// knows. Call it once, after every other question: it lets go of the
// index by key, which classification does not need, before the findings
// are made.
func (m *Matcher) Classify(known Known) Classification {
	m.know(known)
	m.linkOrphans()
	m.store.Flush()
	// Tonight's keys listed by hash served the earlier nights' memory,
	// all of it read by now: returned before classification needs its own.
	m.forgetNights()
	res := Classification{
		ChannelRows: m.counted.rows,
		BatchRows:   m.counted.batchRows,
		LocalRows:   m.counted.localRows,
		Counts:      map[reconcile.Category]int{},
	}
	for _, c := range reconcile.Categories {
		res.Counts[c] = 0
	}
	add := func(f reconcile.Finding) {
		res.Counts[f.Category]++
		if f.Category != reconcile.Matched {
			res.Findings = append(res.Findings, f)
		}
	}
	reversed := m.reversedByGroup()
	// The last lookups by key, then the hash table goes: at ten million
	// keys it is a quarter of a gigabyte that the findings can use.
	found := m.lookUpLeftovers()
	m.store.DropIndex()
	// Rules 10 and 11 walk every local record and every row: each on a
	// processor of its own, beside the rules by key, their findings added
	// after. They only read the store.
	var wg sync.WaitGroup
	var customers, fees []reconcile.Finding
	wg.Go(func() { m.customerCases(func(f reconcile.Finding) { customers = append(customers, f) }) })
	wg.Go(func() { res.Fees = m.fees(func(f reconcile.Finding) { fees = append(fees, f) }) })
	// Most groups are a plain match, counted apart (the map is slower
	// than an int). The others are listed first, so that the findings are
	// allocated about once: grown by append, a slice of a hundred
	// thousand findings is copied a dozen times, and the copies are the
	// largest part of the heap at ten million rows.
	var odd []int32
	rows := 0 // of the odd groups: at most a finding each
	groups := int32(m.store.Groups())
	for gi := range groups {
		if reversed[gi] == nil && m.plainMatch(gi) {
			continue
		}
		odd = append(odd, gi)
		rows += int(m.store.Glance(gi).Rows)
	}
	res.Counts[reconcile.Matched] += int(groups) - len(odd)
	res.Findings = make([]reconcile.Finding, 0, rows+len(m.unseen)+len(m.prevPending)+
		len(m.reversed)+len(m.others)+len(m.unkeyed)+m.orderCases()+len(m.disputes))
	for _, gi := range odd {
		g := m.materialize(gi)
		g.reversed = reversed[gi]
		classify(g, add)
	}
	m.refundCases(add)
	m.disputeCases(&res, add)
	wg.Wait()
	for _, f := range slices.Concat(customers, fees) {
		add(f)
	}
	m.outsideGroups(&res, found, add)
	reconcile.SortFindings(res.Findings)
	return res
}

// forgetCases lets go of what only classification read: the ledger's
// answers (the orders a refund or dispute touches, with their refunds;
// the customers' earlier orders), the night's disputes and the records
// no row carried. The findings hold what they need of them; the memory
// of the night is then written in the room they leave.
func (m *Matcher) forgetCases() {
	m.orders, m.owners, m.earlierOrders = nil, nil, nil
	m.disputes, m.disputed, m.filed, m.earlierDisputes, m.disputeOwners = nil, nil, nil, nil, nil
	m.recorded, m.overdue = nil, nil
	m.unseen, m.unseenSeen, m.prevPending, m.reversed, m.others, m.unkeyed = nil, nil, nil, nil, nil, nil
	m.shard = shardContext{}
}

// outsideGroups adds the findings no key group of tonight holds: settled
// records no row carried, the pending findings of earlier nights (those
// tonight's file carries are resolved), reversed duplicates whose rows
// are gone, rows of no kind the rules know, and refund rows nothing links.
func (m *Matcher) outsideGroups(res *Classification, found leftovers, add func(reconcile.Finding)) {
	for i, rec := range m.unseen {
		switch {
		case m.unseenSeen[i]:
			// Settled in an earlier night's file: matched then.
		case m.opts.Grace > 0 && !rec.SettledAt.Before(m.day.End().Add(-m.opts.Grace)):
			add(pending(rec, m.day.End().Sub(rec.SettledAt), m.opts.Grace))
		default:
			add(missingChannel(rec))
		}
	}
	for i, p := range m.prevPending {
		if found.pending[i] {
			res.Resolved = append(res.Resolved, p.Ref)
			continue
		}
		res.Escalated = append(res.Escalated, p.Ref)
		add(escalated(p))
	}
	for i, f := range m.reversed {
		if !found.reversed[i] {
			add(vanished(f))
		}
	}
	for _, tx := range m.others {
		add(unrecognized(tx))
	}
	for _, tx := range m.unkeyed {
		add(unlinkedRefund(tx))
	}
}

// leftovers say which earlier pending findings (pending) and reversed
// duplicates (reversed) tonight's file carries, by index.
type leftovers struct{ pending, reversed []bool }

// lookUpLeftovers finds the keys of the earlier pending findings and the
// reversed duplicates among tonight's.
func (m *Matcher) lookUpLeftovers() leftovers {
	found := leftovers{pending: make([]bool, len(m.prevPending)), reversed: make([]bool, len(m.reversed))}
	for i, p := range m.prevPending {
		found.pending[i] = m.store.Find(p.Kind, p.Key()) >= 0
	}
	for i, f := range m.reversed {
		found.reversed[i] = m.carries(f)
	}
	return found
}

// reversedByGroup files the findings an earlier run of this date reversed
// under the groups of their keys.
func (m *Matcher) reversedByGroup() map[int32]map[string]reconcile.Finding {
	out := map[int32]map[string]reconcile.Finding{}
	for _, f := range m.reversed {
		gi := m.store.Find(f.Kind, f.Key())
		if gi < 0 {
			continue
		}
		if out[gi] == nil {
			out[gi] = map[string]reconcile.Finding{}
		}
		out[gi][f.RowKey()] = f
	}
	return out
}

// carries reports whether this file has the row a finding is about: a
// row with its channel id, or, for a row without one, with its
// fingerprint.
func (m *Matcher) carries(f reconcile.Finding) bool {
	gi := m.store.Find(f.Kind, f.Key())
	if gi < 0 {
		return false
	}
	rows := m.store.Rows(gi)
	if f.ChannelTxnID == "" {
		sortRows(rows)
		return slices.Contains(rowFingerprints(rows), f.Fingerprint())
	}
	return slices.ContainsFunc(rows, func(r reconcile.Transaction) bool { return r.ChannelTxnID == f.ChannelTxnID })
}

func sortRows(rows []reconcile.Transaction) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if !a.OccurredAt.Equal(b.OccurredAt) {
			return a.OccurredAt.Before(b.OccurredAt)
		}
		return a.ChannelTxnID < b.ChannelTxnID
	})
}

// classify applies rules 2 to 4, 7 and 13: the earliest row of a group is
// the original and is compared with the local record; every later row is
// a duplicate. Where our record holds a channel id, the row carrying it
// is the original whatever the times say, and a refund row on another
// order than our refund's is a finding of its own. When an earlier
// date's file already settled the key, its earliest row is the original
// (compared then), and every row of this file under a channel id not
// seen before is a duplicate of it; a row under a channel id seen before
// is that same row again, never a duplicate.
func classify(g *group, add func(reconcile.Finding)) {
	sortRows(g.rows)
	fps := rowFingerprints(g.rows)
	if len(g.reversed) > 0 {
		reversedLast(g, fps)
	}
	ours := ourRowFirst(g.rows, fps, g.local)
	if len(g.reversed) > 0 {
		if f, ok := g.reversed[rowKey(g.rows[0], fps[0])]; ok {
			// Every row of the key, or the only one, was reversed as a
			// duplicate, or the one our record names was: the reversal
			// stands on the original.
			add(reversedOriginal(f))
		}
	}
	// Every row of the group, those on another order included, decides
	// whether its duplicates are unambiguous: rows that disagree on the
	// order are never one refund.
	rows, fps, elsewhere := onOurOrder(g, fps, add)
	if len(rows) == 0 {
		return
	}
	original := compare(rows[0], g.local)
	original.RowFingerprint = fps[0]
	if len(g.earlier) == 0 {
		add(original)
		duplicates(rows[0], rows[1:], fps[1:], g.rows, g.ambiguities(g.rows, elsewhere), g.local, "", add)
		return
	}
	sortRows(g.earlier)
	seen := map[string]int{}
	for _, r := range g.earlier {
		seen[rowToken(r)]++
	}
	var fresh []reconcile.Transaction
	var freshFPs []string
	for i, r := range rows {
		tok := rowToken(r)
		if seen[tok] > 0 {
			// The same channel id again is the same row, however often.
			// A row without one is known only by what it says, so it is
			// as many earlier rows as said the same: a second identical
			// row tonight is money that moved again.
			if r.ChannelTxnID == "" {
				seen[tok]--
			}
			continue
		}
		fresh = append(fresh, r)
		freshFPs = append(freshFPs, fps[i])
	}
	if len(fresh) == 0 {
		// Only rows settled before, delivered again: compare as usual.
		add(original)
		return
	}
	group := append(append(append([]reconcile.Transaction{}, g.earlier...), fresh...), elsewhere...)
	reasons := g.ambiguities(group, elsewhere)
	if ours && rowCarries(fresh[0], g.local.ChannelTxnID) {
		// The row our record names is new tonight: it may be the one
		// movement we made, and the earlier night's row the stray.
		// Which of the two to undo is a person's call.
		reasons = append(reasons, "our record names this row's channel id, not the earlier night's row")
	}
	orig := g.earlier[0]
	note := " (the original was settled in the file of " + orig.OccurredAt.Format(time.DateOnly) + ")"
	if len(orig.ChannelTxnID) > 3 && orig.ChannelTxnID[:3] == "fp:" {
		orig.ChannelTxnID = "" // known only by its hash: the note names its night
	}
	duplicates(orig, fresh, freshFPs, group, reasons, g.local, note, add)
}

// ourRowFirst moves the row carrying the channel id our record holds to
// the front of rows, fps with it, and reports whether one did: it is the
// movement we recorded, the original whatever the times say.
func ourRowFirst(rows []reconcile.Transaction, fps []string, loc *reconcile.LocalRecord) bool {
	if loc == nil || loc.ChannelTxnID == "" {
		return false
	}
	for i, r := range rows {
		if rowCarries(r, loc.ChannelTxnID) {
			r, fp := rows[i], fps[i]
			copy(rows[1:i+1], rows[:i])
			copy(fps[1:i+1], fps[:i])
			rows[0], fps[0] = r, fp
			return true
		}
	}
	return false
}

// rowCarries reports whether a row is the movement of channel id id, as
// our records keep it: the row's own id, or a refund row's refund id;
// for a row of an earlier night, which its memory knows by the hash of
// its id, that hash.
func rowCarries(r reconcile.Transaction, id string) bool {
	if id == "" {
		return false
	}
	if strings.HasPrefix(r.ChannelTxnID, "fp:") {
		return r.ChannelTxnID == rowToken(reconcile.Transaction{ChannelTxnID: id})
	}
	return r.ChannelTxnID == id || r.Kind == reconcile.KindRefund && r.RefundID() == id
}

// onOurOrder reports each row of group g on another order than ours
// (rule 13): a refund row on another order than our refund's, a payment
// row whose channel id our records hold under another order. It returns
// the other rows, fps with them, and those rows.
func onOurOrder(g *group, fps []string, add func(reconcile.Finding)) (ours []reconcile.Transaction, ourFPs []string, elsewhere []reconcile.Transaction) {
	loc := g.local
	for i, r := range g.rows {
		var f reconcile.Finding
		switch owner := g.elsewhere(r); {
		case owner != "":
			f = paidElsewhere(r, loc, owner)
		case loc != nil && loc.Kind == reconcile.KindRefund && !sameOrders(r.OrderNo, loc.OrderNo):
			f = otherOrder(r, loc)
		default:
			ours, ourFPs = append(ours, r), append(ourFPs, fps[i])
			continue
		}
		elsewhere = append(elsewhere, r)
		f.RowFingerprint = fps[i]
		add(f)
	}
	return ours, ourFPs, elsewhere
}

// reversedLast puts the rows an earlier run of this date reversed after
// the others, keeping each side in its order (fps moves with rows). A
// corrected file may date the rows anew; the original is then the first
// row not reversed, so the row reversed before stays the duplicate, under
// the journal it has, and no second row of the key is reversed.
func reversedLast(g *group, fps []string) {
	type pair struct {
		row reconcile.Transaction
		fp  string
	}
	var kept, moved []pair
	for i, r := range g.rows {
		p := pair{r, fps[i]}
		if _, ok := g.reversed[rowKey(r, fps[i])]; ok {
			moved = append(moved, p)
		} else {
			kept = append(kept, p)
		}
	}
	for i, p := range append(kept, moved...) {
		g.rows[i], fps[i] = p.row, p.fp
	}
}

// rowKey is Finding.RowKey of a row whose fingerprint is fp.
func rowKey(r reconcile.Transaction, fp string) string {
	if r.ChannelTxnID != "" {
		return r.ChannelTxnID
	}
	return "row:" + fp
}

// rowFingerprints gives each row without a channel id its
// Finding.RowFingerprint: its Transaction.Fingerprint, and which of rows
// identical in everything they say it is. rows are sorted (sortRows),
// which keeps identical rows in file order, so the same file, or a
// corrected one, numbers them alike.
func rowFingerprints(rows []reconcile.Transaction) []string {
	out := make([]string, len(rows))
	var n map[string]int
	for i, r := range rows {
		if r.ChannelTxnID != "" {
			continue
		}
		if n == nil {
			n = map[string]int{}
		}
		fp := r.Fingerprint()
		n[fp]++
		if k := n[fp]; k > 1 {
			fp += "-" + strconv.Itoa(k)
		}
		out[i] = fp
	}
	return out
}

// duplicates reports each of dups as a duplicate of orig; fps are the
// dups' row fingerprints, group every row of the key, and reasons why
// they may not be reversed without a person (ambiguities).
func duplicates(orig reconcile.Transaction, dups []reconcile.Transaction, fps []string, group []reconcile.Transaction,
	reasons []string, local *reconcile.LocalRecord, note string, add func(reconcile.Finding)) {
	if len(dups) == 0 {
		return
	}
	for i, dup := range dups {
		f := fromRow(dup, local)
		f.RowFingerprint = fps[i]
		f.Category = reconcile.DuplicatePayment
		noun := "payment for order " + dup.OrderNo
		if dup.Kind == reconcile.KindRefund {
			f.Category = reconcile.DuplicateRefund
			noun = "refund " + dup.RefundNo
		}
		f.OriginalTxnID = orig.ChannelTxnID
		f.AutoReverse = len(reasons) == 0
		if f.AutoReverse {
			f.Hint = fmt.Sprintf("The channel settled %s %d times with different channel ids for the same amount%s; this copy (%s) was reversed automatically.",
				noun, len(group), note, dup.ChannelTxnID)
		} else {
			f.Hint = fmt.Sprintf("The channel settled %s %d times%s. Not reversed automatically: %s.",
				noun, len(group), note, strings.Join(reasons, "; "))
		}
		add(f)
	}
}

// ambiguities lists why the duplicates of group g may not be reversed
// without a person; rows are every row of its case, earlier nights'
// included: rule 4 of the spec, plus rows the channel did not complete
// (no money moved yet, so there is nothing certain to reverse), rule 13
// (rows that name different orders, or are on another order than ours:
// elsewhere, which rows include), and a channel id our record holds that
// no row carries (then none of the rows is the one we recorded).
func (g *group) ambiguities(rows []reconcile.Transaction, elsewhere []reconcile.Transaction) []string {
	loc := g.local
	var why []string
	orig := rows[0]
	ids := map[string]int{}
	sameAmount, allSuccess := true, true
	for _, r := range rows {
		ids[r.ChannelTxnID]++
		if r.Amount != orig.Amount || r.Currency != orig.Currency {
			sameAmount = false
		}
		if r.Status != reconcile.StatusSuccess {
			allSuccess = false
		}
	}
	if !sameAmount {
		why = append(why, "the rows have different amounts")
	}
	var repeated []string
	for id, n := range ids {
		if n > 1 && id != "" {
			repeated = append(repeated, reconcile.Quote(id))
		}
	}
	if len(repeated) > 0 {
		sort.Strings(repeated)
		why = append(why, "channel id "+strings.Join(repeated, ", ")+" appears more than once (the same movement reported twice?)")
	}
	if ids[""] > 0 {
		why = append(why, "a row has no channel id, so nothing tells the channel's movements apart")
	}
	if !allSuccess {
		why = append(why, "not every row is a completed movement")
	}
	// Rule 13: rows that name different orders are never one refund.
	var orders []string
	for _, r := range rows {
		if r.OrderNo != "" && !slices.Contains(orders, r.OrderNo) {
			orders = append(orders, r.OrderNo)
		}
	}
	if len(orders) > 1 {
		sort.Strings(orders)
		why = append(why, "the rows name different orders ("+strings.Join(orders, ", ")+")")
	}
	if loc != nil && loc.Kind == reconcile.KindRefund && len(orders) > 0 &&
		(len(orders) > 1 || !sameOrders(orders[0], loc.OrderNo)) {
		why = append(why, "our refund is of order "+loc.OrderNo)
	}
	for _, r := range elsewhere {
		if r.Kind == reconcile.KindPayment {
			why = append(why, "channel id "+reconcile.Quote(r.ChannelTxnID)+" is our record of another order's payment")
		}
	}
	if g.ownIDs && loc != nil && loc.ChannelTxnID != "" &&
		!slices.ContainsFunc(rows, func(r reconcile.Transaction) bool { return rowCarries(r, loc.ChannelTxnID) }) {
		why = append(why, "our record holds channel id "+reconcile.Quote(loc.ChannelTxnID)+", which no row carries")
	}
	switch {
	case loc == nil:
		why = append(why, "we have no local record")
	case !loc.Settled():
		why = append(why, fmt.Sprintf("our record is %s, not settled", loc.Status))
	case loc.Amount != orig.Amount || loc.Currency != orig.Currency:
		why = append(why, fmt.Sprintf("our record says %s, the rows %s",
			money(loc.Amount, loc.Currency), money(orig.Amount, orig.Currency)))
	}
	if loc != nil && (loc.IdemStatus == reconcile.IdemInProgress || loc.IdemStatus == reconcile.IdemFailed) {
		why = append(why, "the idempotency record is "+loc.IdemStatus+" (a request still in flight or failed)")
	}
	if g.disputed != "" {
		why = append(why, g.disputed)
	}
	return why
}

// compare applies rule 3 to a group's original row.
func compare(tx reconcile.Transaction, loc *reconcile.LocalRecord) reconcile.Finding {
	f := fromRow(tx, loc)
	what := "payment for order " + tx.OrderNo
	if tx.Kind == reconcile.KindRefund {
		what = "refund " + tx.RefundNo
	}
	if loc == nil {
		f.Category = reconcile.MissingLocal
		f.Hint = fmt.Sprintf("The channel settled %s (%s) but we have no record of it: money moved that we never recorded.",
			what, money(tx.Amount, tx.Currency))
		return f
	}
	f.Category = agreement(tx.Kind != reconcile.KindRefund || sameOrders(tx.OrderNo, loc.OrderNo),
		terms{tx.Amount, curOf(tx.Currency), tx.Status}, terms{loc.Amount, curOf(loc.Currency), loc.Outcome()})
	switch f.Category {
	case reconcile.OrderMismatch:
		f = otherOrder(tx, loc)
	case reconcile.AmountMismatch:
		f.Hint = fmt.Sprintf("The channel settled %s for %s; we recorded %s.",
			what, money(tx.Amount, tx.Currency), money(loc.Amount, loc.Currency))
	case reconcile.StatusMismatch:
		f.Hint = fmt.Sprintf("The channel says the %s is %s; our record is %s.", what, tx.Status, loc.Status)
		switch {
		case loc.IdemStatus == reconcile.IdemInProgress:
			f.Hint += " Its idempotency record is still IN_PROGRESS: the service stopped between calling the channel and recording the result. Complete the record from the channel's data; do not retry the request."
		case tx.Status == reconcile.StatusSuccess:
			f.Hint += " Probably a lost callback: the channel's result never reached us."
		}
	}
	return f
}

// otherOrder is rule 13's finding of a refund row under our refund
// number on another order than our refund's: the money went to that
// order's customer, or one side's records are wrong.
func otherOrder(tx reconcile.Transaction, loc *reconcile.LocalRecord) reconcile.Finding {
	f := fromRow(tx, loc)
	f.Category = reconcile.OrderMismatch
	f.Related = []string{fmt.Sprintf("our refund %s is of order %s, %s%s", loc.RefundNo, loc.OrderNo,
		money(loc.Amount, loc.Currency), idNote(loc.ChannelTxnID))}
	f.Hint = fmt.Sprintf("The channel settled refund %s (%s, channel id %s) on order %s, but our refund %s is of order %s: the money may have gone to another order's customer. Find which order the refund belongs to; never reversed automatically.",
		tx.RefundNo, money(tx.Amount, tx.Currency), reconcile.Quote(tx.ChannelTxnID), tx.OrderNo, loc.RefundNo, loc.OrderNo)
	return f
}

func idNote(id string) string {
	if id == "" {
		return ""
	}
	return ", channel id " + id
}

func fromRow(tx reconcile.Transaction, loc *reconcile.LocalRecord) reconcile.Finding {
	f := reconcile.Finding{
		Kind:          tx.Kind,
		OrderNo:       tx.OrderNo,
		RefundNo:      tx.RefundNo,
		ChannelTxnID:  tx.ChannelTxnID,
		HasChannel:    true,
		ChannelAmount: tx.Amount,
		Currency:      tx.Currency,
		ChannelStatus: tx.Status,
		OccurredAt:    tx.OccurredAt,
		Line:          tx.Line,
		RawKind:       tx.RawKind,
	}
	if loc != nil {
		f.HasLocal = true
		f.LocalAmount = loc.Amount
		f.LocalCurrency = loc.Currency
		f.LocalStatus = loc.Status
		f.LocalTxnID = loc.ChannelTxnID
		f.IdemStatus = loc.IdemStatus
	}
	return f
}

func missingChannel(rec reconcile.LocalRecord) reconcile.Finding {
	what := "order " + rec.OrderNo + " as " + rec.Status
	if rec.Kind == reconcile.KindRefund {
		what = "refund " + rec.RefundNo + " as " + rec.Status
	}
	return reconcile.Finding{
		Category:      reconcile.MissingChannel,
		Kind:          rec.Kind,
		OrderNo:       rec.OrderNo,
		RefundNo:      rec.RefundNo,
		LocalTxnID:    rec.ChannelTxnID,
		HasLocal:      true,
		LocalAmount:   rec.Amount,
		LocalCurrency: rec.Currency,
		LocalStatus:   rec.Status,
		IdemStatus:    rec.IdemStatus,
		OccurredAt:    rec.SettledAt,
		Hint: fmt.Sprintf("We recorded %s (%s) on this date, but the channel's file has no row for it.",
			what, money(rec.Amount, rec.Currency)),
	}
}

func pending(rec reconcile.LocalRecord, beforeCutoff, grace time.Duration) reconcile.Finding {
	f := missingChannel(rec)
	f.Category = reconcile.Pending
	f.Hint = fmt.Sprintf("Settled by us %s before the day's cut-off and not in this file: expected in the next day's file (grace window %s).",
		beforeCutoff.Round(time.Second), grace)
	return f
}

// escalated is the missing_channel finding of a pending record that the
// next day's file did not carry either.
func escalated(p reconcile.Finding) reconcile.Finding {
	f := p
	f.Ref = ""
	f.Category = reconcile.MissingChannel
	what := "order " + p.OrderNo
	if p.Kind == reconcile.KindRefund {
		what = "refund " + p.RefundNo
	}
	f.Hint = fmt.Sprintf("We recorded %s (%s) just before the cut-off on %s; neither that day's file nor this one has a row for it.",
		what, money(p.LocalAmount, p.LocalCurrency), p.OccurredAt.Format("2006-01-02 15:04"))
	return f
}

// vanished is the finding of a reversed duplicate a corrected file no
// longer carries.
func vanished(r reconcile.Finding) reconcile.Finding {
	f := r
	f.Ref = ""
	f.Category = reconcile.DuplicateVanished
	f.AutoReverse = false
	f.Hint = fmt.Sprintf("An earlier run of this date reversed duplicate %s, but the corrected file no longer has it. The reversal journal stands: decide whether to undo it.",
		rowName(r))
	return f
}

// rowName names the row of a finding in a hint: its channel id, or where
// it stood when it has none.
func rowName(f reconcile.Finding) string {
	if f.ChannelTxnID != "" {
		return f.ChannelTxnID
	}
	return fmt.Sprintf("the row without a channel id of %s (line %d)", money(f.ChannelAmount, f.Currency), f.Line)
}

// reversedOriginal is the finding of a duplicate an earlier run of this
// date reversed that a corrected file makes the original: the only row of
// its key, or the first with every other reversed too.
func reversedOriginal(r reconcile.Finding) reconcile.Finding {
	f := vanished(r)
	f.Hint = fmt.Sprintf("An earlier run of this date reversed %s as a duplicate, but in the corrected file it is the first settlement of its key: the reversal stands on a row that is no duplicate now. Decide whether to undo it.",
		rowName(r))
	return f
}

// unlinkedRefund is the finding of a refund row without our refund
// number whose channel refund id no refund of ours carries.
func unlinkedRefund(tx reconcile.Transaction) reconcile.Finding {
	f := fromRow(tx, nil)
	f.Category = reconcile.Unrecognized
	f.Hint = fmt.Sprintf("Line %d refunds %s of order %s but names no refund number of ours, and no refund of ours carries its channel refund id %s: find the refund (one made at the channel by hand?) and record it.",
		tx.Line, money(tx.Amount, tx.Currency), tx.OrderNo, reconcile.Quote(tx.RefundID()))
	return f
}

func unrecognized(tx reconcile.Transaction) reconcile.Finding {
	f := fromRow(tx, nil)
	f.Category = reconcile.Unrecognized
	f.Hint = fmt.Sprintf("Line %d is a row of kind %q that the job does not know how to match; check it by hand.", tx.Line, tx.RawKind)
	return f
}

func money(minor int64, currency string) string {
	return reconcile.FormatAmount(minor, currency) + " " + currency
}
