package gpu

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Ensemble runs the same work for several lanes (the particles of an
// ensemble, each with graphs and buffers of its own) as one launch, or
// one strided-batched GEMM, per kernel: each lane is a Device (Lane)
// whose launches, GEMMs and uploads are recorded, and Flush runs the
// lanes' records side by side, the i-th call of every lane at once.
//
// Two things make that possible. A lane's allocations mirror the other
// lanes': its n-th allocation and every other lane's n-th lie in one
// allocation of the device, at a fixed stride, so that the lanes'
// arguments of one call differ by a stride per argument (LaunchLanes,
// GemmStrided). And the lanes are independent: a lane writes no memory
// another lane reads or writes (its buffers, its rows of the ensemble's
// matrices), so that running the lanes' calls position by position
// computes what running each lane's in turn does. Calls of one position
// that do not line up (another kernel, another size, arguments not at a
// fixed stride) run one lane after another.
//
// An input that every lane reads alike (a batch) may lie in one
// allocation the lanes share (AllocShared), which each lane uploads the
// same bytes to, or writes by the same launch (one whose every pointer is
// the same on each lane): Flush then makes one of those uploads or
// launches.
//
// Lanes' downloads, syncs and frees flush first; so must whoever uses
// the device itself while lanes have work recorded.
type Ensemble struct {
	dev    Device
	mu     sync.Mutex
	lanes  []*Lane
	slots  []*slot
	shared []*slot // AllocShared's, of stride 0
}

// slot is one allocation of the device split into one part per lane.
type slot struct {
	p      Ptr
	stride int // bytes per lane
	bytes  int // a shared slot's
	live   int // lanes holding their part
}

// slotAlign is the alignment of every lane's part of a slot, that of the
// CUDA driver's allocations.
const slotAlign = 256

// NewEnsemble returns an ensemble of n lanes on dev.
func NewEnsemble(dev Device, n int) (*Ensemble, error) {
	if n < 1 || n > MaxLanes {
		return nil, fmt.Errorf("gpu: an ensemble of %d lanes", n)
	}
	e := &Ensemble{dev: dev}
	for i := range n {
		e.lanes = append(e.lanes, &Lane{e: e, i: i, parts: map[Ptr]*slot{}})
	}
	return e, nil
}

// Lane returns lane i.
func (e *Ensemble) Lane(i int) *Lane { return e.lanes[i] }

// Flush runs what the lanes recorded, side by side, and clears their
// records. It returns the first error; the calls after it are dropped.
func (e *Ensemble) Flush() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.flush()
}

func (e *Ensemble) flush() error {
	n := 0
	for _, l := range e.lanes {
		n = max(n, len(l.calls))
	}
	var first error
	for at := range n {
		if err := e.runAt(at); err != nil {
			first = err
			break
		}
	}
	for _, l := range e.lanes {
		clear(l.calls)
		l.calls = l.calls[:0]
	}
	return first
}

// runAt runs every lane's call at position at: as one launch or GEMM
// when all lanes have one and they line up, else one after another.
func (e *Ensemble) runAt(at int) error {
	var cs []*call
	var lanes []int
	for i, l := range e.lanes {
		if at < len(l.calls) {
			cs, lanes = append(cs, &l.calls[at]), append(lanes, i)
		}
	}
	if len(cs) == len(e.lanes) && len(cs) > 1 {
		if ok, err := e.together(cs); ok {
			return err
		}
	}
	for i, c := range cs {
		if err := c.run(e.dev); err != nil {
			return fmt.Errorf("lane %d: %w", lanes[i], err)
		}
	}
	return nil
}

// together runs the calls cs, one per lane, as one launch or GEMM if they
// line up, and reports whether it did.
func (e *Ensemble) together(cs []*call) (bool, error) {
	c := cs[0]
	switch {
	case c.kernel == "" && c.gemm == nil:
		for _, o := range cs[1:] {
			if o.kernel != "" || o.gemm != nil || o.dst != c.dst || !bytes.Equal(o.up, c.up) {
				return false, nil
			}
		}
		// The same bytes to one place (AllocShared): once is enough.
		return true, e.dev.Upload(c.dst, c.up)
	case c.kernel != "":
		strides, ok := launchStrides(cs)
		if !ok {
			return false, nil
		}
		if strides == (Lanes{}) {
			// Every lane's pointers the same: memory the lanes share
			// (AllocShared) written alike by each, as an upload there.
			// Once is enough.
			return true, e.dev.Launch(c.kernel, c.threads, c.args...)
		}
		return true, e.dev.LaunchLanes(c.kernel, c.threads, len(cs), strides, c.args...)
	case c.gemm != nil:
		strides, ok := gemmStrides(cs)
		if !ok {
			return false, nil
		}
		g := c.gemm
		return true, e.dev.GemmStrided(g.dt, g.tA, g.tB, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc, strides, len(cs))
	}
	return false, nil
}

// stride returns the stride of the lanes' values ps if they lie at one
// (ps[i] = ps[0] + i·stride).
func stride(ps []Ptr) (int64, bool) {
	s := int64(ps[1] - ps[0])
	for i, p := range ps {
		if int64(p-ps[0]) != int64(i)*s {
			return 0, false
		}
	}
	return s, true
}

// launchStrides returns the strides of the Ptr arguments of the launches
// cs, if they are launches of one kernel on as many threads whose other
// arguments are equal and whose pointers lie at strides.
func launchStrides(cs []*call) (Lanes, bool) {
	var strides Lanes
	c, k := cs[0], 0
	for _, o := range cs[1:] {
		if o.kernel != c.kernel || o.threads != c.threads || len(o.args) != len(c.args) {
			return strides, false
		}
	}
	ps := make([]Ptr, len(cs))
	for i, a := range c.args {
		if _, isPtr := a.(Ptr); !isPtr {
			for _, o := range cs[1:] {
				if o.args[i] != a {
					return strides, false
				}
			}
			continue
		}
		for j, o := range cs {
			p, isPtr := o.args[i].(Ptr)
			if !isPtr {
				return strides, false
			}
			ps[j] = p
		}
		s, ok := stride(ps)
		if !ok || k == MaxLanePtrs {
			return strides, false
		}
		strides[k] = s
		k++
	}
	return strides, true
}

// gemmStrides returns the element strides of the GEMMs cs's operands, if
// they are products of one shape whose operands lie at strides of whole
// elements.
func gemmStrides(cs []*call) ([3]int, bool) {
	var strides [3]int
	g := *cs[0].gemm
	ptrs := make([][]Ptr, 3)
	for _, c := range cs {
		o := c.gemm
		if o == nil {
			return strides, false
		}
		h := *o
		h.a, h.b, h.c = g.a, g.b, g.c
		if h != g {
			return strides, false
		}
		ptrs[0], ptrs[1], ptrs[2] = append(ptrs[0], o.a), append(ptrs[1], o.b), append(ptrs[2], o.c)
	}
	size := int64(g.dt.Size())
	for i, ps := range ptrs {
		s, ok := stride(ps)
		if !ok || s%size != 0 {
			return strides, false
		}
		strides[i] = int(s / size)
	}
	return strides, true
}

// call is a lane's recorded launch, GEMM or upload.
type call struct {
	kernel  string // a launch's
	threads int
	args    []any
	gemm    *gemmCall
	up      []byte // an upload's bytes, to dst
	dst     Ptr
}

type gemmCall struct {
	dt            Dtype
	tA, tB        bool
	m, n, k       int
	alpha, beta   float64
	a, b, c       Ptr
	lda, ldb, ldc int
}

// run makes the call on dev.
func (c *call) run(dev Device) error {
	switch {
	case c.kernel != "":
		return dev.Launch(c.kernel, c.threads, c.args...)
	case c.gemm != nil:
		g := c.gemm
		return dev.Gemm(g.dt, g.tA, g.tB, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc)
	}
	return dev.Upload(c.dst, c.up)
}

// Lane is one lane of an Ensemble: a Device whose launches, GEMMs and
// uploads wait for the ensemble's Flush, and whose allocations mirror
// the other lanes'.
type Lane struct {
	e          *Ensemble
	i          int
	next       int           // the slot of its next allocation
	nextShared int           // the shared slot of its next AllocShared
	parts      map[Ptr]*slot // its allocations
	calls      []call
}

func (l *Lane) Name() string { return fmt.Sprintf("%s, lane %d", l.e.dev.Name(), l.i) }

// Alloc returns the lane's part of the slot of its n-th allocation, the
// first lane to reach it allocating the slot. A lane asking for another
// size than the slot's has an allocation of its own, which its calls
// then do not share a launch with.
func (l *Lane) Alloc(bytes int) (Ptr, error) {
	if bytes <= 0 {
		return 0, fmt.Errorf("gpu: %s: allocation of %d bytes", l.Name(), bytes)
	}
	e := l.e
	e.mu.Lock()
	defer e.mu.Unlock()
	n := l.next
	l.next++
	stride := (bytes + slotAlign - 1) / slotAlign * slotAlign
	for len(e.slots) <= n {
		e.slots = append(e.slots, nil)
	}
	s := e.slots[n]
	if s == nil {
		p, err := e.dev.Alloc(stride * len(e.lanes))
		if err != nil {
			return 0, err
		}
		s = &slot{p: p, stride: stride}
		e.slots[n] = s
	}
	if s.stride != stride {
		s = &slot{stride: stride}
		var err error
		if s.p, err = e.dev.Alloc(bytes); err != nil {
			return 0, err
		}
		p := s.p
		s.live = 1
		l.parts[p] = s
		return p, nil
	}
	p := s.p + Ptr(l.i*s.stride)
	s.live++
	l.parts[p] = s
	return p, nil
}

// AllocShared returns the lane's n-th shared allocation, the same for
// every lane (the first lane to reach it allocates it): for an input
// that every lane uploads alike and only reads.
func (l *Lane) AllocShared(bytes int) (Ptr, error) {
	if bytes <= 0 {
		return 0, fmt.Errorf("gpu: %s: allocation of %d bytes", l.Name(), bytes)
	}
	e := l.e
	e.mu.Lock()
	defer e.mu.Unlock()
	n := l.nextShared
	l.nextShared++
	for len(e.shared) <= n {
		e.shared = append(e.shared, nil)
	}
	s := e.shared[n]
	if s == nil || s.bytes != bytes {
		p, err := e.dev.Alloc(bytes)
		if err != nil {
			return 0, err
		}
		s = &slot{p: p, bytes: bytes}
		if e.shared[n] == nil {
			e.shared[n] = s
		}
	}
	s.live++
	l.parts[s.p] = s
	return s.p, nil
}

// Free runs what the lanes recorded, which may use p, then releases the
// lane's part; the slot goes back to the device with its last part.
func (l *Lane) Free(p Ptr) error {
	e := l.e
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.flush()
	s, ok := l.parts[p]
	if !ok {
		return errors.Join(err, fmt.Errorf("gpu: %s: free of %#x, which is not its allocation", l.Name(), uintptr(p)))
	}
	delete(l.parts, p)
	if s.live--; s.live > 0 {
		return err
	}
	if i := slices.Index(e.slots, s); i >= 0 {
		e.slots[i] = nil
	}
	if i := slices.Index(e.shared, s); i >= 0 {
		e.shared[i] = nil
	}
	return errors.Join(err, e.dev.Free(s.p))
}

// record adds c to the lane's calls.
func (l *Lane) record(c call) error {
	l.e.mu.Lock()
	defer l.e.mu.Unlock()
	l.calls = append(l.calls, c)
	return nil
}

// Upload records a copy of src, to be made in the lane's order.
func (l *Lane) Upload(dst Ptr, src []byte) error {
	return l.record(call{dst: dst, up: slices.Clone(src)})
}

// Download runs what the lanes recorded, then copies.
func (l *Lane) Download(dst []byte, src Ptr) error {
	if err := l.e.Flush(); err != nil {
		return err
	}
	return l.e.dev.Download(dst, src)
}

// Launch records the launch.
func (l *Lane) Launch(kernel string, threads int, args ...any) error {
	return l.record(call{kernel: kernel, threads: max(1, threads), args: slices.Clone(args)})
}

// LaunchLanes, from a lane, runs what the lanes recorded, then launches.
func (l *Lane) LaunchLanes(kernel string, threads, lanes int, strides Lanes, args ...any) error {
	if err := l.e.Flush(); err != nil {
		return err
	}
	return l.e.dev.LaunchLanes(kernel, threads, lanes, strides, args...)
}

// Gemm records the product.
func (l *Lane) Gemm(dt Dtype, tA, tB bool, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, c Ptr, ldc int) error {
	g := &gemmCall{dt: dt, tA: tA, tB: tB, m: m, n: n, k: k, alpha: alpha, beta: beta, a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc}
	return l.record(call{gemm: g})
}

// GemmStrided, from a lane, runs what the lanes recorded, then the
// products.
func (l *Lane) GemmStrided(dt Dtype, tA, tB bool, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, c Ptr, ldc int, strides [3]int, batch int) error {
	if err := l.e.Flush(); err != nil {
		return err
	}
	return l.e.dev.GemmStrided(dt, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, strides, batch)
}

// Sync runs what the lanes recorded and waits for the device.
func (l *Lane) Sync() error {
	if err := l.e.Flush(); err != nil {
		return err
	}
	return l.e.dev.Sync()
}

// Close does nothing: the device is the ensemble's, and the lane's
// allocations are freed one by one.
func (l *Lane) Close() error { return nil }

var _ Device = (*Lane)(nil)
