package wechatpay

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"reconcile"
)

// authScheme is the Authorization scheme of API v3: SHA256 with RSA, the
// merchant's key of 2048 bits.
const authScheme = "WECHATPAY2-SHA256-RSA2048"

// maxSkew is how far an answer's timestamp may be from the clock: WeChat
// Pay's own window for requests, and what keeps an old signed answer from
// being played back.
const maxSkew = 5 * time.Minute

// pubKeyPrefix starts the id of a WeChat Pay public key, as
// Wechatpay-Serial names it; anything else there is a platform
// certificate's serial.
const pubKeyPrefix = "PUB_KEY_ID_"

// newRequest is a GET of rawURL, signed afresh: fetch.Client calls it
// for every try, so each try has its own nonce and timestamp.
func (s *Source) newRequest(ctx context.Context, rawURL string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		// The URL may carry a download token: not quoted.
		return nil, errors.New("make request: the URL does not parse")
	}
	auth, err := s.authorization(req.Method, req.URL.RequestURI(), "")
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	return req, nil
}

// authorization signs one request: the method, the path with its query
// as it goes on the wire, a timestamp, a nonce and the body, each ended by
// a newline.
func (s *Source) authorization(method, uri, body string) (string, error) {
	nonce := rand.Text() // 26 characters of A–Z2–7, 130 random bits
	ts := strconv.FormatInt(s.now().Unix(), 10)
	msg := method + "\n" + uri + "\n" + ts + "\n" + nonce + "\n" + body + "\n"
	sum := sha256.Sum256([]byte(msg))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign the request: %w", err)
	}
	return fmt.Sprintf(`%s mchid="%s",nonce_str="%s",signature="%s",timestamp="%s",serial_no="%s"`,
		authScheme, s.mchID, nonce, base64.StdEncoding.EncodeToString(sig), ts, s.serialNo), nil
}

// verify checks WeChat Pay's signature on an answer: over its
// Wechatpay-Timestamp, Wechatpay-Nonce and body, each ended by a
// newline, with the key Wechatpay-Serial names, at a time near the clock.
// WeChat Pay also sends probes whose signature is wrong on purpose
// (WECHATPAY/SIGNTEST/…) to see that merchants check: they fail here.
func (s *Source) verify(h http.Header, body []byte) error {
	serial := h.Get("Wechatpay-Serial")
	ts := h.Get("Wechatpay-Timestamp")
	nonce := h.Get("Wechatpay-Nonce")
	sig := h.Get("Wechatpay-Signature")
	var missing []string
	for _, f := range [][2]string{{"Wechatpay-Serial", serial}, {"Wechatpay-Timestamp", ts}, {"Wechatpay-Nonce", nonce}, {"Wechatpay-Signature", sig}} {
		if f[1] == "" {
			missing = append(missing, f[0])
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	key, ok := s.keys[keyID(serial)]
	if !ok {
		return fmt.Errorf("signed with key %s, which the config does not hold (PublicKeys): a new WeChat Pay public key or platform certificate?", reconcile.Quote(serial))
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("header Wechatpay-Timestamp %s is not a Unix time", reconcile.Quote(ts))
	}
	now := s.now()
	if skew := now.Sub(time.Unix(secs, 0)); skew > maxSkew || skew < -maxSkew {
		return fmt.Errorf("signed at %s, %s from this clock's %s: more than %s, refused as a replay",
			time.Unix(secs, 0).UTC().Format(time.RFC3339), skew.Round(time.Second), now.UTC().Format(time.RFC3339), maxSkew)
	}
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return errors.New("header Wechatpay-Signature is not base64")
	}
	h256 := sha256.New()
	h256.Write([]byte(ts + "\n" + nonce + "\n"))
	h256.Write(body)
	h256.Write([]byte("\n"))
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, h256.Sum(nil), raw); err != nil {
		return fmt.Errorf("the signature by key %s does not match the answer", reconcile.Quote(serial))
	}
	return nil
}

// keyID is the form a key is looked up by: a WeChat Pay public key's id
// as it is, a certificate serial in upper case, as WeChat Pay writes it.
func keyID(id string) string {
	if strings.HasPrefix(id, pubKeyPrefix) {
		return id
	}
	return strings.ToUpper(id)
}

// checkKeyID refuses an id Wechatpay-Serial could never name.
func checkKeyID(id string) error {
	rest, isPub := strings.CutPrefix(id, pubKeyPrefix)
	switch {
	case isPub && rest != "" && len(rest) <= 64 && all(rest, isAlnum):
		return nil
	case !isPub && id != "" && len(id) <= 64 && all(id, isHex):
		return nil
	}
	return fmt.Errorf("public key id %s: want PUB_KEY_ID_… (a WeChat Pay public key) or the hex serial of a platform certificate", reconcile.Quote(id))
}

func isAlnum(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
