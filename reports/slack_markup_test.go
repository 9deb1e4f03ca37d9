package reports_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/reports"
)

// textObjects collects every text object of a message's blocks, by type.
func textObjects(t *testing.T, msg reports.Message) map[string][]string {
	t.Helper()
	b, err := json.Marshal(msg.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if typ, ok := x["type"].(string); ok && (typ == "mrkdwn" || typ == "plain_text") {
				out[typ] = append(out[typ], x["text"].(string))
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// TestFileTextIsNeverMarkup: Slack's mrkdwn turns *, _, ~ and ` into
// formatting (one backtick makes the rest of the message code). Values
// from a file (order and refund numbers, hints that quote them, file
// names, the error of a failed run) are in plain-text objects only, shown
// as written.
func TestFileTextIsNeverMarkup(t *testing.T) {
	hostile := []string{"*bold*", "_it_", "~st~", "`tick", ":x:"}
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	day, _ := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	run := reconcile.Run{ID: "run-1", Channel: "shop", Day: day, File: "/in/" + hostile[3] + ".csv", Status: reconcile.RunSucceeded}
	res := &reconcile.Result{Run: run, Counts: map[reconcile.Category]int{reconcile.MissingLocal: 4}}
	for i, v := range hostile[:4] {
		res.Findings = append(res.Findings, reconcile.Finding{Category: reconcile.MissingLocal, Kind: reconcile.KindRefund,
			OrderNo: v, RefundNo: v + "R", HasChannel: true, ChannelAmount: int64(100 + i), Currency: "USD", OccurredAt: at,
			Hint: "refund " + v + " settled"})
	}
	res.StillOpen, res.StillOpenDays = res.Findings[:2], 3
	failed := run
	failed.Status = reconcile.RunFailed
	msgs := map[string]struct {
		msg   reports.Message
		shown []string // the values from outside it holds
	}{
		"run":     {reports.RunMessage(res, 5), hostile[:4]},
		"overdue": {reports.OverdueMessage("shop", day, "/in/_it_*bold*.csv", at.Add(38*time.Hour)), []string{"_it_*bold*.csv"}},
		"failure": {reports.FailureMessage(failed, errors.New("line 3: column order_no: `tick and *bold* and _it_")), []string{"`tick and *bold* and _it_"}},
	}
	for name, m := range msgs {
		texts := textObjects(t, m.msg)
		for _, m := range texts["mrkdwn"] {
			for _, v := range hostile {
				if strings.Contains(m, v) {
					t.Errorf("%s: mrkdwn text holds %q from outside: %q", name, v, m)
				}
			}
		}
		plain := strings.Join(texts["plain_text"], "\n")
		for _, v := range m.shown {
			if !strings.Contains(plain, v) {
				t.Errorf("%s: %q is not shown as written in any plain text:\n%s", name, v, plain)
			}
		}
	}
}
