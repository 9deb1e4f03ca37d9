package sftp

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"golang.org/x/crypto/ssh"

	"reconcile"
)

// ParsePrivateKey reads the job's private key: an OpenSSH key
// ("BEGIN OPENSSH PRIVATE KEY", what ssh-keygen writes) or a PEM one
// (PKCS#1 RSA, EC, PKCS#8), encrypted or not. passphrase may be empty for
// a key that has none. A PuTTY .ppk key or a public key is refused with
// what to do instead. The errors never quote the key's bytes.
func ParsePrivateKey(pemBytes, passphrase []byte) (ssh.Signer, error) {
	trimmed := bytes.TrimSpace(pemBytes)
	switch {
	case len(trimmed) == 0:
		return nil, errors.New("private key: empty")
	case bytes.HasPrefix(trimmed, []byte("PuTTY-User-Key-File-")):
		return nil, errors.New("private key: a PuTTY .ppk key: export it in OpenSSH form (PuTTYgen: Conversions, Export OpenSSH key)")
	case isPublicKey(trimmed):
		return nil, errors.New("private key: this is a public key: give the private half, the public one is the bank's")
	}
	block, _ := pem.Decode(trimmed)
	if block == nil {
		return nil, errors.New("private key: no PEM block (-----BEGIN … PRIVATE KEY-----) found")
	}
	signer, err := ssh.ParsePrivateKey(trimmed)
	if _, ok := errors.AsType[*ssh.PassphraseMissingError](err); ok {
		if len(passphrase) == 0 {
			return nil, errors.New("private key: encrypted, and no passphrase given")
		}
		signer, err = ssh.ParsePrivateKeyWithPassphrase(trimmed, passphrase)
		if errors.Is(err, x509.IncorrectPasswordError) {
			if reconcile.EdgeSpace(string(passphrase)) {
				// Sent as they are, and the likeliest reason.
				return nil, fmt.Errorf("private key: wrong passphrase; %w, taken as part of it: if they are not meant, remove them from its file or variable",
					reconcile.ErrSecretSpaces)
			}
			return nil, errors.New("private key: wrong passphrase")
		}
	}
	if err != nil {
		// The parser's words are not passed on: some quote what they
		// could not read.
		return nil, fmt.Errorf("private key: a %s block that is not a private key this job can use (OpenSSH, PKCS#1 RSA, EC or PKCS#8)",
			safeBlockType(block.Type))
	}
	return signer, nil
}

// isPublicKey says whether b looks like a public key file: an
// authorized_keys line, RFC 4716 or PKIX PEM.
func isPublicKey(b []byte) bool {
	if _, _, _, _, err := ssh.ParseAuthorizedKey(b); err == nil {
		return true
	}
	return bytes.HasPrefix(b, []byte("---- BEGIN SSH2 PUBLIC KEY ----")) || bytes.HasPrefix(b, []byte("-----BEGIN PUBLIC KEY-----"))
}

// safeBlockType is a PEM block's type as a message may show it: the
// header words, never anything longer.
func safeBlockType(t string) string {
	for _, r := range t {
		if (r < 'A' || r > 'Z') && r != ' ' && (r < '0' || r > '9') {
			return "PEM"
		}
	}
	if t == "" || len(t) > 40 {
		return "PEM"
	}
	return "PEM " + t
}

// CheckKnownHosts says whether the known_hosts file at path parses and
// has a line for addr ("host" or "host:port"), for check-config: without
// one every connection is refused.
func CheckKnownHosts(path, addr string) error {
	hp, err := hostPort(addr)
	if err != nil {
		return fmt.Errorf("sftp address: %w", err)
	}
	h, err := readKnownHosts(path, hp)
	if err != nil {
		return err
	}
	if !h.known {
		return errors.New(noLine(path, hp))
	}
	return nil
}
