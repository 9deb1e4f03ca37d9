package channelfeed

import "testing"

func FuzzStripe(f *testing.F) { fuzzParser(f, "stripe") }
