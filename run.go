package reconcile

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"time"
)

// RunStatus is the state of a run: RUNNING, then SUCCEEDED or FAILED.
type RunStatus string

const (
	RunRunning   RunStatus = "RUNNING"
	RunSucceeded RunStatus = "SUCCEEDED"
	RunFailed    RunStatus = "FAILED"
)

// Run is one reconciliation of one channel for one business date.
type Run struct {
	ID         string
	Channel    string
	Day        BusinessDay
	Format     string
	File       string
	FileSHA256 string
	DryRun     bool
	Forced     bool // re-evaluated although a run of the same file succeeded
	Shard      Shard
	Status     RunStatus
	StartedAt  time.Time // the run's one "now", fixed at its start
	FinishedAt time.Time
	Error      string // why it failed, in one line
}

// NewRunID returns a fresh random run id.
func NewRunID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// Result is what a run found.
type Result struct {
	Run         Run
	ChannelRows int
	// BatchRows counts the channel rows that book the settlement batch
	// itself (fees, payouts): part of ChannelRows, never matched.
	BatchRows int
	LocalRows int
	// Counts has an entry for every category, zeros included; matched
	// keys are counted but not kept in Findings.
	Counts   map[Category]int
	Findings []Finding // every finding but matched, in report order
	Journals []Journal // reversal journals for the AutoReverse findings
	// Fees are the day's fees by currency: what the rows carry, and what
	// the channel's contract says they should, where it has one.
	Fees []FeeTotal
	// Replay is set when the result is that of an earlier run of the same
	// file, returned again without redoing the work.
	Replay bool
	// StillOpen are findings of earlier runs of the channel that still wait
	// for a decision after StillOpenDays days: the alert lists them again.
	StillOpen     []Finding
	StillOpenDays int
	// Stages is how long each stage of the run took, in order.
	Stages []Stage
	// Payouts are, on a bank statement's night, the payouts it looked for
	// and where each stands (the Payouts sheet).
	Payouts []PayoutCase
}

// NewResult is an empty result of run: every category counted at zero.
func NewResult(run Run) *Result {
	res := &Result{Run: run}
	res.Counts = make(map[Category]int, len(res.Categories()))
	for _, c := range res.Categories() {
		res.Counts[c] = 0
	}
	return res
}

// NumberFindings gives the findings their references in report order:
// the run's id and a serial number, <run id>-0001, <run id>-0002, …: the
// Finding column of the workbook, quoted back when a decision is imported.
func (r *Result) NumberFindings() {
	for i := range r.Findings {
		r.Findings[i].Ref = fmt.Sprintf("%s-%04d", r.Run.ID, i+1)
	}
}

// Delivery is how far an alert got, recorded as it goes so that an alert
// sent again resumes there: a message posted is never posted twice.
type Delivery struct {
	Posted bool `json:"posted"`
	// Channel and TS name the posted message in Slack (the channel's id
	// and the message's timestamp), when the way it went tells them.
	Channel  string `json:"channel,omitempty"`
	TS       string `json:"ts,omitempty"`
	Uploaded bool   `json:"uploaded"` // the workbook is shared beside it
}

// Stage is one timed step of a run: parse, load, match, reports, commit.
type Stage struct {
	Name string
	Took time.Duration
}

// AutoReversed is the number of findings reversed without review.
func (r *Result) AutoReversed() int {
	n := 0
	for _, f := range r.Findings {
		if f.AutoReverse {
			n++
		}
	}
	return n
}

// NeedsReview is the number of findings a person must look at.
func (r *Result) NeedsReview() int {
	n := 0
	for _, f := range r.Findings {
		if f.NeedsReview() {
			n++
		}
	}
	return n
}

// AtRisk sums Finding.AtRisk of the findings that need review, per
// currency, held at the largest int64 rather than wrapped: a file's rows
// cannot add up that far (channelfeed, MaxFileTotal), our side's records
// might.
func (r *Result) AtRisk() map[string]int64 {
	sum := map[string]int64{}
	for _, f := range r.Findings {
		if f.NeedsReview() {
			cur := f.Currency
			if cur == "" {
				cur = f.LocalCurrency
			}
			sum[cur] = AddSaturating(sum[cur], f.AtRisk())
		}
	}
	return sum
}

// StatementFormats are the formats of bank statements: a run of one is a
// statement's night (rule 15), which PayoutCategories report.
var StatementFormats = []string{"bai2", "camt053", "mt940"}

// Categories are the categories the run's reports count: a statement
// night's PayoutCategories, a channel night's Categories.
func (r *Result) Categories() []Category {
	if slices.Contains(StatementFormats, r.Run.Format) {
		return PayoutCategories
	}
	return Categories
}

// SortFindings puts findings in report order: by category, then key, then
// channel id, so the same input always gives the same report.
func SortFindings(fs []Finding) {
	rank := map[Category]int{}
	for i, c := range slices.Concat(Categories, PayoutCategories) {
		rank[c] = i
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if a.Category != b.Category {
			return rank[a.Category] < rank[b.Category]
		}
		if a.Key() != b.Key() {
			return a.Key() < b.Key()
		}
		return a.ChannelTxnID < b.ChannelTxnID
	})
}

// The review workbook's bounds, the one place they are set: the config
// and the workbook both read them.
const (
	// DefaultReviewLines is how many review lines a workbook holds unless
	// the config says otherwise (review_max_lines): far more than a person
	// works through in a morning, and a file a spreadsheet opens without a
	// struggle. A run with more gets a CSV export of all of them beside it.
	DefaultReviewLines = 50_000
	// MaxSheetLines is the lines an xlsx sheet holds below its header
	// (1,048,576 rows in all).
	MaxSheetLines = 1<<20 - 1
)
