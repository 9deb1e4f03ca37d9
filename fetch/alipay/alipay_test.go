package alipay_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/fetch"
	"reconcile/fetch/alipay"
	"reconcile/retry/retrytest"
)

func TestOfferSavesTheBill(t *testing.T) {
	for _, billType := range []string{"", alipay.BillTrade, alipay.BillSignCustomer} {
		t.Run(cmp.Or(billType, "default"), func(t *testing.T) {
			g := newGateway(t)
			src := g.source(t, &retrytest.Waits{}, func(c *alipay.Config) { c.BillType = billType })
			offer, err := src.Offer(context.Background(), testDay(t))
			if err != nil {
				t.Fatalf("Offer: %v", err)
			}
			wantType := cmp.Or(billType, alipay.BillTrade)
			if want := "alipay " + wantType + " bill 2026-11-28"; offer.Name != want {
				t.Errorf("Name = %q, want %q", offer.Name, want)
			}
			if offer.Size != -1 || offer.Digest != nil {
				t.Errorf("before the download Size, Digest = %d, %v; want -1, nil", offer.Size, offer.Digest)
			}
			path := filepath.Join(t.TempDir(), "alipay-2026-11-28.zip")
			saved, err := fetch.Save(context.Background(), offer, path, 0, nil)
			if err != nil {
				t.Fatalf("Save: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, g.bill) || saved.Bytes != int64(len(g.bill)) {
				t.Errorf("saved %d bytes (%d read back), want the %d of the bill byte for byte", saved.Bytes, len(got), len(g.bill))
			}
			if offer.Size != int64(len(g.bill)) {
				t.Errorf("after the download Size = %d, want the Content-Length %d", offer.Size, len(g.bill))
			}

			if q, d := g.counts(); q != 1 || d != 1 {
				t.Errorf("queries, downloads = %d, %d; want 1, 1", q, d)
			}
			form := g.forms[0]
			var biz map[string]string
			if err := json.Unmarshal([]byte(form.Get("biz_content")), &biz); err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"bill_type": wantType, "bill_date": "2026-11-28"}; !maps.Equal(biz, want) {
				t.Errorf("biz_content = %v, want %v and nothing else", biz, want)
			}
			if g.rawQuery[0] != "" {
				t.Errorf("the request URL has the query %q, want every parameter in the body", g.rawQuery[0])
			}
			if ct := g.headers[0].Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
				t.Errorf("Content-Type = %q, want a form", ct)
			}
		})
	}
}

// TestOfferReadsAnswerLayouts: the signature covers the response object's
// bytes as they stand, whatever the spacing and order around them.
func TestOfferReadsAnswerLayouts(t *testing.T) {
	tests := []struct {
		name string
		body func(g *gateway) string
	}{
		{"sign first", func(g *gateway) string {
			obj := success(g.link())
			return `{"sign":"` + sign(g.keys.alipay, obj) + `","` + responseKey + `":` + obj + `}`
		}},
		{"spaces and newlines", func(g *gateway) string {
			obj := "{\n  \"code\" : \"10000\",\n  \"msg\" : \"Success\",\n  \"bill_download_url\" : \"" + g.link() + "\"\n}"
			return "{\n \"" + responseKey + "\" :\n " + obj + " ,\n \"sign\" : \"" + sign(g.keys.alipay, obj) + "\"\n}\n"
		}},
		{"escaped slashes, signed as sent", func(g *gateway) string {
			obj := success(strings.ReplaceAll(g.link(), "/", `\/`))
			return `{"` + responseKey + `":` + obj + `,"sign":"` + sign(g.keys.alipay, obj) + `"}`
		}},
		{"escaped slashes, signed unescaped", func(g *gateway) string {
			// The case Alipay's SDKs verify a second time for.
			obj := success(g.link())
			sent := strings.ReplaceAll(obj, "/", `\/`)
			return `{"` + responseKey + `":` + sent + `,"sign":"` + sign(g.keys.alipay, obj) + `"}`
		}},
		{"unsigned extra key", func(g *gateway) string {
			obj := success(g.link())
			return `{"` + responseKey + `":` + obj + `,"alipay_cert_sn":"abc","sign":"` + sign(g.keys.alipay, obj) + `"}`
		}},
		{"bill_file_code of an empty day", func(g *gateway) string {
			obj := `{"code":"10000","msg":"Success","bill_download_url":"` + g.link() + `","bill_file_code":"EMPTY_DATA_WITH_BILL_FILE"}`
			return `{"` + responseKey + `":` + obj + `,"sign":"` + sign(g.keys.alipay, obj) + `"}`
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t)
			g.answer = func(g *gateway, n int, biz map[string]string) reply { return reply{body: tt.body(g)} }
			offer, err := g.source(t, &retrytest.Waits{}, nil).Offer(context.Background(), testDay(t))
			if err != nil {
				t.Fatalf("Offer: %v", err)
			}
			body, err := offer.Open(context.Background())
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer body.Close()
			var got bytes.Buffer
			if _, err := got.ReadFrom(body); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), g.bill) {
				t.Errorf("downloaded %d bytes, want the bill's %d", got.Len(), len(g.bill))
			}
		})
	}
}

// TestOfferRefusesForgedAnswers: an answer that does not verify is
// refused, is not retried, and its URL is never fetched.
func TestOfferRefusesForgedAnswers(t *testing.T) {
	evil := "https://evil.example/steal?token=" + billToken
	tests := []struct {
		name string
		body func(g *gateway) string
		want string
	}{
		{"body changed after signing", func(g *gateway) string {
			signed := success(g.link())
			return `{"` + responseKey + `":` + success(evil) + `,"sign":"` + sign(g.keys.alipay, signed) + `"}`
		}, "does not verify"},
		{"one byte of whitespace added", func(g *gateway) string {
			obj := success(g.link())
			return `{"` + responseKey + `":` + strings.Replace(obj, ",", ", ", 1) + `,"sign":"` + sign(g.keys.alipay, obj) + `"}`
		}, "does not verify"},
		{"signed with another key", func(g *gateway) string {
			obj := success(g.link())
			return `{"` + responseKey + `":` + obj + `,"sign":"` + sign(g.keys.stranger, obj) + `"}`
		}, "does not verify"},
		{"signed by the app, not Alipay", func(g *gateway) string {
			obj := success(g.link())
			return `{"` + responseKey + `":` + obj + `,"sign":"` + sign(g.keys.app, obj) + `"}`
		}, "does not verify"},
		{"sign missing", func(g *gateway) string {
			return `{"` + responseKey + `":` + success(g.link()) + `}`
		}, "no signature"},
		{"sign empty", func(g *gateway) string {
			return `{"` + responseKey + `":` + success(g.link()) + `,"sign":""}`
		}, "no signature"},
		{"sign not base64", func(g *gateway) string {
			return `{"` + responseKey + `":` + success(g.link()) + `,"sign":"%%%"}`
		}, "not base64"},
		{"sign not a string", func(g *gateway) string {
			return `{"` + responseKey + `":` + success(g.link()) + `,"sign":12}`
		}, "not a string"},
		{"response key twice", func(g *gateway) string {
			obj := success(g.link())
			return `{"` + responseKey + `":` + obj + `,"` + responseKey + `":` + success(evil) + `,"sign":"` + sign(g.keys.alipay, obj) + `"}`
		}, "twice"},
		{"sign twice", func(g *gateway) string {
			obj := success(evil)
			return `{"` + responseKey + `":` + obj + `,"sign":"` + sign(g.keys.alipay, success(g.link())) + `","sign":"x"}`
		}, "twice"},
		{"response and error_response", func(g *gateway) string {
			obj := success(g.link())
			return `{"error_response":{"code":"20000"},"` + responseKey + `":` + obj + `,"sign":"` + sign(g.keys.alipay, obj) + `"}`
		}, "both"},
		{"data after the object", func(g *gateway) string {
			obj := success(g.link())
			return `{"` + responseKey + `":` + obj + `,"sign":"` + sign(g.keys.alipay, obj) + `"}{"x":1}`
		}, "after"},
		{"response not an object", func(g *gateway) string {
			obj := `"` + g.link() + `"`
			return `{"` + responseKey + `":` + obj + `,"sign":"` + sign(g.keys.alipay, obj) + `"}`
		}, "not an object"},
		{"no response object", func(g *gateway) string {
			return `{"sign":"abc"}`
		}, "holds no"},
		{"an HTML page", func(g *gateway) string {
			return "<html><body>系统繁忙</body></html>"
		}, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t)
			g.answer = func(g *gateway, n int, biz map[string]string) reply { return reply{body: tt.body(g)} }
			offer, err := g.source(t, &retrytest.Waits{}, nil).Offer(context.Background(), testDay(t))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Offer = %v, %v; want an error saying %q", offer, err, tt.want)
			}
			if errors.Is(err, fetch.ErrNoBill) || errors.Is(err, fetch.ErrNotReady) {
				t.Errorf("a forged answer became %v", err)
			}
			if _, ok := errors.AsType[*fetch.Refusal](err); ok {
				t.Errorf("a forged answer became a refusal: %v", err)
			}
			if strings.Contains(err.Error(), billToken) {
				t.Errorf("the error shows the download token: %v", err)
			}
			if q, d := g.counts(); q != 1 || d != 0 {
				t.Errorf("queries, downloads = %d, %d; want 1, 0 (no retry, no download)", q, d)
			}
		})
	}
}

func TestOfferNoBill(t *testing.T) {
	notExist := object("code", "40004", "msg", "Business Failed", "sub_code", "isp.bill_not_exist", "sub_msg", "账单不存在")
	tests := []struct {
		name   string
		body   func(g *gateway) string
		noBill bool
	}{
		{"signed bill_not_exist", func(g *gateway) string { return g.signedReply(notExist).body }, true},
		{"signed NO_BILL_DATA", func(g *gateway) string {
			return g.signedReply(object("code", "40004", "msg", "Business Failed", "sub_code", "NO_BILL_DATA", "sub_msg", "没有发生业务")).body
		}, true},
		{"signed error_response", func(g *gateway) string {
			return `{"error_response":` + notExist + `,"sign":"` + sign(g.keys.alipay, notExist) + `"}`
		}, true},
		{"unsigned bill_not_exist", func(g *gateway) string { return `{"` + responseKey + `":` + notExist + `}` }, false},
		{"bill_not_exist signed with another key", func(g *gateway) string {
			return `{"` + responseKey + `":` + notExist + `,"sign":"` + sign(g.keys.stranger, notExist) + `"}`
		}, false},
		{"bill_not_exist under another code", func(g *gateway) string {
			return g.signedReply(object("code", "40003", "msg", "?", "sub_code", "isp.bill_not_exist")).body
		}, false},
		{"another 40004", func(g *gateway) string {
			return g.signedReply(object("code", "40004", "msg", "Business Failed", "sub_code", "isp.something_new", "sub_msg", "新错误")).body
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t)
			g.answer = func(g *gateway, n int, biz map[string]string) reply { return reply{body: tt.body(g)} }
			_, err := g.source(t, &retrytest.Waits{}, nil).Offer(context.Background(), testDay(t))
			if got := errors.Is(err, fetch.ErrNoBill); got != tt.noBill || err == nil {
				t.Fatalf("Offer error %v: ErrNoBill %v, want %v", err, got, tt.noBill)
			}
			if _, ok := errors.AsType[*fetch.Refusal](err); ok {
				t.Errorf("Offer error %v is a refusal", err)
			}
			if q, d := g.counts(); q != 1 || d != 0 {
				t.Errorf("queries, downloads = %d, %d; want 1, 0", q, d)
			}
		})
	}
	t.Run("unknown code named", func(t *testing.T) {
		g := newGateway(t)
		g.answer = func(g *gateway, n int, biz map[string]string) reply {
			return g.signedReply(object("code", "40004", "msg", "Business Failed", "sub_code", "isp.something_new"))
		}
		_, err := g.source(t, &retrytest.Waits{}, nil).Offer(context.Background(), testDay(t))
		if err == nil || !strings.Contains(err.Error(), "40004 isp.something_new") {
			t.Errorf("Offer error %v, want one naming 40004 isp.something_new", err)
		}
	})
}

func TestOfferRefusal(t *testing.T) {
	hostile := strings.Repeat("x", 10000) + "\x00\n*@channel*"
	tests := []struct {
		name     string
		edit     func(*alipay.Config)
		answer   func(g *gateway) string
		wantCode string
		wantMsg  string
	}{
		{"client signs with the wrong key", func(c *alipay.Config) { c.PrivateKey = testKeys(t).stranger }, nil,
			"40002 isv.invalid-signature", "验签出错"},
		{"unknown app id", func(c *alipay.Config) { c.AppID = "2021000000000999" }, nil,
			"40002 isv.invalid-app-id", "(the answer carried no signature)"},
		{"insufficient permissions", nil, func(g *gateway) string {
			return g.signedReply(object("code", "40006", "msg", "Insufficient Permissions", "sub_code", "isv.insufficient-isv-permissions", "sub_msg", "ISV权限不足")).body
		}, "40006 isv.insufficient-isv-permissions", "ISV权限不足"},
		{"bill type not signed up for", nil, func(g *gateway) string {
			return g.signedReply(object("code", "40004", "msg", "Business Failed", "sub_code", "TYPE_NOT_SUPPORTED", "sub_msg", "此账单类型不支持下载")).body
		}, "40004 TYPE_NOT_SUPPORTED", "不支持"},
		{"date not taken", nil, func(g *gateway) string {
			return g.signedReply(object("code", "40004", "msg", "Business Failed", "sub_code", "isv.invalid_arguments", "sub_msg", "入参不合法")).body
		}, "40004 isv.invalid_arguments", "入参不合法"},
		{"hostile sub_msg", nil, func(g *gateway) string {
			return g.signedReply(object("code", "40002", "msg", "Invalid Arguments", "sub_code", "isv.invalid-timestamp", "sub_msg", hostile)).body
		}, "40002 isv.invalid-timestamp", "(10012 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t)
			if tt.answer != nil {
				g.answer = func(g *gateway, n int, biz map[string]string) reply { return reply{body: tt.answer(g)} }
			}
			_, err := g.source(t, &retrytest.Waits{}, tt.edit).Offer(context.Background(), testDay(t))
			r, ok := errors.AsType[*fetch.Refusal](err)
			if !ok {
				t.Fatalf("Offer error %v, want a *fetch.Refusal", err)
			}
			if r.Code != tt.wantCode || !strings.Contains(r.Message, tt.wantMsg) {
				t.Errorf("Refusal %q / %q, want code %q and a message with %q", r.Code, r.Message, tt.wantCode, tt.wantMsg)
			}
			if len(r.Message) > 400 || strings.ContainsAny(r.Message, "\x00\n") {
				t.Errorf("Refusal message not made safe (%d bytes): %q", len(r.Message), r.Message[:min(len(r.Message), 100)])
			}
			if q, _ := g.counts(); q != 1 {
				t.Errorf("%d queries, want 1: a refusal is not retried", q)
			}
		})
	}
}

func TestOfferRetries(t *testing.T) {
	busy := object("code", "20000", "msg", "Service Currently Unavailable", "sub_code", "isp.unknow-error", "sub_msg", "系统繁忙")
	tests := []struct {
		name     string
		first    func(g *gateway) reply // the first answer; then success
		leastGap time.Duration          // the least first wait
	}{
		{"20000 service unavailable", func(g *gateway) reply { return g.signedReply(busy) }, 0},
		{"20000 unsigned", func(g *gateway) reply { return reply{body: `{"error_response":` + busy + `}`} }, 0},
		{"HTTP 503", func(g *gateway) reply { return reply{status: 503, body: "busy"} }, 0},
		{"HTTP 429 with Retry-After", func(g *gateway) reply {
			return reply{status: 429, header: map[string]string{"Retry-After": "7"}, body: "slow down"}
		}, 7 * time.Second},
		{"rate limited", func(g *gateway) reply {
			return g.signedReply(object("code", "40004", "msg", "Business Failed", "sub_code", "USER_RATE_LIMIT", "sub_msg", "调用频率超限"))
		}, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t)
			g.answer = func(g *gateway, n int, biz map[string]string) reply {
				if n == 1 {
					return tt.first(g)
				}
				return g.signedReply(success(g.link()))
			}
			w := &retrytest.Waits{}
			offer, err := g.source(t, w, nil).Offer(context.Background(), testDay(t))
			if err != nil {
				t.Fatalf("Offer: %v", err)
			}
			if q, _ := g.counts(); q != 2 {
				t.Errorf("%d queries, want 2", q)
			}
			got := w.All()
			if len(got) != 1 || got[0] < tt.leastGap {
				t.Errorf("waits %v, want one of at least %v", got, tt.leastGap)
			}
			// Each try is signed afresh, and the two both verify.
			if g.forms[0].Get("sign") == "" || g.forms[1].Get("sign") == "" {
				t.Error("a try went unsigned")
			}
			if _, err := fetch.Save(context.Background(), offer, filepath.Join(t.TempDir(), "bill.zip"), 0, nil); err != nil {
				t.Errorf("Save: %v", err)
			}
		})
	}
	// To the end: the attempts are the policy's, counted once however
	// the gateway says it is busy.
	for _, tt := range []struct {
		name  string
		reply func(g *gateway) reply
		want  string
	}{
		{"20000 to the end", func(g *gateway) reply { return g.signedReply(busy) }, "20000"},
		{"20000 of another sub code", func(g *gateway) reply {
			return g.signedReply(object("code", "20000", "msg", "Service Currently Unavailable", "sub_code", "isp.something-new"))
		}, "isp.something-new"},
		{"HTTP 503 to the end", func(g *gateway) reply { return reply{status: 503, body: "busy"} }, "503"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t)
			g.answer = func(g *gateway, n int, biz map[string]string) reply { return tt.reply(g) }
			w := &retrytest.Waits{}
			src := g.source(t, w, func(c *alipay.Config) { c.Client.Retry.Attempts = 3 })
			_, err := src.Offer(context.Background(), testDay(t))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "3 attempts") {
				t.Fatalf("Offer error %v, want one naming %s after 3 attempts", err, tt.want)
			}
			if _, ok := errors.AsType[*fetch.Refusal](err); ok || errors.Is(err, fetch.ErrNoBill) {
				t.Errorf("a busy gateway became %v", err)
			}
			if strings.Contains(err.Error(), "1 attempt;") {
				t.Errorf("the error tells of two runs of retries: %v", err)
			}
			if q, _ := g.counts(); q != 3 || len(w.All()) != 2 {
				t.Errorf("%d queries and %d waits, want 3 and 2", q, len(w.All()))
			}
		})
	}
}

// TestOfferFetchesAnHTTPLinkOverHTTPS: Alipay's documented answer is an
// http address (http://dwbillcenter.alipay.com/downloadBillFile.resource?…);
// its token is never sent in the clear: the bill is asked for over https
// at the same host, path and query.
func TestOfferFetchesAnHTTPLinkOverHTTPS(t *testing.T) {
	g := newGateway(t)
	g.answer = func(g *gateway, n int, biz map[string]string) reply {
		return g.signedReply(success(strings.Replace(g.link(), "https://", "http://", 1)))
	}
	offer, err := g.source(t, &retrytest.Waits{}, nil).Offer(context.Background(), testDay(t))
	if err != nil {
		t.Fatalf("Offer: %v", err)
	}
	path := filepath.Join(t.TempDir(), "alipay-2026-11-28.zip")
	if _, err := fetch.Save(context.Background(), offer, path, 0, nil); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, g.bill) {
		t.Errorf("saved %d bytes, %v; want the bill", len(got), err)
	}
	if _, d := g.counts(); d != 1 {
		t.Errorf("downloads = %d, want 1, over https", d)
	}
}

func TestOfferRefusesInsecureLink(t *testing.T) {
	tests := []struct{ name, link, want string }{
		{"ftp", "ftp://dwbillcenter.alipay.com/bill.zip?token=" + billToken, "not https"},
		{"relative", "/downloadBillFile.resource?token=" + billToken, "not https"},
		{"user in the URL", "https://u:p@dwbillcenter.alipay.com/x?token=" + billToken, "a user"},
		{"empty", "-", "no bill_download_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t)
			g.answer = func(g *gateway, n int, biz map[string]string) reply {
				link := tt.link
				if link == "-" {
					link = ""
				}
				return g.signedReply(success(link))
			}
			_, err := g.source(t, &retrytest.Waits{}, nil).Offer(context.Background(), testDay(t))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Offer error %v, want one saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), billToken) {
				t.Errorf("the error shows the download token: %v", err)
			}
			if q, d := g.counts(); q != 1 || d != 0 {
				t.Errorf("queries, downloads = %d, %d; want 1, 0", q, d)
			}
		})
	}
}

// TestSaveRefusesBadDownloads: a download that is an error page or is cut
// short never lands at the path.
func TestSaveRefusesBadDownloads(t *testing.T) {
	tests := []struct {
		name  string
		serve http.HandlerFunc
		want  string
	}{
		{"JSON error body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"code":"40004","msg":"文件已过期"}`))
		}, `"{\"code\":\"40004\"`},
		{"HTML page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("\r\n<!DOCTYPE html><html><title>链接已失效</title></html>"))
		}, "链接已失效"},
		{"cut short", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100000")
			w.Write(bytes.Repeat([]byte("PK\x03\x04"), 250))
		}, "unexpected EOF"},
		{"link expired", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "gone", http.StatusGone)
		}, "410"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t)
			g.serve = tt.serve
			offer, err := g.source(t, &retrytest.Waits{}, nil).Offer(context.Background(), testDay(t))
			if err != nil {
				t.Fatalf("Offer: %v", err)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "bill.zip")
			_, err = fetch.Save(context.Background(), offer, path, 0, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Save error %v, want one with %s", err, tt.want)
			}
			if strings.Contains(err.Error(), billToken) {
				t.Errorf("the error shows the download token: %v", err)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("Save left %v in the directory, want nothing", left)
			}
		})
	}
}

func TestOfferRefusesOversizedAnswer(t *testing.T) {
	g := newGateway(t)
	g.answer = func(g *gateway, n int, biz map[string]string) reply {
		return g.signedReply(object("code", "10000", "msg", strings.Repeat("x", 10000), "bill_download_url", g.link()))
	}
	src := g.source(t, &retrytest.Waits{}, func(c *alipay.Config) { c.Client.Answer = 4096 })
	_, err := src.Offer(context.Background(), testDay(t))
	if err == nil || !strings.Contains(err.Error(), "larger than 4096") {
		t.Fatalf("Offer error %v, want the answer refused as too large", err)
	}
	if q, d := g.counts(); q != 1 || d != 0 {
		t.Errorf("queries, downloads = %d, %d; want 1, 0", q, d)
	}
}

func TestOfferRefusesDayOutsideChina(t *testing.T) {
	g := newGateway(t)
	day, err := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.source(t, &retrytest.Waits{}, nil).Offer(context.Background(), day)
	if err == nil || !strings.Contains(err.Error(), "UTC+8") {
		t.Fatalf("Offer error %v, want the UTC day refused", err)
	}
	if q, _ := g.counts(); q != 0 {
		t.Errorf("%d queries, want none", q)
	}
}

func TestNew(t *testing.T) {
	k := testKeys(t)
	small, err := rsaKey1024()
	if err != nil {
		t.Fatal(err)
	}
	good := func() alipay.Config {
		return alipay.Config{AppID: testAppID, PrivateKey: k.app, AlipayPublicKey: &k.alipay.PublicKey}
	}
	tests := []struct {
		name string
		edit func(*alipay.Config)
		want string // "" for no error
	}{
		{"defaults", func(c *alipay.Config) {}, ""},
		{"sandbox gateway", func(c *alipay.Config) { c.Gateway = "https://openapi-sandbox.dl.alipaydev.com/gateway.do" }, ""},
		{"no app id", func(c *alipay.Config) { c.AppID = "" }, "app id is empty"},
		{"app id not digits", func(c *alipay.Config) { c.AppID = "2021abc" }, "digits"},
		{"no private key", func(c *alipay.Config) { c.PrivateKey = nil }, "private key is missing"},
		{"small private key", func(c *alipay.Config) { c.PrivateKey = small }, "1024 bits"},
		{"no Alipay key", func(c *alipay.Config) { c.AlipayPublicKey = nil }, "public key is missing"},
		{"small Alipay key", func(c *alipay.Config) { c.AlipayPublicKey = &small.PublicKey }, "1024 bits"},
		{"the app's own public key", func(c *alipay.Config) { c.AlipayPublicKey = &k.app.PublicKey }, "应用公钥"},
		{"bill type", func(c *alipay.Config) { c.BillType = "merchant_act" }, "bill type"},
		{"http gateway", func(c *alipay.Config) { c.Gateway = "http://openapi.alipay.com/gateway.do" }, "https"},
		{"gateway with a password", func(c *alipay.Config) { c.Gateway = "https://u:hunter2@openapi.alipay.com/gateway.do" }, "user or password"},
		{"gateway with a query", func(c *alipay.Config) { c.Gateway = "https://openapi.alipay.com/gateway.do?charset=GBK" }, "query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good()
			tt.edit(&cfg)
			src, err := alipay.New(cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("New error %v, want one saying %q", err, tt.want)
			case err != nil && strings.Contains(err.Error(), "hunter2"):
				t.Errorf("the error shows the password: %v", err)
			case src != nil && !strings.Contains(src.String(), testAppID):
				t.Errorf("String() = %q, want the app id", src.String())
			}
		})
	}
}
