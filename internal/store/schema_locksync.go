package store

// schemaLockSync is migration 7: which packs.lock the packs table was last
// brought in line with, as the SHA-256 of the file's bytes. A command that
// finds the same hash skips comparing every row with every lock entry,
// which with thousands of packs installed cost more than the command
// itself. A copy of packs.db restored from a backup carries the hash of the
// lock of its day, so it is compared again.
const schemaLockSync = `
CREATE TABLE lock_sync (
	id    INTEGER PRIMARY KEY CHECK (id = 1),
	stamp TEXT NOT NULL
);`
