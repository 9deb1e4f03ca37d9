package reports_test

import (
	"fmt"
	"testing"
	"time"

	"reconcile"
)

// Values a settlement file could carry to attack the reader of a report.
const (
	hostileFormula = `=HYPERLINK("http://x","y")`
	hostileAt      = `@SUM(A1)`
	hostileSlack   = `<!channel> see <http://evil|click> & pay`
)

var shanghai = func() *time.Location {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		// A system without tzdata still gets a +08:00 zone.
		return time.FixedZone("CST", 8*3600)
	}
	return loc
}()

// testResult is a run with one finding of every category, in CNY, JPY, KWD
// and USD, one of them reversed automatically. Refs follow report order:
// run-1-0001 (O-100) to run-1-0010 (O-950).
func testResult(t testing.TB) *reconcile.Result {
	t.Helper()
	day, err := reconcile.NewBusinessDay("2026-11-28", shanghai)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 10, 15, 0, 0, time.UTC) // 18:15:00 in Shanghai
	findings := []reconcile.Finding{
		{
			Category: reconcile.AmountMismatch, Kind: reconcile.KindPayment, OrderNo: "O-100",
			ChannelTxnID: "4200000100", LocalTxnID: "4200000100",
			HasChannel: true, ChannelAmount: 10080, Currency: "CNY",
			HasLocal: true, LocalAmount: 9980, LocalCurrency: "CNY",
			OccurredAt: at, Hint: "The channel took 1.00 more than we recorded.",
		},
		{
			Category: reconcile.AmountMismatch, Kind: reconcile.KindPayment, OrderNo: "O-700",
			ChannelTxnID: "4200000700",
			HasChannel:   true, ChannelAmount: 1234, Currency: "KWD",
			HasLocal: true, LocalAmount: 1000, LocalCurrency: "KWD",
			OccurredAt: at,
		},
		{
			Category: reconcile.StatusMismatch, Kind: reconcile.KindPayment, OrderNo: "O-200",
			ChannelTxnID: "4200000200",
			HasChannel:   true, ChannelAmount: 5000, Currency: "CNY",
			HasLocal: true, LocalAmount: 5000, LocalCurrency: "CNY",
			ChannelStatus: reconcile.StatusSuccess, LocalStatus: reconcile.OrderPending,
			IdemStatus: reconcile.IdemInProgress, OccurredAt: at,
			Hint: "Paid at the channel, PENDING here, idempotency record IN_PROGRESS: the crash window.",
		},
		{
			Category: reconcile.MissingLocal, Kind: reconcile.KindPayment, OrderNo: hostileFormula,
			ChannelTxnID: hostileAt,
			HasChannel:   true, ChannelAmount: 123456, Currency: "CNY",
			OccurredAt: at, Hint: hostileSlack,
		},
		{
			Category: reconcile.MissingChannel, Kind: reconcile.KindPayment, OrderNo: "O-400",
			LocalTxnID: "4200000400",
			HasLocal:   true, LocalAmount: 5000, LocalCurrency: "JPY",
			OccurredAt: at,
		},
		{
			Category: reconcile.DuplicatePayment, Kind: reconcile.KindPayment, OrderNo: "O-500",
			ChannelTxnID: "4200000501", OriginalTxnID: "4200000500",
			HasChannel: true, ChannelAmount: 2000, Currency: "CNY",
			HasLocal: true, LocalAmount: 2000, LocalCurrency: "CNY",
			OccurredAt: at, AutoReverse: true,
		},
		{
			Category: reconcile.DuplicateRefund, Kind: reconcile.KindRefund, OrderNo: "O-600", RefundNo: "R-600",
			ChannelTxnID: "5000000601", OriginalTxnID: "5000000600",
			HasChannel: true, ChannelAmount: 9980, Currency: "CNY",
			OccurredAt: at, Hint: "No local refund: a person must decide.",
		},
		{
			Category: reconcile.Unrecognized, Kind: reconcile.KindOther, OrderNo: "O-800",
			ChannelTxnID: "4200000800",
			HasChannel:   true, ChannelAmount: 300, Currency: "CNY",
			OccurredAt: at, RawKind: "REVOKED",
		},
		{
			Category: reconcile.Pending, Kind: reconcile.KindPayment, OrderNo: "O-900",
			LocalTxnID: "4200000900",
			HasLocal:   true, LocalAmount: 3000, LocalCurrency: "CNY",
			OccurredAt: time.Date(2026, 11, 28, 15, 58, 30, 0, time.UTC), // 23:58:30 in Shanghai
			Hint:       "Paid 90 seconds before the cut-off: expected in the 2026-11-29 file.",
		},
		{
			Category: reconcile.DuplicateVanished, Kind: reconcile.KindPayment, OrderNo: "O-950",
			ChannelTxnID: "ch_951", OriginalTxnID: "ch_950",
			HasChannel: true, ChannelAmount: 1500, Currency: "USD",
			HasLocal: true, LocalAmount: 1500, LocalCurrency: "USD",
			OccurredAt: at, Hint: "Reversed by run run-0; the corrected file no longer has it.",
		},
	}
	reconcile.SortFindings(findings)
	counts := map[reconcile.Category]int{reconcile.Matched: 10}
	for i, f := range findings {
		counts[f.Category]++
		findings[i].Ref = fmt.Sprintf("run-1-%04d", i+1)
	}
	return &reconcile.Result{
		Run: reconcile.Run{
			ID: "run-1", Channel: "wechatpay", Day: day, Format: "wechatpay",
			File: "/data/in/wechatpay/2026-11-28.csv", FileSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			Status:    reconcile.RunSucceeded,
			StartedAt: time.Date(2026, 11, 29, 3, 0, 0, 0, shanghai), FinishedAt: time.Date(2026, 11, 29, 3, 1, 30, 0, shanghai),
		},
		ChannelRows: 17,
		LocalRows:   15,
		Counts:      counts,
		Findings:    findings,
		Journals: []reconcile.Journal{{
			IdempotencyKey: "wechatpay:4200000501", Kind: reconcile.JournalKindReversal, Channel: "wechatpay",
			OrderNo: "O-500", ChannelTxnID: "4200000501", Row: "4200000501", Currency: "CNY", Amount: 2000,
			Lines: reconcile.Postings{
				{Account: "channel:wechatpay", Amount: -2000, Currency: "CNY"},
				{Account: "receivable:wechatpay", Amount: 2000, Currency: "CNY"},
			},
		}},
	}
}
