package wechatpay_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"reconcile/fetch/wechatpay"
	"reconcile/fetch/wechatpay/wechatpaytest"
)

func pemOf(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func TestParsePrivateKey(t *testing.T) {
	k := keys().merchant
	pkcs8, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	broken := append([]byte(nil), pkcs8...)
	broken[len(broken)/2] ^= 0xff
	broken = broken[:len(broken)-40]
	for _, tt := range []struct {
		name string
		data []byte
		want string // "": parses to the merchant key
	}{
		{"apiclient_key.pem, PKCS#8", pemOf("PRIVATE KEY", pkcs8), ""},
		{"PKCS#1", pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k)), ""},
		{"with CRLF and text around", []byte("key of 1900000109\r\n" + strings.ReplaceAll(string(pemOf("PRIVATE KEY", pkcs8)), "\n", "\r\n")), ""},
		{"the certificate instead", pemOf("CERTIFICATE", []byte("not really")), "holds CERTIFICATE"},
		{"no PEM", []byte(base64.StdEncoding.EncodeToString(pkcs8)), "no PEM block"},
		{"encrypted", pemOf("ENCRYPTED PRIVATE KEY", pkcs8), "encrypted"},
		{"broken", pemOf("PRIVATE KEY", broken), "no PKCS#8 or PKCS#1 private key"},
		{"not RSA", pemOf("PRIVATE KEY", ecDER), "ecdsa.PrivateKey, not RSA"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wechatpay.ParsePrivateKey(tt.data)
			if tt.want == "" {
				if err != nil || !got.Equal(k) {
					t.Fatalf("ParsePrivateKey: got %v, want the merchant key", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParsePrivateKey: got %v, want an error naming %q", err, tt.want)
			}
			// The error shows nothing of the key: no run of its base64.
			b64 := base64.StdEncoding.EncodeToString(pkcs8)
			for i := 0; i+16 <= len(b64); i += 16 {
				if strings.Contains(err.Error(), b64[i:i+16]) {
					t.Fatalf("error %q shows the key's bytes", err)
				}
			}
		})
	}
}

func TestParsePublicKey(t *testing.T) {
	k := &keys().platform.PublicKey
	pkix, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"pub_key.pem", pemOf("PUBLIC KEY", pkix), ""},
		{"PKCS#1", pemOf("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(k)), ""},
		{"a certificate", pemOf("CERTIFICATE", []byte("x")), "ParseCertificate"},
		{"a private key", pemOf("PRIVATE KEY", []byte("x")), "no public key"},
		{"garbage", pemOf("PUBLIC KEY", []byte("x")), "public key:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wechatpay.ParsePublicKey(tt.data)
			if tt.want == "" {
				if err != nil || !got.Equal(k) {
					t.Fatalf("ParsePublicKey: got %v, want the platform key", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParsePublicKey: got %v, want an error naming %q", err, tt.want)
			}
		})
	}
}

// TestParseCertificate: the serial comes out as Wechatpay-Serial writes
// it, and a source configured with it verifies answers naming it in
// either case.
func TestParseCertificate(t *testing.T) {
	serial, _ := new(big.Int).SetString("5157f09efdc096de15ebe81a47057a7232f1b8e1", 16)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "Tenpay.com Root CA", Organization: []string{"Tenpay.com"}},
		NotBefore:    clock.Add(-time.Hour),
		NotAfter:     clock.Add(5 * 365 * 24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &keys().platform.PublicKey, keys().platform)
	if err != nil {
		t.Fatal(err)
	}
	gotSerial, key, err := wechatpay.ParseCertificate(append([]byte("# wechatpay platform certificate\n"), pemOf("CERTIFICATE", der)...))
	if err != nil {
		t.Fatalf("ParseCertificate: %v", err)
	}
	if want := "5157F09EFDC096DE15EBE81A47057A7232F1B8E1"; gotSerial != want {
		t.Errorf("serial: got %s, want %s", gotSerial, want)
	}
	if !key.Equal(&keys().platform.PublicKey) {
		t.Error("key: got another key than the certificate's")
	}
	if _, _, err := wechatpay.ParseCertificate(pemOf("PUBLIC KEY", []byte("x"))); err == nil || !strings.Contains(err.Error(), "no certificate") {
		t.Errorf("ParseCertificate(a public key): got %v, want no certificate", err)
	}

	f := newFake(t, answer{})
	f.Set(func(st *wechatpaytest.State) { st.Serial = strings.ToLower(gotSerial) })
	src, _ := source(t, f, func(c *wechatpay.Config) {
		c.PublicKeys = map[string]*rsa.PublicKey{gotSerial: key}
	})
	if _, err := src.Offer(t.Context(), billDay(t)); err != nil {
		t.Errorf("Offer signed under the certificate's serial in lower case: %v", err)
	}
}
