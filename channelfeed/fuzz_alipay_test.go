package channelfeed

import "testing"

func FuzzAlipay(f *testing.F) { fuzzParser(f, "alipay") }
