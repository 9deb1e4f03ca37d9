package config_test

import (
	"reflect"
	"testing"

	"reconcile/config"
)

// TestCheckReadsLikeLoad: check-config's forgiving decoder reads a sound
// file exactly as Load does.
func TestCheckReadsLikeLoad(t *testing.T) {
	want, err := config.Load("../reconcile.example.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Check("../reconcile.example.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Problems) != 0 {
		t.Fatalf("problems: %q", c.Problems)
	}
	if got := c.Decoded.Config; !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if line := c.Decoded.Lines["channels[4].mapping.columns.amount"]; line != 124 {
		t.Errorf("line of channels[4].mapping.columns.amount: got %d, want 124", line)
	}
}
