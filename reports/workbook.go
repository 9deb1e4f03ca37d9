package reports

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"

	"reconcile"
)

// Sheet names, in the order they appear in the workbook.
const (
	SheetSummary      = "Summary"
	SheetReview       = "Review"
	SheetPending      = "Pending"
	SheetAutoReversed = "Auto-reversed"
	SheetTrend        = "Trend"
)

// decisions are the choices of the Review sheet's Decision dropdown.
var decisions = []string{"approve", "reject", "investigate"}

// Review sheet columns that ReadDecisions finds by name, so a person may
// move or add columns without breaking the read-back.
const (
	colFinding  = "Finding"
	colDecision = "Decision"
	colReviewer = "Reviewer"
	colNote     = "Note"
	colVersion  = "Version"
)

var reviewHeader = []string{
	colFinding, "Category", "Order No", "Refund No", "Channel Txn ID", "Original Txn ID", "Local Txn ID",
	"Local Amount", "Channel Amount", "Difference", "Currency", "Time", "Hint",
	colDecision, colReviewer, colNote, colVersion,
}

var reviewWidths = []float64{32, 18, 24, 24, 32, 32, 32, 15, 15, 15, 11, 20, 70, 14, 18, 40, 9}

var pendingHeader = []string{
	"Finding", "Order No", "Refund No", "Local Txn ID", "Local Amount", "Currency", "Settled At", "Hint",
}

var pendingWidths = []float64{32, 24, 24, 32, 15, 10, 20, 70}

var autoHeader = []string{
	"Category", "Order No", "Refund No", "Channel Txn ID", "Original Txn ID",
	"Amount", "Currency", "Time", "Journal Key",
}

var autoWidths = []float64{18, 24, 24, 32, 32, 15, 10, 20, 48}

// categoryDescriptions say in plain words what each category means, for
// the reader of the Summary sheet who does not know the job's vocabulary.
var categoryDescriptions = map[reconcile.Category]string{
	reconcile.Matched:           "The channel and our records agree.",
	reconcile.AmountMismatch:    "The channel moved a different amount or currency than we recorded.",
	reconcile.StatusMismatch:    "Same amount, but the channel and our records disagree on whether it went through: often a lost callback, or a crash between calling the channel and recording the result.",
	reconcile.MissingLocal:      "The channel moved money we have no record of.",
	reconcile.MissingChannel:    "We recorded a payment or refund that the channel's file does not have.",
	reconcile.DuplicatePayment:  "The channel charged the same order number more than once.",
	reconcile.DuplicateRefund:   "The channel refunded the same refund number more than once.",
	reconcile.Unrecognized:      "A row of a kind the job does not know; read it in the settlement file.",
	reconcile.Pending:           "Settled by us just before the day's cut-off and not in this file: expected in the next day's file; becomes missing_channel if it is not there.",
	reconcile.DuplicateVanished: "A duplicate an earlier run of this date reversed is not in the corrected file: its journal stands until a person decides.",
}

// WorkbookName is the file name of the review workbook of a channel and day.
func WorkbookName(channel string, day reconcile.BusinessDay) string {
	return "review-" + channel + "-" + day.String() + ".xlsx"
}

// Excel holds 1,048,576 rows a sheet; the first is the header.
const maxSheetLines = 1_048_575

// defaultMaxLines is how many review lines a workbook holds unless told
// otherwise: far more than a person works through in a morning, and few
// enough for excelize, which holds about 4 KB a line while it builds the
// workbook (BenchmarkWorkbookLarge).
const defaultMaxLines = 100_000

// WorkbookOptions bound the size of the review workbook.
type WorkbookOptions struct {
	// MaxLines is how many review lines the workbook holds, over all its
	// Review sheets; 0 means 100,000. A run with more lines gets a CSV
	// export of all of them beside the workbook.
	MaxLines int
	// SheetLines is how many review lines one Review sheet holds before
	// they continue on "Review 2", "Review 3", …; 0 means 1,048,575, all
	// that fits under the header in one Excel sheet.
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

// WriteWorkbook writes the review workbook of res to path, atomically,
// with the default WorkbookOptions.
func WriteWorkbook(path string, res *reconcile.Result) error {
	_, err := WriteWorkbookWith(path, res, WorkbookOptions{})
	return err
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
// It uses excelize's in-memory API rather than its StreamWriter: the
// stream writer can only write a number through float64, and it drops
// autofilters and data validations added after Flush. MaxLines is what
// bounds its memory; the CSV export is written line by line.
func WriteWorkbookWith(path string, res *reconcile.Result, opts WorkbookOptions) (WorkbookInfo, error) {
	lay, err := newReviewLayout(res, opts)
	if err != nil {
		return WorkbookInfo{}, fmt.Errorf("write workbook %s: %w", path, err)
	}
	info := WorkbookInfo{ReviewLines: lay.lines, InWorkbook: lay.inWorkbook, CSV: lay.csv}
	csvPath := filepath.Join(filepath.Dir(path), ReviewCSVName(res.Run.Channel, res.Run.Day))
	if lay.csv != "" {
		if err := writeReviewCSV(csvPath, res, runLocation(res)); err != nil {
			return WorkbookInfo{}, err
		}
	}
	f := excelize.NewFile()
	defer f.Close()
	if err := buildWorkbook(f, res, lay, opts.Trend); err != nil {
		return WorkbookInfo{}, fmt.Errorf("build workbook %s: %w", path, err)
	}
	info.Sheets = f.GetSheetList()
	err = writeFileAtomic(path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
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
	sheetLines int      // lines per Review sheet
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
		maxLines = defaultMaxLines
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

func runLocation(res *reconcile.Result) *time.Location {
	if loc := res.Run.Day.Location; loc != nil {
		return loc
	}
	return time.UTC
}

func buildWorkbook(f *excelize.File, res *reconcile.Result, lay reviewLayout, trend []reconcile.TrendDay) error {
	if err := f.SetSheetName("Sheet1", SheetSummary); err != nil {
		return err
	}
	for _, name := range slices.Concat(lay.sheets, []string{SheetPending, SheetAutoReversed, SheetTrend}) {
		if _, err := f.NewSheet(name); err != nil {
			return err
		}
	}
	st, err := newStyles(f)
	if err != nil {
		return err
	}
	loc := runLocation(res)
	if err := writeSummarySheet(&sheet{f: f, name: SheetSummary, st: st}, res, lay, loc); err != nil {
		return err
	}
	if err := writeReviewSheets(f, st, res, lay, loc); err != nil {
		return err
	}
	if err := writePendingSheet(&sheet{f: f, name: SheetPending, st: st}, res, loc); err != nil {
		return err
	}
	if err := writeAutoSheet(&sheet{f: f, name: SheetAutoReversed, st: st}, res, loc); err != nil {
		return err
	}
	return writeTrendSheet(&sheet{f: f, name: SheetTrend, st: st}, res, trend)
}

func writeSummarySheet(s *sheet, res *reconcile.Result, lay reviewLayout, loc *time.Location) error {
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
	// Only the file's name: the workbook travels to Slack, where a
	// server's directory layout is of no use and no business.
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
	if run.Error != "" {
		fact("Error", RedactSecrets(run.Error))
	}

	row++
	header := []string{"Category", "Currency", "Count", "Channel Amount", "Local Amount", "Money At Risk", "Description"}
	for i, h := range header {
		s.text(i+1, row, h)
	}
	s.style(1, row, len(header), row, s.st.header)
	row++
	totals := categoryTotals(res.Findings)
	for _, c := range reconcile.Categories {
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
	writeMoneyByCategory(s, res, totals, row+1)
	// Currency and Count are wide enough for the amounts of the table of
	// money at risk under them.
	s.widths([]float64{24, 16, 16, 16, 16, 16, 90})
	return s.err
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
// currency as Result.AtRisk does.
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
			t.channel += f.ChannelAmount
			t.hasChannel = true
		}
		if f.HasLocal {
			t := line(f.Category, f.LocalCurrency)
			t.local += f.LocalAmount
			t.hasLocal = true
		}
		if f.NeedsReview() {
			line(f.Category, findingCurrency(f)).risk += f.AtRisk()
		}
	}
	return out
}

// writeReviewSheets writes the first lay.inWorkbook review lines over the
// Review sheets, lay.sheetLines to a sheet, each sheet a complete table of
// its own so a person can filter and decide on any of them alone.
func writeReviewSheets(f *excelize.File, st *styles, res *reconcile.Result, lay reviewLayout, loc *time.Location) error {
	s := &sheet{f: f, name: lay.sheets[0], st: st}
	s.header(reviewHeader)
	cells := make([]lineCell, len(reviewHeader))
	row, line := 1, 0
	for _, fd := range res.Findings {
		if s.err != nil || line == lay.inWorkbook {
			break
		}
		if !fd.NeedsReview() {
			continue
		}
		if row-1 == lay.sheetLines {
			if err := finishReviewSheet(s, row); err != nil {
				return err
			}
			s = &sheet{f: f, name: lay.sheets[line/lay.sheetLines], st: st}
			s.header(reviewHeader)
			row = 1
		}
		row++
		line++
		s.whole = wholeValue(res, fd.Ref, lay.csv)
		reviewLine(fd, loc, cells)
		for i, c := range cells {
			switch c.kind {
			case kindText:
				s.text(i+1, row, c.text)
			case kindMoney:
				s.money(i+1, row, c.minor, c.currency)
			case kindInt:
				s.int(i+1, row, c.n)
			}
		}
	}
	if s.err != nil {
		return s.err
	}
	return finishReviewSheet(s, row)
}

// finishReviewSheet adds the Decision dropdown over the data rows of a
// Review sheet, lastRow the last of them, and freezes and filters it.
func finishReviewSheet(s *sheet, lastRow int) error {
	// With no data rows the dropdown still covers the first, so the sheet
	// looks the same every night.
	last := max(lastRow, 2)
	decisionCol := s.colName(reviewColumn(colDecision))
	dv := excelize.NewDataValidation(true)
	dv.Sqref = fmt.Sprintf("%s2:%s%d", decisionCol, decisionCol, last)
	if err := dv.SetDropList(decisions); err != nil {
		return err
	}
	dv.SetError(excelize.DataValidationErrorStyleStop, "Decision", "Choose approve, reject or investigate.")
	if s.err == nil {
		s.err = s.f.AddDataValidation(s.name, dv)
	}
	s.finish(len(reviewHeader), lastRow, reviewWidths)
	return s.err
}

// cellKind is how a review line's cell is written: a workbook needs to
// know a number from text, a CSV file only how to spell it.
type cellKind int

const (
	kindBlank cellKind = iota
	kindText
	kindMoney
	kindInt
)

// lineCell is one cell of a review line.
type lineCell struct {
	kind     cellKind
	text     string
	minor    int64
	currency string
	n        int
}

// reviewLine fills cells, one per reviewHeader column, with the review
// line of f. The workbook and the CSV export both write lines from here,
// so their columns cannot drift apart.
func reviewLine(f reconcile.Finding, loc *time.Location, cells []lineCell) {
	clear(cells)
	text := func(col int, v string) {
		if v != "" {
			cells[col-1] = lineCell{kind: kindText, text: v}
		}
	}
	money := func(col int, minor int64, currency string) {
		cells[col-1] = lineCell{kind: kindMoney, minor: minor, currency: currency}
	}
	text(1, f.Ref)
	text(2, string(f.Category))
	text(3, f.OrderNo)
	text(4, f.RefundNo)
	text(5, f.ChannelTxnID)
	text(6, f.OriginalTxnID)
	text(7, f.LocalTxnID)
	if f.HasLocal {
		money(8, f.LocalAmount, f.LocalCurrency)
	}
	if f.HasChannel {
		money(9, f.ChannelAmount, f.Currency)
	}
	if f.HasLocal && f.HasChannel && f.Currency == f.LocalCurrency {
		money(10, f.ChannelAmount-f.LocalAmount, f.Currency)
	}
	text(11, reviewCurrency(f))
	text(12, localTime(f.OccurredAt, loc))
	text(13, reviewHint(f))
	// Decision, Reviewer and Note are left for people. The version
	// travels with the decision, so one made on a finding that has
	// moved on since (decided elsewhere, superseded) can be refused
	// instead of applied blind.
	cells[reviewColumn(colVersion)-1] = lineCell{kind: kindInt, n: findingVersion}
}

// findingVersion is the version a finding has when a run writes it.
const findingVersion = 0

// reviewColumn is the 1-based column of a Review sheet header.
func reviewColumn(name string) int { return slices.Index(reviewHeader, name) + 1 }

func writePendingSheet(s *sheet, res *reconcile.Result, loc *time.Location) error {
	s.header(pendingHeader)
	row := 1
	for _, f := range res.Findings {
		if f.Category != reconcile.Pending {
			continue
		}
		row++
		s.whole = wholeValue(res, f.Ref, "")
		s.text(1, row, f.Ref)
		s.text(2, row, f.OrderNo)
		s.text(3, row, f.RefundNo)
		s.text(4, row, f.LocalTxnID)
		if f.HasLocal {
			s.money(5, row, f.LocalAmount, f.LocalCurrency)
		}
		s.text(6, row, findingCurrency(f))
		s.text(7, row, localTime(f.OccurredAt, loc))
		s.text(8, row, f.Hint)
	}
	s.finish(len(pendingHeader), row, pendingWidths)
	return s.err
}

func writeAutoSheet(s *sheet, res *reconcile.Result, loc *time.Location) error {
	keys := make(map[string]string, len(res.Journals))
	for _, j := range res.Journals {
		keys[j.Row] = j.IdempotencyKey
	}
	s.header(autoHeader)
	row := 1
	for _, f := range res.Findings {
		if !f.AutoReverse {
			continue
		}
		row++
		s.whole = wholeValue(res, f.Ref, "")
		s.text(1, row, string(f.Category))
		s.text(2, row, f.OrderNo)
		s.text(3, row, f.RefundNo)
		s.text(4, row, f.ChannelTxnID)
		s.text(5, row, f.OriginalTxnID)
		if f.HasChannel {
			s.money(6, row, f.ChannelAmount, f.Currency)
		}
		s.text(7, row, f.Currency)
		s.text(8, row, localTime(f.OccurredAt, loc))
		s.text(9, row, keys[f.RowKey()])
	}
	s.finish(len(autoHeader), row, autoWidths)
	return s.err
}

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

// reviewHint adds the file's own word for an unrecognised row, the one
// thing a reviewer needs to find it again in the file.
func reviewHint(f reconcile.Finding) string {
	if f.Category == reconcile.Unrecognized && f.RawKind != "" && !strings.Contains(f.Hint, f.RawKind) {
		if f.Hint == "" {
			return "row kind: " + f.RawKind
		}
		return f.Hint + " (row kind: " + f.RawKind + ")"
	}
	return f.Hint
}

func findingCurrency(f reconcile.Finding) string {
	if f.Currency != "" {
		return f.Currency
	}
	return f.LocalCurrency
}

func localTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format(time.DateTime)
}

func zoned(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format("2006-01-02 15:04:05 -07:00")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func baseName(path string) string {
	if path == "" {
		return ""
	}
	return filepath.Base(path)
}

// styles are the cell styles of the workbook, made once per file.
type styles struct {
	f      *excelize.File
	header int
	bold   int
	money  map[int]int  // by currency digits
	quote  map[int]int  // a style to its copy with the quote prefix
	quoted map[int]bool // the copies
}

func newStyles(f *excelize.File) (*styles, error) {
	st := &styles{f: f, money: map[int]int{}, quote: map[int]int{}, quoted: map[int]bool{}}
	var err error
	st.header, err = f.NewStyle(&excelize.Style{
		Font:   &excelize.Font{Bold: true},
		Fill:   excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"D9D9D9"}},
		Border: []excelize.Border{{Type: "bottom", Color: "808080", Style: 1}},
	})
	if err != nil {
		return nil, err
	}
	st.bold, err = f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// moneyStyle is the number format of a currency: as many decimals as it
// has minor-unit digits (JPY none, KWD three).
func (st *styles) moneyStyle(currency string) (int, error) {
	digits, ok := reconcile.CurrencyDigits(currency)
	if !ok {
		digits = 2
	}
	if id, ok := st.money[digits]; ok {
		return id, nil
	}
	format := moneyFormat(currency)
	id, err := st.f.NewStyle(&excelize.Style{CustomNumFmt: &format})
	if err != nil {
		return 0, err
	}
	st.money[digits] = id
	return id, nil
}

// quotePrefixed returns style id with the quote prefix (quotePrefix on its
// xf in styles.xml): the cell shows its text as it is, and a person who
// edits it in a spreadsheet edits text, not a formula. excelize's Style has
// no such field, and NewStyle returns the first existing xf that looks the
// same whatever its quote prefix, so the prefix is set on a copy of the xf
// made here, never on one that other cells share. That NewStyle compares
// without the prefix does no harm: a copy comes after the xf it copies,
// which NewStyle finds first.
func (st *styles) quotePrefixed(id int) (int, error) {
	if st.quoted[id] {
		return id, nil
	}
	if q, ok := st.quote[id]; ok {
		return q, nil
	}
	xfs := st.f.Styles.CellXfs
	if xfs == nil || id < 0 || id >= len(xfs.Xf) {
		return 0, fmt.Errorf("quote prefix on style %d: no such cell format", id)
	}
	xf := xfs.Xf[id]
	xf.QuotePrefix = new(true)
	xfs.Xf = append(xfs.Xf, xf)
	xfs.Count = len(xfs.Xf)
	q := len(xfs.Xf) - 1
	st.quote[id], st.quoted[q] = q, true
	return q, nil
}

// moneyFormat is the number format of a currency's amounts: as many
// decimals as it has minor-unit digits.
func moneyFormat(currency string) string {
	digits, ok := reconcile.CurrencyDigits(currency)
	if !ok {
		digits = 2
	}
	format := "#,##0"
	if digits > 0 {
		format += "." + strings.Repeat("0", digits)
	}
	return format
}

// sheet writes cells of one worksheet and keeps the first error, so the
// layout code reads as a layout.
type sheet struct {
	f    *excelize.File
	name string
	st   *styles
	err  error
	// whole says where the values of the line being written can be read
	// whole, for the note of a cell cut to fit; the writer of a line sets
	// it, "" when there is no such place.
	whole string
}

func (s *sheet) cell(col, row int) string {
	name, err := excelize.CoordinatesToCellName(col, row)
	if err != nil && s.err == nil {
		s.err = err
	}
	return name
}

// text writes a string cell. Every text of the workbook goes through
// here, so every sheet keeps the same rules (cellString): the value is
// stored as it is, with its bidi controls shown, and cut with a note when
// it is more than a cell holds. A string cell is never a formula, whatever
// the value looks like; one that starts like a formula also gets the quote
// prefix, so it stays text when a person edits it.
func (s *sheet) text(col, row int, v string) {
	if s.err != nil || v == "" {
		return
	}
	c := s.cell(col, row)
	if s.err != nil {
		return
	}
	v = cellString(v, s.whole)
	store := s.f.SetCellStr
	if strings.Contains(v, "_x") {
		// excelize's table of shared strings finds a value again by its
		// text but files it under its own escaping of the text, so two
		// values that differ in their escapes can come back as one
		// ("_x005F_x0041_" as "_x0041_"). A value that holds an escape
		// goes inline instead, a cell of its own: SetCellDefault writes
		// text with a "_" in it as an inline string, as it is.
		store = s.f.SetCellDefault
	}
	if s.err = store(s.name, c, v); startsLikeFormula(v) {
		s.quote(c)
	}
}

// quote gives cell c the quote prefix, on the style it has.
func (s *sheet) quote(c string) {
	if s.err != nil {
		return
	}
	id, err := s.f.GetCellStyle(s.name, c)
	if err == nil {
		id, err = s.st.quotePrefixed(id)
	}
	if err == nil {
		err = s.f.SetCellStyle(s.name, c, c, id)
	}
	s.err = err
}

func (s *sheet) int(col, row int, n int) {
	if s.err != nil {
		return
	}
	c := s.cell(col, row)
	if s.err == nil {
		s.err = s.f.SetCellInt(s.name, c, int64(n))
	}
}

// money writes minor units as a number in major units. SetCellDefault
// stores the decimal text as it is in a numeric cell, so the amount never
// passes through a float64 on its way into the file.
func (s *sheet) money(col, row int, minor int64, currency string) {
	if s.err != nil {
		return
	}
	c := s.cell(col, row)
	if s.err != nil {
		return
	}
	if s.err = s.f.SetCellDefault(s.name, c, reconcile.FormatAmount(minor, currency)); s.err != nil {
		return
	}
	var id int
	if id, s.err = s.st.moneyStyle(currency); s.err != nil {
		return
	}
	s.err = s.f.SetCellStyle(s.name, c, c, id)
}

// style sets the style of a range of cells; a cell that text gave the
// quote prefix keeps it.
func (s *sheet) style(col1, row1, col2, row2, id int) {
	for row := row1; row <= row2; row++ {
		for col := col1; col <= col2; col++ {
			c := s.cell(col, row)
			if s.err != nil {
				return
			}
			cur, err := s.f.GetCellStyle(s.name, c)
			if err == nil {
				err = s.f.SetCellStyle(s.name, c, c, id)
			}
			if s.err = err; s.st.quoted[cur] {
				s.quote(c)
			}
		}
	}
}

func (s *sheet) header(names []string) {
	for i, h := range names {
		s.text(i+1, 1, h)
	}
	s.style(1, 1, len(names), 1, s.st.header)
}

func (s *sheet) colName(col int) string {
	name, err := excelize.ColumnNumberToName(col)
	if err != nil && s.err == nil {
		s.err = err
	}
	return name
}

func (s *sheet) widths(ws []float64) {
	for i, w := range ws {
		col := s.colName(i + 1)
		if s.err != nil {
			return
		}
		s.err = s.f.SetColWidth(s.name, col, col, w)
	}
}

// finish freezes the header row, puts an autofilter over the table and
// sets the column widths of a list sheet.
func (s *sheet) finish(cols, lastRow int, widths []float64) {
	if s.err != nil {
		return
	}
	s.err = s.f.SetPanes(s.name, &excelize.Panes{
		Freeze:      true,
		YSplit:      1,
		TopLeftCell: "A2",
		ActivePane:  "bottomLeft",
		Selection:   []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}},
	})
	if s.err != nil {
		return
	}
	ref := s.cell(1, 1) + ":" + s.cell(cols, max(lastRow, 2))
	if s.err == nil {
		s.err = s.f.AutoFilter(s.name, ref, nil)
	}
	s.widths(widths)
}
