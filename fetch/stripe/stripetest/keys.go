package stripetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The keys the server knows. Each ends in a tail of its own, so a test can
// tell whether any part of one leaked into an error or a log. Any other
// key is refused as an invalid one.
const (
	// SecretKey is the key the server takes (Server.Key).
	SecretKey = "sk_test_51FakeGoodKey000000000000000000000000000000gdQ7"
	// RestrictedKey is refused with 403, as a restricted key without the
	// Reporting permissions is.
	RestrictedKey = "rk_test_51FakeRestrictedKey0000000000000000000000rsX4"
	// ExpiredKey is refused with 401 and the code api_key_expired.
	ExpiredKey = "sk_test_51FakeExpiredKey000000000000000000000000exV9"
)

// authorized takes the key as Stripe does, as a Bearer token or as the
// Basic user, and refuses a bad one with Stripe's status and error body,
// which quotes the key masked to its last four characters.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		user, _, basic := r.BasicAuth()
		key, ok = user, basic
	}
	switch {
	case ok && key == s.Key:
		return true
	case ok && key == RestrictedKey:
		writeError(w, http.StatusForbidden, "invalid_request_error", "", fmt.Sprintf(
			"The provided key '%s' does not have the required permissions for this endpoint on account 'acct_1Fake'. "+
				"Having the 'rak_report_run_read' permission would allow this request to continue.", Mask(key)))
	case ok && key == ExpiredKey:
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "api_key_expired", "Expired API Key provided: "+Mask(key))
	default:
		w.Header().Set("WWW-Authenticate", `Basic realm="Stripe"`)
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "", "Invalid API Key provided: "+Mask(key))
	}
	return false
}

// Mask is key as Stripe quotes it in an error message: its first eight
// and last four characters, stars between.
func Mask(key string) string {
	if len(key) < 12 {
		return key
	}
	return key[:8] + strings.Repeat("*", len(key)-12) + key[len(key)-4:]
}

// ErrorBody is Stripe's error object of type typ (invalid_request_error,
// api_error, …) with code (omitted when empty) and message, as the body of
// an Answer.
func ErrorBody(typ, code, msg string) string {
	e := map[string]string{"type": typ, "message": msg}
	if code != "" {
		e["code"] = code
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return string(b)
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, ErrorBody(typ, code, msg))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
