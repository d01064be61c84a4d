package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/packs-run/packs/internal/store"
)

// ExportResult says what Export wrote and found.
type ExportResult struct {
	Rows       int64
	Checkpoint *Checkpoint // recorded at the last row written; nil when none was
	Report     Report      // the chain as Verify would see it
}

// Export writes every row of db to w as JSONL, one Entry per line with its
// seq, prev_hash, hash and MAC, so a collector can check that each export
// continues the one before. It checks the chain as it goes, like Verify,
// with the key in dir (the directory of packs.db when empty; made on first
// use). When the chain holds it records a durable checkpoint at the last
// row written; when it does not, the rows are written all the same, no
// checkpoint is recorded, and the error wraps ErrBroken.
func Export(ctx context.Context, db *store.DB, w io.Writer, dir string) (ExportResult, error) {
	var res ExportResult
	if dir == "" {
		d, err := keyDir(ctx, db)
		if err != nil {
			return res, err
		}
		dir = d
	}
	k, cp, err := keyAndCheckpoint(ctx, db, dir, true)
	if err != nil {
		return res, err
	}
	h, err := readHead(ctx, db)
	if err != nil {
		return res, fmt.Errorf("audit: export: %w", err)
	}
	v := newVerifier(h, k, cp)
	enc := json.NewEncoder(w)
	var last Entry
	for e, err := range Entries(ctx, db, Filter{}) {
		if err != nil {
			return res, err
		}
		if err := enc.Encode(e); err != nil {
			return res, fmt.Errorf("audit: export: %w", err)
		}
		v.step(chained{seq: e.Seq, prev: e.PrevHash, hash: e.Hash, mac: e.MAC,
			r: e.row()})
		res.Rows, last = res.Rows+1, e
	}
	res.Report = v.finish()
	if !res.Report.OK() {
		return res, fmt.Errorf("%w: %s; no checkpoint was recorded", ErrBroken, res.Report.Breaks[0])
	}
	if res.Rows == 0 {
		return res, nil
	}
	c, err := writeCheckpoint(k, last.Seq, last.Hash, last.MAC, "export", true)
	if err != nil {
		return res, err
	}
	res.Checkpoint = &c
	return res, nil
}
