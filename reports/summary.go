package reports

import (
	"encoding/json"
	"time"

	"reconcile"
)

// Summary is the content of summary.json: the machine-readable outcome of
// one run, for dashboards and for whoever scripts around the job.
type Summary struct {
	RunID        string `json:"run_id"`
	Channel      string `json:"channel"`
	BusinessDate string `json:"business_date"` // YYYY-MM-DD
	Status       string `json:"status"`
	DryRun       bool   `json:"dry_run"`
	// Replay is set by the job when it hands back the result of an earlier
	// run of the same file instead of running again, so a consumer does
	// not count the same findings twice.
	Replay      bool      `json:"replay"`
	File        string    `json:"file"`
	FileSHA256  string    `json:"file_sha256"`
	StartedAt   time.Time `json:"started_at"`
	FinishedAt  time.Time `json:"finished_at"`
	ChannelRows int       `json:"channel_rows"`
	BatchRows   int       `json:"batch_rows"` // fee and payout rows: counted, not matched
	LocalRows   int       `json:"local_rows"`
	// Counts has every category, zeros included, so a consumer can tell
	// "none found" from "not reported".
	Counts       map[string]int `json:"counts"`
	AutoReversed int            `json:"auto_reversed"`
	NeedsReview  int            `json:"needs_review"`
	Journals     int            `json:"journals"`
	// MoneyAtRisk is per currency, as exact decimal strings in major units:
	// a JSON number would be read as a float by most consumers.
	MoneyAtRisk map[string]string `json:"money_at_risk"`
	// Fees are the day's fees per currency (see FeeSummary).
	Fees     map[string]FeeSummary `json:"fees"`
	Workbook string                `json:"workbook"` // file name of the review workbook
	// ReviewLines is how many lines need review; ReviewCSV names the CSV
	// export that holds them all when the workbook holds only the first.
	ReviewLines int    `json:"review_lines"`
	ReviewCSV   string `json:"review_csv,omitempty"`
	Error       string `json:"error,omitempty"`
}

// FeeSummary is one currency's fees of the day, as exact decimal strings
// in major units: Charged over every settled row; where the channel's
// contract covers rows (Checked of Rows), Expected is the contract's fee
// of those rows and Difference what they were charged past it.
type FeeSummary struct {
	Rows       int    `json:"rows"`
	Charged    string `json:"charged"`
	Checked    int    `json:"checked"`
	Expected   string `json:"expected,omitempty"`
	Difference string `json:"difference,omitempty"`
}

func feeSummaries(fees []reconcile.FeeTotal) map[string]FeeSummary {
	out := make(map[string]FeeSummary, len(fees))
	for _, t := range fees {
		f := FeeSummary{Rows: t.Rows, Checked: t.Checked, Charged: reconcile.FormatFee(t.Charged, t.Currency)}
		if t.Checked > 0 {
			f.Expected = reconcile.FormatFee(t.Expected, t.Currency)
			f.Difference = reconcile.FormatFee(t.Difference(), t.Currency)
		}
		out[t.Currency] = f
	}
	return out
}

// NewSummary returns the summary of res; workbook is the workbook's file name.
func NewSummary(res *reconcile.Result, workbook string) Summary {
	run := res.Run
	s := Summary{
		RunID:        run.ID,
		Channel:      run.Channel,
		BusinessDate: run.Day.String(),
		Status:       string(run.Status),
		DryRun:       run.DryRun,
		File:         run.File,
		FileSHA256:   run.FileSHA256,
		StartedAt:    run.StartedAt,
		FinishedAt:   run.FinishedAt,
		ChannelRows:  res.ChannelRows,
		BatchRows:    res.BatchRows,
		LocalRows:    res.LocalRows,
		Counts:       make(map[string]int, len(res.Categories())),
		AutoReversed: res.AutoReversed(),
		NeedsReview:  res.NeedsReview(),
		Journals:     len(res.Journals),
		MoneyAtRisk:  map[string]string{},
		Fees:         feeSummaries(res.Fees),
		Workbook:     workbook,
		ReviewLines:  res.NeedsReview(),
		// The error text may quote a DSN handed down from the database
		// driver; summary.json is shipped around like the alert is.
		Error: RedactSecrets(run.Error),
	}
	if run.Day.Date.IsZero() {
		s.BusinessDate = ""
	}
	for _, c := range res.Categories() {
		s.Counts[string(c)] = res.Counts[c]
	}
	for cur, v := range res.AtRisk() {
		s.MoneyAtRisk[cur] = reconcile.FormatAmount(v, cur)
	}
	return s
}

// SetWorkbook records what the written workbook holds: only the writer
// knows whether the review lines needed a CSV export.
func (s *Summary) SetWorkbook(info WorkbookInfo) {
	s.ReviewLines = info.ReviewLines
	s.ReviewCSV = info.CSV
}

// summaryJSON is summary.json's text: indented, one newline at the end.
func summaryJSON(s Summary) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
