package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// testRSA is one RSA key for the tests of this file: slow to make.
var testRSA = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func pemOf(t *testing.T, kind string, der []byte) []byte {
	t.Helper()
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func writeFile(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckConfigFetch: every fetch block is checked as the fetch would
// use it (secrets there, keys parsing, the SFTP host in known_hosts), each
// problem on its line naming the setting and where it looked, and no
// secret is ever printed.
func TestCheckConfigFetch(t *testing.T) {
	dir := t.TempDir()
	key := testRSA()
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pemOf(t, "PRIVATE KEY", pkcs8)
	privFile := writeFile(t, filepath.Join(dir, "apiclient_key.pem"), keyPEM)
	pubFile := writeFile(t, filepath.Join(dir, "pub_key.pem"), pemOf(t, "PUBLIC KEY", pub))
	badPub := writeFile(t, filepath.Join(dir, "alipay_public_key.txt"), []byte("not a key at all"))
	knownHosts := writeFile(t, filepath.Join(dir, "known_hosts"), []byte("other.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"))
	inbox := filepath.Join(dir, "inbox")
	channel := func(name, format, path string, fetch map[string]any) map[string]any {
		return map[string]any{"name": name, "format": format, "path": filepath.Join(inbox, path), "fetch": fetch}
	}
	cfgPath := writeConfig(t, map[string]any{
		"out_dir": filepath.Join(dir, "out"),
		"channels": []map[string]any{
			channel("wechatpay", "wechatpay", "{yyyymmdd}_ALL.csv", map[string]any{"wechatpay": map[string]any{
				"mchid": "1900000001", "serial_no": "5157F09EFDC096DE15EBE81A47057A7232F1B8E1",
				"private_key": map[string]any{"file": privFile}, "public_key_id": "PUB_KEY_ID_01",
				"public_key": map[string]any{"file": pubFile}}}),
			channel("alipay", "alipay", "alipay_{yyyymmdd}.csv.zip", map[string]any{"alipay": map[string]any{
				"app_id": "2021000000000001", "private_key": map[string]any{"env": "ALIPAY_APP_KEY"},
				"alipay_public_key": map[string]any{"file": badPub}}}),
			channel("stripe", "stripe", "stripe_{date}.csv", map[string]any{"stripe": map[string]any{
				"api_key": map[string]any{"env": "STRIPE_API_KEY"}}}),
			channel("adyen", "adyen", "adyen_{date}.csv", map[string]any{"adyen": map[string]any{
				"merchant_account": "AcmeShopECOM", "username": "report@Company.AcmeShop",
				"password": map[string]any{"env": "ADYEN_REPORT_PASSWORD"}, "first_batch": 412}}),
			channel("bank", "csv", "bank_{yyyymmdd}.csv", map[string]any{"sftp": map[string]any{
				"addr": "sftp.bank.example:2222", "user": "shop", "private_key": map[string]any{"file": privFile},
				"known_hosts": knownHosts, "remote_path": "/out/settlement_{yyyymmdd}.csv"}}),
		},
	})
	const password = "hunter2-report-pw"
	runner := newCLI(map[string]string{"ADYEN_REPORT_PASSWORD": password, "ALIPAY_APP_KEY": string(keyPEM)})
	code := runner.run(t, "check-config", "--config", cfgPath)
	out := runner.out.String()
	if code != ExitFailed {
		t.Errorf("exit %d, want 1 for the problems", code)
	}
	for _, want := range []string{
		`note: schedule.spec "0 3 * * *" ticks 24h0m0s apart`,
		`ok: fetch of "wechatpay": wechatpay merchant 1900000001, private key ` + privFile + ` parses, WeChat Pay public key PUB_KEY_ID_01 parses; asked for from 10h0m0s after the end of each day (Asia/Shanghai)`,
		`ok: fetch of "adyen": adyen merchant account AcmeShopECOM, report user report@Company.AcmeShop, password $ADYEN_REPORT_PASSWORD set, batches from 412 on; asked for from 2h0m0s`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing line %q", want)
		}
	}
	probs := problemLines(out)
	for _, want := range []string{
		`channel "alipay": fetch alipay: alipay_public_key (` + badPub + `)`,
		`channel "stripe": fetch stripe: api_key ($STRIPE_API_KEY): $STRIPE_API_KEY is not set`,
		`channel "bank": fetch sftp: known_hosts:`,
	} {
		found := false
		for _, p := range probs {
			found = found || strings.Contains(p, want)
		}
		if !found {
			t.Errorf("no problem line with %q in:\n%s", want, strings.Join(probs, "\n"))
		}
	}
	if len(probs) != 4 { // and the database, which this test has none of
		t.Errorf("%d problems, want 4:\n%s", len(probs), strings.Join(probs, "\n"))
	}
	for _, secret := range []string{password, "MIIE", "not a key at all"} {
		if strings.Contains(out+runner.errb.String(), secret) {
			t.Errorf("check-config printed a secret (%q):\n%s", secret, out)
		}
	}
}

// TestFetchRefusesSecretsInConfig: a secret written into the config is
// refused without being repeated; so are fetch blocks that cannot work.
func TestFetchRefusesSecretsInConfig(t *testing.T) {
	tests := []struct {
		name  string
		fetch map[string]any
		path  string
		want  string
	}{
		{"key in the config", map[string]any{"stripe": map[string]any{"api_key": "sk_live_51HiddenSecretValue"}}, "s_{date}.csv",
			"a secret is never written in the config"},
		{"two channel blocks", map[string]any{"stripe": map[string]any{"api_key": map[string]any{"env": "K"}},
			"adyen": map[string]any{}}, "s_{date}.csv", "give exactly one of"},
		{"http base url", map[string]any{"stripe": map[string]any{"api_key": map[string]any{"env": "K"}, "api_url": "http://api.stripe.com"}},
			"s_{date}.csv", "want an https URL"},
		{"undated path", map[string]any{"stripe": map[string]any{"api_key": map[string]any{"env": "K"}}}, "s.csv",
			"fetch needs the channel's path"},
		{"sftp without known_hosts", map[string]any{"sftp": map[string]any{"addr": "h", "user": "u",
			"private_key": map[string]any{"file": "/k"}, "remote_path": "/x_{date}.csv"}}, "s_{date}.csv", "host key is always checked"},
		{"secret as both", map[string]any{"stripe": map[string]any{"api_key": map[string]any{"env": "K", "file": "/k"}}}, "s_{date}.csv",
			"names both env and file"},
		{"available after the deadline", map[string]any{"available_after": "20h", "stripe": map[string]any{"api_key": map[string]any{"env": "K"}}},
			"s_{date}.csv", "want less than the deadline"},
		{"sftp done marker without a date", map[string]any{"sftp": map[string]any{"addr": "h", "user": "u", "known_hosts": "/kh",
			"private_key": map[string]any{"file": "/k"}, "remote_path": "/x_{date}.csv", "done_marker": "/READY"}}, "s_{date}.csv",
			"fetch sftp.done_marker: path \"/READY\" has no {date} or {yyyymmdd}"},
		{"sftp looks less than a second apart", map[string]any{"sftp": map[string]any{"addr": "h", "user": "u", "known_hosts": "/kh",
			"private_key": map[string]any{"file": "/k"}, "remote_path": "/x_{date}.csv", "settle": "500ms"}}, "s_{date}.csv",
			"fetch sftp.settle 500ms: want 1s to 5m0s"},
		{"sftp looks longer than the download", map[string]any{"download_timeout": "1m", "sftp": map[string]any{"addr": "h", "user": "u", "known_hosts": "/kh",
			"private_key": map[string]any{"file": "/k"}, "remote_path": "/x_{date}.csv", "settle": "2m"}}, "s_{date}.csv",
			"fetch sftp.settle 2m0s: want less than download_timeout 1m0s"},
		{"download longer than a temporary file lives", map[string]any{"download_timeout": "25h", "stripe": map[string]any{"api_key": map[string]any{"env": "K"}}},
			"s_{date}.csv", "fetch.download_timeout 25h0m0s: want 1s to 6h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfgPath := writeConfig(t, map[string]any{"channels": []map[string]any{
				{"name": "stripe", "format": "stripe", "path": filepath.Join(dir, tt.path), "fetch": tt.fetch}}})
			runner := newCLI(nil)
			code := runner.run(t, "fetch", "--config", cfgPath, "--date", "2026-11-28")
			all := runner.out.String() + runner.errb.String()
			if code != ExitUsage || !strings.Contains(all, tt.want) {
				t.Errorf("exit %d, output:\n%s\nwant exit 2 saying %q", code, all, tt.want)
			}
			if strings.Contains(all, "HiddenSecretValue") {
				t.Errorf("the secret was repeated:\n%s", all)
			}
		})
	}
}

// TestFetchUsage: the command says what to try.
func TestFetchUsage(t *testing.T) {
	dir := t.TempDir()
	cfgPath := writeConfig(t, map[string]any{"channels": []map[string]any{
		{"name": "shop", "format": "csv", "path": filepath.Join(dir, "shop_{date}.csv")}}})
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"fetch", "--config", cfgPath}, "--date is required"},
		{[]string{"fetch", "--date", "2026-11-28"}, "--config is required"},
		{[]string{"fetch", "--config", cfgPath, "--date", "2026-11-28"}, "no channel in config"},
		{[]string{"fetch", "--config", cfgPath, "--date", "2026-11-28", "--channel", "shop"}, `channel "shop" has no fetch block`},
		{[]string{"fetch", "--config", cfgPath, "--date", "2026-11-28", "--channel", "other"}, `--channel "other": not in the config`},
		{[]string{"fetch", "--config", cfgPath, "--date", "2026-11-28", "--channel", "../x"}, "--channel"},
	}
	for _, tt := range tests {
		runner := newCLI(nil)
		code := runner.run(t, tt.args...)
		if all := runner.out.String() + runner.errb.String(); code != ExitUsage || !strings.Contains(all, tt.want) {
			t.Errorf("%v: exit %d, output:\n%s\nwant exit 2 saying %q", tt.args, code, all, tt.want)
		}
	}
}
