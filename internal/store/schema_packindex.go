package store

// schemaPackIndex is migration 10: what lets a command find one installed
// pack, or check them all, without reading packs.lock and every installed
// file (dist.Index). The packs table gains the two lock entry fields it
// lacked, so a row is the whole entry; lock_sync gains the stamp (inode,
// size, times) of the packs.lock the table mirrors, so a command that finds
// the same stamp neither reads nor hashes the file; pack_checks holds, per
// installed pack, the digest its folder hashed to and the stamp of every
// file then; pack_summaries holds what a listing shows of the pack whose
// files have that digest, as the program named loaded it. lock_sync is emptied: rows written before lack resolved and
// signer, so the table is compared with packs.lock again.
const schemaPackIndex = `
ALTER TABLE packs ADD COLUMN resolved TEXT NOT NULL DEFAULT '';
ALTER TABLE packs ADD COLUMN signer TEXT NOT NULL DEFAULT '';
ALTER TABLE lock_sync ADD COLUMN file_stamp TEXT NOT NULL DEFAULT '';
DELETE FROM lock_sync;
CREATE TABLE pack_checks (
	name   TEXT PRIMARY KEY,
	digest TEXT NOT NULL,
	stamps TEXT NOT NULL  -- JSON: {"SKILL.md": "dev:ino:mode:size:mtime:ctime", ...}
);
CREATE TABLE pack_summaries (
	integrity TEXT PRIMARY KEY,  -- sha256:… of the pack's files
	program   TEXT NOT NULL,     -- the packs executable that loaded them
	summary   TEXT NOT NULL      -- JSON: description, tools, requested resources
);`
