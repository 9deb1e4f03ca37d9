//go:build linux

package reports

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"reconcile"
)

// BenchmarkListSheets writes the workbook of a ten-million-row night
// (listsheet.go has the figures):
//
//   - night: the 10M night of make bench, 75,000 review lines (50,000 of
//     them in the workbook, review_max_lines' default, all in the CSV
//     export) and 15,000 reversed duplicates;
//   - full: every list sheet as full as a sheet can be, 1,048,575 lines
//     each (review_max_lines at its most), the largest workbook any night
//     can make.
//
// Each case is meant for a process of its own, so its peak RSS is its own:
//
//	go test -run '^$' -bench 'ListSheets/night$' -benchtime 1x ./reports
func BenchmarkListSheets(b *testing.B) {
	for _, c := range []struct {
		name                       string
		review, max, pending, auto int
	}{
		{"night", 75_000, 50_000, 0, 15_000},
		{"full", maxSheetLines, maxSheetLines, maxSheetLines, maxSheetLines},
	} {
		b.Run(c.name, func(b *testing.B) {
			res := nightResult(c.review, c.pending, c.auto)
			benchWorkbook(b, res, WorkbookOptions{MaxLines: c.max})
		})
	}
}

// benchWorkbook writes the workbook of res and reports what it took:
// wall and CPU seconds, bytes allocated, the heap's rise above where it
// stood (as the run's reports_heap_bytes), the process's peak RSS while
// writing and its RSS before, and the file's size.
func benchWorkbook(b *testing.B, res *reconcile.Result, opts WorkbookOptions) {
	path := filepath.Join(b.TempDir(), WorkbookName(res.Run.Channel, res.Run.Day))
	var took, cpu time.Duration
	var alloc, heap, rss, before, size uint64
	for b.Loop() {
		runtime.GC()
		before = procStatus(b, "VmRSS")
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Fatalf("reset the peak RSS: %v", err)
		}
		a0, c0, t0 := allocated(), cpuTime(), time.Now()
		stop := watchHeap()
		if _, err := WriteWorkbookWith(path, res, opts); err != nil {
			b.Fatal(err)
		}
		heap = max(heap, stop())
		took, cpu, alloc = time.Since(t0), cpuTime()-c0, allocated()-a0
		rss = max(rss, procStatus(b, "VmHWM"))
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		size = uint64(fi.Size())
	}
	const mib = 1 << 20
	b.ReportMetric(took.Seconds(), "wall-s")
	b.ReportMetric(cpu.Seconds(), "cpu-s")
	b.ReportMetric(float64(alloc)/mib, "alloc-MiB")
	b.ReportMetric(float64(heap)/mib, "heap-rise-MiB")
	b.ReportMetric(float64(rss)/mib, "peak-rss-MiB")
	b.ReportMetric(float64(before)/mib, "rss-before-MiB")
	b.ReportMetric(float64(size)/mib, "file-MiB")
}

func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procStatus reads a field of /proc/self/status in bytes.
func procStatus(b *testing.B, field string) uint64 {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(st)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// nightResult is a result with review lines, pending findings and
// reversed duplicates as the matcher writes them at ten million rows:
// WeChat Pay's ids, every value distinct, the matcher's hints.
func nightResult(review, pending, auto int) *reconcile.Result {
	day, err := reconcile.NewBusinessDay("2026-11-28", time.FixedZone("CST", 8*3600))
	if err != nil {
		panic(err)
	}
	res := &reconcile.Result{
		Run: reconcile.Run{ID: "5f0c2a9e41b7d3c86e1a0b94", Channel: "wechatpay", Day: day,
			Status: reconcile.RunSucceeded, File: "/var/lib/reconcile/inbox/wechatpay/20261128_ALL.csv"},
		ChannelRows: 10_000_000, LocalRows: 10_000_000,
		Counts: map[reconcile.Category]int{},
	}
	at := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	money := func(minor int64) string { return reconcile.FormatAmount(minor, "CNY") + " CNY" }
	order := func(i int) string { return fmt.Sprintf("ORD20261128%08d", i) }
	txn := func(i int) string { return fmt.Sprintf("42000020261128%014d", i) }
	res.Findings = make([]reconcile.Finding, 0, review+pending+auto)
	for i := range review {
		amount := 1000 + int64(i%99_000)
		res.Findings = append(res.Findings, reconcile.Finding{
			Category: reconcile.AmountMismatch, Kind: reconcile.KindPayment,
			OrderNo: order(i), ChannelTxnID: txn(i), LocalTxnID: txn(i),
			HasChannel: true, ChannelAmount: amount + 137, Currency: "CNY",
			HasLocal: true, LocalAmount: amount, LocalCurrency: "CNY",
			OccurredAt: at.Add(time.Duration(i) * time.Millisecond),
			Hint: fmt.Sprintf("The channel settled order %s for %s; we recorded %s.",
				order(i), money(amount+137), money(amount)),
		})
	}
	for i := range pending {
		n := review + i
		res.Findings = append(res.Findings, reconcile.Finding{
			Category: reconcile.Pending, Kind: reconcile.KindPayment,
			OrderNo: order(n), LocalTxnID: txn(n),
			HasLocal: true, LocalAmount: 1000 + int64(i%99_000), LocalCurrency: "CNY",
			OccurredAt: at.Add(time.Duration(i) * time.Millisecond),
			Hint: fmt.Sprintf("Settled by us %s before the day's cut-off and not in this file: expected in the next day's file (grace window %s).",
				time.Duration(1+i%1800)*time.Second, 30*time.Minute),
		})
	}
	for i := range auto {
		n := review + pending + i
		dup := txn(50_000_000_000_000 + n)
		res.Findings = append(res.Findings, reconcile.Finding{
			Category: reconcile.DuplicatePayment, Kind: reconcile.KindPayment,
			OrderNo: order(n), ChannelTxnID: dup, OriginalTxnID: txn(n), LocalTxnID: txn(n),
			HasChannel: true, ChannelAmount: 1000 + int64(i%99_000), Currency: "CNY",
			HasLocal: true, LocalAmount: 1000 + int64(i%99_000), LocalCurrency: "CNY",
			OccurredAt:  at.Add(time.Duration(i) * time.Millisecond),
			AutoReverse: true,
			Hint: fmt.Sprintf("The channel settled order %s 2 times with different channel ids for the same amount; this copy (%s) was reversed automatically.",
				order(n), dup),
		})
		res.Journals = append(res.Journals, reconcile.Journal{
			IdempotencyKey: "wechatpay:" + dup, Kind: "reversal", Channel: "wechatpay",
			OrderNo: order(n), ChannelTxnID: dup, Row: dup, Currency: "CNY",
		})
	}
	for _, f := range res.Findings {
		res.Counts[f.Category]++
	}
	res.NumberFindings()
	return res
}
