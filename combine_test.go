package reconcile_test

import (
	"strings"
	"testing"
	"time"

	"reconcile"
)

// TestShardSet: a report is made only over every shard of one split of
// one file.
func TestShardSet(t *testing.T) {
	day, _ := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	run := func(id string, index, count int, sha string) reconcile.Run {
		return reconcile.Run{ID: id, Shard: reconcile.Shard{Index: index, Count: count}, FileSHA256: sha, File: "bill-" + sha}
	}
	for _, tt := range []struct {
		name string
		runs []reconcile.Run
		want int
		err  string // "": accepted
	}{
		{"every shard", []reconcile.Run{run("a", 0, 2, "f"), run("b", 1, 2, "f")}, 0, ""},
		{"as many as asked", []reconcile.Run{run("a", 0, 2, "f"), run("b", 1, 2, "f")}, 2, ""},
		{"one whole run", []reconcile.Run{run("a", 0, 0, "f")}, 1, ""},
		{"none", nil, 0, "no successful run to report on"},
		{"split another way", []reconcile.Run{run("a", 0, 2, "f"), run("b", 1, 2, "f")}, 4, "split 2 ways, not 4"},
		{"a shard missing", []reconcile.Run{run("a", 0, 3, "f"), run("c", 2, 3, "f")}, 0, "shard 1/3 has not run yet"},
		{"two files", []reconcile.Run{run("a", 0, 2, "f"), run("b", 1, 2, "g")}, 0, "the shards read different files"},
		{"two splits", []reconcile.Run{run("a", 0, 2, "f"), run("b", 1, 4, "f")}, 0, "mix shard splits"},
		{"a shard twice", []reconcile.Run{run("a", 0, 2, "f"), run("b", 0, 2, "f")}, 0, "mix shard splits"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := reconcile.ShardSet("shop", day, tt.runs, tt.want)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("got %v, want %q", err, tt.err)
			}
		})
	}
}

// TestCombineShards: the parts add up, the findings come in report order,
// the report's id depends on the set of runs only, and its day is the
// business day given, in its zone.
func TestCombineShards(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	day, _ := reconcile.NewBusinessDay("2026-11-28", shanghai)
	utcDay, _ := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	at := time.Date(2026, 11, 28, 20, 0, 0, 0, time.UTC)
	part := func(id string, index int, start time.Time, rows int, fs ...reconcile.Finding) *reconcile.Result {
		res := reconcile.NewResult(reconcile.Run{ID: id, Channel: "shop", Day: utcDay, Format: "csv", File: "bill", FileSHA256: "f",
			Shard: reconcile.Shard{Index: index, Count: 2}, StartedAt: start, FinishedAt: start.Add(time.Minute)})
		res.ChannelRows, res.LocalRows, res.Findings = rows, rows+1, fs
		for _, f := range fs {
			res.Counts[f.Category]++
		}
		return res
	}
	a := part("run-b", 0, at.Add(time.Hour), 10, reconcile.Finding{Category: reconcile.MissingLocal, OrderNo: "O2"})
	b := part("run-a", 1, at, 5, reconcile.Finding{Category: reconcile.AmountMismatch, OrderNo: "O9"},
		reconcile.Finding{Category: reconcile.MissingLocal, OrderNo: "O1"})
	res, ids := reconcile.CombineShards(day, []*reconcile.Result{a, b})
	again, _ := reconcile.CombineShards(day, []*reconcile.Result{b, a})
	if res.Run.ID != again.Run.ID || !strings.HasPrefix(res.Run.ID, "report-") {
		t.Errorf("report ids %q and %q: want one report- id for the same set", res.Run.ID, again.Run.ID)
	}
	if strings.Join(ids, ",") != "run-a,run-b" {
		t.Errorf("ids: got %v, want them in order", ids)
	}
	if res.ChannelRows != 15 || res.LocalRows != 17 || res.Counts[reconcile.MissingLocal] != 2 || res.Counts[reconcile.AmountMismatch] != 1 {
		t.Errorf("sums: rows %d, local %d, counts %v", res.ChannelRows, res.LocalRows, res.Counts)
	}
	var got []string
	for _, f := range res.Findings {
		got = append(got, string(f.Category)+"/"+f.OrderNo)
	}
	if strings.Join(got, " ") != "amount_mismatch/O9 missing_local/O1 missing_local/O2" {
		t.Errorf("findings: got %v, want report order", got)
	}
	if res.Run.Day.Location != shanghai || !res.Run.StartedAt.Equal(at) || !res.Run.FinishedAt.Equal(at.Add(time.Hour+time.Minute)) {
		t.Errorf("run: day in %v, %v to %v", res.Run.Day.Location, res.Run.StartedAt, res.Run.FinishedAt)
	}
}
