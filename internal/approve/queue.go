// Package approve is the approval queue: an approver for calls whose client
// cannot ask the person (an MCP client without elicitation). The call waits
// as a row in packs.db until a person decides it elsewhere, with `packs
// approve` in a terminal or in the web app (`packs serve` on the same
// state directory), or until a timeout denies it. Those run in other
// processes, so the database is where the waiting call and the decision
// meet: the waiter polls its row.
package approve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/store"
)

// DefaultTimeout is how long a call waits for a person when Options sets
// no Timeout.
const DefaultTimeout = 2 * time.Minute

// defaultPoll is how often a waiting call reads its row.
const defaultPoll = 250 * time.Millisecond

// Options configure a Queue.
type Options struct {
	// Client names who made the calls, for the person: "mcp:claude-ai".
	Client string
	// Timeout is how long a call waits; zero means DefaultTimeout.
	Timeout time.Duration
	// Poll is how often a waiting call looks for a decision; zero means
	// 250 ms.
	Poll time.Duration
	// OnQueued, if set, is called once a call is in the queue, to tell the
	// person where to decide it.
	OnQueued func(store.QueuedCall)
}

// Queue puts calls in packs.db's approval queue.
type Queue struct {
	db   *store.DB
	opts Options
}

// New returns a queue over db.
func New(db *store.DB, opts Options) *Queue {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Poll <= 0 {
		opts.Poll = defaultPoll
	}
	return &Queue{db: db, opts: opts}
}

// Timeout is how long a call waits.
func (q *Queue) Timeout() time.Duration { return q.opts.Timeout }

// Waiter returns an approver for one call. Its Name, after Approve, names
// who decided ("queue:packs-approve"), which the gate records.
func (q *Queue) Waiter() *Waiter { return &Waiter{q: q} }

// Waiter is the capability.Approver for one queued call. It is used by one
// goroutine: the gate's, for one call.
type Waiter struct {
	q        *Queue
	id       string
	by       string
	timedOut bool
	onQueued func(store.QueuedCall)
}

// NamePrefix starts the name of every approver of the queue.
const NamePrefix = "queue"

// Name is "queue" until a person decided, then "queue:<who>".
func (w *Waiter) Name() string {
	if w.by != "" {
		return NamePrefix + ":" + w.by
	}
	return NamePrefix
}

// OnQueued sets a function Approve calls once the call is in the queue,
// after Options.OnQueued. Set it before Approve.
func (w *Waiter) OnQueued(f func(store.QueuedCall)) { w.onQueued = f }

// ID is the queued call's id (its invocation id), once Approve queued it.
func (w *Waiter) ID() string { return w.id }

// TimedOut reports whether nobody decided the call in time.
func (w *Waiter) TimedOut() bool { return w.timedOut }

// Approve queues p and waits for a person's verdict. When the timeout
// passes first it denies (TimedOut then reports true); when ctx ends first
// it denies with ctx's error. Either way the row is closed as expired, so a
// late decision is refused rather than lost silently.
func (w *Waiter) Approve(ctx context.Context, p capability.Pending) (capability.Verdict, error) {
	now := time.Now()
	caps := make([]string, len(p.Capabilities))
	for i, c := range p.Capabilities {
		caps[i] = string(c)
	}
	red := audit.DefaultRedactor()
	touches := make([]string, len(p.Touches))
	for i, t := range p.Touches {
		touches[i] = red.Text(t)
	}
	w.id = p.Invocation
	// Subscribed before the call is queued, so no decision is missed; on
	// SQLite it never fires, and polling decides.
	decided, unsubscribe := w.q.db.QueueDecided(w.id)
	defer unsubscribe()
	qc := store.QueuedCall{
		ID: p.Invocation, Chat: p.Chat, Client: w.q.opts.Client, Pack: p.Pack, Tool: p.Tool, Class: p.Class(),
		Arguments: red.JSON(p.Arguments), Capabilities: caps, Touches: touches,
		Created: now, Expires: now.Add(w.q.opts.Timeout),
	}
	if err := w.q.db.Enqueue(ctx, qc); err != nil {
		return capability.Deny, fmt.Errorf("approve: %w", err)
	}
	if w.q.opts.OnQueued != nil {
		w.q.opts.OnQueued(qc)
	}
	if w.onQueued != nil {
		w.onQueued(qc)
	}
	timer := time.NewTimer(w.q.opts.Timeout)
	defer timer.Stop()
	tick := time.NewTicker(w.q.opts.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return w.giveUp(context.WithoutCancel(ctx), ctx.Err())
		case <-timer.C:
			w.timedOut = true
			return w.giveUp(ctx, nil)
		case <-tick.C:
		case <-decided:
		}
		cur, err := w.q.db.Queued(ctx, w.id)
		if err != nil {
			return w.giveUp(context.WithoutCancel(ctx), fmt.Errorf("approve: %w", err))
		}
		if cur.Verdict != "" {
			return w.verdict(cur)
		}
	}
}

// giveUp closes the row as expired; a verdict that came first wins.
func (w *Waiter) giveUp(ctx context.Context, why error) (capability.Verdict, error) {
	err := w.q.db.ExpireQueued(ctx, w.id, time.Now())
	if errors.Is(err, store.ErrQueuedDecided) {
		cur, err := w.q.db.Queued(ctx, w.id)
		if err == nil {
			w.timedOut = false
			return w.verdict(cur)
		}
	}
	if why == nil && err != nil && !errors.Is(err, store.ErrQueuedExpired) {
		why = fmt.Errorf("approve: %w", err)
	}
	return capability.Deny, why
}

func (w *Waiter) verdict(cur store.QueuedCall) (capability.Verdict, error) {
	w.by = cur.DecidedBy
	switch cur.Verdict {
	case store.VerdictRunOnce:
		return capability.RunOnce, nil
	case store.VerdictAllowChat:
		return capability.AllowChat, nil
	}
	return capability.Deny, nil
}
