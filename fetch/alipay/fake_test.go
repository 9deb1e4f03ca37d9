package alipay_test

import (
	"archive/zip"
	"bytes"
	"cmp"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reconcile"
	"reconcile/fetch"
	"reconcile/fetch/alipay"
	"reconcile/retry"
	"reconcile/retry/retrytest"
)

// The wire names, stated here on their own so a slip in the package is
// not mirrored by its test.
const (
	method      = "alipay.data.dataservice.bill.downloadurl.query"
	responseKey = "alipay_data_dataservice_bill_downloadurl_query_response"
	testAppID   = "2021000000000001"
	// testStamp is the timestamp of testNow in China.
	testStamp = "2026-11-29 10:30:00"
	billToken = "tok-3c9f1e"
)

var testNow = time.Date(2026, 11, 29, 2, 30, 0, 0, time.UTC)

type testKeySet struct {
	app      *rsa.PrivateKey // the merchant's app key
	alipay   *rsa.PrivateKey // "Alipay"'s key, signing the answers
	stranger *rsa.PrivateKey // neither's
}

// keys are made once per test binary: a 2048-bit key takes a while.
var keys = sync.OnceValues(func() (testKeySet, error) {
	var ks [3]*rsa.PrivateKey
	for i := range ks {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return testKeySet{}, err
		}
		ks[i] = k
	}
	return testKeySet{app: ks[0], alipay: ks[1], stranger: ks[2]}, nil
})

func testKeys(t *testing.T) testKeySet {
	t.Helper()
	k, err := keys()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// reply is one answer of the fake gateway.
type reply struct {
	status int
	header map[string]string
	body   string
}

// gateway is a fake of Alipay's open platform gateway and of its bill
// download host, as the documentation describes them.
type gateway struct {
	t      *testing.T
	srv    *httptest.Server
	keys   testKeySet
	bill   []byte
	answer func(g *gateway, n int, biz map[string]string) reply // nil: the bill's URL
	serve  http.HandlerFunc                                     // the download; nil: bill

	mu        sync.Mutex
	queries   int
	downloads int
	forms     []url.Values
	headers   []http.Header
	rawQuery  []string
}

func newGateway(t *testing.T) *gateway {
	g := &gateway{t: t, keys: testKeys(t), bill: testZip(t)}
	mux := http.NewServeMux()
	mux.HandleFunc("/gateway.do", g.handleQuery)
	mux.HandleFunc("/downloadBillFile.resource", g.handleDownload)
	g.srv = httptest.NewTLSServer(mux)
	t.Cleanup(g.srv.Close)
	return g
}

// link is a download URL on the fake's own host.
func (g *gateway) link() string {
	return g.srv.URL + "/downloadBillFile.resource?bizType=trade&fileType=csv.zip&bizDates=20261128&token=" + billToken
}

func (g *gateway) handleQuery(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.queries++
	n := g.queries
	g.rawQuery = append(g.rawQuery, r.URL.RawQuery)
	g.headers = append(g.headers, r.Header.Clone())
	g.mu.Unlock()
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	form := r.PostForm
	g.mu.Lock()
	g.forms = append(g.forms, form)
	g.mu.Unlock()
	rep := g.check(form, n)
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "text/html;charset=utf-8") // as the gateway labels its JSON
	w.WriteHeader(cmp.Or(rep.status, http.StatusOK))
	w.Write([]byte(rep.body))
}

// check answers a query as the gateway does: an unknown app without a
// signature, a request that does not verify with the app's public key as
// isv.invalid-signature (signed: the app is known), then the scenario.
func (g *gateway) check(form url.Values, n int) reply {
	if form.Get("app_id") != testAppID {
		return reply{body: `{"error_response":{"code":"40002","msg":"Invalid Arguments","sub_code":"isv.invalid-app-id","sub_msg":"无效的AppID参数"}}`}
	}
	if form.Get("sign") == "" {
		return g.signedReply(object("code", "40001", "msg", "Missing Required Arguments", "sub_code", "isv.missing-signature", "sub_msg", "缺少签名参数"))
	}
	content := gatewaySignContent(form)
	sig, err := base64.StdEncoding.DecodeString(form.Get("sign"))
	sum := sha256.Sum256([]byte(content))
	if err != nil || rsa.VerifyPKCS1v15(&g.keys.app.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return g.signedReply(object("code", "40002", "msg", "Invalid Arguments", "sub_code", "isv.invalid-signature",
			"sub_msg", "验签出错，建议检查签名字符串或签名私钥与应用公钥是否匹配，网关生成的验签字符串为："+content))
	}
	for k, want := range map[string]string{"method": method, "format": "JSON", "charset": "utf-8",
		"sign_type": "RSA2", "version": "1.0", "timestamp": testStamp} {
		if got := form.Get(k); got != want {
			g.t.Errorf("request %s = %q, want %q", k, got, want)
		}
	}
	var biz map[string]string
	if err := json.Unmarshal([]byte(form.Get("biz_content")), &biz); err != nil {
		g.t.Errorf("biz_content %q: %v", form.Get("biz_content"), err)
		return g.signedReply(object("code", "40002", "msg", "Invalid Arguments", "sub_code", "isv.invalid-parameter"))
	}
	// The method's documented business parameters are bill_type and
	// bill_date, and smid for bill_type trade_zft_merchant only.
	for k := range biz {
		if k != "bill_type" && k != "bill_date" {
			g.t.Errorf("biz_content has %q, which alipay.data.dataservice.bill.downloadurl.query does not document", k)
		}
	}
	if g.answer != nil {
		return g.answer(g, n, biz)
	}
	return g.signedReply(success(g.link()))
}

// gatewaySignContent is the gateway's side of the signature: all the
// parameters with a value but sign, sorted, key=value joined by '&'.
func gatewaySignContent(form url.Values) string {
	var keys []string
	for k, v := range form {
		if k != "sign" && len(v) > 0 && v[0] != "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + form.Get(k)
	}
	return strings.Join(parts, "&")
}

func (g *gateway) handleDownload(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.downloads++
	g.mu.Unlock()
	if r.URL.Query().Get("token") != billToken {
		http.Error(w, "link expired", http.StatusForbidden)
		return
	}
	if g.serve != nil {
		g.serve(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/oct-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(g.bill)))
	w.Write(g.bill)
}

func (g *gateway) counts() (queries, downloads int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.queries, g.downloads
}

// signedReply is obj as the method's response object, signed by Alipay.
func (g *gateway) signedReply(obj string) reply {
	return reply{body: `{"` + responseKey + `":` + obj + `,"sign":"` + sign(g.keys.alipay, obj) + `"}`}
}

func sign(key *rsa.PrivateKey, content string) string {
	sum := sha256.Sum256([]byte(content))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// object is a JSON object of the key/value pairs kv, in their order, as
// Alipay writes its answers.
func object(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

func success(link string) string {
	// Alipay does not escape the URL's '&' as \u0026, as json.Marshal would.
	return `{"code":"10000","msg":"Success","bill_download_url":"` + link + `"}`
}

// testZip is a bill as Alipay packs it.
func testZip(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"20880000000000000156_20261128_业务明细.csv", "20880000000000000156_20261128_业务明细(汇总).csv"} {
		// Stored, not deflated: a bill of some kilobytes, as real ones are.
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(bytes.Repeat([]byte("#支付宝业务明细查询\r\n"), 200))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// source is a Source of the test app against g, with retries recorded in
// w; edit changes the config first.
func (g *gateway) source(t *testing.T, w *retrytest.Waits, edit func(*alipay.Config)) *alipay.Source {
	t.Helper()
	cfg := alipay.Config{
		AppID:           testAppID,
		PrivateKey:      g.keys.app,
		AlipayPublicKey: &g.keys.alipay.PublicKey,
		Gateway:         g.srv.URL + "/gateway.do",
		Client:          &fetch.Client{HTTP: g.srv.Client(), Retry: retry.Policy{Sleep: w.Sleep}},
		Now:             func() time.Time { return testNow },
	}
	if edit != nil {
		edit(&cfg)
	}
	s, err := alipay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testDay is 2026-11-28 in China.
func testDay(t *testing.T) reconcile.BusinessDay {
	t.Helper()
	day, err := reconcile.NewBusinessDay("2026-11-28", time.FixedZone("CST", 8*60*60))
	if err != nil {
		t.Fatal(err)
	}
	return day
}
