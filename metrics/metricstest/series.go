// Package metricstest reads the Prometheus text format back in tests.
package metricstest

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Series parses the text exposition format and returns every reconcile_
// sample as `name{label="value",…}` → value, labels sorted by name.
func Series(t testing.TB, r io.Reader) map[string]float64 {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("parse metrics: %v", err)
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		if !strings.HasPrefix(name, "reconcile_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			key := name + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			default:
				t.Errorf("%s: neither a gauge nor a counter", key)
			}
		}
	}
	return out
}
