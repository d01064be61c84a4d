package runtime

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/packs-run/packs/capability"
)

// poolKey is everything an instance is built from. Two calls with the same
// key can be served by instances built the same way; anything that varies
// per call (tool for Extism, invocation, grant decisions, limits other than
// memory) is set when an instance is taken. The host functions are not in
// the key: they follow from the module (see Runtime.plugin).
type poolKey struct {
	module    moduleKey
	tool      string // WASI: argv[0]
	pages     uint32 // memory budget
	packRoot  string
	workspace string
	mounts    string   // the grant's mounts: the preopens
	env       [32]byte // hash of the variables the grant makes visible
}

// mountKey is a canonical string for a grant's mounts.
func mountKey(ms []capability.Mount) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.HostPath)
		b.WriteByte(0)
		b.WriteString(m.Glob)
		if m.Writable {
			b.WriteString("\x00w")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// envKey hashes the variables of environ that g makes visible, in the way
// hostfns.Environ picks them (a later duplicate wins).
func envKey(g capability.Grant, environ []string) [32]byte {
	if !g.Has(capability.EnvRead) {
		return [32]byte{}
	}
	vars := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" && g.Env(k).Allowed() {
			vars[k] = v
		}
	}
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		h.Write([]byte(k + "=" + vars[k] + "\x00"))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// pool keeps PoolSize instances of one key ready. One goroutine builds
// them in the background, when the pool starts and after each call that took
// one has finished: building while a call runs would slow that call down
// (instantiation allocates megabytes; two cores are common), and the next
// call still finds a ready instance when PoolSize is at least 2. Instances
// are never returned to the pool: each serves one call.
//
// An instance is built before its call is approved, so it is built with no
// capability at all (spec.ahead): its initializer's every exercise is
// denied. A module whose initializer tries one anyway (a Go init() that
// reads a file or fetches a URL) needs its capabilities at initialization:
// the pool stops building ahead, and every call builds its instance on the
// spot, after approval, under its own grant.
type pool struct {
	spec     *spec
	ready    chan *instance
	kick     chan struct{} // asks the refiller to fill the pool up again
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{} // closed when the refiller has returned
	used     uint64        // Runtime.tick at the last take, under Runtime.mu
	onSpot   atomic.Bool   // stopped building ahead (see above)
	building atomic.Bool   // the refiller is at work
}

// take returns an instance for inv: one built ahead and now claimed for
// it, or one built on the spot under its approved Call. It also returns the
// pool to refill once the call is over (nil without one). Only an instance
// whose key the pool may serve (spec.poolable) comes from the pool.
func (r *Runtime) take(ctx context.Context, key poolKey, s *spec, inv Invocation, log *slog.Logger) (*instance, *pool, error) {
	if r.poolSize < 0 || !s.poolable {
		in, err := newInstance(ctx, s, callFor(s, inv, log), nil)
		return in, nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, nil, ErrClosed
	}
	p, ok := r.pools[key]
	var evicted *pool
	if !ok {
		if len(r.pools) >= maxPools {
			evicted = r.evictLocked()
		}
		p = r.startPoolLocked(key, s)
	}
	r.tick++
	p.used = r.tick
	r.mu.Unlock()
	if evicted != nil {
		evicted.close(ctx)
	}

	select {
	case in := <-p.ready:
		in.claim(inv, log)
		return in, p, nil
	default:
	}
	in, err := newInstance(ctx, s, callFor(s, inv, log), nil)
	return in, p, err
}

// errInitNeedsCapabilities stops a pool from building ahead.
var errInitNeedsCapabilities = errors.New("its initializer tries capabilities, which it holds only once its call is approved")

// orphaned records what guest code tried outside any call (the
// initializer of an instance built ahead), all of it denied.
func (r *Runtime) orphaned(ex []capability.Exercise) {
	for _, e := range ex {
		if err := r.recorder.RecordExercise(e); err != nil {
			r.log.Error("runtime: recording what an initializer tried", "err", err, "exercise", e)
		}
	}
}

// refill asks the refiller to top the pool up. It never blocks.
func (p *pool) refill() {
	p.building.Store(true)
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// startPoolLocked creates the pool for key and its refiller. r.mu is held.
func (r *Runtime) startPoolLocked(key poolKey, s *spec) *pool {
	ctx, cancel := context.WithCancel(r.ctx)
	p := &pool{
		spec:   s,
		ready:  make(chan *instance, r.poolSize),
		kick:   make(chan struct{}, 1),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	r.pools[key] = p
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		p.run(r)
	}()
	return p
}

// evictLocked removes the least recently used pool and returns it, to be
// closed once r.mu is released.
func (r *Runtime) evictLocked() *pool {
	var (
		oldKey poolKey
		old    *pool
	)
	for k, p := range r.pools {
		if old == nil || p.used < old.used {
			oldKey, old = k, p
		}
	}
	delete(r.pools, oldKey)
	return old
}

// run fills the pool, then waits to be asked again, until its context
// ends. An instance whose initializer tried a capability, or whose build
// failed (a module whose initializer fails, a workspace that vanished),
// stops the pool from building ahead; what the initializer tried goes to
// the runtime's recorder, and every later call builds on the spot and
// reports its own errors.
func (p *pool) run(r *Runtime) {
	defer close(p.done)
	for {
		p.building.Store(true)
		for len(p.ready) < cap(p.ready) && p.ctx.Err() == nil && !p.onSpot.Load() {
			early := &capability.MemoryRecorder{}
			in, err := newInstance(p.ctx, p.spec, p.spec.ahead(early), early)
			if err == nil && in.tried() {
				in.close(p.ctx)
				err = errInitNeedsCapabilities
			}
			if err != nil {
				r.orphaned(early.Take())
				if p.ctx.Err() == nil {
					p.spec.log.Info("runtime: instances of this module are built after approval", "module", p.spec.mod.name, "why", err)
					p.onSpot.Store(true)
				}
				break
			}
			p.ready <- in // only run sends, so there is room
		}
		p.building.Store(false)
		select {
		case <-p.kick:
		case <-p.ctx.Done():
			return
		}
	}
}

// close stops the refiller and closes the ready instances.
func (p *pool) close(ctx context.Context) {
	p.cancel()
	<-p.done
	for {
		select {
		case in := <-p.ready:
			in.close(ctx)
		default:
			return
		}
	}
}
