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

// pool keeps instances of one key ready, as demand asks and memory allows:
// it starts by keeping one, and each call that finds none ready (it builds
// its own, on the spot, and waits for it) raises the number kept by one, up
// to PoolSize. A pack called now and then holds one ready instance, one
// called in bursts as many as its bursts took, as measured. The
// ready instances of all pools hold at most Config.PoolMemory of memory
// of their own (instance.cost). The
// ready instances of all pools hold at most Config.PoolMemory of memory of
// their own (instance.cost). A pool that needs room for an instance it
// built closes the least recently used pools; when no other pool holds
// anything, the instance is dropped, and a pool that holds nothing then
// ends (the next call of its key starts it again). One goroutine builds
// them in the background, when the pool starts and after each call that took
// one has finished: building while a call runs would slow that call down
// (instantiation allocates megabytes; two cores are common), and calls that
// follow one another faster than an instance is built have raised the
// number kept, so the next call still finds one ready. Instances are never
// returned to the pool: each serves one call.
//
// An instance is built before its call is approved, so it is built with no
// capability at all (spec.ahead): its initializer's every exercise is
// denied. A module whose initializer tries one anyway (a Go init() that
// reads a file or fetches a URL) needs its capabilities at initialization:
// the pool stops building ahead, and every call builds its instance on the
// spot, after approval, under its own grant.
type pool struct {
	key      poolKey
	spec     *spec
	ready    chan *instance // capacity PoolSize
	target   atomic.Int32   // how many the refiller keeps ready: 1 to PoolSize, raised by demand
	kick     chan struct{}  // asks the refiller to fill the pool up again
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{} // closed when the refiller has returned
	used     uint64        // Runtime.tick at the last take, under Runtime.mu
	bytes    int64         // memory held by its ready instances, under Runtime.mu
	evicted  bool          // removed from Runtime.pools, under Runtime.mu
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
	if !ok {
		p = r.startPoolLocked(key, s)
	}
	r.tick++
	p.used = r.tick
	r.mu.Unlock()

	select {
	case in := <-p.ready:
		r.mu.Lock()
		if !p.evicted {
			p.bytes -= in.cost
			r.pooled -= in.cost
		}
		r.mu.Unlock()
		in.claim(inv, log)
		return in, p, nil
	default:
	}
	if ok {
		p.demand()
	}
	in, err := newInstance(ctx, s, callFor(s, inv, log), nil)
	return in, p, err
}

// demand records a call that found no ready instance in an existing pool:
// the pool keeps one more, up to its capacity.
func (p *pool) demand() {
	for {
		t := p.target.Load()
		if int(t) >= cap(p.ready) || p.target.CompareAndSwap(t, t+1) {
			return
		}
	}
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
		key:    key,
		spec:   s,
		ready:  make(chan *instance, r.poolSize),
		kick:   make(chan struct{}, 1),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	p.target.Store(1)
	r.pools[key] = p
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		p.run(r)
	}()
	return p
}

// instanceHeap is what an instance is counted to hold on the Go heap,
// wazero's and go-sdk's state: BenchmarkPooledInstanceMemory measures 8 KiB
// for a WAT plugin and 150 KiB for a Go plugin; the count takes the larger.
const instanceHeap = 160 << 10

// admit makes room for a ready instance of p that costs cost, closing the
// least recently used other pools as needed, and counts it. It returns
// false when p is closed or no longer the pool of its key, or when no
// other pool holds anything and there is no room: the instance is not to
// be kept, and a pool that then holds nothing is removed (its refiller
// ends; the next call of its key starts a new one).
func (r *Runtime) admit(p *pool, cost int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || p.evicted {
		return false
	}
	for r.pooled+cost > r.poolMem {
		victim := r.lruLocked(p)
		if victim == nil {
			if p.bytes == 0 {
				r.removeLocked(p)
			}
			return false
		}
		r.removeLocked(victim)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			victim.close(r.ctx)
		}()
	}
	p.bytes += cost
	r.pooled += cost
	return true
}

// lruLocked returns the least recently used pool other than p that holds
// ready instances, or nil.
func (r *Runtime) lruLocked(p *pool) *pool {
	var old *pool
	for _, q := range r.pools {
		if q != p && q.bytes > 0 && (old == nil || q.used < old.used) {
			old = q
		}
	}
	return old
}

// removeLocked takes p out of the pools: its instances no longer count,
// and it is to be closed.
func (r *Runtime) removeLocked(p *pool) {
	delete(r.pools, p.key)
	p.evicted = true
	r.pooled -= p.bytes
	p.bytes = 0
	p.cancel()
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
		for len(p.ready) < int(p.target.Load()) && p.ctx.Err() == nil && !p.onSpot.Load() {
			early := &capability.MemoryRecorder{}
			in, err := newInstance(p.ctx, p.spec, p.spec.ahead(early), early)
			if err == nil && in.tried() {
				in.close(p.ctx)
				err = errInitNeedsCapabilities
			}
			if err == nil {
				in.cost = in.budget.private() + instanceHeap
				if !r.admit(p, in.cost) {
					in.close(p.ctx)
					break
				}
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

// close stops the refiller and closes the ready instances. Runtime.mu
// must not be held: the refiller may be waiting for it (admit).
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

// PoolStats is what a Runtime's pools hold at one moment.
type PoolStats struct {
	Pools int   // pools kept (one per module, grant and workspace)
	Ready int   // instances built ahead, ready for a call
	Bytes int64 // memory of their own the ready instances hold
}

// Pools reports what r's pools hold, for metrics.
func (r *Runtime) Pools() PoolStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := PoolStats{Pools: len(r.pools), Bytes: r.pooled}
	for _, p := range r.pools {
		st.Ready += len(p.ready)
	}
	return st
}
