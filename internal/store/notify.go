package store

import (
	"context"
	"errors"
	"sync"
	"time"
)

// queueChannel is the PostgreSQL notification channel on which a decided
// queued call's id is announced, so that the replica where the call waits
// wakes at once instead of at its next poll.
const queueChannel = "packs_queue"

// listener holds one connection that LISTENs on queueChannel and hands
// each announced id to the waiters subscribed to it. It starts with the
// first subscription and stops when the DB closes. Polling stays the
// rule: a lost notification costs a poll interval, never a decision.
type listener struct {
	mu     sync.Mutex
	subs   map[string][]chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// QueueDecided returns a channel that receives once when the queued call
// id is decided or expired by any process sharing a PostgreSQL store, and
// a function that ends the subscription. On SQLite the channel never
// receives: the waiter's polling is all there is.
func (db *DB) QueueDecided(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	if db.dialect != Postgres {
		return ch, func() {}
	}
	l := &db.listen
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.subs == nil {
		l.subs = map[string][]chan struct{}{}
	}
	l.subs[id] = append(l.subs[id], ch)
	if l.done == nil {
		ctx, cancel := context.WithCancel(context.Background())
		l.cancel, l.done = cancel, make(chan struct{})
		go db.listenLoop(ctx)
	}
	return ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		subs := l.subs[id]
		for i, c := range subs {
			if c == ch {
				subs = append(subs[:i], subs[i+1:]...)
				break
			}
		}
		if len(subs) == 0 {
			delete(l.subs, id)
		} else {
			l.subs[id] = subs
		}
	}
}

// listenLoop LISTENs until ctx ends, connecting again after a second
// when the connection is lost.
func (db *DB) listenLoop(ctx context.Context) {
	defer close(db.listen.done)
	for ctx.Err() == nil {
		if err := db.listenOnce(ctx); err == nil || ctx.Err() != nil {
			return
		}
		// Lost: the waiters poll meanwhile.
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (db *DB) listenOnce(ctx context.Context) error {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		pc, ok := dc.(*pgConn)
		if !ok {
			return errors.New("store: not a PostgreSQL connection")
		}
		c := pc.Conn.Conn()
		if _, err := c.Exec(ctx, "LISTEN "+queueChannel); err != nil {
			return err
		}
		defer c.Exec(context.WithoutCancel(ctx), "UNLISTEN "+queueChannel)
		// A decision made before LISTEN took effect was announced to
		// nobody: every waiter looks once now.
		db.listen.wakeAll()
		for {
			n, err := c.WaitForNotification(ctx)
			if err != nil {
				return err
			}
			db.listen.wake(n.Payload)
		}
	})
}

// wake hands id to its subscribers, without blocking.
func (l *listener) wake(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ch := range l.subs[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// wakeAll wakes every subscriber, without blocking.
func (l *listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, subs := range l.subs {
		for _, ch := range subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// stop ends the listener, if it started, and waits for it.
func (l *listener) stop() {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
