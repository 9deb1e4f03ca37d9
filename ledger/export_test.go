package ledger

// LoadLocalSQL exposes the query to the plan test.
const LoadLocalSQL = loadLocalSQL
