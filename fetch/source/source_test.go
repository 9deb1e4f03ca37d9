package source_test

import (
	"strings"
	"testing"

	"reconcile/config"
	"reconcile/fetch/source"
)

// TestNewNamesTheSettingNotTheSecret: a secret that does not parse stops
// New with the channel, the setting and where the secret was looked for,
// never what was found; a sound one builds the client and says so.
func TestNewNamesTheSettingNotTheSecret(t *testing.T) {
	env := func(vars map[string]string) source.Env {
		return source.Env{Getenv: func(k string) string { return vars[k] }}
	}
	ch := config.Channel{Name: "shop", TimeZone: "Asia/Tokyo",
		Fetch: &config.Fetch{Stripe: &config.StripeFetch{APIKey: config.Secret{Env: "STRIPE_KEY"}}}}

	_, err := source.New(ch, env(map[string]string{"STRIPE_KEY": "not-a-key-s3cret"}))
	if err == nil {
		t.Fatal("got no error for a key that is not a Stripe key")
	}
	for _, want := range []string{`channel "shop"`, "fetch stripe", "api_key", "STRIPE_KEY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got %q, want it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("got the secret in %q", err)
	}

	built, err := source.New(ch, env(map[string]string{"STRIPE_KEY": "sk_test_4eC39HqLyjWDarjtT1zdp7dc"}))
	if err != nil {
		t.Fatal(err)
	}
	if built.Source == nil || built.Adyen != nil || !strings.Contains(built.About, "API key") {
		t.Errorf("got %+v, want a Source and what it uses", built)
	}
}
