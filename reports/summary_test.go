package reports_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"reconcile"
	"reconcile/reports"
)

func TestWriteSummary(t *testing.T) {
	res := testResult(t)
	// Counts that leave categories out must still list them all.
	res.Counts = map[reconcile.Category]int{reconcile.Matched: 10, reconcile.AmountMismatch: 2}
	res.Run.Error = "earlier attempt: dial postgres://recon:hunter2@db:5432/recon: refused"
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	if err := reports.WriteSummary(path, reports.NewSummary(res, "review-wechatpay-2026-11-28.xlsx")); err != nil {
		t.Fatalf("WriteSummary: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("summary.json is not JSON: %v\n%s", err, b)
	}

	t.Run("counts", func(t *testing.T) {
		counts, ok := got["counts"].(map[string]any)
		if !ok {
			t.Fatalf("counts: got %T, want an object", got["counts"])
		}
		if g, w := len(counts), len(reconcile.Categories); g != w {
			t.Errorf("count keys: got %d, want %d", g, w)
		}
		for _, c := range reconcile.Categories {
			want := float64(res.Counts[c])
			if g, ok := counts[string(c)]; !ok || g != want {
				t.Errorf("counts[%s]: got %v (present %v), want %v", c, g, ok, want)
			}
		}
	})

	t.Run("money at risk", func(t *testing.T) {
		money, ok := got["money_at_risk"].(map[string]any)
		if !ok {
			t.Fatalf("money_at_risk: got %T, want an object", got["money_at_risk"])
		}
		want := map[string]string{"CNY": "1388.36", "JPY": "5000", "KWD": "0.234", "USD": "15.00"}
		if len(money) != len(want) {
			t.Errorf("got %v, want %v", money, want)
		}
		for cur, w := range want {
			if g, ok := money[cur].(string); !ok || g != w {
				t.Errorf("%s: got %#v, want the string %q", cur, money[cur], w)
			}
		}
	})

	t.Run("fields", func(t *testing.T) {
		want := map[string]any{
			"run_id": "run-1", "channel": "wechatpay", "business_date": "2026-11-28", "status": "SUCCEEDED",
			"dry_run": false, "file": "/data/in/wechatpay/2026-11-28.csv", "file_sha256": res.Run.FileSHA256,
			"channel_rows": 17.0, "local_rows": 15.0, "auto_reversed": 1.0, "needs_review": 8.0, "replay": false, "journals": 1.0,
			"workbook": "review-wechatpay-2026-11-28.xlsx",
			"error":    "earlier attempt: dial postgres://recon:xxxxx@db:5432/recon: refused",
		}
		for k, w := range want {
			if g := got[k]; g != w {
				t.Errorf("%s: got %#v, want %#v", k, g, w)
			}
		}
		for k, w := range map[string]time.Time{"started_at": res.Run.StartedAt, "finished_at": res.Run.FinishedAt} {
			s, _ := got[k].(string)
			g, err := time.Parse(time.RFC3339, s)
			if err != nil || !g.Equal(w) {
				t.Errorf("%s: got %q (%v), want %s", k, s, err, w.Format(time.RFC3339))
			}
		}
	})

	t.Run("new categories counted as zeros", func(t *testing.T) {
		counts, _ := got["counts"].(map[string]any)
		for _, c := range []string{"pending", "duplicate_vanished"} {
			if g, ok := counts[c]; !ok || g != 0.0 {
				t.Errorf("counts[%s]: got %v (present %v), want 0", c, g, ok)
			}
		}
	})

	t.Run("replay", func(t *testing.T) {
		s := reports.NewSummary(testResult(t), "x.xlsx")
		if s.Replay {
			t.Error("NewSummary set replay: only the job knows a result is replayed")
		}
		s.Replay = true
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m["replay"] != true {
			t.Errorf("replay: got %#v in %s, want true", m["replay"], b)
		}
		counts, _ := m["counts"].(map[string]any)
		for c, want := range map[string]float64{"pending": 1, "duplicate_vanished": 1} {
			if counts[c] != want {
				t.Errorf("counts[%s]: got %v, want %v", c, counts[c], want)
			}
		}
	})

	t.Run("no error key on success", func(t *testing.T) {
		res := testResult(t)
		b, err := json.Marshal(reports.NewSummary(res, "x.xlsx"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["error"]; ok {
			t.Errorf("got an error key in %s", b)
		}
	})

	t.Run("nothing else left in the directory", func(t *testing.T) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Errorf("got %d entries, want only summary.json", len(entries))
		}
	})
}
