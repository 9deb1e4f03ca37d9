package channelfeed

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"reconcile"
)

// benchRows is the size of a generated file: a busy merchant's day.
const benchRows = 150_000

// genCSV writes a canonical CSV of n rows, about one in ten a refund.
func genCSV(n int) []byte {
	var b bytes.Buffer
	b.Grow(n * 110)
	b.WriteString("type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n")
	day := time.Date(2026, 11, 28, 0, 0, 0, 0, time.FixedZone("", 8*60*60))
	for i := range n {
		at := day.Add(time.Duration(i) * 86400 * time.Second / time.Duration(n)).Format(time.RFC3339)
		cents := int64(1 + (i*7919)%50000)
		if i%10 == 9 {
			fmt.Fprintf(&b, "refund,ORD20261128%08d,RF20261128%08d,5030009999202611280%010d,%s,CNY,%s\n",
				i-5, i, i, reconcile.FormatDecimal(cents/2, 2), at)
			continue
		}
		fmt.Fprintf(&b, "payment,ORD20261128%08d,,4200009999202611280%09d,%s,CNY,%s\n",
			i, i, reconcile.FormatDecimal(cents, 2), at)
	}
	return b.Bytes()
}

var benchProducts = []string{"会员年卡", "咖啡豆 250g", "蓝牙耳机", "话费充值", "T恤,白色 L码", "有机绿茶礼盒装", "儿童绘本(全套)", "月饼"}

// genWeChatPay writes a WeChat Pay ALL bill of n detail rows in the 27
// columns of today's layout, about one in ten a refund, with a summary
// row that adds up.
func genWeChatPay(n int) []byte {
	var b bytes.Buffer
	b.Grow(n * 330)
	b.WriteString("\uFEFF交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注\r\n")
	var settle, refund, fee, order, applied int64
	day := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for i := range n {
		at := day.Add(time.Duration(i) * 86400 * time.Second / time.Duration(n)).Format(time.DateTime)
		cents := int64(1 + (i*7919)%50000)
		product := benchProducts[i%len(benchProducts)]
		if i%10 == 9 {
			r := cents / 2
			f := -r * 6 // 0.6% in units of 1e-5 yuan
			refund += r
			applied += r
			fee += f
			fmt.Fprintf(&b, "`%s,`wx00000000fake0001,`1900000109,`0,`,`4200009999202611280%09d,`ORD20261128%08d,`oFAKEopenid%017d,`JSAPI,`REFUND,`OTHERS,`CNY,`0.00,`0.00,`5030009999202611280%010d,`RF20261128%08d,`%s,`0.00,`ORIGINAL,`SUCCESS,`%s,`,`%s,`0.60%%,`0.00,`%s,`\r\n",
				at, i-5, i-5, i, i, i, reconcile.FormatDecimal(r, 2), product, reconcile.FormatDecimal(f, 5), reconcile.FormatDecimal(r, 2))
			continue
		}
		f := cents * 6
		settle += cents
		order += cents
		fee += f
		fmt.Fprintf(&b, "`%s,`wx00000000fake0001,`1900000109,`0,`,`4200009999202611280%09d,`ORD20261128%08d,`oFAKEopenid%017d,`JSAPI,`SUCCESS,`CMB_DEBIT,`CNY,`%s,`0.00,`0,`0,`0.00,`0.00,`,`,`%s,`uid=%d,`%s,`0.60%%,`%s,`0.00,`\r\n",
			at, i, i, i, reconcile.FormatDecimal(cents, 2), product, 1000+i%977, reconcile.FormatDecimal(f, 5), reconcile.FormatDecimal(cents, 2))
	}
	b.WriteString("总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额\r\n")
	fmt.Fprintf(&b, "`%d,`%s,`%s,`0.00,`%s,`%s,`%s\r\n", n,
		reconcile.FormatDecimal(settle, 2), reconcile.FormatDecimal(refund, 2), reconcile.FormatDecimal(fee, 5),
		reconcile.FormatDecimal(order, 2), reconcile.FormatDecimal(applied, 2))
	return b.Bytes()
}

func benchParse(b *testing.B, format string, data []byte, wantRows int) {
	p, err := Lookup(format)
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{Name: "bench.csv", Location: shanghai}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := p.Parse(b.Context(), bytes.NewReader(data), opts, func(reconcile.Transaction) error {
			n++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if n != wantRows {
			b.Fatalf("emitted %d rows, want %d", n, wantRows)
		}
	}
}

func BenchmarkParseCSV(b *testing.B) {
	benchParse(b, "csv", genCSV(benchRows), benchRows)
}

func BenchmarkParseWeChatPay(b *testing.B) {
	benchParse(b, "wechatpay", genWeChatPay(benchRows), benchRows)
}

// TestBenchFiles keeps the generated files honest: both parse, and the
// bill's summary row adds up.
func TestBenchFiles(t *testing.T) {
	for _, tt := range []struct {
		format string
		data   []byte
	}{
		{"csv", genCSV(1000)},
		{"wechatpay", genWeChatPay(1000)},
	} {
		p, _ := Lookup(tt.format)
		var kinds [2]int
		err := p.Parse(t.Context(), bytes.NewReader(tt.data), Options{Name: "gen", Location: shanghai}, func(tx reconcile.Transaction) error {
			if tx.Kind == reconcile.KindRefund {
				kinds[1]++
			} else {
				kinds[0]++
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v\n%s", tt.format, err, strings.SplitN(string(tt.data), "\n", 3)[1])
		}
		if kinds != [2]int{900, 100} {
			t.Errorf("%s: payments, refunds = %v, want [900 100]", tt.format, kinds)
		}
	}
}
