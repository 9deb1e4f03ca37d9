package wechatpay

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// minBits is the least RSA size API v3 signs with (RSA2048).
const minBits = 2048

// ParsePrivateKey reads the merchant API private key: apiclient_key.pem
// as WeChat Pay's certificate tool writes it (PKCS#8, "BEGIN PRIVATE
// KEY"), or PKCS#1 ("BEGIN RSA PRIVATE KEY"). Its errors never show the
// key's bytes.
func ParsePrivateKey(data []byte) (*rsa.PrivateKey, error) {
	blocks := pemBlocks(data)
	for _, b := range blocks {
		switch b.Type {
		case "PRIVATE KEY", "RSA PRIVATE KEY":
			if _, enc := b.Headers["Proc-Type"]; enc {
				return nil, errors.New("the private key is encrypted: decrypt it first (openssl pkey -in key.pem -out apiclient_key.pem)")
			}
			key, err := privateKey(b.Bytes)
			if err != nil {
				return nil, err
			}
			if err := checkPrivateKey(key); err != nil {
				return nil, err
			}
			return key, nil
		case "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("the private key is encrypted: decrypt it first (openssl pkey -in key.pem -out apiclient_key.pem)")
		}
	}
	return nil, fmt.Errorf("no private key: %s; want apiclient_key.pem (BEGIN PRIVATE KEY)", found(blocks))
}

// privateKey reads a DER private key in either form, whatever its PEM
// block said it was, and says nothing of its bytes when it fails.
func privateKey(der []byte) (*rsa.PrivateKey, error) {
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, errors.New("the PEM block holds no PKCS#8 or PKCS#1 private key that parses")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("the private key is %s, not RSA", keyKind(k))
	}
	return rk, nil
}

// ParsePublicKey reads a WeChat Pay public key (微信支付公钥), pub_key.pem
// as the merchant platform hands it out ("BEGIN PUBLIC KEY"; PKCS#1
// "BEGIN RSA PUBLIC KEY" is taken too). Its id, PUB_KEY_ID_…, is shown
// beside it on the platform and is the key of Config.PublicKeys.
func ParsePublicKey(data []byte) (*rsa.PublicKey, error) {
	blocks := pemBlocks(data)
	for _, b := range blocks {
		var k any
		var err error
		switch b.Type {
		case "PUBLIC KEY":
			k, err = x509.ParsePKIXPublicKey(b.Bytes)
		case "RSA PUBLIC KEY":
			k, err = x509.ParsePKCS1PublicKey(b.Bytes)
		case "CERTIFICATE":
			return nil, errors.New("a certificate, not a public key: read a platform certificate with ParseCertificate, under its serial")
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("the public key is %s, not RSA", keyKind(k))
		}
		if err := checkPublicKey(rk); err != nil {
			return nil, err
		}
		return rk, nil
	}
	return nil, fmt.Errorf("no public key: %s; want pub_key.pem (BEGIN PUBLIC KEY)", found(blocks))
}

// ParseCertificate reads a certificate PEM and returns its serial as WeChat
// Pay writes it (hex, upper case, as in Wechatpay-Serial) and its key.
// For a platform certificate (平台证书) that is the id and key of
// Config.PublicKeys; for the merchant API certificate, apiclient_cert.pem,
// the serial is Config.SerialNo.
func ParseCertificate(data []byte) (serial string, key *rsa.PublicKey, err error) {
	blocks := pemBlocks(data)
	for _, b := range blocks {
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return "", nil, fmt.Errorf("certificate: %w", err)
		}
		rk, ok := cert.PublicKey.(*rsa.PublicKey)
		if !ok {
			return "", nil, fmt.Errorf("the certificate's key is %s, not RSA", keyKind(cert.PublicKey))
		}
		if err := checkPublicKey(rk); err != nil {
			return "", nil, err
		}
		if cert.SerialNumber == nil || cert.SerialNumber.Sign() <= 0 {
			return "", nil, errors.New("the certificate has no serial number")
		}
		// Without leading zeros, as WeChat Pay's SDKs print it.
		return strings.ToUpper(cert.SerialNumber.Text(16)), rk, nil
	}
	return "", nil, fmt.Errorf("no certificate: %s; want a PEM certificate (BEGIN CERTIFICATE)", found(blocks))
}

func checkPrivateKey(k *rsa.PrivateKey) error {
	if k.N == nil || k.N.BitLen() < minBits {
		return fmt.Errorf("an RSA key of %d bits, want at least %d", bitLen(&k.PublicKey), minBits)
	}
	if err := k.Validate(); err != nil {
		return errors.New("the RSA private key is not consistent")
	}
	return nil
}

func checkPublicKey(k *rsa.PublicKey) error {
	if k.N == nil || k.N.BitLen() < minBits || k.E < 3 {
		return fmt.Errorf("an RSA key of %d bits, want at least %d", bitLen(k), minBits)
	}
	return nil
}

func bitLen(k *rsa.PublicKey) int {
	if k.N == nil {
		return 0
	}
	return k.N.BitLen()
}

// pemBlocks decodes every PEM block of data.
func pemBlocks(data []byte) []*pem.Block {
	var blocks []*pem.Block
	for {
		b, rest := pem.Decode(data)
		if b == nil {
			return blocks
		}
		blocks = append(blocks, b)
		data = rest
	}
}

// found says which PEM blocks a file held, by type only.
func found(blocks []*pem.Block) string {
	if len(blocks) == 0 {
		return "the file holds no PEM block"
	}
	types := make([]string, 0, len(blocks))
	for _, b := range blocks {
		t := b.Type
		if len(t) > 40 || !all(t, func(c byte) bool { return c == ' ' || 'A' <= c && c <= 'Z' || isDigit(c) }) {
			t = "(an odd type)"
		}
		types = append(types, t)
	}
	return "the file holds " + strings.Join(types, ", ")
}

func keyKind(k any) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", k), "*")
}
