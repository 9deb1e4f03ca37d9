package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// ShardSet checks that runs, the current runs of one channel's business
// date, are every shard of one split of one file: split want ways, when
// want is above 0.
func ShardSet(channel string, day BusinessDay, runs []Run, want int) error {
	if len(runs) == 0 {
		return fmt.Errorf("%s %s: no successful run to report on", channel, day)
	}
	n := shardCount(runs[0].Shard)
	if want > 0 && want != n {
		return fmt.Errorf("%s %s: the runs are split %d ways, not %d", channel, day, n, want)
	}
	seen := make([]bool, n)
	for _, r := range runs {
		if r.FileSHA256 != runs[0].FileSHA256 {
			return fmt.Errorf("%s %s: the shards read different files (%s, %s): run every shard on one file",
				channel, day, runs[0].File, r.File)
		}
		if shardCount(r.Shard) != n || seen[r.Shard.Index] {
			return fmt.Errorf("%s %s: the current runs mix shard splits (%s and %s): run every shard of one split again",
				channel, day, runs[0].Shard, r.Shard)
		}
		seen[r.Shard.Index] = true
	}
	for i, ok := range seen {
		if !ok {
			return fmt.Errorf("%s %s: shard %d/%d has not run yet", channel, day, i, n)
		}
	}
	return nil
}

// shardCount is how many shards s is one of: 1 for the whole.
func shardCount(s Shard) int {
	if s.Whole() {
		return 1
	}
	return s.Count
}

// CombineShards puts the results of the shard runs of day (a set ShardSet
// accepts) together as one result, on day in its business zone (runs read
// back from a database may carry the date alone). Its run id, report-…,
// is derived from the ids of the runs, so the same set of runs is one
// report however often it is made; the ids are returned in order.
func CombineShards(day BusinessDay, parts []*Result) (*Result, []string) {
	first := parts[0].Run
	res := NewResult(Run{Channel: first.Channel, Day: day, Format: first.Format, Status: RunSucceeded,
		File: first.File, FileSHA256: first.FileSHA256}) // every shard read the same file
	var ids []string
	for _, part := range parts {
		r := part.Run
		ids = append(ids, r.ID)
		res.ChannelRows += part.ChannelRows
		res.BatchRows += part.BatchRows
		res.LocalRows += part.LocalRows
		for c, v := range part.Counts {
			res.Counts[c] += v
		}
		res.Fees = AddFees(res.Fees, part.Fees)
		res.Findings = append(res.Findings, part.Findings...)
		res.Journals = append(res.Journals, part.Journals...)
		if res.Run.StartedAt.IsZero() || r.StartedAt.Before(res.Run.StartedAt) {
			res.Run.StartedAt = r.StartedAt
		}
		if r.FinishedAt.After(res.Run.FinishedAt) {
			res.Run.FinishedAt = r.FinishedAt
		}
	}
	slices.Sort(ids)
	sum := sha256.Sum256([]byte(strings.Join(ids, ",")))
	res.Run.ID = "report-" + hex.EncodeToString(sum[:12])
	SortFindings(res.Findings)
	return res, ids
}
