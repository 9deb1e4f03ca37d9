package alipay

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"reconcile"
)

// ParsePrivateKey reads the app's private key (应用私钥) as the merchant
// has it: a PEM file ("RSA PRIVATE KEY", PKCS#1, or "PRIVATE KEY",
// PKCS#8), or the bare base64 that Alipay's key tool (支付宝开放平台密钥工具)
// writes into 应用私钥RSA2048.txt: PKCS#8 for its Java format, PKCS#1
// otherwise, line breaks allowed. Its errors never quote the key's bytes.
func ParsePrivateKey(data []byte) (*rsa.PrivateKey, error) {
	der, err := keyDER(data, "app private key", "RSA PRIVATE KEY", "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	// The errors of x509 are left out: an ASN.1 error can describe the
	// bytes it stumbled on, and the bytes are the secret.
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("alipay app private key: a %T, not an RSA key: RSA2 signs with RSA", k)
		}
		return rk, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	return nil, errors.New("alipay app private key: neither a PKCS#8 nor a PKCS#1 RSA private key")
}

// ParsePublicKey reads Alipay's public key (支付宝公钥, not the app's own
// public key): a PEM file ("PUBLIC KEY", X.509 SubjectPublicKeyInfo, or
// "RSA PUBLIC KEY", PKCS#1), or the bare base64 SubjectPublicKeyInfo the
// open platform's console shows. Certificate mode (alipayCertPublicKey_RSA2.crt)
// is not supported: the console shows the public key of an app in
// public-key mode only.
func ParsePublicKey(data []byte) (*rsa.PublicKey, error) {
	der, err := keyDER(data, "Alipay public key", "PUBLIC KEY", "RSA PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	if k, err := x509.ParsePKIXPublicKey(der); err == nil {
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("alipay public key: a %T, not an RSA key: RSA2 signs with RSA", k)
		}
		return rk, nil
	}
	if k, err := x509.ParsePKCS1PublicKey(der); err == nil {
		return k, nil
	}
	return nil, errors.New("alipay public key: neither an X.509 SubjectPublicKeyInfo nor a PKCS#1 RSA public key")
}

// keyDER returns the DER bytes of a PEM block of one of types, or of
// bare base64.
func keyDER(data []byte, what string, types ...string) ([]byte, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a BOM from a Windows editor
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("alipay %s: empty", what)
	}
	if bytes.Contains(data, []byte("-----BEGIN")) {
		block, _ := pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("alipay %s: the PEM armour is broken", what)
		}
		// The type and the headers are labels, not key material.
		switch {
		case block.Type == "CERTIFICATE":
			return nil, fmt.Errorf("alipay %s: a certificate: certificate mode is not supported; give the key of an app in public-key mode (公钥模式)", what)
		case strings.Contains(block.Type, "ENCRYPTED") || strings.Contains(block.Headers["Proc-Type"], "ENCRYPTED"):
			return nil, fmt.Errorf("alipay %s: encrypted with a passphrase: store it decrypted, as a secret", what)
		}
		for _, t := range types {
			if block.Type == t {
				return block.Bytes, nil
			}
		}
		return nil, fmt.Errorf("alipay %s: a PEM block of type %s, want %s", what, reconcile.Quote(block.Type), strings.Join(types, " or "))
	}
	// Alipay's tool writes one line; a copy from the console may wrap it.
	compact := bytes.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, data)
	der, err := base64.StdEncoding.DecodeString(string(compact))
	if err != nil {
		return nil, fmt.Errorf("alipay %s: neither PEM nor base64", what)
	}
	return der, nil
}
