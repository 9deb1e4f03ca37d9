package alipay_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"

	"reconcile/fetch/alipay"
)

func rsaKey1024() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 1024) }

// wrap64 breaks s into lines of 64, as a copy from the console may be.
func wrap64(s string) string {
	var b strings.Builder
	for len(s) > 64 {
		b.WriteString(s[:64] + "\r\n")
		s = s[64:]
	}
	return b.String() + s
}

func TestParsePrivateKey(t *testing.T) {
	k := testKeys(t).app
	pkcs1 := x509.MarshalPKCS1PrivateKey(k)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct{ name, data string }{
		{"PEM PKCS#1", string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: pkcs1}))},
		{"PEM PKCS#8", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}))},
		{"PEM with a BOM and CRLF", "\xef\xbb\xbf" + strings.ReplaceAll(string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})), "\n", "\r\n")},
		{"key tool, Java (PKCS#8)", b64(pkcs8)},
		{"key tool, non-Java (PKCS#1)", b64(pkcs1) + "\n"},
		{"bare base64 wrapped", wrap64(b64(pkcs8))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := alipay.ParsePrivateKey([]byte(tt.data))
			if err != nil {
				t.Fatalf("ParsePrivateKey: %v", err)
			}
			if !got.Equal(k) {
				t.Error("ParsePrivateKey returned another key")
			}
		})
	}
}

func TestParsePublicKey(t *testing.T) {
	k := &testKeys(t).alipay.PublicKey
	pkix, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, data string }{
		{"PEM PUBLIC KEY", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix}))},
		{"PEM RSA PUBLIC KEY", string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(k)}))},
		{"console base64", base64.StdEncoding.EncodeToString(pkix)},
		{"console base64 wrapped", wrap64(base64.StdEncoding.EncodeToString(pkix))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := alipay.ParsePublicKey([]byte(tt.data))
			if err != nil {
				t.Fatalf("ParsePublicKey: %v", err)
			}
			if !got.Equal(k) {
				t.Error("ParsePublicKey returned another key")
			}
		})
	}
}

// TestParseKeyErrors: a key that does not parse is refused with a reason,
// and none of its bytes in the error.
func TestParseKeyErrors(t *testing.T) {
	k := testKeys(t).app
	pkcs8, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ec8, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	ecPub, err := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(pkcs8)
	tests := []struct {
		name   string
		public bool
		data   string
		want   string
	}{
		{"empty", false, " \n", "empty"},
		{"not base64", false, "MIIEv" + strings.Repeat("!", 40), "neither PEM nor base64"},
		{"truncated", false, b64[:len(b64)/2], ""},
		{"broken armour", false, "-----BEGIN PRIVATE KEY-----\n" + b64[:100], "armour"},
		{"encrypted", false, string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: pkcs8[:50]})), "passphrase"},
		{"a public key given as private", false, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkcs8})), "want RSA PRIVATE KEY or PRIVATE KEY"},
		{"EC private key", false, base64.StdEncoding.EncodeToString(ec8), "not an RSA key"},
		{"a certificate", true, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: pkcs8[:50]})), "certificate mode"},
		{"EC public key", true, base64.StdEncoding.EncodeToString(ecPub), "not an RSA key"},
		{"the private key given as public", true, b64, "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.public {
				_, err = alipay.ParsePublicKey([]byte(tt.data))
			} else {
				_, err = alipay.ParsePrivateKey([]byte(tt.data))
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), b64[20:36]) || strings.Contains(err.Error(), "MIIE") {
				t.Errorf("the error quotes the key: %v", err)
			}
		})
	}
}
