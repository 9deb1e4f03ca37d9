package channelfeed

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"

	"reconcile"
)

// aliToGBK encodes UTF-8 text as Alipay writes its bills.
func aliToGBK(t testing.TB, s string) string {
	t.Helper()
	b, err := simplifiedchinese.GBK.NewEncoder().String(s)
	if err != nil {
		t.Fatalf("encode GBK: %v", err)
	}
	return b
}

// aliFromGBK decodes a bill so a test can edit it as text.
func aliFromGBK(t testing.TB, s string) string {
	t.Helper()
	b, err := simplifiedchinese.GBK.NewDecoder().String(s)
	if err != nil {
		t.Fatalf("decode GBK: %v", err)
	}
	return b
}

const (
	alipayZipPath     = "testdata/alipay/zip/input.zip"
	alipaySamplePath  = "testdata/alipay/sample/input.csv"
	alipayDetailEntry = "20880000000000000156_20261128_业务明细.csv"
	alipaySumEntry    = "20880000000000000156_20261128_业务明细(汇总).csv"
)

// alipaySummaryEntry is the (汇总) sibling of the sample, per store; its
// figures are the sample's. Being no 业务明细 bill, it fails the parser if
// it is ever picked instead of the detail entry.
const alipaySummaryEntry = "#支付宝业务汇总查询\r\n" +
	"#账号：[20880000000000000156]\r\n" +
	"#起始日期：[2026年11月28日 00:00:00]   终止日期：[2026年11月29日 00:00:00]\r\n" +
	"#-----------------------------------------业务汇总列表----------------------------------------\r\n" +
	"门店编号,门店名称,交易订单总笔数,退款订单总笔数,订单金额（元）,商家实收（元）,支付宝优惠（元）,商家优惠（元）,卡消费金额（元）,服务费（元）,分润（元）,实收净额（元）\r\n" +
	"\t,\t,7,5,373.90,373.90,0.00,0.00,0.00,-2.25,0.00,371.65\r\n" +
	"合计,,7,5,373.90,373.90,0.00,0.00,0.00,-2.25,0.00,371.65\r\n" +
	"#-----------------------------------------业务汇总列表结束------------------------------------\r\n" +
	"#导出时间：[2026年11月29日 05:46:49]\r\n"

// makeAlipayZip builds the archive Alipay's download URL returns: entry
// names in GBK without the UTF-8 flag, the detail bill and its summary.
func makeAlipayZip(t *testing.T) []byte {
	t.Helper()
	sample, err := os.ReadFile(alipaySamplePath)
	if err != nil {
		t.Fatal(err)
	}
	modified := time.Date(2026, 11, 29, 5, 46, 49, 0, shanghai)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct {
		name string
		body []byte
	}{
		{alipayDetailEntry, sample},
		{alipaySumEntry, []byte(aliToGBK(t, alipaySummaryEntry))},
	} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: aliToGBK(t, e.name), Method: zip.Deflate, NonUTF8: true, Modified: modified})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestMakeAlipayZip writes the zip golden input with -update. Otherwise it
// checks the committed archive against what it should hold: deflate output
// may differ between Go versions, so entries are compared, not bytes.
func TestMakeAlipayZip(t *testing.T) {
	if *update {
		if err := os.WriteFile(alipayZipPath, makeAlipayZip(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sample, err := os.ReadFile(alipaySamplePath)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(alipayZipPath)
	if err != nil {
		t.Fatalf("%v (go test -run TestMakeAlipayZip -update writes it)", err)
	}
	defer zr.Close()
	want := map[string][]byte{
		aliToGBK(t, alipayDetailEntry): sample,
		aliToGBK(t, alipaySumEntry):    []byte(aliToGBK(t, alipaySummaryEntry)),
	}
	if len(zr.File) != len(want) {
		t.Fatalf("archive has %d entries, want %d", len(zr.File), len(want))
	}
	for _, f := range zr.File {
		body, ok := want[f.Name]
		if !ok {
			t.Errorf("entry %q: not a GBK-encoded name of the bill", f.Name)
			continue
		}
		if !f.NonUTF8 || f.Flags&0x800 != 0 {
			t.Errorf("entry %s: the UTF-8 flag is set, Alipay's archives do not set it", aliFromGBK(t, f.Name))
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, body) {
			t.Errorf("entry %s: content differs from the sample (go test -run TestMakeAlipayZip -update)", aliFromGBK(t, f.Name))
		}
	}
}

// TestAlipaySampleFacts pins what the golden file of the sample bill must
// say, so a wrong want.json cannot be refreshed into place unnoticed.
func TestAlipaySampleFacts(t *testing.T) {
	rows := parseAll(t, "alipay", alipaySamplePath)
	if got, want := len(rows), 12; got != want {
		t.Fatalf("rows = %d, want %d", got, want)
	}
	var payments, refunds int
	byLine := map[int]reconcile.Transaction{}
	for _, r := range rows {
		switch r.Kind {
		case reconcile.KindPayment:
			payments++
		case reconcile.KindRefund:
			refunds++
		}
		if r.Currency != "CNY" || r.Status != reconcile.StatusSuccess {
			t.Errorf("line %d: %s %s, want CNY success", r.Line, r.Currency, r.Status)
		}
		byLine[r.Line] = r
	}
	if payments != 7 || refunds != 5 {
		t.Errorf("payments, refunds = %d, %d, want 7, 5", payments, refunds)
	}

	p := byLine[8]
	if p.Kind != reconcile.KindPayment || p.OrderNo != "ORD202611280103" || p.Amount != 6600 ||
		p.ChannelTxnID != "2026112822001499990000000003" || p.FeeMilli != 40000 || p.RefundNo != "" {
		t.Errorf("line 8 = %+v, want payment ORD202611280103, 6600, …0003, FeeMilli 40000 (a 0.40 fee charged)", p)
	}
	if want := time.Date(2026, 11, 28, 10, 2, 41, 0, shanghai); !p.OccurredAt.Equal(want) {
		t.Errorf("line 8 OccurredAt = %v, want 完成时间 %v", p.OccurredAt, want)
	}
	if p := byLine[9]; p.Amount != 10000 {
		t.Errorf("ORD202611280104 Amount = %d, want 10000 (订单金额, not 商家实收 95.00)", p.Amount)
	}
	if p := byLine[10]; p.Amount != 2000 {
		t.Errorf("ORD202611280105 Amount = %d, want 2000 (the red packet is inside 订单金额)", p.Amount)
	}

	r := byLine[13]
	if r.Kind != reconcile.KindRefund || r.OrderNo != "ORD202611280102" || r.RefundNo != "RF202611280101" ||
		r.Amount != 3000 || r.ChannelTxnID != "2026112822001499990000000002/RF202611280101" || r.FeeMilli != -18000 {
		t.Errorf("line 13 = %+v, want refund RF202611280101 of ORD202611280102, 3000, …0002/RF202611280101, FeeMilli -18000 (fee returned)", r)
	}
	if want := time.Date(2026, 11, 28, 15, 10, 7, 0, shanghai); !r.OccurredAt.Equal(want) {
		t.Errorf("line 13 OccurredAt = %v, want the refund's 完成时间 %v", r.OccurredAt, want)
	}
	a, b := byLine[14], byLine[15]
	if a.RefundNo != "RF202611280102" || b.RefundNo != "RF202611280102" || a.ChannelTxnID != b.ChannelTxnID ||
		a.ChannelTxnID != "2026112822001499990000000006/RF202611280102" || a.Amount != 5000 || b.Amount != 5000 ||
		!a.OccurredAt.Before(b.OccurredAt) {
		t.Errorf("lines 14, 15 = %+v, %+v, want RF202611280102 twice, 5000 each, one channel id, different times", a, b)
	}
	if r := byLine[16]; r.Kind != reconcile.KindRefund || r.RefundNo != "ORD202611280107" || r.OrderNo != "ORD202611280107" || r.Amount != 1250 {
		t.Errorf("line 16 = %+v, want the refund sent without out_request_no: RefundNo = OrderNo = ORD202611280107, 1250", r)
	}
	if r := byLine[17]; r.RefundNo != "RF202611280103" || r.Amount != 10000 {
		t.Errorf("line 17 = %+v, want RF202611280103, 10000 (订单金额, not 商家实收 95.00)", r)
	}
}

// TestAlipayVariants checks that each variant of the sample gives the
// sample's rows, line for line.
func TestAlipayVariants(t *testing.T) {
	want := parseAll(t, "alipay", alipaySamplePath)
	for _, c := range []string{"lf", "no_tabs", "half_width_units", "zip"} {
		inputs, _ := filepath.Glob(filepath.Join("testdata", "alipay", c, "input.*"))
		if len(inputs) != 1 {
			t.Fatalf("%s: %d inputs", c, len(inputs))
		}
		got := parseAll(t, "alipay", inputs[0])
		if len(got) != len(want) {
			t.Errorf("%s: %d rows, want %d", c, len(got), len(want))
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: row %d = %+v, want %+v", c, i, got[i], want[i])
			}
		}
	}

	other := parseAll(t, "alipay", filepath.Join("testdata", "alipay", "other_type", "input.csv"))
	if len(other) != len(want)+1 {
		t.Fatalf("other_type: %d rows, want %d", len(other), len(want)+1)
	}
	o := other[len(other)-1]
	if o.Kind != reconcile.KindOther || o.RawKind != "冻结" || o.Amount != 20000 || o.OrderNo != "ORD202611280109" || o.Line != 18 {
		t.Errorf("other_type last row = %+v, want KindOther 冻结, 20000, ORD202611280109, line 18", o)
	}
}

func TestAlipayErrors(t *testing.T) {
	raw := readTestdata(t, "alipay", "sample", "input.csv")
	sample := aliFromGBK(t, raw)
	edit := editor(t, sample)
	e := func(old, new string) string { return aliToGBK(t, edit(old, new)) }
	// Line 6 is ORD202611280101; its 订单金额 follows 对方账户.
	amount := func(s string) string { return e("**明(139******01)\t,39.90,", "**明(139******01)\t,"+s+",") }
	lines := strings.SplitAfter(sample, "\n")
	dropLine := func(n int) string {
		return aliToGBK(t, strings.Join(append(append([]string{}, lines[:n-1]...), lines[n:]...), ""))
	}
	upTo := func(n int) string { return aliToGBK(t, strings.Join(lines[:n], "")) }
	cut := func(at string) string {
		i := strings.Index(sample, at)
		if i < 0 {
			t.Fatalf("%q not in sample", at)
		}
		return aliToGBK(t, sample[:i])
	}
	rawEdit := func(old, new string) string {
		t.Helper()
		o := aliToGBK(t, old)
		if strings.Count(raw, o) != 1 {
			t.Fatalf("%q occurs %d times in the sample", old, strings.Count(raw, o))
		}
		return strings.Replace(raw, o, new, 1)
	}
	footer := "#交易合计：7笔，商家实收共611.40元，商家优惠共5.00元\r\n"

	runBad(t, "alipay", []badCase{
		{"invalid GBK in a field", rawEdit("会员月卡", aliToGBK(t, "会员")+"\x81\x20"+aliToGBK(t, "卡")), 6, "商品名称", "invalid GBK bytes", false},
		{"invalid GBK before a comma", rawEdit("会员月卡", aliToGBK(t, "会员月卡")+"\x81"), 6, "商品名称", "invalid GBK bytes", false},
		{"invalid GBK in the header", rawEdit("备注", aliToGBK(t, "备")+"\xff"), 5, "", "invalid GBK bytes", false},
		{"invalid GBK in a marker", rawEdit("#支付宝业务明细查询", "#\x81\x20"), 1, "", "invalid GBK bytes", false},
		{"invalid GBK in the footer", rawEdit("#导出时间", "#\x81\x20"), 21, "", "invalid GBK bytes", false},
		{"UTF-8 instead of GBK", sample, 1, "", "Alipay sends GBK", false},
		{"UTF-8 byte order mark", "\xef\xbb\xbf" + raw, 1, "", "starts with a UTF-8 byte order mark", false},
		{"missing column", e("支付宝交易号,商户订单号", "交易号,商户订单号"), 5, "支付宝交易号", "missing required column", false},
		{"missing refund number column", e("退款批次号/请求号,", "退款批次号,"), 5, "退款批次号/请求号", "missing required column", false},
		{"duplicate column", e("分润（元）", "服务费(元)"), 5, "服务费(元)", "duplicate column (fields 23 and 24)", false},
		{"ragged row", e("**明(139******01)\t,39.90,39.90,", "**明(139******01)\t,39.90,"), 6, "", "row has 24 fields, header has 25", false},
		{"thousands separator", amount(`"1,000.00"`), 6, "订单金额（元）", `"1,000.00": not a plain decimal`, false},
		{"too many decimals", amount("12.345"), 6, "订单金额（元）", `"12.345": more decimals than the currency has`, false},
		{"exponent", amount("1e3"), 6, "订单金额（元）", `"1e3": not a plain decimal`, false},
		{"bare minus", amount("-"), 6, "订单金额（元）", `"-": not a plain decimal`, false},
		{"empty amount", amount(""), 6, "订单金额（元）", "empty amount", false},
		{"overflow", amount("99999999999999999999.00"), 6, "订单金额（元）", "out of range", false},
		{"negative amount on a payment", amount("-39.90"), 6, "订单金额（元）", "negative amount -39.90 on a 交易 row", false},
		{"positive amount on a refund", e("*华(fak***@example.com)\t,-30.00,", "*华(fak***@example.com)\t,30.00,"), 13, "订单金额（元）", "positive amount 30.00 on a 退款 row", false},
		{"bad 商家实收", e(",39.90,39.90,", ",39.90,39.9O,"), 6, "商家实收（元）", `"39.9O": not a plain decimal`, false},
		{"bad 商家优惠", e("0.00,5.00,0.00,,", "0.00,5.000001,0.00,,"), 9, "商家优惠（元）", "more decimals", false},
		{"bad fee", e("-0.24,", "-0.241234,"), 6, "服务费（元）", "more decimals", false},
		{"bad time", e("2026-11-28 08:15:09", "2026/11/28 08:15:09"), 6, "完成时间", `"2026/11/28 08:15:09": want YYYY-MM-DD HH:MM:SS`, false},
		{"empty 业务类型", e("交易\t,会员月卡", "\t,会员月卡"), 6, "业务类型", "empty 业务类型", false},
		{"empty refund number", e("RF202611280101\t", "\t"), 13, "退款批次号/请求号", "empty refund number on a 退款 row", false},
		{"empty order number", e("ORD202611280101\t", "\t"), 6, "商户订单号", "empty order number on a 交易 row", false},
		{"empty 支付宝交易号", e("2026112822001499990000000001\t", "\t"), 6, "支付宝交易号", "empty 支付宝交易号 on a 交易 row", false},
		{"line too long", e("会员月卡", strings.Repeat("长", maxLine/2+1)), 6, "", "line longer than", false},
		{"control total mismatch", e(",39.90,39.90,", ",39.90,29.90,"), 19, "商家实收（元）", "control total does not add up: footer says 611.40, 交易 rows sum to 601.40", true},
		{"discount total mismatch", e("0.00,5.00,0.00,,", "0.00,4.00,0.00,,"), 19, "商家优惠（元）", "footer says 5.00, 交易 rows sum to 4.00", true},
		{"refund total mismatch", e("-100.00,-95.00,", "-100.00,-94.00,"), 20, "商家实收（元）", "footer says -237.50, 退款 rows sum to -236.50", true},
		{"refund count mismatch", dropLine(15), 19, "业务类型", "control total does not add up: footer says 5 退款 rows, file has 4", true},
		{"payment count mismatch", e("交易\t,奶茶", "冻结\t,奶茶"), 19, "业务类型", "footer says 7 交易 rows, file has 6", true},
		{"truncated after the end marker", cut("#交易合计"), 19, "", "no #交易合计 footer line", true},
		{"truncated before the refund footer", cut("#退款合计"), 20, "", "no #退款合计 footer line", true},
		{"truncated between rows", upTo(14), 15, "", "no #…业务明细列表结束… end marker", true},
		{"truncated mid-row", cut("2026-11-28 16:41:02"), 15, "", "row has 6 fields, header has 25", false},
		{"truncated after the start marker", upTo(4), 5, "", "ends after the start marker", true},
		{"missing start marker", dropLine(4), 4, "", "want the #…业务明细列表… start marker", false},
		{"账务 bill", e("-业务明细列表-", "-账务明细列表-"), 5, "", "start marker", false},
		{"only comments", upTo(3), 0, "", "no #…业务明细列表… start marker", false},
		{"comment instead of header", aliToGBK(t, strings.Join(lines[:4], "")+lines[17]+footer), 5, "", "comment line; want the detail header", false},
		{"comment among the rows", e("\r\n2026112822001499990000000005", "\r\n#\r\n2026112822001499990000000005"), 10, "", "want the #…业务明细列表结束… end marker", false},
		{"row after the end marker", aliToGBK(t, sample+lines[5]), 22, "", "unexpected line after the end marker", false},
		{"second footer line", aliToGBK(t, sample+footer), 22, "", "second #交易合计 line (the first is line 19)", false},
		{"unreadable footer", e("7笔，商家实收共", "7笔；商家实收共"), 19, "", "cannot read the #交易合计 line", false},
		{"bad footer count", e("7笔，", "七笔，"), 19, "业务类型", `footer row count "七"`, false},
		{"bad footer amount", e("611.40元", "611.4.0元"), 19, "商家实收（元）", `footer: "611.4.0": not a plain decimal`, false},
		{"empty file", "", 0, "", "empty file", false},
		{"blank lines", "\r\n \r\n", 0, "", "empty file", false},
	})
}

// TestAlipayFooterVariants: the footer is read with half-width
// punctuation, and without its 商家优惠 part.
func TestAlipayFooterVariants(t *testing.T) {
	sample := aliFromGBK(t, readTestdata(t, "alipay", "sample", "input.csv"))
	p, _ := Lookup("alipay")
	for name, in := range map[string]string{
		"half-width":   strings.NewReplacer("合计：", "合计:", "笔，", "笔,", "元，", "元,").Replace(sample),
		"no discounts": strings.NewReplacer("，商家优惠共5.00元", "", "，商家优惠退款共-5.00元", "").Replace(sample),
	} {
		if in == sample {
			t.Fatalf("%s: edit changed nothing", name)
		}
		n := 0
		err := p.Parse(t.Context(), strings.NewReader(aliToGBK(t, in)), Options{Name: "bill.csv"}, func(reconcile.Transaction) error {
			n++
			return nil
		})
		if err != nil || n != 12 {
			t.Errorf("%s: %d rows, %v; want 12 rows, no error", name, n, err)
		}
	}
}

// TestAlipayCancelMidway checks that a long bill stops within ctxEvery
// rows of the cancellation.
func TestAlipayCancelMidway(t *testing.T) {
	sample := aliFromGBK(t, readTestdata(t, "alipay", "sample", "input.csv"))
	lines := strings.SplitAfter(sample, "\n")
	var b strings.Builder
	for _, l := range lines[:5] {
		b.WriteString(l)
	}
	for range 3 * ctxEvery {
		b.WriteString(lines[5])
	}
	b.WriteString(lines[17])
	fmt.Fprintf(&b, "#交易合计：%d笔，商家实收共%s元\r\n#退款合计：0笔，商家实收退款共0.00元\r\n",
		3*ctxEvery, reconcile.FormatAmount(3*ctxEvery*3990, "CNY"))
	in := aliToGBK(t, b.String())

	p, _ := Lookup("alipay")
	if err := p.Parse(t.Context(), strings.NewReader(in), Options{Name: "big.csv"}, nil); err != nil {
		t.Fatalf("uncancelled: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n := 0
	err := p.Parse(ctx, strings.NewReader(in), Options{Name: "big.csv"}, func(reconcile.Transaction) error {
		n++
		if n == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n > ctxEvery {
		t.Errorf("emitted %d rows after cancel, want at most %d", n, ctxEvery)
	}
}
