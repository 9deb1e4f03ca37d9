package channelfeed

import "testing"

func FuzzAdyen(f *testing.F) { fuzzParser(f, "adyen") }
