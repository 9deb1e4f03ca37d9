package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"reconcile"
)

// The data is made in blocks of blockOrders orders and blockRefunds
// refunds, each block from its own seeded generator. A block can then be
// made again on demand, so the files and every COPY stream the same rows
// without holding ten million of them in memory, and every full block
// carries every kind of anomaly, so even a tiny run tests each category.
const (
	blockOrders  = 2000
	blockRefunds = blockOrders / 10
)

// businessDate is the date every generated row settles on, in UTC.
var businessDate = time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)

const currency = "CNY"

// Spec says how much data to make.
type Spec struct {
	Payments int    // local orders; refunds are a tenth of that
	Seed     uint64 // the same seed gives byte-identical files
}

func (s Spec) refunds() int { return s.Payments / 10 }

func (s Spec) blocks() int { return (s.Payments + blockOrders - 1) / blockOrders }

// What is planted on one order or one refund.
type plant uint8

const (
	normal plant = iota
	amountOff
	pendingInProgress // local PENDING with an IN_PROGRESS idempotency record: the crash window
	pendingLost       // local PENDING, idempotency DONE: a lost callback
	noLocal
	noChannel
	dupClean       // charged twice, same amount, new channel id: reversed automatically
	dupOtherAmount // charged again for a different amount: review
	dupIdemFailed  // charged twice, but the idempotency record says FAILED: review
)

// Per full block, payments: 12 anomalies in 2000 (0.6 %); refunds: 6 in
// 200 (3 %, or refunds would need blocks too big for a quick test to hold
// every category); together 18 in 2200 records, about 0.8 %.
var paymentPlants = []plant{
	amountOff, amountOff, pendingInProgress, pendingLost, noLocal, noLocal,
	noChannel, noChannel, dupClean, dupClean, dupOtherAmount, dupIdemFailed,
}

// Per full block, 20 chargebacks in 2000 orders (1 %): 16 on paid orders
// (each a chargeback to answer) and 4 on orders refunded in full (each a
// chargeback and an over_refund: the money went back by both doors). A
// WeChat Pay bill carries no chargebacks: they are in the canonical CSV
// only.
const (
	blockChargebacks        = 16
	blockRefundedChargeback = 4
)

// The refund block alternates the variant of the two anomalies that have
// two, so both occur in any two consecutive blocks.
func refundPlants(b int) []plant {
	status, ambiguous := pendingInProgress, dupOtherAmount
	if b%2 == 1 {
		status, ambiguous = pendingLost, dupIdemFailed
	}
	return []plant{amountOff, status, noLocal, noChannel, dupClean, ambiguous}
}

type localOrder struct {
	no        string
	userID    int64
	amount    int64
	status    string
	txnID     string // "" is NULL
	createdAt time.Time
	paidAt    time.Time // zero is NULL
}

type localRefund struct {
	no, orderNo string
	amount      int64
	status      string
	refundID    string // "" is NULL
	createdAt   time.Time
	refundedAt  time.Time // zero is NULL
}

type idemRecord struct {
	scope, key, status, hash string
	createdAt                time.Time
}

// chanRow is one settlement row, written to both file formats; a
// chargeback to the canonical CSV only.
type chanRow struct {
	refund     bool
	chargeback bool
	orderNo    string
	refundNo   string
	txnID      string // the payment's WeChat order id (on refunds too)
	refundID   string // the refund's WeChat refund id
	amount     int64  // minor units
	at         time.Time
	userID     int64
	n          int // picks the descriptive columns
}

// channelID is the id the job keys the row by: the payment's, or the refund's.
func (r chanRow) channelID() string {
	switch {
	case r.refund:
		return r.refundID
	case r.chargeback:
		return "CB" + r.txnID
	}
	return r.txnID
}

// feeMilli is the WeChat fee at 0.60 %, in thousandths of a minor unit,
// so it is exact at five decimals; refunds return their share.
func (r chanRow) feeMilli() int64 {
	if r.chargeback {
		return 15_00_000 // the dispute fee, 15.00
	}
	if r.refund {
		return -r.amount * 6
	}
	return r.amount * 6
}

// Expected is what a correct reconciliation of the data must report.
type Expected struct {
	Counts       map[reconcile.Category]int
	AutoReversed int
}

type block struct {
	orders  []localOrder
	refunds []localRefund
	idem    []idemRecord
	rows    []chanRow
	want    Expected
	// chargebacks counts the block's chargeback rows, refundedCharged
	// those on refunded orders.
	chargebacks, refundedCharged int
}

// keysOn names the keys and ids of the records settling on one date. The
// date's digits are in every one, so no two nights share a key, as no two
// nights of a real shop do.
type keysOn string // the date as 20261128

func keysOf(day time.Time) keysOn { return keysOn(day.Format("20060102")) }

// WeChat ids: 28 digits for payments, 29 for refunds.
func (d keysOn) order(i int) string    { return fmt.Sprintf("ORD%s%08d", d, i) }
func (d keysOn) refund(j int) string   { return fmt.Sprintf("RF%s%08d", d, j) }
func (d keysOn) txn(i int) string      { return fmt.Sprintf("420000%s%014d", d, i) }
func (d keysOn) refundID(j int) string { return fmt.Sprintf("503000%s0%014d", d, j) }

var tonight = keysOf(businessDate)

func orderNo(i int) string  { return tonight.order(i) }
func refundNo(j int) string { return tonight.refund(j) }

// A duplicate's id lives in its own range, so it never collides with a
// first charge.
func txnID(i int) string       { return tonight.txn(i) }
func dupTxnID(i int) string    { return tonight.txn(50_000_000_000_000 + i) }
func refundID(j int) string    { return tonight.refundID(j) }
func dupRefundID(j int) string { return tonight.refundID(50_000_000_000_000 + j) }

// payAmount draws a basket: mostly small, some large, a few very large.
func payAmount(rng *rand.Rand) int64 {
	switch r := rng.IntN(100); {
	case r < 70:
		return 100 + rng.Int64N(19_900) // 1.00 – 199.99
	case r < 95:
		return 20_000 + rng.Int64N(180_000) // 200.00 – 1,999.99
	default:
		return 200_000 + rng.Int64N(1_800_000) // 2,000.00 – 19,999.99
	}
}

// requestHash stands in for the hash of a request's parameters.
func requestHash(scope string, n int) string {
	x := uint64(n) * 0x9E3779B97F4A7C15
	if scope == "refund" {
		x ^= 0xD1B54A32D192ED03
	}
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 29
	return fmt.Sprintf("%016x", x)
}

// block makes block b: its orders, then the refunds of some of them.
// Everything settles before 23:15 UTC, clear of the job's 30-minute
// cut-off window in which a record missing from the file is pending rather
// than missing.
func (s Spec) block(b int) block {
	rng := rand.New(rand.NewPCG(s.Seed, uint64(b)))
	blk := block{want: Expected{Counts: map[reconcile.Category]int{}}}
	paid := s.addPayments(&blk, rng, b)
	s.addRefunds(&blk, rng, b, paid)
	return blk
}

// paidOrders is what the refunds of a block need of its orders, by
// position in the block.
type paidOrders struct {
	first   int // the number of the block's first order
	amounts []int64
	times   []time.Time
	localAt []int // positions in blk.orders, -1 when not local
}

// addPayments adds block b's orders and their channel rows to blk.
func (s Spec) addPayments(blk *block, rng *rand.Rand, b int) paidOrders {
	first := b*blockOrders + 1
	n := min(blockOrders, s.Payments-first+1)
	kinds := paymentKinds(rng)
	charged := chargedOrders(rng, kinds)
	paid := paidOrders{first: first, amounts: make([]int64, n), times: make([]time.Time, n), localAt: make([]int, n)}
	daySeconds := int64(23 * 3600)
	for k := range n {
		i := first + k
		amount := payAmount(rng)
		at := businessDate.Add(time.Duration(int64(i-1)*daySeconds/int64(s.Payments)+rng.Int64N(60)) * time.Second)
		paid.amounts[k], paid.times[k] = amount, at
		paid.localAt[k] = blk.addPayment(rng, i, amount, at, kinds[k])
		if charged[k] {
			blk.chargeBack(chanRow{orderNo: orderNo(i), txnID: txnID(i), amount: amount, at: at, userID: int64(i), n: i})
		}
	}
	return paid
}

// chargedOrders picks the block's plain paid orders the customer's bank
// charges back: among those without an anomaly, never an order a refund
// is for (positions 9, 19, …).
func chargedOrders(rng *rand.Rand, kinds []plant) []bool {
	charged := make([]bool, len(kinds))
	for n := 0; n < blockChargebacks; {
		p := rng.IntN(len(kinds))
		if p%10 != 9 && kinds[p] == normal && !charged[p] {
			charged[p] = true
			n++
		}
	}
	return charged
}

// chargeBack adds a chargeback of the whole of payment row's order, a
// second after it, counting the finding it makes.
func (blk *block) chargeBack(pay chanRow) {
	cb := pay
	cb.refund, cb.refundNo, cb.chargeback = false, "", true
	cb.at = pay.at.Add(time.Second)
	blk.rows = append(blk.rows, cb)
	blk.chargebacks++
	blk.want.Counts[reconcile.Chargeback]++
}

// paymentKinds places the payment anomalies of a block. Refund j is for
// order 10j, always a plain settled order, so the anomalies of the two
// sides stay independent: positions 9, 19, … of the block never get a
// payment anomaly.
func paymentKinds(rng *rand.Rand) []plant {
	var candidates []int
	for p := range blockOrders {
		if p%10 != 9 {
			candidates = append(candidates, p)
		}
	}
	kinds := make([]plant, blockOrders)
	for k, pl := range paymentPlants {
		c := k + rng.IntN(len(candidates)-k)
		candidates[k], candidates[c] = candidates[c], candidates[k]
		kinds[candidates[k]] = pl
	}
	return kinds
}

// addPayment adds order i, paid amount at at, and its channel rows as
// kind says, and returns its position in blk.orders, -1 when it has no
// local record.
func (blk *block) addPayment(rng *rand.Rand, i int, amount int64, at time.Time, kind plant) int {
	// One customer per order: the data plants no payment repeated under a
	// new order, and chance ones would make its counts a matter of luck;
	// the check still looks at every order.
	user := int64(i)
	o := localOrder{no: orderNo(i), userID: user, amount: amount, status: reconcile.OrderPaid, txnID: txnID(i),
		createdAt: at.Add(-time.Duration(5+rng.IntN(300)) * time.Second), paidAt: at}
	row := chanRow{orderNo: o.no, txnID: txnID(i), amount: amount, at: at, userID: user, n: i}
	p := blk.plantOn(rng, kind, row, paymentSide)
	o.amount += p.amountOff
	if p.pending {
		o.status, o.txnID, o.paidAt = "PENDING", "", time.Time{}
	}
	localAt := -1
	if kind != noLocal {
		localAt = len(blk.orders)
		blk.orders = append(blk.orders, o)
		blk.idem = append(blk.idem, idemRecord{scope: "payment", key: o.no, status: p.idem,
			hash: requestHash("payment", i), createdAt: o.createdAt})
	}
	blk.addRows(kind, row, p.dup)
	return localAt
}

// addRefunds adds block b's refunds and their channel rows to blk.
func (s Spec) addRefunds(blk *block, rng *rand.Rand, b int, paid paidOrders) {
	firstRefund := b*blockRefunds + 1
	nr := min(blockRefunds, s.refunds()-firstRefund+1)
	if nr <= 0 {
		return
	}
	kinds := make([]plant, blockRefunds)
	perm := rng.Perm(blockRefunds)
	for k, pl := range refundPlants(b) {
		kinds[perm[k]] = pl
	}
	for q := range nr {
		blk.addRefund(rng, firstRefund+q, paid, kinds[q])
	}
}

// addRefund adds refund j, of order 10j, and its channel rows as kind
// says.
func (blk *block) addRefund(rng *rand.Rand, j int, paid paidOrders, kind plant) {
	k := 10*j - paid.first // the order's position in the block
	orderAmount := paid.amounts[k]
	amount := orderAmount
	full := j%3 == 0
	if !full && orderAmount > 1 {
		amount = 1 + rng.Int64N(orderAmount-1)
	}
	at := paid.times[k].Add(time.Duration(30+rng.IntN(570)) * time.Second)

	r := localRefund{no: refundNo(j), orderNo: orderNo(10 * j), amount: amount, status: reconcile.RefundSucceeded,
		refundID: refundID(j), createdAt: at.Add(-time.Duration(1+rng.IntN(20)) * time.Second), refundedAt: at}
	row := chanRow{refund: true, orderNo: r.orderNo, refundNo: r.no, txnID: txnID(10 * j), refundID: refundID(j),
		amount: amount, at: at, userID: blk.orders[paid.localAt[k]].userID, n: j}
	p := blk.plantOn(rng, kind, row, refundSide)
	r.amount += p.amountOff
	if p.pending {
		r.status, r.refundID, r.refundedAt = "PENDING", "", time.Time{}
	}
	if kind != noLocal {
		blk.refunds = append(blk.refunds, r)
		blk.idem = append(blk.idem, idemRecord{scope: "refund", key: r.no, status: p.idem,
			hash: requestHash("refund", j), createdAt: r.createdAt})
		// The order's own status follows its refund; every one of these
		// is still "paid", so the payment side is unaffected.
		o := &blk.orders[paid.localAt[k]]
		switch {
		case r.status == "PENDING":
			o.status = reconcile.OrderRefunding
		case full:
			o.status = reconcile.OrderRefunded
		}
	}
	blk.addRows(kind, row, p.dup)
	// A few orders refunded in full are charged back too: both doors.
	if kind == normal && full && blk.refundedCharged < blockRefundedChargeback {
		o := blk.orders[paid.localAt[k]]
		blk.chargeBack(chanRow{orderNo: o.no, txnID: o.txnID, amount: o.amount, at: at, userID: o.userID, n: 10 * j})
		blk.refundedCharged++
		blk.want.Counts[reconcile.OverRefund]++
	}
}

// side is what differs between a payment and a refund when an anomaly is
// planted on it.
type side struct {
	duplicate reconcile.Category
	// offBy is how far an amount_mismatch's local amount is from the
	// channel's amount.
	offBy func(rng *rand.Rand, amount int64) int64
	// otherAmount bounds how much more a duplicate of another amount is.
	otherAmount int64
	// dupID gives a duplicate row its own channel id.
	dupID func(*chanRow)
}

var (
	paymentSide = side{
		duplicate: reconcile.DuplicatePayment,
		offBy: func(rng *rand.Rand, amount int64) int64 {
			d := 1 + rng.Int64N(500)
			if amount > 1000 && rng.IntN(2) == 0 {
				d = -d
			}
			return d
		},
		otherAmount: 999,
		dupID:       func(r *chanRow) { r.txnID = dupTxnID(r.n) },
	}
	refundSide = side{
		duplicate:   reconcile.DuplicateRefund,
		offBy:       func(rng *rand.Rand, _ int64) int64 { return 1 + rng.Int64N(100) },
		otherAmount: 100,
		dupID:       func(r *chanRow) { r.refundID = dupRefundID(r.n) },
	}
)

// planting is what a plant makes of one record: the status of its
// idempotency record, how far its local amount is off, whether it is left
// PENDING, and a second channel row.
type planting struct {
	idem      string
	amountOff int64
	pending   bool
	dup       *chanRow
}

// plantOn plants kind on the record whose channel row is row, counting
// what the job must find.
func (blk *block) plantOn(rng *rand.Rand, kind plant, row chanRow, sd side) planting {
	p := planting{idem: "DONE"}
	count := func(c reconcile.Category) { blk.want.Counts[c]++ }
	switch kind {
	case normal:
		count(reconcile.Matched)
	case amountOff:
		p.amountOff = sd.offBy(rng, row.amount)
		count(reconcile.AmountMismatch)
	case pendingInProgress, pendingLost:
		p.pending = true
		if kind == pendingInProgress {
			p.idem = "IN_PROGRESS"
		}
		count(reconcile.StatusMismatch)
	case noLocal:
		count(reconcile.MissingLocal)
	case noChannel:
		count(reconcile.MissingChannel)
	case dupClean, dupOtherAmount, dupIdemFailed:
		d := row
		sd.dupID(&d)
		d.at = row.at.Add(time.Duration(30+rng.IntN(570)) * time.Second)
		if kind == dupOtherAmount {
			d.amount += 1 + rng.Int64N(sd.otherAmount)
		}
		if kind == dupIdemFailed {
			p.idem = "FAILED"
		}
		p.dup = &d
		count(reconcile.Matched)
		count(sd.duplicate)
		if kind == dupClean {
			blk.want.AutoReversed++
		}
	}
	return p
}

// addRows adds a record's channel rows: its own, unless kind keeps it out
// of the file, and the duplicate, if any.
func (blk *block) addRows(kind plant, row chanRow, dup *chanRow) {
	if kind != noChannel {
		blk.rows = append(blk.rows, row)
	}
	if dup != nil {
		blk.rows = append(blk.rows, *dup)
	}
}

// Files are the two settlement files of one generated data set.
type Files struct {
	CSV, WeChat string
	Rows        int // channel rows of the canonical CSV
	// Chargebacks are the CSV's chargeback rows, which the WeChat Pay
	// bill has not; BothDoors those of them on orders refunded in full.
	Chargebacks, BothDoors int
	Want                   Expected // of the canonical CSV
}

// WeChatRows are the rows of the WeChat Pay bill.
func (f Files) WeChatRows() int { return f.Rows - f.Chargebacks }

// WantOf is what reconciling the file of format must report: the WeChat
// Pay bill has no chargebacks, nor what they make.
func (f Files) WantOf(format string) Expected {
	if format != "wechatpay" {
		return f.Want
	}
	w := Expected{Counts: maps.Clone(f.Want.Counts), AutoReversed: f.Want.AutoReversed}
	w.Counts[reconcile.OverRefund] -= f.BothDoors
	w.Counts[reconcile.Chargeback] = 0
	return w
}

// WriteFiles writes the canonical CSV and the WeChat Pay ALL bill, the same
// rows in the same order, into dir, and returns what reconciling them must
// report. With peerDir it also writes there the DuckDB script's data (see
// peerData), from the same blocks in the same pass.
func WriteFiles(s Spec, dir, peerDir string) (Files, error) {
	f := Files{
		CSV:    dir + "/shop-2026-11-28.csv",
		WeChat: dir + "/wechat-2026-11-28-ALL.csv",
		Want:   Expected{Counts: map[reconcile.Category]int{}},
	}
	var peer *peerData
	if peerDir != "" {
		var err error
		if peer, err = createPeerData(peerDir, channels[0].name); err != nil {
			return f, err
		}
		defer peer.abort()
	}
	cf, err := os.Create(f.CSV)
	if err != nil {
		return f, err
	}
	defer cf.Close()
	wf, err := os.Create(f.WeChat)
	if err != nil {
		return f, err
	}
	defer wf.Close()
	cw := bufio.NewWriterSize(cf, 1<<20)
	ww := bufio.NewWriterSize(wf, 1<<20)
	bill := newWeChatBill(ww)
	cw.WriteString(csvHeader)
	for b := range s.blocks() {
		blk := s.block(b)
		for c, n := range blk.want.Counts {
			f.Want.Counts[c] += n
		}
		f.Want.AutoReversed += blk.want.AutoReversed
		f.Chargebacks += blk.chargebacks
		f.BothDoors += blk.refundedCharged
		for _, r := range blk.rows {
			writeCSVRow(cw, r)
			if !r.chargeback {
				bill.row(r)
			}
			f.Rows++
		}
		if peer != nil {
			peer.add(&blk)
		}
	}
	bill.summary()
	for _, w := range []struct {
		b *bufio.Writer
		f *os.File
	}{{cw, cf}, {ww, wf}} {
		if err := w.b.Flush(); err != nil {
			return f, err
		}
		if err := w.f.Close(); err != nil {
			return f, err
		}
	}
	if peer != nil {
		return f, peer.finish()
	}
	return f, nil
}

const csvHeader = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,status\n"

func writeCSVRow(w *bufio.Writer, r chanRow) {
	kind := "payment"
	switch {
	case r.refund:
		kind = "refund"
	case r.chargeback:
		kind = "chargeback"
	}
	// Every field is plain text without commas or quotes, so no quoting.
	w.WriteString(kind)
	w.WriteByte(',')
	w.WriteString(r.orderNo)
	w.WriteByte(',')
	w.WriteString(r.refundNo)
	w.WriteByte(',')
	w.WriteString(r.channelID())
	w.WriteByte(',')
	w.WriteString(reconcile.FormatDecimal(r.amount, 2))
	w.WriteString(",CNY,")
	w.WriteString(r.at.Format(time.RFC3339))
	w.WriteByte(',')
	w.WriteString(reconcile.FormatDecimal(r.feeMilli(), 5))
	w.WriteString(",SUCCESS\n")
}

const (
	wxHeader = "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类," +
		"应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包," +
		"手续费,费率,订单金额,申请退款金额,费率备注"
	wxSummaryHeader = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额"
)

var (
	wxTradeTypes = []string{"JSAPI", "NATIVE", "APP", "JSAPI", "MICROPAY"}
	wxBanks      = []string{"OTHERS", "CMB_DEBIT", "ICBC_DEBIT", "CFT", "BOSH_CREDIT"}
	// One body has a comma, as real ones do: the bill is split on ",`".
	wxBodies = []string{"咖啡豆 500g", "T恤,白色 L码", "会员月卡", "蓝牙耳机", "数据线 1m", "绿茶礼盒"}
)

// wechatBill writes a WeChat Pay ALL trade bill as downloaded: UTF-8 with
// a BOM, CRLF, backtick-prefixed fields, and a summary row that adds up.
type wechatBill struct {
	w                                     *bufio.Writer
	rows                                  int64
	settle, refunded, fee, order, applied int64
}

func newWeChatBill(w *bufio.Writer) *wechatBill {
	w.WriteString("\uFEFF" + wxHeader + "\r\n")
	return &wechatBill{w: w}
}

func (b *wechatBill) row(r chanRow) {
	money := func(v int64) string { return reconcile.FormatDecimal(v, 2) }
	state, refundID, refundNo, refundType, refundState := "SUCCESS", "0", "0", "", ""
	settle, refunded, order, applied := r.amount, int64(0), r.amount, int64(0)
	if r.refund {
		state, refundID, refundNo, refundType, refundState = "REFUND", r.refundID, r.refundNo, "ORIGINAL", "SUCCESS"
		settle, refunded, order, applied = 0, r.amount, 0, r.amount
	}
	device := ""
	trade := wxTradeTypes[r.n%len(wxTradeTypes)]
	if trade == "MICROPAY" {
		device = "POS-01"
	}
	fields := []string{
		r.at.Format("2006-01-02 15:04:05"), "wx2421b1c4370ec43b", "1900000109", "0", device,
		r.txnID, r.orderNo, fmt.Sprintf("oUpF8u%022d", r.userID), trade, state,
		wxBanks[r.n%len(wxBanks)], currency, money(settle), "0.00", refundID, refundNo,
		money(refunded), "0.00", refundType, refundState, wxBodies[r.n%len(wxBodies)], "",
		reconcile.FormatDecimal(r.feeMilli(), 5), "0.60%", money(order), money(applied), "",
	}
	writeBackticked(b.w, fields)
	b.rows++
	b.settle += settle
	b.refunded += refunded
	b.fee += r.feeMilli()
	b.order += order
	b.applied += applied
}

func (b *wechatBill) summary() {
	b.w.WriteString(wxSummaryHeader + "\r\n")
	money := func(v int64) string { return reconcile.FormatDecimal(v, 2) }
	writeBackticked(b.w, []string{strconv.FormatInt(b.rows, 10), money(b.settle), money(b.refunded), "0.00",
		reconcile.FormatDecimal(b.fee, 5), money(b.order), money(b.applied)})
}

func writeBackticked(w io.StringWriter, fields []string) {
	var sb strings.Builder
	for i, f := range fields {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('`')
		sb.WriteString(f)
	}
	sb.WriteString("\r\n")
	w.WriteString(sb.String())
}
