package bankfeed

import (
	"strings"
	"testing"
)

// FuzzBAI2 feeds the BAI2 reader its golden files changed at random, and
// a few shapes the golden files do not have.
func FuzzBAI2(f *testing.F) {
	fuzzReader(f, "bai2",
		[]byte(bai2Join(bai2Base)),
		[]byte(strings.ReplaceAll(bai2Join(bai2Base), "\n", "\r\n")),
		[]byte(bai2Set(5, "16,475,10000,D,2,0,5000,1,5000,00000001042,1042,CHECK PAID")),
		[]byte(bai2Set(5, "16,475,10000,S,5000,,5000/", "88,00000001042,1042,CHECK", "88,PAID")),
		[]byte(bai2Set(3, "03,000123456789,USD,010,100000,,,015/", "88,150000,,,100,60000,1,,400,10000,1,/")),
	)
}
