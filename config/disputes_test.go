package config_test

import (
	"strings"
	"testing"
	"time"

	"reconcile/config"
)

func TestDisputesSetting(t *testing.T) {
	for _, tc := range []struct {
		json string
		on   bool
		wait time.Duration
		want string // a problem's words, "" for none
	}{
		{``, false, 7 * 24 * time.Hour, ""},
		{`, "disputes": {"relation": "disputes"}`, true, 7 * 24 * time.Hour, ""},
		{`, "disputes": {"relation": "shop.disputes", "window": "72h"}`, true, 72 * time.Hour, ""},
		{`, "disputes": {"relation": ""}`, false, 0, "want a table or view name"},
		{`, "disputes": {"relation": "a.b.c"}`, false, 0, "want a table or view name"},
		{`, "disputes": {"relation": "../disputes"}`, false, 0, "want a table or view name"},
		{`, "disputes": {"relation": "d\"; DROP TABLE runs; --"}`, false, 0, "want a table or view name"},
		{`, "disputes": {"relation": "` + strings.Repeat("d", 64) + `"}`, false, 0, "want a table or view name"},
		{`, "disputes": {"relation": "disputes", "window": "-1h"}`, true, 0, `duration "-1h" is negative`},
	} {
		t.Run(tc.json, func(t *testing.T) {
			cfg, err := config.Load(writeFile(t, `{"channels": []`+tc.json+`}`))
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Load: %v; want a problem saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.Disputes.On() != tc.on || cfg.Disputes.Wait() != tc.wait {
				t.Errorf("On %v, Wait %v; want %v, %v", cfg.Disputes.On(), cfg.Disputes.Wait(), tc.on, tc.wait)
			}
		})
	}
}
