package alipay

import (
	"bytes"
	"cmp"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"reconcile"
	"reconcile/fetch"
)

const (
	method = "alipay.data.dataservice.bill.downloadurl.query"
	// responseKey holds the answer of method; errorKey the gateway's answer
	// when it could not tell which method was asked (a bad app id).
	responseKey = "alipay_data_dataservice_bill_downloadurl_query_response"
	errorKey    = "error_response"
	codeSuccess = "10000"
	// maxLink bounds bill_download_url: the API documents String(2048).
	maxLink = 4096
)

// china is Alipay's clock and calendar: UTC+8 all year (China has had no
// daylight saving time since 1991), so no time zone database is needed.
var china = time.FixedZone("CST", 8*60*60)

// bizContent is the business parameters of method, as Alipay documents
// them: bill_type and bill_date (and smid, for a bill type this package
// does not fetch). Nothing else is sent.
type bizContent struct {
	BillType string `json:"bill_type"`
	BillDate string `json:"bill_date"`
}

// form is the signed request of the download URL of billDate.
func (s *Source) form(billDate string) (url.Values, error) {
	biz, err := json.Marshal(bizContent{BillType: s.billType, BillDate: billDate})
	if err != nil {
		return nil, err
	}
	params := map[string]string{
		"app_id":      s.appID,
		"method":      method,
		"format":      "JSON",
		"charset":     "utf-8",
		"sign_type":   "RSA2",
		"timestamp":   s.now().In(china).Format(time.DateTime),
		"version":     "1.0",
		"biz_content": string(biz),
	}
	sig, err := signRSA2(s.key, signContent(params))
	if err != nil {
		return nil, err
	}
	form := url.Values{"sign": {sig}}
	for k, v := range params {
		form.Set(k, v)
	}
	return form, nil
}

// signContent is what Alipay's open API signs of a request: every
// parameter but sign with a value, sign_type included (only the
// asynchronous notifications' check leaves it out), sorted by name, as
// name=value joined by '&', the values neither encoded nor escaped.
func signContent(params map[string]string) string {
	keys := make([]string, 0, len(params))
	for k, v := range params {
		if k != "sign" && v != "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k + "=" + params[k])
	}
	return b.String()
}

// signRSA2 is Alipay's RSA2: SHA256withRSA, PKCS#1 v1.5, in standard
// base64.
func signRSA2(key *rsa.PrivateKey, content string) (string, error) {
	sum := sha256.Sum256([]byte(content))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign the request: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// answer is the response object of method, or of the gateway's
// error_response.
type answer struct {
	Code            string `json:"code"`
	Msg             string `json:"msg"`
	SubCode         string `json:"sub_code"`
	SubMsg          string `json:"sub_msg"`
	BillDownloadURL string `json:"bill_download_url"`
	BillFileCode    string `json:"bill_file_code"`
	// signed is true when the answer carried a signature and it verified.
	signed bool
}

// readAnswer takes the gateway's body apart and verifies its signature
// where it has one. Alipay signs the response object's JSON exactly as it
// stands in the body, so those bytes are found by the decoder's offsets,
// never marshalled again; what is decoded afterwards is the bytes that
// verified. An answer without a signature comes back unsigned, for the
// caller to trust it only as far as it may (see judge).
func readAnswer(body []byte, pub *rsa.PublicKey) (answer, error) {
	value, sign, err := splitAnswer(body)
	if err != nil {
		return answer{}, err
	}
	signed := false
	if sign != "" {
		if value, err = verify(pub, value, sign); err != nil {
			return answer{}, err
		}
		signed = true
	}
	var a answer
	if err := json.Unmarshal(value, &a); err != nil {
		return answer{}, fmt.Errorf("the answer's response object is malformed: %w", err)
	}
	a.signed = signed
	return a, nil
}

// splitAnswer returns the raw bytes of the response object and the
// signature of a body {"…_response":{…},"sign":"…"}, in any order and
// spacing. A body holding a key twice, or both the method's and the
// error's object, is refused: which of two a check would read is exactly
// what a forger plays with.
func splitAnswer(body []byte) (value []byte, sign string, err error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, "", fmt.Errorf("the answer is not a JSON object: %s: refused", start(body))
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "", fmt.Errorf("the answer is malformed JSON: %w", err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, "", fmt.Errorf("the answer holds %s twice: refused", reconcile.Quote(key))
		}
		seen[key] = true
		switch key {
		case responseKey, errorKey:
			if value != nil {
				return nil, "", errors.New("the answer holds both a response and an error_response: refused")
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, "", fmt.Errorf("the answer is malformed JSON: %w", err)
			}
			end := dec.InputOffset()
			value = body[end-int64(len(raw)) : end]
			if len(value) == 0 || value[0] != '{' {
				return nil, "", fmt.Errorf("the answer's %s is not an object: refused", key)
			}
		case "sign":
			if err := dec.Decode(&sign); err != nil {
				return nil, "", fmt.Errorf("the answer's sign is not a string: %w", err)
			}
		default:
			// alipay_cert_sn and whatever Alipay adds later: not signed,
			// not read.
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, "", fmt.Errorf("the answer is malformed JSON: %w", err)
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, "", fmt.Errorf("the answer is malformed JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, "", errors.New("the answer has data after its JSON object: refused")
	}
	if value == nil {
		return nil, "", fmt.Errorf("the answer holds no %s: %s: refused", responseKey, start(body))
	}
	return value, sign, nil
}

// verify checks sign over value with Alipay's public key and returns the
// bytes it verified. Alipay's own SDKs try again with "\/" read as "/":
// the gateway has signed the unescaped text of an answer whose body
// escapes its slashes. The bytes returned are then the unescaped ones, so
// what is read is what was signed.
func verify(pub *rsa.PublicKey, value []byte, sign string) ([]byte, error) {
	sig, err := base64.StdEncoding.DecodeString(sign)
	if err != nil {
		return nil, errors.New("the answer's sign is not base64: refused")
	}
	check := func(b []byte) bool {
		sum := sha256.Sum256(b)
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil
	}
	if check(value) {
		return value, nil
	}
	if bytes.Contains(value, []byte(`\/`)) {
		if unescaped := bytes.ReplaceAll(value, []byte(`\/`), []byte("/")); check(unescaped) {
			return unescaped, nil
		}
	}
	return nil, errors.New("the answer's signature does not verify with Alipay's public key: refused")
}

// judge turns an answer that is not a success into the error the job
// acts on. A signature decides how far it is believed: an unsigned
// answer may stop the fetch (a refusal, a retry), never declare the day
// without a bill, which would skip it for good.
func judge(a answer) error {
	sub := subKey(a.SubCode)
	said := describe(a)
	if wait, ok := busy[sub]; ok || a.Code == "20000" {
		return &busyError{said: said, wait: wait}
	}
	switch {
	case a.Code == "40004" && noBill[sub]:
		if !a.signed {
			return fmt.Errorf("Alipay's answer says there is no bill (%s) but carries no signature: not trusted", said)
		}
		// Before 09:00 (China) on the next day Alipay says the same of a
		// bill it has not made yet; the scheduler asks only after the
		// channel's available_after, so what Alipay says is reported.
		return fmt.Errorf("%w (%s)", fetch.ErrNoBill, said)
	case refused[a.Code] || a.Code == "40004" && refusedBusiness[sub]:
		msg := cmp.Or(a.SubMsg, a.Msg)
		r := &fetch.Refusal{Status: 200, Code: strings.TrimSpace(token(a.Code) + " " + token(a.SubCode))}
		if msg != "" {
			r.Message = reconcile.Quote(reconcile.Printable(msg))
		}
		if !a.signed {
			r.Message = strings.TrimSpace(r.Message + " (the answer carried no signature)")
		}
		return r
	}
	return fmt.Errorf("Alipay answered %s", said)
}

var (
	// refused are the gateway's codes a person has to act on: 20001 an
	// authorisation token, 40001 a missing parameter, 40002 a bad one
	// (isv.invalid-signature, isv.invalid-app-id, isv.invalid-timestamp),
	// 40006 an app without the permission for the API.
	refused = map[string]bool{"20001": true, "40001": true, "40002": true, "40006": true}
	// refusedBusiness are the method's business codes (under 40004) that
	// asking again will not change: a bill type the merchant has not
	// signed the product of, a date before the account existed, a date
	// the API does not take (today, the future).
	refusedBusiness = map[string]bool{"type_not_supported": true, "bill_date_before_registration": true,
		"invalid_arguments": true, "invailid_arguments": true} // sic: Alipay's document spells it so
	// noBill are the business codes saying the day has no bill:
	// isp.bill_not_exist is what the gateway answers; NO_BILL_DATA is
	// documented for a day without business of the bill's type.
	noBill = map[string]bool{"bill_not_exist": true, "no_bill_data": true}
	// busy are the sub codes worth another try, with the wait Alipay asks
	// for ("间隔1分钟后重试" of the rate limits).
	busy = map[string]time.Duration{
		"unknow_error": 0, "unknown_error": 0, // sic: the gateway's isp.unknow-error
		"system_rate_limit": time.Minute, "user_rate_limit": time.Minute,
		"app_call_limited": time.Minute, "method_call_limited": time.Minute,
	}
)

// subKey is a sub code as the tables above hold it: Alipay writes the same
// code as isp.bill_not_exist, BILL_NOT_EXIST or bill-not-exist.
func subKey(s string) string {
	s = strings.ToLower(s)
	if i := strings.IndexByte(s, '.'); i >= 0 && i <= 3 {
		s = s[i+1:]
	}
	return strings.ReplaceAll(s, "-", "_")
}

// busyError is an answer saying Alipay cannot serve now: 20000 (服务不可用)
// or a rate limit. It is retried under the job's policy.
type busyError struct {
	said string
	wait time.Duration
}

func (e *busyError) Error() string { return "Alipay is busy: " + e.said }

// transient is fetch.Transient and Alipay's busy answers.
func transient(err error) (bool, time.Duration) {
	if b, ok := errors.AsType[*busyError](err); ok {
		return true, b.wait
	}
	return fetch.Transient(err)
}

// describe says what an answer said, safe to show.
func describe(a answer) string {
	s := "code " + token(a.Code)
	if a.SubCode != "" {
		s += " " + token(a.SubCode)
	}
	if msg := cmp.Or(a.SubMsg, a.Msg); msg != "" {
		s += ": " + reconcile.Quote(reconcile.Printable(msg))
	}
	if !a.signed {
		s += " (unsigned)"
	}
	return s
}

// token is a code as it is when it looks like one, quoted when it does not.
func token(s string) string {
	if s == "" || len(s) > 64 || strings.ContainsFunc(s, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '_' || r == '-')
	}) {
		return reconcile.Quote(s)
	}
	return s
}

// start quotes the start of a body that is not what was expected.
func start(body []byte) string {
	return reconcile.Quote(reconcile.Printable(string(body[:min(len(body), 256)])))
}

// checkLink refuses a download URL that is not https, but for http, which
// it asks for over https at the same host, path and query: Alipay's
// documented answer is an http address of its bill host
// (http://dwbillcenter.alipay.com/downloadBillFile.resource?…), which
// serves the same over https, and the query is the download's token, never
// to be sent in the clear. The URL itself is never shown.
func checkLink(link string) (string, error) {
	if link == "" {
		return "", errors.New("Alipay's success answer has no bill_download_url: refused")
	}
	if len(link) > maxLink {
		return "", fmt.Errorf("Alipay's bill_download_url is %d bytes long: refused", len(link))
	}
	u, err := url.Parse(link)
	switch {
	case err != nil:
		return "", errors.New("Alipay's bill_download_url is not a URL: refused")
	case u.Scheme == "http":
		u.Scheme = "https"
		if u.Port() == "80" {
			u.Host = strings.TrimSuffix(u.Host, ":80")
		}
	case u.Scheme != "https":
		return "", fmt.Errorf("Alipay's bill_download_url is %s, not https: refused", token(u.Scheme))
	}
	if u.Host == "" || u.User != nil {
		return "", errors.New("Alipay's bill_download_url has no host, or a user: refused")
	}
	return u.String(), nil
}
