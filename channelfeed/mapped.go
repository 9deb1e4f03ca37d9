package channelfeed

// Mapping describes a CSV of a channel without a parser of its own.
type Mapping struct{}
