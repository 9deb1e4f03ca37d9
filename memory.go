package reconcile

// NightMemory is a night's memory as it is stored: what a later night
// needs of its rows to tell a duplicate across nights (rule 7). Its bytes
// are written and read by matcher/memory alone; the ledger keeps them,
// and gives back the ranges asked for, without reading them.
type NightMemory struct {
	// Bits is how many first bits of a key hash number the filter's
	// blocks: the filter is 128 bytes a block, 1<<Bits blocks.
	Bits   int
	Filter []byte
	Parts  []MemoryPart // in order of Index
}

// MemoryPart is the records of a night whose key hashes begin with Index.
type MemoryPart struct {
	Index   int
	Rows    int
	Records []byte
}
