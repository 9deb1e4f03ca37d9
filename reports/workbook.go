package reports

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"reconcile/atomicfile"

	"github.com/xuri/excelize/v2"

	"reconcile"
)

// The review workbook: which sheets it has, what each of them lists and
// where the review lines go when there are many. How a value is put in a
// cell is cells.go's business.

// Sheet names, in the order they appear in the workbook.
const (
	SheetSummary      = "Summary"
	SheetReview       = "Review"
	SheetChargebacks  = "Chargebacks"
	SheetPayouts      = "Payouts"
	SheetPending      = "Pending"
	SheetAutoReversed = "Auto-reversed"
	SheetTrend        = "Trend"
)

// decisionWords are the choices of the Review sheet's Decision dropdown.
func decisionWords() []string {
	words := make([]string, len(reconcile.Decisions))
	for i, d := range reconcile.Decisions {
		words[i] = d.Word
	}
	return words
}

// Review sheet columns that ReadDecisions finds by name, so a person may
// move or add columns without breaking the read-back.
const (
	colFinding  = "Finding"
	colDecision = "Decision"
	colReviewer = "Reviewer"
	colNote     = "Note"
	colVersion  = "Version"
	colRelated  = "Related"
)

var reviewHeader = []string{
	colFinding, "Category", "Order No", "Refund No", "Channel Txn ID", "Original Txn ID", "Local Txn ID",
	"Local Amount", "Channel Amount", "Difference", "Currency", "Time", "Hint",
	colDecision, colReviewer, colNote, colVersion,
	// Related came after the columns people had learned; they keep their
	// letters.
	colRelated,
}

var reviewWidths = []float64{32, 18, 24, 24, 32, 32, 32, 15, 15, 15, 11, 20, 70, 14, 18, 40, 9, 60}

var pendingHeader = []string{
	"Finding", "Order No", "Refund No", "Local Txn ID", "Local Amount", "Currency", "Settled At", "Hint",
}

var pendingWidths = []float64{32, 24, 24, 32, 15, 10, 20, 70}

var autoHeader = []string{
	"Category", "Order No", "Refund No", "Channel Txn ID", "Original Txn ID",
	"Amount", "Currency", "Time", "Journal Key",
}

var autoWidths = []float64{18, 24, 24, 32, 32, 15, 10, 20, 48}

var chargebackHeader = []string{
	"Finding", "Order No", "Customer", "Amount", "Fee", "Currency", "Reason", "Opened On", "Status", "Dispute ID",
	"Channel Txn ID", "Refunds of the Order",
}

var chargebackWidths = []float64{32, 24, 14, 15, 12, 10, 22, 20, 9, 32, 32, 70}

// payoutHeader is the Payouts sheet's header: every payout a bank
// statement's night looked for, and where it stands.
var payoutHeader = []string{"Channel", "Payout", "Amount", "Currency", "Expected On", "Arrived On", "Arrived Amount",
	"Status", "Account", "Bank Reference", "Payout Reference"}

var payoutWidths = []float64{14, 32, 15, 10, 12, 12, 15, 10, 26, 32, 24}

// categoryDescriptions say in plain words what each category means, for
// the reader of the Summary sheet who does not know the job's vocabulary.
var categoryDescriptions = map[reconcile.Category]string{
	reconcile.Matched:                   "The channel and our records agree.",
	reconcile.AmountMismatch:            "The channel moved a different amount or currency than we recorded.",
	reconcile.StatusMismatch:            "Same amount, but the channel and our records disagree on whether it went through: often a lost callback, or a crash between calling the channel and recording the result.",
	reconcile.MissingLocal:              "The channel moved money we have no record of.",
	reconcile.MissingChannel:            "We recorded a payment or refund that the channel's file does not have.",
	reconcile.DuplicatePayment:          "The channel charged the same order number more than once.",
	reconcile.DuplicateRefund:           "The channel refunded the same refund number more than once.",
	reconcile.Unrecognized:              "A row of a kind the job does not know; read it in the settlement file.",
	reconcile.Pending:                   "Settled by us just before the day's cut-off and not in this file: expected in the next day's file; becomes missing_channel if it is not there.",
	reconcile.DuplicateVanished:         "A duplicate an earlier run of this date reversed is not in the corrected file: its journal stands until a person decides.",
	reconcile.OverRefund:                "An order's refunds, by either side's account, add up to more than was paid: money refunded twice, whatever the refund numbers.",
	reconcile.SuspectedDuplicateRefund:  "A refund of an order under a new refund number, for the same amount as another settled shortly before: the same refund again?",
	reconcile.SuspectedDuplicatePayment: "A customer's paid order for the same amount as another of theirs created minutes before: a second click that got its own order number?",
	reconcile.FeeMismatch:               "The channel took a fee that differs from its contract by more than the tolerance.",
	reconcile.OrderMismatch:             "The channel booked a payment or refund of ours on another order than the one our records name: money that may have gone to another customer.",
	reconcile.RefundCurrencyMismatch:    "A refund in another currency than its order's: it cannot count against what was paid, and one side's records are wrong.",
	reconcile.Chargeback:                "The customer's bank took a payment back (a dispute): answer it with the channel or accept it. It stays open until won or lost; see the Chargebacks sheet.",
	reconcile.DisputeMismatch:           "A dispute's reversal or second chargeback that fits no chargeback the job knows, or gives back more than was charged back.",
	reconcile.RefundReversed:            "A refund the customer's bank could not credit came back to us: the customer did not get that money.",
	reconcile.PayoutMissing:             "A channel's payout has not reached the bank account by its expected date and the days allowed after it.",
	reconcile.PayoutAmountMismatch:      "The bank credited a payout, found by its reference, with another amount than the channel paid out.",
	reconcile.UnexpectedCredit:          "Money from a channel that no payout explains, or that more than one could: find what it pays.",
	reconcile.PayoutReturned:            "A payout's money was debited back from the account after it arrived.",
}

// WorkbookName is the file name of the review workbook of a channel and day.
func WorkbookName(channel string, day reconcile.BusinessDay) string {
	return "review-" + channel + "-" + day.String() + ".xlsx"
}

// Excel holds 1,048,576 rows a sheet; the first is the header.
const maxSheetLines = reconcile.MaxSheetLines

// WorkbookOptions bound the size of the review workbook.
type WorkbookOptions struct {
	// MaxLines is how many review lines the workbook holds, over all its
	// Review sheets; 0 means reconcile.DefaultReviewLines. A run with more lines gets a CSV
	// export of all of them beside the workbook.
	MaxLines int
	// SheetLines is how many lines one list sheet holds before they
	// continue on "Review 2", "Review 3", … (likewise "Pending 2",
	// "Auto-reversed 2"); 0 means 1,048,575, all that fits under the
	// header in one Excel sheet.
	SheetLines int
	// Trend is what the channel's current runs found on the business
	// dates before the run's, oldest first (ledger's DB.Trend): the Trend
	// sheet shows the last TrendDays-1 of them and the run's own day, from
	// the result. Nil when they were not read; the sheet then says so.
	Trend []reconcile.TrendDay
}

// WorkbookInfo says what a written workbook holds.
type WorkbookInfo struct {
	ReviewLines int      // lines of the run that need review
	InWorkbook  int      // how many of them the workbook holds
	Sheets      []string // the workbook's sheets, in order
	// CSV is the file name of the export of all review lines, written
	// beside the workbook; empty when the workbook holds them all.
	CSV string
}

// ReviewCSVName is the file name of the export of all review lines of a
// channel and day, written when they do not all fit in the workbook.
func ReviewCSVName(channel string, day reconcile.BusinessDay) string {
	return "review-" + channel + "-" + day.String() + ".csv"
}

// WriteWorkbookWith writes the review workbook of res to path, atomically.
// When the run has more review lines than opts.MaxLines, the workbook holds
// the first MaxLines in report order and says so on its Summary sheet, and
// all the lines go to a CSV file named by ReviewCSVName in path's
// directory, written before the workbook so the file the workbook points
// at is there when the workbook is. When they all fit, a CSV of that name
// left by an earlier run of the same day is removed: it would contradict
// the workbook beside it.
//
// The list sheets' lines are written straight into the file
// (listsheet.go), so a workbook's memory is its small sheets and a few
// buffers; MaxLines bounds its size, and the CSV export is written line
// by line.
func WriteWorkbookWith(path string, res *reconcile.Result, opts WorkbookOptions) (WorkbookInfo, error) {
	lay, err := newReviewLayout(res, opts)
	if err != nil {
		return WorkbookInfo{}, fmt.Errorf("write workbook %s: %w", path, err)
	}
	info := WorkbookInfo{ReviewLines: lay.lines, InWorkbook: lay.inWorkbook, CSV: lay.csv}
	csvPath := filepath.Join(filepath.Dir(path), ReviewCSVName(res.Run.Channel, res.Run.Day))
	if lay.csv != "" {
		if err := writeReviewCSV(csvPath, res, dayLocation(res.Run.Day)); err != nil {
			return WorkbookInfo{}, err
		}
	}
	f := excelize.NewFile()
	defer f.Close()
	loc := dayLocation(res.Run.Day)
	lists := listSheets(res, lay, loc)
	st, err := buildWorkbook(f, res, lay, lists, opts.Trend)
	if err != nil {
		return WorkbookInfo{}, fmt.Errorf("build workbook %s: %w", path, err)
	}
	info.Sheets = f.GetSheetList()
	err = atomicfile.Write(path, 0o644, func(w *os.File) error {
		bw := bufio.NewWriterSize(w, 256<<10)
		if err := writeWithLines(bw, f, st, res, lists); err != nil {
			return fmt.Errorf("write workbook %s: %w", path, err)
		}
		return bw.Flush()
	})
	if err != nil {
		return WorkbookInfo{}, err
	}
	if lay.csv == "" {
		if err := os.Remove(csvPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return WorkbookInfo{}, fmt.Errorf("remove stale %s: %w", csvPath, err)
		}
	}
	return info, nil
}

// reviewLayout is where the review lines of a run go.
type reviewLayout struct {
	lines      int      // lines that need review
	inWorkbook int      // the first of them that the workbook holds
	sheetLines int      // lines per list sheet
	sheets     []string // the Review sheets, at least one
	csv        string   // file name of the full export, when needed
}

func newReviewLayout(res *reconcile.Result, opts WorkbookOptions) (reviewLayout, error) {
	maxLines, sheetLines := opts.MaxLines, opts.SheetLines
	if maxLines < 0 {
		return reviewLayout{}, fmt.Errorf("max lines %d: want 0 for the default or more", maxLines)
	}
	if sheetLines < 0 || sheetLines > maxSheetLines {
		return reviewLayout{}, fmt.Errorf("sheet lines %d: want 0 for the default or up to %d", sheetLines, maxSheetLines)
	}
	if maxLines == 0 {
		maxLines = reconcile.DefaultReviewLines
	}
	if sheetLines == 0 {
		sheetLines = maxSheetLines
	}
	lay := reviewLayout{lines: res.NeedsReview(), sheetLines: sheetLines}
	lay.inWorkbook = min(lay.lines, maxLines)
	if lay.inWorkbook < lay.lines {
		lay.csv = ReviewCSVName(res.Run.Channel, res.Run.Day)
	}
	n := max(1, (lay.inWorkbook+sheetLines-1)/sheetLines)
	for i := range n {
		lay.sheets = append(lay.sheets, reviewSheetName(i+1))
	}
	return lay, nil
}

// reviewSheetName is the name of the n-th Review sheet, counting from 1.
func reviewSheetName(n int) string {
	if n == 1 {
		return SheetReview
	}
	return SheetReview + " " + strconv.Itoa(n)
}

// reviewSheetNumber is the inverse of reviewSheetName: 0 for a sheet that
// is not a Review sheet.
func reviewSheetNumber(name string) int {
	if name == SheetReview {
		return 1
	}
	rest, ok := strings.CutPrefix(name, SheetReview+" ")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 2 || reviewSheetName(n) != name {
		return 0
	}
	return n
}

// note says in plain words where the review lines are; it goes on the
// Summary sheet, the first thing a person opens.
func (lay reviewLayout) note() string {
	var b strings.Builder
	if lay.csv != "" {
		fmt.Fprintf(&b, "This workbook holds the first %d of %d lines that need review; all %d are in %s.",
			lay.inWorkbook, lay.lines, lay.lines, lay.csv)
	} else {
		switch lay.lines {
		case 0:
			b.WriteString("No line needs review.")
		case 1:
			b.WriteString("The one line that needs review is in this workbook.")
		default:
			fmt.Fprintf(&b, "All %d lines that need review are in this workbook.", lay.lines)
		}
	}
	if len(lay.sheets) > 1 {
		fmt.Fprintf(&b, " The workbook's lines are on the sheets %s.", strings.Join(lay.sheets, ", "))
	}
	return b.String()
}

// buildWorkbook lays out every sheet of the workbook and writes all but
// the list sheets' lines, which writeWithLines puts in as the file is
// written (listsheet.go).
func buildWorkbook(f *excelize.File, res *reconcile.Result, lay reviewLayout, lists []listSheet, trend []reconcile.TrendDay) (*styles, error) {
	if err := f.SetSheetName("Sheet1", SheetSummary); err != nil {
		return nil, err
	}
	for _, ls := range lists {
		if _, err := f.NewSheet(ls.name); err != nil {
			return nil, err
		}
	}
	if _, err := f.NewSheet(SheetTrend); err != nil {
		return nil, err
	}
	st, err := newStyles(f)
	if err != nil {
		return nil, err
	}
	loc := dayLocation(res.Run.Day)
	if err := writeSummarySheet(&sheet{f: f, name: SheetSummary, st: st}, res, lay, loc); err != nil {
		return nil, err
	}
	for i := range lists {
		if err := lists[i].layOut(&sheet{f: f, name: lists[i].name, st: st}, res); err != nil {
			return nil, err
		}
	}
	return st, writeTrendSheet(&sheet{f: f, name: SheetTrend, st: st}, res, trend)
}

// writeSummarySheet writes what a person opens first: the run's facts,
// the findings per category and currency, and the money at risk.
func writeSummarySheet(s *sheet, res *reconcile.Result, lay reviewLayout, loc *time.Location) error {
	row := writeRunFacts(s, res, lay, loc)
	totals := categoryTotals(res.Findings)
	row = writeCategoryTable(s, res, totals, row+1)
	writeMoneyByCategory(s, res, totals, row+1)
	// Currency and Count are wide enough for the amounts of the table of
	// money at risk under them.
	s.widths([]float64{24, 16, 16, 16, 16, 16, 90})
	return s.err
}

// writeRunFacts writes the facts of the run, one label and value a row,
// from the top of the sheet; it returns the first row after them.
func writeRunFacts(s *sheet, res *reconcile.Result, lay reviewLayout, loc *time.Location) int {
	run := res.Run
	row := 1
	s.text(1, row, "Reconciliation run")
	s.style(1, row, 1, row, s.st.bold)
	row++
	fact := func(label, value string) {
		s.text(1, row, label)
		s.text(2, row, value)
		row++
	}
	count := func(label string, n int) {
		s.text(1, row, label)
		s.int(2, row, n)
		row++
	}
	fact("Run ID", run.ID)
	fact("Channel", run.Channel)
	fact("Business date", run.Day.String())
	fact("Status", string(run.Status))
	fact("Dry run", yesNo(run.DryRun))
	fact("File", baseName(run.File))
	fact("File SHA-256", run.FileSHA256)
	fact("Started", zoned(run.StartedAt, loc))
	fact("Finished", zoned(run.FinishedAt, loc))
	count("Channel rows", res.ChannelRows)
	count("Local rows", res.LocalRows)
	count("Auto reversed", res.AutoReversed())
	count("Needs review", res.NeedsReview())
	fact("Review lines", lay.note())
	count("Journals", len(res.Journals))
	risk := res.AtRisk()
	for _, cur := range sortedCurrencies(risk) {
		s.text(1, row, "Money at risk ("+cur+")")
		s.money(2, row, risk[cur], cur)
		row++
	}
	for _, t := range res.Fees {
		fact("Fees charged ("+t.Currency+")", reconcile.FormatFee(t.Charged, t.Currency))
		if t.Checked > 0 {
			fact("Fees checked ("+t.Currency+")", fmt.Sprintf("%d of %d rows, against the contract", t.Checked, t.Rows))
			fact("Fees expected ("+t.Currency+")", reconcile.FormatFee(t.Expected, t.Currency))
			fact("Fees difference ("+t.Currency+")", reconcile.FormatFee(t.Difference(), t.Currency))
		}
	}
	if run.Error != "" {
		fact("Error", RedactSecrets(run.Error))
	}
	return row
}

// writeCategoryTable writes, from row on, the table of every category,
// one line per currency it has findings in; it returns the first row
// after the table.
func writeCategoryTable(s *sheet, res *reconcile.Result, totals map[reconcile.Category]map[string]*categoryTotal, row int) int {
	s.header(row, []string{"Category", "Currency", "Count", "Channel Amount", "Local Amount", "Money At Risk", "Description"})
	row++
	for _, c := range res.Categories() {
		lines := totals[c]
		if len(lines) == 0 {
			// Matched keys are counted but not kept as findings, and a
			// category with nothing in it still belongs in the table.
			s.text(1, row, string(c))
			s.int(3, row, res.Counts[c])
			s.text(7, row, categoryDescriptions[c])
			row++
			continue
		}
		for i, cur := range sortedCurrencies(lines) {
			t := lines[cur]
			s.text(1, row, string(c))
			s.text(2, row, cur)
			s.int(3, row, t.count)
			if t.hasChannel {
				s.money(4, row, t.channel, cur)
			}
			if t.hasLocal {
				s.money(5, row, t.local, cur)
			}
			s.money(6, row, t.risk, cur)
			if i == 0 {
				s.text(7, row, categoryDescriptions[c])
			}
			row++
		}
	}
	return row
}

// categoryTotal is one line of the Summary table: one category in one
// currency.
type categoryTotal struct {
	count                int
	channel, local       int64
	risk                 int64
	hasChannel, hasLocal bool
}

// categoryTotals adds up the findings per category and currency. Each side
// is summed in its own currency, so an amount mismatch across currencies
// never adds yuan to dollars; the count and the risk go to the finding's
// currency as Result.AtRisk does, and every sum holds at the ends of
// int64 as that one does.
func categoryTotals(fs []reconcile.Finding) map[reconcile.Category]map[string]*categoryTotal {
	out := map[reconcile.Category]map[string]*categoryTotal{}
	line := func(c reconcile.Category, cur string) *categoryTotal {
		m := out[c]
		if m == nil {
			m = map[string]*categoryTotal{}
			out[c] = m
		}
		t := m[cur]
		if t == nil {
			t = &categoryTotal{}
			m[cur] = t
		}
		return t
	}
	for _, f := range fs {
		line(f.Category, findingCurrency(f)).count++
		if f.HasChannel {
			t := line(f.Category, f.Currency)
			t.channel = reconcile.AddSaturating(t.channel, f.ChannelAmount)
			t.hasChannel = true
		}
		if f.HasLocal {
			t := line(f.Category, f.LocalCurrency)
			t.local = reconcile.AddSaturating(t.local, f.LocalAmount)
			t.hasLocal = true
		}
		if f.NeedsReview() {
			t := line(f.Category, findingCurrency(f))
			t.risk = reconcile.AddSaturating(t.risk, f.AtRisk())
		}
	}
	return out
}

// reviewLine fills cells, one per reviewHeader column, with the review
// line of f. The workbook and the CSV export both write lines from here,
// so their columns cannot drift apart.
func reviewLine(f reconcile.Finding, loc *time.Location, cells lineCells) {
	clear(cells)
	cells.texts(1, f.Ref, string(f.Category), f.OrderNo, f.RefundNo, f.ChannelTxnID, f.OriginalTxnID, f.LocalTxnID)
	if f.HasLocal {
		cells.money(8, f.LocalAmount, f.LocalCurrency)
	}
	if f.HasChannel {
		cells.money(9, f.ChannelAmount, f.Currency)
	}
	if f.HasLocal && f.HasChannel && f.Currency == f.LocalCurrency {
		cells.money(10, f.ChannelAmount-f.LocalAmount, f.Currency)
	}
	cells.texts(11, reviewCurrency(f), findingTime(f, loc), reviewHint(f))
	// The other rows of the case: the earlier refund or order a suspected
	// duplicate repeats, every refund of an over-refunded order.
	cells.text(reviewColumn(colRelated), strings.Join(f.Related, "; "))
	// Decision, Reviewer and Note are left for people. The version
	// travels with the decision, so one made on a finding that has
	// moved on since (decided elsewhere, superseded) can be refused
	// instead of applied blind.
	cells.int(reviewColumn(colVersion), findingVersion)
}

// findingVersion is the version a finding has when a run writes it.
const findingVersion = 0

// reviewColumn is the 1-based column of a Review sheet header.
func reviewColumn(name string) int { return slices.Index(reviewHeader, name) + 1 }

// wholeValue says where the values of a finding's line can be read whole
// when a cell of it is cut: its row of the findings table, unless the run
// was a dry run, which stores none, and the CSV export of all review lines
// when there is one (csv, its file name).
func wholeValue(res *reconcile.Result, ref, csv string) string {
	var at []string
	if !res.Run.DryRun && ref != "" {
		at = append(at, "the findings table of the database, finding "+ref)
	}
	if csv != "" {
		at = append(at, csv)
	}
	return strings.Join(at, ", and in ")
}

// reviewCurrency is the Currency column: one code, or channel / local when
// an amount mismatch is a currency mismatch.
func reviewCurrency(f reconcile.Finding) string {
	if f.HasChannel && f.HasLocal && f.Currency != f.LocalCurrency {
		return f.Currency + " / " + f.LocalCurrency
	}
	return findingCurrency(f)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
