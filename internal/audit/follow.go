package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/packs-run/packs/internal/store"
)

// DefaultPoll is how often Follow looks for new rows.
const DefaultPoll = 250 * time.Millisecond

// Follow hands emit every row with a seq above after, in seq order, each
// once, then keeps handing it the rows written since, every poll, until ctx
// is done (then it returns nil) or emit fails. A consumer that keeps the
// seq of the last row it stored resumes with that seq as after, and gets
// neither a gap nor a repeat.
//
// Follow checks the chain as it goes: each row's prev_hash must be the hash
// of the row before (for the first, the stored hash of row after) and its
// hash must be the one its fields give. A row that breaks it is not handed
// on; Follow returns an error wrapping ErrBroken, so a collector stops at
// the first row it cannot trust rather than receive it quietly. The rows'
// MACs travel with them, for a collector that holds the key or compares
// them with a checkpoint (docs/audit.md).
func Follow(ctx context.Context, db *store.DB, after int64, poll time.Duration, emit func(Entry) error) error {
	if after < 0 {
		return fmt.Errorf("audit: follow after seq %d: want 0 or a row's seq", after)
	}
	if poll <= 0 {
		poll = DefaultPoll
	}
	prev := genesis
	if after > 0 {
		err := db.SQL().QueryRowContext(ctx, `SELECT hash FROM audit WHERE seq = ?`, after).Scan(&prev)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("audit: follow after seq %d: packs.db holds no such row (packs audit shows the seqs it holds)", after)
		}
		if err != nil {
			return followDone(ctx, err)
		}
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		for e, err := range Entries(ctx, db, Filter{After: after}) {
			if err != nil {
				return followDone(ctx, err)
			}
			if e.Seq != after+1 || e.PrevHash != prev || HashEntry(e) != e.Hash {
				return fmt.Errorf("%w: seq %d does not continue seq %d (packs audit verify says how)", ErrBroken, e.Seq, after)
			}
			if err := emit(e); err != nil {
				return err
			}
			after, prev = e.Seq, e.Hash
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// followDone is nil when err only says ctx ended: following stopped as
// asked.
func followDone(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
