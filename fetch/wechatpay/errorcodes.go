package wechatpay

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"reconcile"
	"reconcile/fetch"
)

// Error codes of GET /v3/bill/tradebill and of the download it names, as
// WeChat Pay's page of the API lists them, with API v3's common codes.
const (
	codeNoBill   = "NO_STATEMENT_EXIST" // 400: no payment or refund on that date
	codeCreating = "STATEMENT_CREATING" // 400: not made yet (from 09:00 the next day)
	codeParam    = "PARAM_ERROR"        // 400
	// codeInvalid is 400: bill_date outside the three months WeChat Pay
	// keeps; on the download, an address that expired (it lasts 5
	// minutes) or was not asked for.
	codeInvalid = "INVALID_REQUEST"
	codeSign    = "SIGN_ERROR" // 401: the request's signature did not verify
	codeNoAuth  = "NO_AUTH"    // 403: no permission, or another merchant's download
)

// hints say what a person checks when WeChat Pay refuses.
var hints = map[string]string{
	codeSign:    "check that SerialNo is the serial of the merchant API certificate whose private key is PrivateKey, and MchID",
	codeNoAuth:  "check that the merchant has the bill download permission, and MchID",
	codeParam:   "WeChat Pay refused a parameter of the request",
	codeInvalid: "check bill_date: WeChat Pay hands out the bills of the last three months",
}

// errorAnswer is API v3's error body.
type errorAnswer struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// failed turns a failed call into what the job acts on. A status that
// says "try later" (5xx, 429) was retried already and stays a plain
// error. A 401 or 403 is a refusal, signed or not. Any other answer is
// believed only when WeChat Pay signed it: a
// forged NO_STATEMENT_EXIST would make the job skip a day's bill, a
// forged STATEMENT_CREATING would put it off for ever. download says the
// answer came from the download address, where "no bill" and "not made
// yet" have no meaning and an INVALID_REQUEST is an expired address, which
// the next run's new address cures.
func (s *Source) failed(call string, err error, download bool) error {
	se, ok := errors.AsType[*fetch.StatusError](err)
	if !ok || se.Status >= 500 || se.Status == http.StatusTooManyRequests {
		return err // the retries name the call
	}
	var ea errorAnswer
	_ = json.Unmarshal(se.Body, &ea) // a body that is no error answer has no code
	code := safeCode(ea.Code)
	if verr := s.verify(se.Header, se.Body); verr != nil {
		if se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden {
			// WeChat Pay may leave unsigned its refusal of a request it
			// could not verify. Believing a forged refusal costs an alert
			// at most; it never skips or puts off a bill.
			return fmt.Errorf("%s: %w", call, &fetch.Refusal{Status: se.Status, Code: code,
				Message: "(the answer's signature did not verify: " + verr.Error() + ")"})
		}
		claimed := ""
		if code != "" {
			claimed = " claiming " + code
		}
		return fmt.Errorf("%s: HTTP %d answer%s not believed, its signature did not verify: %w", call, se.Status, claimed, verr)
	}
	if code == "" {
		return fmt.Errorf("%s: HTTP %d %s with no error code", call, se.Status, http.StatusText(se.Status))
	}
	msg := reconcile.Quote(reconcile.Printable(ea.Message))
	refusal := func() error {
		r := &fetch.Refusal{Status: se.Status, Code: code, Message: msg}
		if hint, ok := hints[ea.Code]; ok {
			return fmt.Errorf("%s: %w; %s", call, r, hint)
		}
		return fmt.Errorf("%s: %w", call, r)
	}
	switch {
	case ea.Code == codeNoBill && !download:
		return fmt.Errorf("%s: %w (%s)", call, fetch.ErrNoBill, code)
	case ea.Code == codeCreating && !download:
		return fmt.Errorf("%s: %w (%s)", call, fetch.ErrNotReady, code)
	case ea.Code == codeInvalid && download:
		return fmt.Errorf("%s: HTTP %d %s %s: the download address was refused (expired? it lasts 5 minutes); the next run asks for a new one",
			call, se.Status, code, msg)
	case ea.Code == codeSign, ea.Code == codeNoAuth, se.Status == http.StatusUnauthorized, se.Status == http.StatusForbidden:
		return refusal()
	case (ea.Code == codeParam || ea.Code == codeInvalid) && !download:
		return refusal()
	}
	return fmt.Errorf("%s: HTTP %d, error code %s, which this client does not know: %s", call, se.Status, code, msg)
}

// safeCode is an error code as it is when it looks like one (capitals,
// digits, underscores), else quoted and cut short.
func safeCode(code string) string {
	plain := len(code) <= 64 && all(code, func(c byte) bool { return 'A' <= c && c <= 'Z' || isDigit(c) || c == '_' })
	if plain {
		return code
	}
	return reconcile.Quote(code)
}
