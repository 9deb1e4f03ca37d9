package reconcile

// EventLogSize is the bytes the log uses and those it allocated.
func EventLogSize(l EventLog) (used, allocated int) { return len(l.buf), cap(l.buf) }
