package electrum

// Byte bounds of what the server holds for clients (docs/operations.md,
// "Electrum server"): one call's or batch's answer, the answers queued to
// one connection, and those queued to all of them.
const (
	// DefaultMaxBatch is the most calls one batch may hold.
	DefaultMaxBatch = 1000
	// DefaultMaxAnswerBytes caps what one call or one batch may produce;
	// a history of DefaultMaxHistory txs (about 9 MB) still fits.
	DefaultMaxAnswerBytes = 16 << 20
	// DefaultMaxQueueBytes caps the answers and notifications queued to
	// one connection (one answer of any size is admitted to an empty
	// queue, so a bounded answer always goes out).
	DefaultMaxQueueBytes = 4 << 20
	// DefaultMaxQueuedBytes caps the bytes queued to all connections.
	DefaultMaxQueuedBytes = 64 << 20
)
