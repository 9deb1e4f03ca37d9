package reports

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
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

// WriteWorkbook writes the review workbook of res to path, atomically.
//
// It uses excelize's in-memory API rather than its StreamWriter: the
// stream writer can only write a number through float64, and it drops
// autofilters and data validations added after Flush. The review lines are
// the few findings a person must read, so memory is not a concern.
func WriteWorkbook(path string, res *reconcile.Result) error {
	f := excelize.NewFile()
	defer f.Close()
	if err := buildWorkbook(f, res); err != nil {
		return fmt.Errorf("build workbook %s: %w", path, err)
	}
	return writeFileAtomic(path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}

func buildWorkbook(f *excelize.File, res *reconcile.Result) error {
	if err := f.SetSheetName("Sheet1", SheetSummary); err != nil {
		return err
	}
	for _, name := range []string{SheetReview, SheetPending, SheetAutoReversed} {
		if _, err := f.NewSheet(name); err != nil {
			return err
		}
	}
	st, err := newStyles(f)
	if err != nil {
		return err
	}
	loc := res.Run.Day.Location
	if loc == nil {
		loc = time.UTC
	}
	if err := writeSummarySheet(&sheet{f: f, name: SheetSummary, st: st}, res, loc); err != nil {
		return err
	}
	if err := writeReviewSheet(&sheet{f: f, name: SheetReview, st: st}, res, loc); err != nil {
		return err
	}
	if err := writePendingSheet(&sheet{f: f, name: SheetPending, st: st}, res, loc); err != nil {
		return err
	}
	return writeAutoSheet(&sheet{f: f, name: SheetAutoReversed, st: st}, res, loc)
}

func writeSummarySheet(s *sheet, res *reconcile.Result, loc *time.Location) error {
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
	s.widths([]float64{24, 12, 8, 16, 16, 16, 90})
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

func writeReviewSheet(s *sheet, res *reconcile.Result, loc *time.Location) error {
	s.header(reviewHeader)
	versionCol := reviewColumn(colVersion)
	row := 1
	for _, f := range res.Findings {
		if !f.NeedsReview() {
			continue
		}
		row++
		s.text(1, row, f.Ref)
		s.text(2, row, string(f.Category))
		s.text(3, row, f.OrderNo)
		s.text(4, row, f.RefundNo)
		s.text(5, row, f.ChannelTxnID)
		s.text(6, row, f.OriginalTxnID)
		s.text(7, row, f.LocalTxnID)
		if f.HasLocal {
			s.money(8, row, f.LocalAmount, f.LocalCurrency)
		}
		if f.HasChannel {
			s.money(9, row, f.ChannelAmount, f.Currency)
		}
		if f.HasLocal && f.HasChannel && f.Currency == f.LocalCurrency {
			s.money(10, row, f.ChannelAmount-f.LocalAmount, f.Currency)
		}
		s.text(11, row, reviewCurrency(f))
		s.text(12, row, localTime(f.OccurredAt, loc))
		s.text(13, row, reviewHint(f))
		// Decision, Reviewer and Note are left for people. The version
		// travels with the decision, so one made on a finding that has
		// moved on since (decided elsewhere, superseded) can be refused
		// instead of applied blind.
		s.int(versionCol, row, findingVersion)
	}
	// The dropdown covers the data rows; with none it still covers the
	// first, so the sheet looks the same every night.
	last := max(row, 2)
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
	s.finish(len(reviewHeader), row, reviewWidths)
	return s.err
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
		keys[j.ChannelTxnID] = j.IdempotencyKey
	}
	s.header(autoHeader)
	row := 1
	for _, f := range res.Findings {
		if !f.AutoReverse {
			continue
		}
		row++
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
		s.text(9, row, keys[f.ChannelTxnID])
	}
	s.finish(len(autoHeader), row, autoWidths)
	return s.err
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

// cellText makes a string safe to show in a spreadsheet. The cell is always
// a string cell, never a formula, but a value that starts like a formula
// (=, +, -, @, tab, CR) is also given a leading apostrophe: it stays text if
// someone edits the cell and presses enter, or pastes it elsewhere, and the
// reader sees that it was not written by the job.
func cellText(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// styles are the cell styles of the workbook, made once per file.
type styles struct {
	f      *excelize.File
	header int
	bold   int
	money  map[int]int // by currency digits
}

func newStyles(f *excelize.File) (*styles, error) {
	st := &styles{f: f, money: map[int]int{}}
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
	format := "#,##0"
	if digits > 0 {
		format += "." + strings.Repeat("0", digits)
	}
	id, err := st.f.NewStyle(&excelize.Style{CustomNumFmt: &format})
	if err != nil {
		return 0, err
	}
	st.money[digits] = id
	return id, nil
}

// sheet writes cells of one worksheet and keeps the first error, so the
// layout code reads as a layout.
type sheet struct {
	f    *excelize.File
	name string
	st   *styles
	err  error
}

func (s *sheet) cell(col, row int) string {
	name, err := excelize.CoordinatesToCellName(col, row)
	if err != nil && s.err == nil {
		s.err = err
	}
	return name
}

// text writes a string cell. Every text goes through here: SetCellStr
// always stores a string, whatever the value looks like.
func (s *sheet) text(col, row int, v string) {
	if s.err != nil || v == "" {
		return
	}
	c := s.cell(col, row)
	if s.err == nil {
		s.err = s.f.SetCellStr(s.name, c, cellText(v))
	}
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

func (s *sheet) style(col1, row1, col2, row2, id int) {
	if s.err != nil {
		return
	}
	from, to := s.cell(col1, row1), s.cell(col2, row2)
	if s.err == nil {
		s.err = s.f.SetCellStyle(s.name, from, to, id)
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
