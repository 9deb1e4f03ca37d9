// Package memory is the memory of earlier nights, and its one owner: the
// record format a night's rows are kept in, the filter and the parts it is
// stored as, and the passes in which tonight's keys meet it. What it
// writes (reconcile.NightMemory) the ledger stores as bytes it does not
// read; what the ledger gives back, it reads.
//
// The memory of a night is every payment and refund row of its file, kept
// as one sorted blob of fixed-width records rather than a table row per
// settlement row: a night of millions of rows is written in one statement
// and read back in one, and a key is found by binary search.
//
// A record is 40 bytes: the key's 128-bit hash (SHA-256, truncated), the
// channel id's 64-bit FNV-1a hash, the amount in minor units, the currency,
// the status and the kind. A 128-bit key hash makes two different keys
// colliding, which could turn a new payment into a false duplicate, as
// unlikely as a hardware fault; a collision of channel id hashes can only
// make a duplicate look like the same row again, which sends nothing to
// an automatic reversal.
package memory

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"

	"reconcile"
)

// RecordSize is the size of a record.
const RecordSize = 40

// KeyHash is the hash of a kind and key, by which records are sorted,
// filtered and met.
type KeyHash [16]byte

// ErrDamaged is returned for memory that is not what this package wrote:
// a blob that is not a whole number of records, a filter of the wrong
// size.
var ErrDamaged = errors.New("memory blob is damaged")

// Record is what a night's memory keeps of a row.
type Record struct {
	Key      KeyHash
	ID       uint64 // the hash of the row's channel id, or of its fingerprint (RowID)
	Amount   int64
	Currency [3]byte
	Status   reconcile.TxnStatus
}

// HashKey is the first 16 bytes of SHA-256 over kind, a zero byte and the
// key: evenly spread in every byte (which the sort and the filter rely
// on) and fast with the processor's SHA instructions.
func HashKey(kind reconcile.Kind, key []byte) KeyHash {
	var buf [96]byte
	msg := append(append(append(buf[:0], kind...), 0), key...)
	sum := sha256.Sum256(msg)
	var k KeyHash
	copy(k[:], sum[:16])
	return k
}

// HashID is FNV-1a, 64 bits, written out so it allocates nothing.
func HashID(id []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range id {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// RowID is what a record keeps of what identifies a row: the hash of its
// channel id, or, for a row its file gave none, of its fingerprint, so
// that a row without an id settled again the next night is told apart
// from the same row delivered again.
func RowID(t reconcile.Transaction) uint64 {
	if t.ChannelTxnID == "" {
		return HashID([]byte("row:" + t.Fingerprint()))
	}
	return HashID([]byte(t.ChannelTxnID))
}

// statuses are the record's status byte, one down: a byte of 0 (or one
// past them) reads as success.
var statuses = [...]reconcile.TxnStatus{reconcile.StatusSuccess, reconcile.StatusProcessing, reconcile.StatusFailed}

func statusByte(s reconcile.TxnStatus) byte {
	for i, x := range statuses {
		if x == s {
			return byte(i + 1)
		}
	}
	return 1
}

// put writes rec into out, RecordSize bytes. The kind byte is 1 for a
// payment and 2 for a refund; it is not read back (the key hash covers
// the kind), but it is part of the stored layout all the same.
func put(out []byte, rec *Record, kind reconcile.Kind) {
	copy(out, rec.Key[:])
	binary.BigEndian.PutUint64(out[16:], rec.ID)
	binary.BigEndian.PutUint64(out[24:], uint64(rec.Amount))
	copy(out[32:35], rec.Currency[:])
	k := byte(1)
	if kind == reconcile.KindRefund {
		k = 2
	}
	out[35], out[36], out[37], out[38], out[39] = statusByte(rec.Status), k, 0, 0, 0
}

// record reads the record b begins with.
func record(b []byte) Record {
	rec := Record{ID: binary.BigEndian.Uint64(b[16:]), Amount: int64(binary.BigEndian.Uint64(b[24:])), Status: reconcile.StatusSuccess}
	copy(rec.Key[:], b[:16])
	copy(rec.Currency[:], b[32:35])
	if c := int(b[35]); c >= 1 && c <= len(statuses) {
		rec.Status = statuses[c-1]
	}
	return rec
}

// Rows is the number of rows a blob of records holds.
func Rows(blob []byte) int { return len(blob) / RecordSize }

// Writer makes the memory of a night of n rows: Put each, from as many
// goroutines as like (each its own rows), then Done.
type Writer struct{ out []byte }

// NewWriter returns a writer for n rows.
func NewWriter(n int) *Writer { return &Writer{out: make([]byte, n*RecordSize)} }

// Put keeps row i of the night.
func (w *Writer) Put(i int, kind reconcile.Kind, rec Record) {
	put(w.out[i*RecordSize:(i+1)*RecordSize], &rec, kind)
}

// Done returns the night's memory as it is stored: the records sorted by
// key hash, cut into parts, with the filter that says which parts can
// hold a key.
func (w *Writer) Done() reconcile.NightMemory {
	blob := sortRecords(w.out)
	w.out = nil
	return layOut(blob)
}

// Encode returns the memory of a night's rows, as a run writes it: only
// payments and refunds are remembered.
func Encode(rows []reconcile.Transaction) reconcile.NightMemory {
	var keep []reconcile.Transaction
	for _, r := range rows {
		if r.Kind == reconcile.KindPayment || r.Kind == reconcile.KindRefund {
			keep = append(keep, r)
		}
	}
	w := NewWriter(len(keep))
	for i, r := range keep {
		var cur [3]byte
		copy(cur[:], r.Currency)
		w.Put(i, r.Kind, Record{Key: HashKey(r.Kind, []byte(r.Key())), ID: RowID(r), Amount: r.Amount, Currency: cur, Status: r.Status})
	}
	return w.Done()
}

// Blob is the records of a night's memory, every part one after another:
// what a night read whole is.
func Blob(m reconcile.NightMemory) []byte {
	var out []byte
	for _, p := range m.Parts {
		out = append(out, p.Records...)
	}
	return out
}
