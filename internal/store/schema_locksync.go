package store

// schemaLockSync is migration 7: which packs.lock the packs table was last
// brought in line with, as the file's stamp (device, inode, size, times;
// packs.lock is always replaced by a rename, so any change changes it). A
// command that finds the same stamp skips comparing every row with every
// lock entry, which with thousands of packs installed cost more than the
// command itself. A copy of packs.db from elsewhere carries another stamp,
// so it is compared again.
const schemaLockSync = `
CREATE TABLE lock_sync (
	id    INTEGER PRIMARY KEY CHECK (id = 1),
	stamp TEXT NOT NULL
);`
