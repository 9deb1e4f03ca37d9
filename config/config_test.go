package config_test

import (
	"strings"
	"testing"

	"reconcile/config"
)

// TestTemplateTrouble: the path templates check-config accepts.
func TestTemplateTrouble(t *testing.T) {
	cases := []struct {
		path, want string // want "": accepted
	}{
		{"/in/{yyyymmdd}_ALL.csv.gz", ""},
		{"/in/{date}/report-{yyyymmdd}.csv", ""},
		{"/in/report.csv", "has no {date} or {yyyymmdd}"},
		{"/in/{Date}.csv", "unknown placeholder {Date}"},
		{"/in/{date}-{channel}.csv", "unknown placeholder {channel}"},
		{"", "path is empty"},
	}
	for _, tc := range cases {
		got := config.TemplateTrouble(tc.path)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("config.TemplateTrouble(%q): got %q, want %q", tc.path, got, tc.want)
		}
	}
}
