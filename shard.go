package reconcile

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Shard is one part of a channel's date when the work is split across
// machines by key: Index of Count, counted from 0. The zero Shard is the
// whole, unsplit.
//
// A key belongs to shard uint32(first four bytes of MD5(key)) mod Count.
// MD5 is not used for secrecy here: it is stable, evenly spread, and
// PostgreSQL computes the same value in SQL (shardSQL in package ledger),
// so the file's rows and the local records split alike.
type Shard struct {
	Index, Count int
}

// MaxShards is the most shards a date can be split into: far more
// machines than a night's file needs, and few enough that every shard
// number fits the 32 bits the shard of a key is computed in.
const MaxShards = 1024

// ParseShard reads "I/N", such as "2/4"; "" is the whole.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	i, n, ok := strings.Cut(s, "/")
	index, ok1 := shardNumber(i)
	count, ok2 := shardNumber(n)
	if !ok || !ok1 || !ok2 || count < 1 || count > MaxShards || index >= count {
		return Shard{}, fmt.Errorf("shard %s: want I/N with 0 <= I < N <= %d, such as 0/4", Quote(s), MaxShards)
	}
	return Shard{index, count}, nil
}

// shardNumber reads a shard number: decimal digits only, no sign, at most
// four of them.
func shardNumber(s string) (int, bool) {
	if s == "" || len(s) > 4 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// Whole reports whether the shard is the whole, unsplit work.
func (s Shard) Whole() bool { return s.Count <= 1 }

// String is "I/N", or "" for the whole.
func (s Shard) String() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Has reports whether key belongs to the shard.
func (s Shard) Has(key string) bool {
	if s.Whole() {
		return true
	}
	return ShardOf(key, s.Count) == s.Index
}

// HasCustomer reports whether the cases of a customer (the same payment
// again under another order) belong to the shard: by the customer id,
// written in decimal, as a key.
func (s Shard) HasCustomer(id int64) bool {
	if s.Whole() {
		return true
	}
	return s.Has(strconv.FormatInt(id, 10))
}

// Owns reports whether the row belongs to the shard: a payment or refund
// by its key, a dispute's event or a refund reversal by its order, so
// that it meets the order's payment; a row without a key of ours (a fee,
// an unrecognised row, an event that names no order) to the first shard,
// so that it is counted once.
func (s Shard) Owns(tx Transaction) bool {
	if tx.Kind == KindPayment || tx.Kind == KindRefund {
		return s.Has(tx.Key())
	}
	if (tx.Kind.Disputed() || tx.Kind == KindRefundReversal) && tx.OrderNo != "" {
		return s.Has(tx.OrderNo)
	}
	return s.Index == 0
}

// ShardOf is the shard of a key among n. The ledger's shardSQL computes
// the same in SQL for one shard's local records: a change to one is a
// change to both.
func ShardOf(key string, n int) int {
	sum := md5.Sum([]byte(key))
	return int(binary.BigEndian.Uint32(sum[:4]) % uint32(n))
}
