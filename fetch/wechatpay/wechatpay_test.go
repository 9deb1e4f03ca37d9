package wechatpay_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile/channelfeed"
	"reconcile/fetch"
	"reconcile/fetch/wechatpay"
	"reconcile/fetch/wechatpay/wechatpaytest"
	"reconcile/retry"
	"reconcile/retry/retrytest"
)

// TestOfferSave is the night as it should go: the signed tradebill
// answer, the signed download, and the bill in place byte for byte,
// unpacked from its gzip, as WeChat Pay's SHA1 is of the bill itself.
func TestOfferSave(t *testing.T) {
	for _, tt := range []struct {
		name            string
		billType        string
		wantQuery       string
		contentEncoding bool
	}{
		{"default ALL", "", "bill_date=2026-11-28&bill_type=ALL&tar_type=GZIP", false},
		{"REFUND", wechatpay.BillRefund, "bill_date=2026-11-28&bill_type=REFUND&tar_type=GZIP", false},
		{"served as Content-Encoding gzip", "", "bill_date=2026-11-28&bill_type=ALL&tar_type=GZIP", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, answer{})
			f.Set(func(st *wechatpaytest.State) { st.ContentEncoding = tt.contentEncoding })
			src, _ := source(t, f, func(c *wechatpay.Config) { c.BillType = tt.billType })
			ctx := context.Background()
			offer, err := src.Offer(ctx, billDay(t))
			if err != nil {
				t.Fatalf("Offer: %v", err)
			}
			queries, _, _ := f.Seen()
			if len(queries) != 1 || queries[0] != tt.wantQuery {
				t.Errorf("tradebill query: got %q, want [%q]", queries, tt.wantQuery)
			}
			sum := sha1.Sum(f.Bill(""))
			if offer.Digest == nil || offer.Digest.Name != "SHA1" || !bytes.Equal(offer.Digest.Sum, sum[:]) {
				t.Errorf("digest: got %+v, want SHA1 %x", offer.Digest, sum)
			}
			if offer.Size != -1 {
				t.Errorf("size: got %d, want -1 (none stated)", offer.Size)
			}
			if strings.Contains(offer.Name, "token") || !strings.Contains(offer.Name, "2026-11-28") {
				t.Errorf("name: got %q, want the bill's date and no download token", offer.Name)
			}
			if got := f.Calls("/v3/billdownload/file"); got != 0 {
				t.Errorf("downloads before Open: got %d, want 0", got)
			}

			path := filepath.Join(t.TempDir(), "wechatpay-2026-11-28.csv")
			parsed := 0
			saved, err := fetch.Save(ctx, offer, path, 0, func(tmp string) error {
				info, err := channelfeed.ParseFile(ctx, tmp, "wechatpay", channelfeed.Options{Location: cst}, nil)
				parsed = info.Rows
				return err
			})
			if err != nil {
				t.Fatalf("Save: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, f.Bill("")) {
				t.Errorf("saved %d bytes, want the bill's %d byte for byte", len(got), len(f.Bill("")))
			}
			if !saved.Changed || saved.Bytes != int64(len(f.Bill(""))) {
				t.Errorf("saved: got %+v, want a new file of %d bytes", saved, len(f.Bill("")))
			}
			if parsed == 0 {
				t.Error("the saved bill: got 0 rows from the wechatpay parser, want the sample's")
			}
			if got := f.Calls("/v3/billdownload/file"); got != 1 {
				t.Errorf("downloads: got %d, want 1", got)
			}
			_, _, userAgents := f.Seen()
			for _, ua := range userAgents {
				if !strings.Contains(ua, "reconcile") {
					t.Errorf("User-Agent: got %q, want the job's", ua)
				}
			}
		})
	}
}

// TestErrorAnswers: WeChat Pay's signed error answers, told apart.
func TestErrorAnswers(t *testing.T) {
	// Long, though short of the 64 KiB of an error answer fetch.Client
	// keeps: cut, the answer's signature would not verify.
	long := strings.Repeat("账单", 5000) + "\x00<!channel>"
	for _, tt := range []struct {
		name       string
		status     int
		code, msg  string
		want       error // ErrNoBill, ErrNotReady; nil: see refusal
		refusal    bool
		wantInText string
	}{
		{"not generated yet", 400, "STATEMENT_CREATING", "账单生成中", fetch.ErrNotReady, false, "STATEMENT_CREATING"},
		{"no bill", 400, "NO_STATEMENT_EXIST", "请求的账单文件不存在", fetch.ErrNoBill, false, "NO_STATEMENT_EXIST"},
		{"no permission", 403, "NO_AUTH", "权限异常", nil, true, "permission"},
		{"bad parameter", 400, "PARAM_ERROR", "参数错误", nil, true, "PARAM_ERROR"},
		{"bill_date out of range", 400, "INVALID_REQUEST", "请检查bill_date", nil, true, "three months"},
		{"signature refused", 401, "SIGN_ERROR", "签名错误", nil, true, "SerialNo"},
		{"403 with an odd code", 403, "ACCOUNT_ERROR", "账户异常", nil, true, "ACCOUNT_ERROR"},
		{"a long message with a NUL", 403, "NO_AUTH", long, nil, true, "NO_AUTH"},
		{"unknown code", 400, "BILL_NOT_FOUND_NEW", "新错误", nil, false, "BILL_NOT_FOUND_NEW"},
		{"404", 404, "RESOURCE_NOT_EXISTS", "not found", nil, false, "does not know"},
		{"no code", 400, "", "", nil, false, "no error code"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := wechatpaytest.ErrorBody(tt.code, tt.msg)
			if tt.code == "" {
				body = "{}"
			}
			f := newFake(t, answer{Status: tt.status, Body: body})
			src, _ := source(t, f, nil)
			offer, err := src.Offer(context.Background(), billDay(t))
			if err == nil {
				t.Fatalf("Offer: got %+v, want an error", offer)
			}
			for _, sentinel := range []error{fetch.ErrNoBill, fetch.ErrNotReady} {
				if got, want := errors.Is(err, sentinel), sentinel == tt.want; got != want {
					t.Errorf("errors.Is(%v, %v): got %t, want %t", err, sentinel, got, want)
				}
			}
			r, isRefusal := errors.AsType[*fetch.Refusal](err)
			if isRefusal != tt.refusal {
				t.Fatalf("refusal: got %t (%v), want %t", isRefusal, err, tt.refusal)
			}
			if isRefusal {
				if r.Status != tt.status || r.Code != tt.code {
					t.Errorf("refusal: got HTTP %d %s, want HTTP %d %s", r.Status, r.Code, tt.status, tt.code)
				}
				if len(r.Message) > 400 || strings.ContainsRune(r.Message, 0) {
					t.Errorf("refusal message: got %d bytes %q, want it short and without control characters", len(r.Message), r.Message)
				}
			}
			if !strings.Contains(err.Error(), tt.wantInText) || len(err.Error()) > 1000 {
				t.Errorf("error: got %q, want it short and naming %q", err, tt.wantInText)
			}
			if got := f.Calls("/v3/bill/tradebill"); got != 1 {
				t.Errorf("tradebill calls: got %d, want 1 (no retry)", got)
			}
		})
	}
}

// TestWronglySignedClient: a merchant key WeChat Pay does not know is
// refused with 401 SIGN_ERROR, which reaches the job as a refusal: a
// person must fix the configuration.
func TestWronglySignedClient(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*wechatpay.Config)
	}{
		{"another private key", func(c *wechatpay.Config) { c.PrivateKey = keys().stranger }},
		{"another certificate serial", func(c *wechatpay.Config) { c.SerialNo = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1" }},
		{"another merchant", func(c *wechatpay.Config) { c.MchID = "1230000109" }},
		{"a clock 10 minutes wrong", func(c *wechatpay.Config) {
			c.Now = func() time.Time { return clock.Add(-10 * time.Minute) }
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, answer{})
			src, _ := source(t, f, tt.edit)
			_, err := src.Offer(context.Background(), billDay(t))
			if tt.name == "a clock 10 minutes wrong" {
				// WeChat Pay's answer is then stale by this clock too: not
				// believed, so a plain error, never a refusal or no bill.
				if err == nil || !strings.Contains(err.Error(), "did not verify") {
					t.Fatalf("Offer: got %v, want an answer that did not verify", err)
				}
				return
			}
			r, ok := errors.AsType[*fetch.Refusal](err)
			if !ok {
				t.Fatalf("Offer: got %v, want a *fetch.Refusal", err)
			}
			if r.Status != http.StatusUnauthorized || r.Code != "SIGN_ERROR" {
				t.Errorf("refusal: got HTTP %d %s, want HTTP 401 SIGN_ERROR", r.Status, r.Code)
			}
			if f.Calls("/v3/billdownload/file") != 0 {
				t.Error("a download was attempted after the refusal")
			}
		})
	}
}

// TestAnswersNotBelieved: an answer whose signature does not verify is
// refused, whatever it says; a forged "no bill" or "not ready" must not
// make the job skip or put off the day.
func TestAnswersNotBelieved(t *testing.T) {
	noBill := wechatpaytest.ErrorBody("NO_STATEMENT_EXIST", "请求的账单文件不存在")
	creating := wechatpaytest.ErrorBody("STATEMENT_CREATING", "账单生成中")
	for _, tt := range []struct {
		name string
		a    func(f *fakeWeChat) answer
		want string
	}{
		{"tampered bill answer", func(f *fakeWeChat) answer {
			good := wechatpaytest.TradeBillJSON("SHA1", f.BillSHA1(""), f.DownloadURL(""))
			evil := wechatpaytest.TradeBillJSON("SHA1", fmt.Sprintf("%x", sha1.Sum([]byte("evil"))), f.DownloadURL(""))
			return answer{Body: good, Sent: evil}
		}, "does not match"},
		{"unsigned bill answer", func(f *fakeWeChat) answer { return answer{Sign: unsigned} }, "missing Wechatpay-Serial"},
		{"bill answer by a stranger's key", func(f *fakeWeChat) answer { return answer{Sign: wrongKey} }, "does not match"},
		{"bill answer by an unknown serial", func(f *fakeWeChat) answer { return answer{Sign: unknownSerial} }, "does not hold"},
		{"stale bill answer", func(f *fakeWeChat) answer { return answer{Sign: stale} }, "replay"},
		{"bill answer from the future", func(f *fakeWeChat) answer { return answer{Sign: future} }, "replay"},
		{"a signature probe", func(f *fakeWeChat) answer { return answer{Sign: badBase64} }, "not base64"},
		{"forged no bill, unsigned", func(f *fakeWeChat) answer { return answer{Status: 400, Body: noBill, Sign: unsigned} }, "NO_STATEMENT_EXIST"},
		{"forged no bill, a stranger's key", func(f *fakeWeChat) answer { return answer{Status: 400, Body: noBill, Sign: wrongKey} }, "does not match"},
		{"no bill, tampered from not ready", func(f *fakeWeChat) answer {
			return answer{Status: 400, Body: creating, Sent: noBill}
		}, "does not match"},
		{"forged not ready, unknown serial", func(f *fakeWeChat) answer { return answer{Status: 400, Body: creating, Sign: unknownSerial} }, "does not hold"},
		{"replayed no bill", func(f *fakeWeChat) answer { return answer{Status: 400, Body: noBill, Sign: stale} }, "replay"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.Queue(tt.a(f))
			src, _ := source(t, f, nil)
			offer, err := src.Offer(context.Background(), billDay(t))
			if err == nil {
				t.Fatalf("Offer: got %+v, want an error", offer)
			}
			if errors.Is(err, fetch.ErrNoBill) || errors.Is(err, fetch.ErrNotReady) {
				t.Errorf("Offer: got %v, which the job would believe; want a plain error", err)
			}
			if _, ok := errors.AsType[*fetch.Refusal](err); ok {
				t.Errorf("Offer: got the refusal %v; want a plain error", err)
			}
			if !strings.Contains(err.Error(), "signature did not verify") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error: got %q, want it to say the signature did not verify and %q", err, tt.want)
			}
			if f.Calls("/v3/billdownload/file") != 0 {
				t.Error("the download was attempted on an answer not believed")
			}
		})
	}
}

// TestRetries: 5xx and 429 are tried again under the job's retry
// policy, each try signed afresh, a Retry-After honoured.
func TestRetries(t *testing.T) {
	sysErr := answer{Status: 500, Body: wechatpaytest.ErrorBody("SYSTEM_ERROR", "系统繁忙，请稍后重试")}
	limited := answer{Status: 429, Body: wechatpaytest.ErrorBody("RATELIMIT_EXCEEDED", "请求超过频率限制"), Header: map[string]string{"Retry-After": "7"}}
	for _, tt := range []struct {
		name      string
		answers   []answer
		wantCalls int
		wantErr   bool
		leastWait time.Duration // of the longest wait
	}{
		{"500 then success", []answer{sysErr, sysErr, {}}, 3, false, 0},
		{"unsigned 502 then success", []answer{{Status: 502, Body: "<html>bad gateway</html>", Sign: unsigned}, {}}, 2, false, 0},
		{"429 with Retry-After", []answer{limited, {}}, 2, false, 7 * time.Second},
		{"500 for good", []answer{sysErr}, 5, true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.answers...)
			src, rec := source(t, f, nil)
			offer, err := src.Offer(context.Background(), billDay(t))
			if got := f.Calls("/v3/bill/tradebill"); got != tt.wantCalls {
				t.Errorf("tradebill calls: got %d, want %d", got, tt.wantCalls)
			}
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Offer: got %+v, want an error", offer)
				}
				_, refused := errors.AsType[*fetch.Refusal](err)
				if refused || errors.Is(err, fetch.ErrNoBill) || errors.Is(err, fetch.ErrNotReady) {
					t.Errorf("Offer: got %v, want a plain error that survived the retries", err)
				}
				if !strings.Contains(err.Error(), "gave up") {
					t.Errorf("error: got %q, want it to say the retries gave up", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Offer: %v", err)
			}
			waits := rec.All()
			if len(waits) != tt.wantCalls-1 {
				t.Errorf("waits: got %v, want %d", waits, tt.wantCalls-1)
			}
			if tt.leastWait > 0 && (len(waits) == 0 || waits[len(waits)-1] < tt.leastWait) {
				t.Errorf("waits: got %v, want the last at least the Retry-After %s", waits, tt.leastWait)
			}
			seen := map[string]bool{}
			_, nonces, _ := f.Seen()
			for _, n := range nonces {
				if seen[n] {
					t.Errorf("nonce %q sent twice: each try must be signed afresh", n)
				}
				seen[n] = true
			}
		})
	}
}

// TestBadOffers: a verified answer the client still cannot act on.
func TestBadOffers(t *testing.T) {
	for _, tt := range []struct {
		name string
		body func(f *fakeWeChat) string
		want string
	}{
		{"http download_url", func(f *fakeWeChat) string {
			return wechatpaytest.TradeBillJSON("SHA1", f.BillSHA1(""), strings.Replace(f.DownloadURL(""), "https://", "http://", 1))
		}, `scheme "http", not https`},
		{"ftp download_url", func(f *fakeWeChat) string {
			return wechatpaytest.TradeBillJSON("SHA1", f.BillSHA1(""), "ftp://api.mch.weixin.qq.com/bill")
		}, "not https"},
		{"relative download_url", func(f *fakeWeChat) string {
			return wechatpaytest.TradeBillJSON("SHA1", f.BillSHA1(""), "/v3/billdownload/file?token=x")
		}, "not https"},
		{"no download_url", func(f *fakeWeChat) string { return wechatpaytest.TradeBillJSON("SHA1", f.BillSHA1(""), "") }, "no download_url"},
		{"download_url too long", func(f *fakeWeChat) string {
			return wechatpaytest.TradeBillJSON("SHA1", f.BillSHA1(""), f.DownloadURL("")+strings.Repeat("x", 3000))
		}, "more than the 2048"},
		{"unknown hash_type", func(f *fakeWeChat) string {
			return wechatpaytest.TradeBillJSON("SM3", f.BillSHA1(""), f.DownloadURL(""))
		}, `hash_type "SM3"`},
		{"short hash_value", func(f *fakeWeChat) string {
			return wechatpaytest.TradeBillJSON("SHA1", f.BillSHA1("")[:38], f.DownloadURL(""))
		}, "40 hex digits"},
		{"hash_value not hex", func(f *fakeWeChat) string {
			return wechatpaytest.TradeBillJSON("SHA1", strings.Repeat("z", 40), f.DownloadURL(""))
		}, "40 hex digits"},
		{"not JSON", func(f *fakeWeChat) string { return "<xml>ok</xml>" }, "not the tradebill JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.Queue(answer{Body: tt.body(f)})
			src, _ := source(t, f, nil)
			offer, err := src.Offer(context.Background(), billDay(t))
			if err == nil {
				t.Fatalf("Offer: got %+v, want an error", offer)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error: got %q, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "token=") {
				t.Errorf("error: got %q, which shows the download token", err)
			}
			if f.Calls("/v3/billdownload/file") != 0 {
				t.Error("a download was attempted")
			}
		})
	}
}

// TestOversizedAnswer: an answer past fetch.Client's limit is refused,
// not read on.
func TestOversizedAnswer(t *testing.T) {
	f := newFake(t)
	padded := strings.Replace(wechatpaytest.TradeBillJSON("SHA1", f.BillSHA1(""), f.DownloadURL("")), "{", `{"pad":"`+strings.Repeat(" ", 4096)+`",`, 1)
	f.Queue(answer{Body: padded})
	src, _ := source(t, f, func(c *wechatpay.Config) { c.Client.Answer = 1024 })
	_, err := src.Offer(context.Background(), billDay(t))
	if err == nil || !strings.Contains(err.Error(), "larger than 1024 bytes") {
		t.Fatalf("Offer: got %v, want the answer refused as too large", err)
	}
	if got := f.Calls("/v3/bill/tradebill"); got != 1 {
		t.Errorf("tradebill calls: got %d, want 1 (too large is not weather)", got)
	}
}

// TestDownloadRefused: a bill whose bytes are not those WeChat Pay
// signed for, or a download that is not the bill, never reaches the
// path.
func TestDownloadRefused(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(st *wechatpaytest.State)
		// streams: Open gives a stream to read, and Save refuses what it
		// reads; else Open itself fails.
		streams bool
		want    string
		refusal bool
	}{
		{"hash mismatch", func(st *wechatpaytest.State) {
			st.Gz = wechatpaytest.Gzipped(t, bytes.Replace(st.Bills[""], []byte("99.00"), []byte("9.00"), 1))
		}, true, "SHA1", false},
		{"truncated gzip", func(st *wechatpaytest.State) { gz := wechatpaytest.Gzipped(t, st.Bills[""]); st.Gz = gz[:len(gz)/2] }, true, "unexpected EOF", false},
		{"not gzip", func(st *wechatpaytest.State) { st.Gz = st.Bills[""] }, false, "not a gzip stream", false},
		{"expired address", func(st *wechatpaytest.State) {
			st.Download = &answer{Status: 400, Body: wechatpaytest.ErrorBody("INVALID_REQUEST", "参数错误")}
		}, false, "next run asks for a new one", false},
		{"download of another merchant", func(st *wechatpaytest.State) {
			st.Download = &answer{Status: 403, Body: wechatpaytest.ErrorBody("NO_AUTH", "权限异常")}
		}, false, "NO_AUTH", true},
		{"unsigned download refusal", func(st *wechatpaytest.State) {
			st.Download = &answer{Status: 403, Body: wechatpaytest.ErrorBody("NO_AUTH", "权限异常"), Sign: unsigned}
		}, false, "signature did not verify", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, answer{})
			f.Set(tt.setup)
			src, _ := source(t, f, nil)
			ctx := context.Background()
			offer, err := src.Offer(ctx, billDay(t))
			if err != nil {
				t.Fatalf("Offer: %v", err)
			}
			if tt.streams {
				rc, err := offer.Open(ctx)
				if err != nil {
					t.Fatalf("Open: got %v, want the stream", err)
				}
				io.Copy(io.Discard, rc)
				rc.Close()
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "wechatpay-2026-11-28.csv")
			_, err = fetch.Save(ctx, offer, path, 0, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Save: got %v, want an error naming %q", err, tt.want)
			}
			if _, ok := errors.AsType[*fetch.Refusal](err); ok != tt.refusal {
				t.Errorf("Save: got %v, refusal %t, want %t", err, ok, tt.refusal)
			}
			if strings.Contains(err.Error(), "token=") {
				t.Errorf("error: got %q, which shows the download token", err)
			}
			left, _ := os.ReadDir(dir)
			if len(left) != 0 {
				t.Errorf("left in the directory: got %v, want nothing", left)
			}
		})
	}
}

// TestDownloadSigned: the download is a signed GET of the address as
// given, its query included.
func TestDownloadSigned(t *testing.T) {
	f := newFake(t, answer{})
	src, _ := source(t, f, nil)
	offer, err := src.Offer(context.Background(), billDay(t))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := offer.Open(context.Background())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, f.Bill("")) {
		t.Fatalf("Open: got %d bytes (%v), want the bill's %d", len(got), err, len(f.Bill("")))
	}
	// Both requests passed the fake's signature check: two nonces.
	if _, nonces, _ := f.Seen(); len(nonces) != 2 || nonces[0] == nonces[1] {
		t.Errorf("signed requests: got nonces %q, want two different", nonces)
	}
}

func TestNew(t *testing.T) {
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		edit func(*wechatpay.Config)
		want string // "": accepted
	}{
		{"complete", nil, ""},
		{"platform certificate serial in lower case", func(c *wechatpay.Config) {
			c.PublicKeys = map[string]*rsa.PublicKey{"5157f09efdc096de15ebe81a47057a7232f1b8e1": &keys().platform.PublicKey}
		}, ""},
		{"no merchant id", func(c *wechatpay.Config) { c.MchID = "" }, "no merchant id"},
		{"merchant id with a quote", func(c *wechatpay.Config) { c.MchID = `19",x="1` }, "digits"},
		{"no serial", func(c *wechatpay.Config) { c.SerialNo = "" }, "serial number"},
		{"serial not hex", func(c *wechatpay.Config) { c.SerialNo = "serial-1" }, "hex"},
		{"no private key", func(c *wechatpay.Config) { c.PrivateKey = nil }, "private key"},
		{"1024-bit private key", func(c *wechatpay.Config) { c.PrivateKey = small }, "1024 bits"},
		{"no public keys", func(c *wechatpay.Config) { c.PublicKeys = nil }, "could not be verified"},
		{"nil public key", func(c *wechatpay.Config) { c.PublicKeys = map[string]*rsa.PublicKey{platformKeyID: nil} }, "nil"},
		{"odd key id", func(c *wechatpay.Config) {
			c.PublicKeys = map[string]*rsa.PublicKey{"wechat key": &keys().platform.PublicKey}
		}, "PUB_KEY_ID_"},
		{"http base URL", func(c *wechatpay.Config) { c.BaseURL = "http://api.mch.weixin.qq.com" }, "https"},
		{"http loopback", func(c *wechatpay.Config) { c.BaseURL = "http://127.0.0.1:8080" }, "https"},
		{"base URL with a query", func(c *wechatpay.Config) { c.BaseURL = "https://api.mch.weixin.qq.com/?x=1" }, "at most a path"},
		{"bill type", func(c *wechatpay.Config) { c.BillType = "ALL_SPECIAL" }, "ALL, SUCCESS or REFUND"},
		{"nil client and clock", func(c *wechatpay.Config) { c.Client, c.Now = nil, nil }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := wechatpay.Config{
				MchID:      mchID,
				SerialNo:   merchantSerial,
				PrivateKey: keys().merchant,
				PublicKeys: map[string]*rsa.PublicKey{platformKeyID: &keys().platform.PublicKey},
				Client:     &fetch.Client{Retry: retry.Policy{Sleep: (&retrytest.Waits{}).Sleep}},
			}
			if tt.edit != nil {
				tt.edit(&cfg)
			}
			src, err := wechatpay.New(cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("New: got %v, want accepted", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("New: got %v, want an error naming %q", err, tt.want)
			case err != nil:
				if d := cfg.PrivateKey; d != nil && strings.Contains(err.Error(), d.D.String()[:20]) {
					t.Errorf("New: %q shows the private key", err)
				}
				return
			}
			if got := src.String(); !strings.Contains(got, mchID) || !strings.Contains(got, "https://api.mch.weixin.qq.com") {
				t.Errorf("String: got %q, want the merchant and the default host", got)
			}
		})
	}
}

// TestSecretsNotPrinted: neither the config nor the source prints the
// private key, however it is formatted.
func TestSecretsNotPrinted(t *testing.T) {
	f := newFake(t, answer{})
	rec := &retrytest.Waits{}
	cfg := config(f, rec)
	src, err := wechatpay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := keys().merchant.D
	secrets := []string{d.String()[:24], d.Text(16)[:24], fmt.Sprintf("%x", d.Bytes()[:12])}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x"} {
		for _, v := range []any{cfg, &cfg, src, *src} {
			out := fmt.Sprintf(verb, v)
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("Sprintf(%s, %T) shows the private key", verb, v)
				}
			}
		}
	}
}

// TestUnsignedRefusal: WeChat Pay may leave unsigned its 401 to a request
// it could not verify. A 401 or 403 is a refusal, signed or not, saying
// it was not verified: believing a forged one costs an alert, never a
// bill.
func TestUnsignedRefusal(t *testing.T) {
	for _, status := range []int{401, 403} {
		f := newFake(t, answer{Status: status, Body: wechatpaytest.ErrorBody("SIGN_ERROR", "签名错误"), Sign: unsigned})
		src, _ := source(t, f, nil)
		_, err := src.Offer(context.Background(), billDay(t))
		r, ok := errors.AsType[*fetch.Refusal](err)
		if !ok || r.Status != status || r.Code != "SIGN_ERROR" || !strings.Contains(err.Error(), "did not verify") {
			t.Errorf("HTTP %d unsigned: got %v, want a refusal SIGN_ERROR saying it was not verified", status, err)
		}
		if f.Calls("download") != 0 {
			t.Errorf("HTTP %d unsigned: a download was attempted", status)
		}
	}
}
