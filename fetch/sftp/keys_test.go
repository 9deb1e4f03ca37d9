package sftp_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"reconcile/fetch/sftp"
)

func TestParsePrivateKey(t *testing.T) {
	pemOf := func(b *pem.Block, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(b)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 300)
	rand.Read(junk)
	user := signer(t, userKey()).PublicKey()
	// Encrypting runs bcrypt's KDF, slow under the race detector: once.
	encrypted := pemOf(ssh.MarshalPrivateKeyWithPassphrase(userKey(), "", []byte("s3cret")))

	tests := []struct {
		name       string
		key        []byte
		passphrase string
		want       ssh.PublicKey // the key's public half, when it parses
		err        string
	}{
		{name: "OpenSSH", key: pemOf(ssh.MarshalPrivateKey(userKey(), "recon")), want: user},
		{name: "OpenSSH encrypted", key: encrypted, passphrase: "s3cret", want: user},
		{name: "OpenSSH passphrase not needed", key: pemOf(ssh.MarshalPrivateKey(userKey(), "")), passphrase: "s3cret", want: user},
		{name: "PKCS#1 RSA", key: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey())}),
			want: signer(t, rsaKey()).PublicKey()},
		{name: "PKCS#8 EC", key: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), want: signer(t, ec).PublicKey()},
		{name: "no passphrase", key: encrypted, err: "encrypted, and no passphrase given"},
		{name: "wrong passphrase", key: encrypted, passphrase: "guess", err: "wrong passphrase"},
		{name: "a passphrase with a space at its end", key: encrypted, passphrase: "s3cret ", err: "wrong passphrase; the secret has leading or trailing spaces"},
		{name: "empty", key: []byte(" \n"), err: "empty"},
		{name: "PuTTY", key: []byte("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: recon\n"), err: "PuTTY .ppk key"},
		{name: "public key", key: ssh.MarshalAuthorizedKey(user), err: "this is a public key"},
		{name: "not PEM", key: []byte("hello"), err: "no PEM block"},
		{name: "corrupt OpenSSH", key: pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: junk}),
			err: "a PEM OPENSSH PRIVATE KEY block that is not a private key"},
		{name: "certificate", key: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: junk}), err: "a PEM CERTIFICATE block"},
		{name: "hostile block type", key: pem.EncodeToMemory(&pem.Block{Type: "X<!here>", Bytes: junk}), err: "a PEM block that is not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sftp.ParsePrivateKey(tt.key, []byte(tt.passphrase))
			if tt.err == "" {
				if err != nil {
					t.Fatalf("ParsePrivateKey: %v", err)
				}
				if !bytes.Equal(got.PublicKey().Marshal(), tt.want.Marshal()) {
					t.Errorf("public key: got %s, want %s", ssh.FingerprintSHA256(got.PublicKey()), ssh.FingerprintSHA256(tt.want))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("ParsePrivateKey: got %v, want an error saying %q", err, tt.err)
			}
			if leak := quotedKey(err.Error(), tt.key); leak != "" {
				t.Errorf("error %q quotes the key's bytes %q", err, leak)
			}
		})
	}
}

// quotedKey is a run of 12 characters of key's body found in msg, "" when
// there is none.
func quotedKey(msg string, key []byte) string {
	for l := range strings.Lines(string(key)) {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "-----") {
			continue
		}
		for i := 0; i+12 <= len(l); i++ {
			if strings.Contains(msg, l[i:i+12]) {
				return l[i : i+12]
			}
		}
	}
	return ""
}

func TestCheckKnownHosts(t *testing.T) {
	host := signer(t, newEd25519()).PublicKey()
	authorized := string(bytes.TrimSpace(ssh.MarshalAuthorizedKey(host)))
	tests := []struct {
		name  string
		lines []string
		addr  string
		err   string // "" accepted
	}{
		{name: "port 22", lines: []string{line("sftp.bank.example", host)}, addr: "sftp.bank.example"},
		{name: "port 22 said", lines: []string{line("sftp.bank.example", host)}, addr: "sftp.bank.example:22"},
		{name: "other port", lines: []string{line("127.0.0.1:2222", host)}, addr: "127.0.0.1:2222"},
		{name: "hashed", lines: []string{knownhosts.HashHostname("sftp.bank.example") + " " + authorized}, addr: "sftp.bank.example"},
		{name: "among others", lines: []string{"# the bank's", line("a.example", host), line("sftp.bank.example", host)}, addr: "sftp.bank.example"},
		{name: "other host", lines: []string{line("sftp.bank.example", host)}, addr: "sftp.other.example",
			err: "no known_hosts line for host sftp.other.example in "},
		{name: "port differs", lines: []string{line("sftp.bank.example", host)}, addr: "sftp.bank.example:2222",
			err: "no known_hosts line for host [sftp.bank.example]:2222"},
		{name: "does not parse", lines: []string{"sftp.bank.example ssh-ed25519 !!!"}, addr: "sftp.bank.example", err: "known_hosts "},
		{name: "bad address", lines: []string{line("sftp.bank.example", host)}, addr: "sftp://sftp.bank.example", err: "not a URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sftp.CheckKnownHosts(knownHostsFile(t, tt.lines...), tt.addr)
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("CheckKnownHosts: got %v, want it accepted", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("CheckKnownHosts: got %v, want an error saying %q", err, tt.err)
			}
		})
	}
	t.Run("no file", func(t *testing.T) {
		err := sftp.CheckKnownHosts(filepath.Join(t.TempDir(), "known_hosts"), "sftp.bank.example")
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("CheckKnownHosts: got %v, want fs.ErrNotExist", err)
		}
	})
}
