package channelfeed

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"reconcile"
)

// BenchmarkParseSample parses each format's sample bill from testdata over
// and over: the throughput of the formats without a generator of their own.
// Samples are small (a few kB), so the per-file set-up is included; the
// generated-file benchmarks above measure the steady state.
func BenchmarkParseSample(b *testing.B) {
	for _, tc := range []struct{ format, dir string }{
		{"alipay", "sample"}, {"stripe", "sample"}, {"adyen", "sample"}, {"mapped", "semicolon_minor_units"},
	} {
		b.Run(tc.format, func(b *testing.B) {
			dir := filepath.Join("testdata", tc.format, tc.dir)
			raw, err := os.ReadFile(filepath.Join(dir, "input.csv"))
			if err != nil {
				b.Fatal(err)
			}
			opts := loadCaseOptions(b, dir)
			opts.Name = "bench"
			p, err := Lookup(tc.format)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := p.Parse(b.Context(), bytes.NewReader(raw), opts, func(reconcile.Transaction) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
