// Package wechatpaytest is a fake WeChat Pay API v3 for tests: the trade
// bill API as WeChat Pay's documents give it, over TLS. It checks every
// request's WECHATPAY2-SHA256-RSA2048 signature with the test merchant's
// public key and refuses a bad one with 401 SIGN_ERROR, signs its answers
// with the test platform key, and hands out each date's bill gzipped,
// unsigned, at the address its tradebill answer names.
package wechatpaytest

import (
	"bytes"
	"compress/gzip"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test merchant and WeChat Pay's key.
const (
	MchID       = "1900000109"
	SerialNo    = "3775B6A45ACD588826D15E583A95F5DD12345678"
	PublicKeyID = "PUB_KEY_ID_0119000001092026112800000000000001"
)

// Keys are the test's RSA keys, made once per test binary (they are slow
// to make).
type Keys struct {
	Merchant *rsa.PrivateKey // the merchant's API key: signs requests
	Platform *rsa.PrivateKey // WeChat Pay's: signs answers
	Stranger *rsa.PrivateKey // anyone else's
}

// TestKeys returns the keys.
var TestKeys = sync.OnceValue(func() Keys {
	gen := func() *rsa.PrivateKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		return k
	}
	return Keys{Merchant: gen(), Platform: gen(), Stranger: gen()}
})

// SignMode is how the server signs one answer.
type SignMode int

const (
	Signed        SignMode = iota // signed by WeChat Pay's key, now
	Unsigned                      // no Wechatpay-* headers, as a proxy or an impostor answers
	WrongKey                      // signed, by a key that is not WeChat Pay's
	UnknownSerial                 // signed, naming a key the merchant was never given
	Stale                         // signed six minutes before the server's clock
	Future                        // signed six minutes after it
	BadBase64                     // a signature that is not base64 (WeChat's SIGNTEST probe)
)

// Answer is one answer of the server.
type Answer struct {
	Status int    // 0: 200
	Body   string // "" with Status 0: the tradebill JSON of the date's bill
	// Sent, when set, is the body sent after Body was signed: tampering
	// on the way.
	Sent   string
	Header map[string]string
	Sign   SignMode
}

// State is what the server answers; change it with Set.
type State struct {
	// Bills are the plain bills by bill_date (YYYY-MM-DD); "" is the bill
	// of any date without its own.
	Bills map[string][]byte
	// Codes are error answers by bill_date, taking precedence over Bills:
	// NO_STATEMENT_EXIST, STATEMENT_CREATING (400), SIGN_ERROR (401),
	// NO_AUTH (403), SYSTEM_ERROR (500)…
	Codes map[string]string
	// Answers, when any, are the tradebill answers in turn, the last one
	// repeating, in place of Bills and Codes.
	Answers []Answer
	// Download, when set, is the download's answer; Gz, when set, the
	// bytes the download serves instead of the date's gzipped bill.
	Download *Answer
	Gz       []byte
	// ContentEncoding serves the download as Content-Encoding: gzip.
	ContentEncoding bool
	// Serial is the Wechatpay-Serial of the platform key ("": PublicKeyID).
	Serial string
	// Now is the server's clock for the timestamps it checks and signs.
	Now func() time.Time
}

// Server is a running fake WeChat Pay. A date with neither a bill nor a
// code answers NO_STATEMENT_EXIST, as WeChat Pay does for a day without
// transactions.
type Server struct {
	URL         string
	MchID       string
	SerialNo    string
	PublicKeyID string

	t   testing.TB
	srv *httptest.Server

	mu         sync.Mutex
	st         State
	calls      map[string]int // by path
	nonces     []string
	queries    []string
	userAgents []string
}

// NewServer starts a server with no bill, its clock time.Now; it is closed
// when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{MchID: MchID, SerialNo: SerialNo, PublicKeyID: PublicKeyID, t: t, calls: map[string]int{},
		st: State{Bills: map[string][]byte{}, Codes: map[string]string{}, Now: time.Now}}
	s.srv = httptest.NewTLSServer(s)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Client is an HTTP client that trusts the server's certificate (that of
// every httptest TLS server).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Set changes the server's answers while it runs.
func (s *Server) Set(change func(st *State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change(&s.st)
}

// Queue makes answers the tradebill answers in turn, the last repeating.
func (s *Server) Queue(answers ...Answer) { s.Set(func(st *State) { st.Answers = answers }) }

// SetBill makes csv the bill of date ("" for every date without its own).
func (s *Server) SetBill(date string, csv []byte) {
	s.Set(func(st *State) { st.Bills[date] = bytes.Clone(csv); delete(st.Codes, date) })
}

// SetAnswer makes the tradebill of date answer WeChat Pay's error code.
func (s *Server) SetAnswer(date, code string) { s.Set(func(st *State) { st.Codes[date] = code }) }

// Bill is the bill of date as SetBill gave it.
func (s *Server) Bill(date string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bill(date)
}

func (s *Server) bill(date string) []byte {
	if b, ok := s.st.Bills[date]; ok {
		return b
	}
	return s.st.Bills[""]
}

// BillSHA1 is the hex SHA1 of the bill of date, as the answer states it.
func (s *Server) BillSHA1(date string) string { return fmt.Sprintf("%x", sha1.Sum(s.Bill(date))) }

// DownloadURL is the address the tradebill answer of date names.
func (s *Server) DownloadURL(date string) string {
	return s.srv.URL + "/v3/billdownload/file?token=6XIv5TUPto7pByrTQKhd6kwvyKLG2uY2wMMR8cNXqaA_Cv_isgaUtBzp4Qtioz&tartype=gzip&date=" + date
}

// TradeBillJSON is the answer of a bill that exists.
func TradeBillJSON(hashType, hashValue, downloadURL string) string {
	return jsonOf(map[string]string{"hash_type": hashType, "hash_value": hashValue, "download_url": downloadURL})
}

// ErrorBody is WeChat Pay's error answer.
func ErrorBody(code, message string) string {
	return jsonOf(map[string]string{"code": code, "message": message})
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Gzipped is b as the download serves it.
func Gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	gz, err := gzipOf(b)
	if err != nil {
		t.Fatal(err)
	}
	return gz
}

func gzipOf(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Calls counts the requests of a kind, refused ones included: "tradebill"
// or "download", or a path.
func (s *Server) Calls(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch kind {
	case "tradebill":
		return s.calls["/v3/bill/tradebill"]
	case "download":
		return s.calls["/v3/billdownload/file"]
	}
	return s.calls[kind]
}

// Seen returns the tradebill queries, and the nonces and User-Agents of
// the requests whose signature verified.
func (s *Server) Seen() (queries, nonces, userAgents []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...), append([]string(nil), s.nonces...), append([]string(nil), s.userAgents...)
}

// MerchantKeyPEM is the merchant's private key as apiclient_key.pem holds
// it (PKCS#8).
func (s *Server) MerchantKeyPEM() []byte {
	der, err := x509.MarshalPKCS8PrivateKey(TestKeys().Merchant)
	if err != nil {
		s.t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// PublicKeyPEM is WeChat Pay's public key as pub_key.pem holds it.
func (s *Server) PublicKeyPEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(&TestKeys().Platform.PublicKey)
	if err != nil {
		s.t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// codeStatus is the HTTP status WeChat Pay gives an error code.
var codeStatus = map[string]int{"SIGN_ERROR": 401, "NO_AUTH": 403, "SYSTEM_ERROR": 500, "RATELIMIT_EXCEEDED": 429}

// ServeHTTP answers one request as WeChat Pay would.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls[r.URL.Path]++
	s.mu.Unlock()
	if code, msg := s.checkAuth(r); code != "" {
		status := http.StatusUnauthorized
		if code == "PARAM_ERROR" {
			status = http.StatusBadRequest
		}
		s.reply(w, Answer{Status: status, Body: ErrorBody(code, msg)})
		return
	}
	switch r.URL.Path {
	case "/v3/bill/tradebill":
		s.reply(w, s.tradebill(r))
	case "/v3/billdownload/file":
		s.mu.Lock()
		download, gz, contentEncoding := s.st.Download, s.st.Gz, s.st.ContentEncoding
		bill := s.bill(r.URL.Query().Get("date"))
		s.mu.Unlock()
		if r.URL.Query().Get("token") == "" {
			s.reply(w, Answer{Status: http.StatusBadRequest, Body: ErrorBody("INVALID_REQUEST", "参数错误")})
			return
		}
		if download != nil {
			s.reply(w, *download)
			return
		}
		if gz == nil {
			var err error
			if gz, err = gzipOf(bill); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		// The download is not signed, as WeChat Pay documents.
		w.Header().Set("Content-Type", "application/octet-stream")
		if contentEncoding {
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Write(gz)
	default:
		s.reply(w, Answer{Status: http.StatusNotFound, Body: ErrorBody("NOT_FOUND", "not found")})
	}
}

// tradebill is the answer to a verified GET /v3/bill/tradebill.
func (s *Server) tradebill(r *http.Request) Answer {
	date := r.URL.Query().Get("bill_date")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries = append(s.queries, r.URL.RawQuery)
	if len(s.st.Answers) > 0 {
		a := s.st.Answers[0]
		if len(s.st.Answers) > 1 {
			s.st.Answers = s.st.Answers[1:]
		}
		if a.Body == "" && a.Status == 0 {
			a.Body = TradeBillJSON("SHA1", fmt.Sprintf("%x", sha1.Sum(s.bill(date))), s.DownloadURL(date))
		}
		return a
	}
	code, ok := s.st.Codes[date]
	if !ok && s.bill(date) == nil {
		code, ok = "NO_STATEMENT_EXIST", true
	}
	if ok {
		status := codeStatus[code]
		if status == 0 {
			status = http.StatusBadRequest
		}
		return Answer{Status: status, Body: ErrorBody(code, "fake WeChat Pay: "+code)}
	}
	return Answer{Body: TradeBillJSON("SHA1", fmt.Sprintf("%x", sha1.Sum(s.bill(date))), s.DownloadURL(date))}
}

// checkAuth verifies the request as WeChat Pay does: the scheme, the
// merchant, the serial of its certificate, a timestamp within five
// minutes, and the signature over the method, the request target, the
// timestamp, the nonce and the (empty) body.
func (s *Server) checkAuth(r *http.Request) (code, message string) {
	if r.Header.Get("Accept") != "application/json" || r.Header.Get("User-Agent") == "" {
		return "PARAM_ERROR", "Accept application/json and a User-Agent are required"
	}
	rest, ok := strings.CutPrefix(r.Header.Get("Authorization"), "WECHATPAY2-SHA256-RSA2048 ")
	if !ok {
		return "SIGN_ERROR", "Http头Authorization值格式错误，请参考《微信支付商户REST API签名规则》"
	}
	params := map[string]string{}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		uq, err := strconv.Unquote(v)
		if !ok || err != nil {
			return "SIGN_ERROR", "Http头Authorization值格式错误"
		}
		params[k] = uq
	}
	for _, k := range []string{"mchid", "nonce_str", "signature", "timestamp", "serial_no"} {
		if params[k] == "" {
			return "SIGN_ERROR", "Http头Authorization缺少" + k
		}
	}
	if len(params) != 5 || params["mchid"] != MchID || params["serial_no"] != SerialNo {
		return "SIGN_ERROR", "商户证书序列号有误"
	}
	ts, err := strconv.ParseInt(params["timestamp"], 10, 64)
	if err != nil || s.now().Sub(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return "SIGN_ERROR", "时间戳过期"
	}
	sig, err := base64.StdEncoding.DecodeString(params["signature"])
	if err != nil {
		return "SIGN_ERROR", "签名错误"
	}
	msg := r.Method + "\n" + r.RequestURI + "\n" + params["timestamp"] + "\n" + params["nonce_str"] + "\n" + "\n"
	sum := sha256.Sum256([]byte(msg))
	if rsa.VerifyPKCS1v15(&TestKeys().Merchant.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return "SIGN_ERROR", "签名错误，请检查后再试"
	}
	s.mu.Lock()
	s.nonces = append(s.nonces, params["nonce_str"])
	s.userAgents = append(s.userAgents, r.Header.Get("User-Agent"))
	s.mu.Unlock()
	return "", ""
}

func (s *Server) now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Now()
}

// reply sends a, signed as a.Sign says.
func (s *Server) reply(w http.ResponseWriter, a Answer) {
	status := a.Status
	if status == 0 {
		status = http.StatusOK
	}
	at := s.now()
	switch a.Sign {
	case Stale:
		at = at.Add(-6 * time.Minute)
	case Future:
		at = at.Add(6 * time.Minute)
	}
	ts := strconv.FormatInt(at.Unix(), 10)
	nonce := rand.Text()
	key, serial := TestKeys().Platform, PublicKeyID
	s.mu.Lock()
	if s.st.Serial != "" {
		serial = s.st.Serial
	}
	s.mu.Unlock()
	switch a.Sign {
	case WrongKey:
		key = TestKeys().Stranger
	case UnknownSerial:
		serial = "PUB_KEY_ID_0119000001092026000000000000009"
	}
	sum := sha256.Sum256([]byte(ts + "\n" + nonce + "\n" + a.Body + "\n"))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		s.t.Error(err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Request-ID", "08F4B1E0C20610B50518E2D6C05520CE9B0F28B3A001-0")
	if a.Sign != Unsigned {
		h.Set("Wechatpay-Serial", serial)
		h.Set("Wechatpay-Timestamp", ts)
		h.Set("Wechatpay-Nonce", nonce)
		h.Set("Wechatpay-Signature", base64.StdEncoding.EncodeToString(sig))
		if a.Sign == BadBase64 {
			h.Set("Wechatpay-Signature", "WECHATPAY/SIGNTEST/"+base64.StdEncoding.EncodeToString(sig[:16]))
		}
	}
	for k, v := range a.Header {
		h.Set(k, v)
	}
	body := a.Body
	if a.Sent != "" {
		body = a.Sent
	}
	w.WriteHeader(status)
	w.Write([]byte(body))
}
