package particles

import (
	"errors"
	"fmt"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// DeviceEnsemble is an ensemble held in a GPU's memory (package
// internal/gpu), in float64 and row-major: Theta is M rows of D (particle
// a's position in row a) and Scores K·M rows of D (row i·M + a is s_ia,
// target i's score at particle a). Step is Ensemble.Step. Work, when set,
// is the rules' scratch memory, kept from call to call by the caller
// (DeviceWork); without it each call allocates its own and frees it.
//
// Negated says that Scores holds the negated scores −s_ia (the losses'
// gradients, as a device graph computes them) and that the rule is to
// write −φ: what an optimiser descends along. The rules then flip the
// signs of their small matrices on the host, which is exact, so the
// result is bit for bit the negation of φ, and no kernel negates a vector.
type DeviceEnsemble struct {
	Theta, Scores gpu.Ptr
	M, K, D       int
	Step          int
	// Values is Ensemble.Values (Values[t][a], objective t at particle
	// a), for a rule that reads them (Pareto MTL); nil otherwise.
	Values  [][]float64
	Work    *DeviceWork
	Negated bool
}

// DeviceRule is a Rule that can also move an ensemble held on a device,
// with the same result as Direction on the same vectors and the kernel
// over the positions (an Ensemble.Kernel has no device form).
type DeviceRule interface {
	Rule
	// DirectionOnDevice writes φ(θ_a) (−φ(θ_a) if e.Negated) into row a
	// of dst (M rows of D on dev), which must not overlap the ensemble's
	// vectors.
	DirectionOnDevice(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble) error
	// Grams lists the products of the ensemble's rows that the direction
	// on e reads back to the host (none for a rule that reads nothing),
	// and DirectionFromGrams is DirectionOnDevice given them, in that
	// order, read back by the caller: a caller that reads back other
	// values too reads these with them, in one copy.
	Grams(e DeviceEnsemble) []Gram
	DirectionFromGrams(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble, grams [][]float64) error
}

// Gram is the product X·Yᵀ (Rows×Cols, row-major) of Rows and Cols rows
// of an ensemble's D values on the device. With Every > 0 it is Every
// such products, one after another, the a-th of the rows a, a + Every,
// a + 2·Every, … of X and of Y: with Every = M, each particle's own
// Gram matrix of its K scores (K×K blocks of SSᵀ, M of them, where SSᵀ
// would be KM×KM and M times the work).
type Gram struct {
	X, Y       gpu.Ptr
	Rows, Cols int
	Every      int
}

// size is the float64 values of the product.
func (g Gram) size() int { return max(1, g.Every) * g.Rows * g.Cols }

// directionOnDevice is DirectionOnDevice for any DeviceRule: its Grams
// read back in one copy, then DirectionFromGrams.
func directionOnDevice(r DeviceRule, name string, dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble) error {
	w, err := newDeviceWork(dev, e)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer w.release()
	var grams [][]float64
	if gs := r.Grams(e); len(gs) > 0 {
		if grams, err = w.products(gs...); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return r.DirectionFromGrams(dev, dst, e, grams)
}

// checkGrams reports grams that are not the products gs a rule listed.
func checkGrams(grams [][]float64, gs []Gram) error {
	if len(grams) != len(gs) {
		return fmt.Errorf("%d products read back, want %d", len(grams), len(gs))
	}
	for i, g := range gs {
		if len(grams[i]) != g.size() {
			return fmt.Errorf("product %d has %d values, want %d", i, len(grams[i]), g.size())
		}
	}
	return nil
}

// Every device rule here is a mix of the ensemble's rows: each direction
// is φ = B·S + A·Θ, with B (M×KM) and A (M×M) small matrices formed on
// the host from the kernel and the rule's weights. Everything of length D
// is a matrix product on the device:
//
//	G = ΘΘᵀ (M×M): the squared distances G_aa + G_bb − 2G_ab, hence σ²
//	    and the kernel k_ab;
//	P = SSᵀ (KM×KM) and Q = SΘᵀ (KM×M): what MT-SGD's U needs;
//	φ = B·S + A·Θ: the smoothed (combined) scores, and with
//	    A = ρ/(σ²M)·(diag(Σ_a k_ab) − k) the repulsion
//	    ρ/σ²·Σ_a k_ab(θ_b − θ_a), over M.
//
// Only these small matrices travel between the device and the host.
// Distances from a Gram matrix lose the digits that ‖θ‖² has beyond
// ‖θ_a − θ_b‖²: negligible in float64 unless the particles are closer than
// 1e-6 of their norms.

// DeviceWork is the scratch memory of device rules (the small matrices
// they form and read back), kept across calls so that a training step
// allocates nothing on the device once its first step has grown it. It
// belongs to one device, the first it is used on; calls that share it
// must not run at once. Release frees it.
type DeviceWork struct {
	dev  gpu.Device
	bufs []workBuf
	next int // the buffer the call's next alloc hands out
}

type workBuf struct {
	p gpu.Ptr
	n int // float64 values
}

// Release frees the memory; the DeviceWork may be used again.
func (w *DeviceWork) Release() error {
	var errs []error
	for _, b := range w.bufs {
		errs = append(errs, w.dev.Free(b.p))
	}
	w.bufs, w.next = nil, 0
	return errors.Join(errs...)
}

// alloc returns the call's next buffer, of at least n float64 values: the
// buffer in that place at the previous call, grown if it is too small.
func (w *DeviceWork) alloc(n int) (gpu.Ptr, error) {
	if w.next == len(w.bufs) {
		w.bufs = append(w.bufs, workBuf{})
	}
	b := &w.bufs[w.next]
	if b.n < n {
		if b.p != 0 {
			if err := w.dev.Free(b.p); err != nil {
				return 0, err
			}
			*b = workBuf{}
		}
		p, err := w.dev.Alloc(8 * n)
		if err != nil {
			return 0, err
		}
		*b = workBuf{p: p, n: n}
	}
	w.next++
	return b.p, nil
}

// deviceWork is one call's view of its scratch memory: e.Work, or memory
// of its own that release frees.
type deviceWork struct {
	dev  gpu.Device
	e    DeviceEnsemble
	work *DeviceWork
	own  bool
}

func newDeviceWork(dev gpu.Device, e DeviceEnsemble) (*deviceWork, error) {
	if e.M < 1 || e.K < 1 || e.D < 1 {
		return nil, fmt.Errorf("%d particles, %d targets, %d coordinates on %s", e.M, e.K, e.D, dev.Name())
	}
	w := &deviceWork{dev: dev, e: e, work: e.Work}
	if w.work == nil {
		w.work, w.own = &DeviceWork{}, true
	}
	switch {
	case w.work.dev == nil:
		w.work.dev = dev
	case w.work.dev != dev:
		return nil, fmt.Errorf("scratch memory of %s used on %s", w.work.dev.Name(), dev.Name())
	}
	w.work.next = 0
	return w, nil
}

func (w *deviceWork) release() {
	if w.own {
		w.work.Release()
	}
}

func (w *deviceWork) alloc(n int) (gpu.Ptr, error) { return w.work.alloc(n) }

// products returns the products gs on the host, brought back by one copy.
func (w *deviceWork) products(gs ...Gram) ([][]float64, error) {
	out, err := w.alloc(GramsSize(gs))
	if err != nil {
		return nil, err
	}
	if err := ComputeGrams(w.dev, out, w.e.D, gs); err != nil {
		return nil, err
	}
	host := make([]float64, GramsSize(gs))
	if err := w.dev.Download(gpu.Bytes(host), out); err != nil {
		return nil, err
	}
	return SplitGrams(host, gs), nil
}

// GramsSize is the float64 values of the products gs.
func GramsSize(gs []Gram) int {
	n := 0
	for _, g := range gs {
		n += g.size()
	}
	return n
}

// ComputeGrams writes the products gs of rows of d values, one after
// another, at out on dev (GramsSize values).
func ComputeGrams(dev gpu.Device, out gpu.Ptr, d int, gs []Gram) error {
	for _, g := range gs {
		var err error
		if g.Every > 0 {
			ld := g.Every * d
			err = dev.GemmStrided(gpu.Float64, false, true, g.Rows, g.Cols, d, 1, g.X, ld, g.Y, ld, 0, out, g.Cols,
				[3]int{d, d, g.Rows * g.Cols}, g.Every)
		} else {
			err = dev.Gemm(gpu.Float64, false, true, g.Rows, g.Cols, d, 1, g.X, d, g.Y, d, 0, out, g.Cols)
		}
		if err != nil {
			return err
		}
		out += gpu.Ptr(8 * g.size())
	}
	return nil
}

// SplitGrams cuts host, the products gs as ComputeGrams laid them, into
// one slice per product.
func SplitGrams(host []float64, gs []Gram) [][]float64 {
	res := make([][]float64, len(gs))
	for i, g := range gs {
		res[i], host = host[:g.size()], host[g.size():]
	}
	return res
}

// kernelFromGram evaluates rbf over the positions into km from their
// Gram matrix G = ΘΘᵀ (M×M, on the host).
func kernelFromGram(rbf RBF, km *kernelMatrix, g []float64, m int) {
	km.rep = nil
	km.d2 = grow(km.d2, m, m)
	for a := range m {
		for b := range m {
			km.d2[a][b] = max(0, g[a*m+a]+g[b*m+b]-2*g[a*m+b])
		}
		km.d2[a][a] = 0
	}
	rbf.fromDistances(km)
}

// mix writes φ = B·S + A·Θ into dst; a nil A is zero. With negated
// scores (e.Negated: −S on the device) it writes −φ = B·(−S) + (−A)·Θ.
// B and A go to the device in one copy.
func (w *deviceWork) mix(dst gpu.Ptr, b, a []float64) error {
	m, km, d := w.e.M, w.e.K*w.e.M, w.e.D
	pb, err := w.alloc(m*km + len(a))
	if err != nil {
		return err
	}
	host := b
	if a != nil {
		host = append(make([]float64, 0, len(b)+len(a)), b...)
		for _, v := range a {
			if w.e.Negated {
				v = -v
			}
			host = append(host, v)
		}
	}
	if err := w.dev.Upload(pb, gpu.Bytes(host)); err != nil {
		return err
	}
	if err := w.dev.Gemm(gpu.Float64, false, false, m, d, km, 1, pb, km, w.e.Scores, d, 0, dst, d); err != nil {
		return err
	}
	if a == nil {
		return nil
	}
	pa := pb + gpu.Ptr(8*m*km)
	return w.dev.Gemm(gpu.Float64, false, false, m, d, m, 1, pa, m, w.e.Theta, d, 1, dst, d)
}

// ownMix is the B of directions that mix each particle's own scores,
// φ_a = Σ_i weight(a, i)·s_ia.
func ownMix(m, k int, weight func(a, i int) float64) []float64 {
	b := make([]float64, m*k*m)
	for a := range m {
		for i := range k {
			b[a*k*m+i*m+a] = weight(a, i)
		}
	}
	return b
}
