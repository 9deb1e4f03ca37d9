package ledger

// The local-records queries, exposed to the plan test.
const (
	WindowSQL = windowSQL
	KeysSQL   = keysSQL
)

// InterpretError is interpretError, for its test.
var InterpretError = interpretError
