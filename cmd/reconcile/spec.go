package main

import (
	"fmt"
	"path/filepath"
	"time"

	"reconcile"
	"reconcile/config"
)

// businessDay is the date YYYY-MM-DD in ch's business time zone, or in
// tz when it is given (--tz): a usage error of cmd when either is wrong.
func businessDay(cmd string, ch config.Channel, date, tz string) (reconcile.BusinessDay, error) {
	if tz != "" {
		ch.TimeZone = tz
	}
	loc, err := time.LoadLocation(ch.Zone())
	if err != nil {
		return reconcile.BusinessDay{}, usagef(cmd, "--tz %s: not an IANA time zone", reconcile.Quote(ch.Zone()))
	}
	day, err := reconcile.NewBusinessDay(date, loc)
	if err != nil {
		return reconcile.BusinessDay{}, usagef(cmd, "--date: %s", err)
	}
	return day, nil
}

// shardDir is the out directory of one shard's run, beside the others.
func shardDir(out string, shard reconcile.Shard) string {
	if shard.Whole() {
		return out
	}
	return filepath.Join(out, fmt.Sprintf("shard-%d-of-%d", shard.Index, shard.Count))
}
