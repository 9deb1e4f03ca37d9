package reconcile

// TrendDay is what the current successful runs of one channel found on one
// business date: the count of each category, matched included, as the runs
// recorded it. The runs of a date split into shards are added up, so a
// sharded date counts like one run over the whole file.
type TrendDay struct {
	Day    BusinessDay
	Counts map[Category]int
}
