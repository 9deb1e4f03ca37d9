package reconcile

import (
	"encoding/binary"
	"iter"
	"time"
	"unsafe"
)

// EventLog is a night's dispute events on their way to the ledger,
// packed one after another in one allocation: each text field by its
// length, the numbers as varints, the time as time.Time's binary form.
// An event packs into about 180 bytes where a Transaction and its text
// take 350, and the events wait through the memory's layout and the
// reports, the night's peak. Read it with All.
type EventLog struct {
	buf []byte
	n   int
}

// PackEvents packs the events in their order.
func PackEvents(events ...Transaction) EventLog {
	size := 0
	for i := range events {
		size += packedLen(&events[i])
	}
	l := EventLog{buf: make([]byte, 0, size), n: len(events)}
	for i := range events {
		l.buf = appendEvent(l.buf, &events[i])
	}
	return l
}

// Len is the number of events.
func (l EventLog) Len() int { return l.n }

// All yields the events in the order they were packed.
func (l EventLog) All() iter.Seq[Transaction] {
	return func(yield func(Transaction) bool) {
		b := l.buf
		for range l.n {
			var tx Transaction
			b = readEvent(b, &tx)
			if !yield(tx) {
				return
			}
		}
	}
}

// eventTexts are an event's text fields, in their packed order.
func eventTexts(tx *Transaction) [12]*string {
	return [...]*string{(*string)(&tx.Kind), &tx.OrderNo, &tx.RefundNo, &tx.ChannelTxnID, &tx.ChannelRefundID,
		&tx.Currency, &tx.FeeRate, (*string)(&tx.Status), &tx.RawKind, &tx.DisputeID, &tx.PaymentID, &tx.Reason}
}

const eventTimeLen = 16 // time.Time's binary form, at the most

// packedLen is the length of tx packed, but for its time, counted at
// the most: the log is allocated once, at about its length.
func packedLen(tx *Transaction) int {
	var scratch [binary.MaxVarintLen64]byte
	n := 1 + eventTimeLen
	for _, s := range eventTexts(tx) {
		n += len(binary.AppendUvarint(scratch[:0], uint64(len(*s)))) + len(*s)
	}
	for _, v := range [...]int64{tx.Amount, tx.FeeMilli, int64(tx.Line)} {
		n += len(binary.AppendVarint(scratch[:0], v))
	}
	return n
}

func appendEvent(b []byte, tx *Transaction) []byte {
	for _, s := range eventTexts(tx) {
		b = binary.AppendUvarint(b, uint64(len(*s)))
		b = append(b, *s...)
	}
	b = binary.AppendVarint(b, tx.Amount)
	b = binary.AppendVarint(b, tx.FeeMilli)
	b = binary.AppendVarint(b, int64(tx.Line))
	// The time's length byte first, then the time written in place.
	at := len(b)
	b, err := tx.OccurredAt.AppendBinary(append(b, 0))
	if err != nil {
		// A zone offset past what time.Time writes: no parser reads one.
		b, _ = tx.OccurredAt.UTC().AppendBinary(b[:at+1])
	}
	b[at] = byte(len(b) - at - 1)
	return b
}

// readEvent reads the event at the start of b into tx and returns the
// rest. Its text is read in place: the buffer is never written once
// packed. The log is the process's own: a short read is a defect, and
// panics.
func readEvent(b []byte, tx *Transaction) []byte {
	for _, s := range eventTexts(tx) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			panic("reconcile: event log cut short")
		}
		if *s = ""; n > 0 {
			*s = unsafe.String(&b[k], int(n))
		}
		b = b[k+int(n):]
	}
	var nums [3]int64
	for i := range nums {
		v, k := binary.Varint(b)
		if k <= 0 {
			panic("reconcile: event log cut short")
		}
		nums[i], b = v, b[k:]
	}
	tx.Amount, tx.FeeMilli, tx.Line = nums[0], nums[1], int(nums[2])
	n := int(b[0])
	var at time.Time
	if err := at.UnmarshalBinary(b[1 : 1+n]); err != nil {
		panic("reconcile: event log: " + err.Error())
	}
	tx.OccurredAt = at
	return b[1+n:]
}
