package engine

import (
	"errors"
	"fmt"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/optim"
	"github.com/mtsgd/mtsgd/particles"
)

// resident is the ensemble held on the device (Config.Device) from step
// to step: the particles' parameters, the step's scores and directions,
// and (inside the optimisers) their state, all float64 matrices with one
// row per particle. A step then moves no vector of a particle's length
// between the host and the device: the graphs read their parameters from
// these rows and write their gradients, the negated scores, into the
// score rows; the rules (particles.DeviceRule, with negated scores) write
// −φ, which the optimisers (optim.DeviceOptimizer) descend along in
// place. No kernel negates a vector: the rules flip the signs of their
// small matrices instead. What crosses is small: the batch, each task's
// loss, the batch-norm statistics (the running statistics stay on the
// host, for the prediction graph), the rules' M×M and KM×KM matrices,
// and one row sum per score row to check that every gradient is finite.
//
// The host's vectors (Trainer.Particles, the optimisers' State) are stale
// while the ensemble is resident; Trainer.Sync brings them back.
type resident struct {
	dev        gpu.Device
	m, k       int
	trunk      matrix   // M × d_α
	trunkScore matrix   // K·M × d_α: row j·M + i is task j's gradient (−score) at particle i
	trunkDir   matrix   // M × d_α: −φ
	heads      []matrix // per task: M × d_β
	headScore  []matrix // per task: M × d_β, gradients (−scores), in headScores
	headDir    []matrix // per task: M × d_β, −φ, in headDirs
	// headScores and headDirs are the allocations of every task's
	// headScore, and headDir, one after another.
	headScores, headDirs gpu.Ptr
	ones                 gpu.Ptr // the widest row's length of ones, for row sums
	// back is what a step reads back after its passes, in one copy, in
	// float64: every particle's losses (M rows of K), its batch
	// statistics (M rows of S), M values no one reads (each particle's
	// trunk graph's inner product: a lane writes only its own memory,
	// gpu.Ensemble), 2·K·M row sums (sums), the trunk and head
	// scores', (K+1)·M row sums of the last move's directions
	// (dirSums, pending's), then the products the rules of the moves to
	// come read (grams, room for gramsCap values).
	back      gpu.Ptr
	stats     int // S
	sums      gpu.Ptr
	dirSums   gpu.Ptr
	grams     gpu.Ptr
	gramsCap  int
	hostBack  []float64
	moves     []move // the moves to come, with their products
	rows      []deviceRows
	work      particles.DeviceWork // the rules' scratch
	hostStale bool                 // the device's parameters are newer than the host's
	// pending is the check of the last move's directions, whose row sums
	// wait in dirSums to be read back with the next copy (readBack) or by
	// settle; nil when there is none.
	pending *dirCheck
}

// dirCheck is the finiteness check of a move's directions (−φ), made
// after the optimisers stepped along them: their row sums are computed
// on the device with the move and read back with the step's next copy,
// so that a step waits for the device once. A non-finite direction is
// then reported one copy late, the parameters already moved along it;
// the trainer's failure is sticky (Trainer.failed) and nothing syncs
// those parameters back to the host.
type dirCheck struct {
	step  int
	dirs  []matrix
	tasks []string // per matrix: its task, "" for the trunks'
	n     int      // row sums
}

// matrix is a row-major float64 matrix in device memory.
type matrix struct {
	p          gpu.Ptr
	rows, cols int
}

func (x matrix) row(i int) gpu.Ptr { return x.p + gpu.Ptr(8*i*x.cols) }

// deviceRows is where one particle's vectors lie in a resident ensemble:
// the parameters its graphs read and the score rows they write.
type deviceRows struct {
	trunk      gpu.Ptr
	heads      []gpu.Ptr // per task
	trunkScore []gpu.Ptr // per task
	headScore  []gpu.Ptr // per task
	// Where its graphs leave what the step reads back (resident.back):
	// its losses (K), its batch statistics, and what no one reads.
	loss, stats, discard gpu.Ptr
}

// residentFor reports whether steps with u keep the ensemble on the
// device: with a device, the kernels over the parameters (a kernel over
// the outputs is evaluated on the host), and rules and optimisers that
// have device forms. Other steps run their graphs on the device and the
// rest on the host.
func (tr *Trainer) residentFor(u Update) bool {
	if tr.cfg.Device == nil || u.Kernel != KernelParams {
		return false
	}
	if _, ok := u.Trunk.(particles.DeviceRule); !ok && len(tr.trunks[0]) > 0 {
		return false
	}
	if _, ok := u.Head.(particles.DeviceRule); !ok {
		return false
	}
	for i, o := range tr.trunkOpt {
		if _, ok := o.(optim.DeviceOptimizer); !ok {
			return false
		}
		for _, h := range tr.headOpt[i] {
			if _, ok := h.(optim.DeviceOptimizer); !ok {
				return false
			}
		}
	}
	return true
}

// place moves the ensemble to the device for a step with u that can keep
// it there, or back to the host for one that cannot.
func (tr *Trainer) place(u Update) error {
	want := tr.residentFor(u)
	switch {
	case want && tr.res == nil:
		if err := tr.newLanes(); err != nil {
			return fmt.Errorf("engine: the ensemble on %s: %w", tr.cfg.Device.Name(), err)
		}
		r, err := newResident(tr)
		if err != nil {
			return fmt.Errorf("engine: the ensemble on %s: %w", tr.cfg.Device.Name(), err)
		}
		tr.res = r
	case !want && tr.res != nil:
		if err := tr.Sync(); err != nil {
			return err
		}
		err := tr.res.free()
		tr.res = nil
		if err != nil {
			return err
		}
	}
	tr.allocateStep()
	return nil
}

// lanes are the particles of an ensemble held on the device as the lanes
// of a gpu.Ensemble, each with a machine of its own (its graphs and
// their buffers): a resident step runs each particle's passes on its
// lane, then every lane's kernels side by side, one launch (or
// strided-batched product) per kernel for the whole ensemble, where
// one machine per worker would launch each particle's in turn. The
// optimisers step on the lanes too. They stay with the trainer, as its
// workers' machines do.
type lanes struct {
	ens      *gpu.Ensemble
	machines []*machine // per particle
}

// newLanes makes the lanes the first time the ensemble goes to the
// device; their machines build their graphs at their first step.
func (tr *Trainer) newLanes() error {
	if tr.lanes != nil {
		return nil
	}
	ens, err := gpu.NewEnsemble(tr.cfg.Device, len(tr.Particles))
	if err != nil {
		return err
	}
	l := &lanes{ens: ens}
	for i := range tr.Particles {
		cfg := *tr.cfg
		cfg.Device = ens.Lane(i)
		// No prediction graph: evaluation runs on the workers' machines.
		l.machines = append(l.machines, &machine{cfg: &cfg})
	}
	tr.lanes = l
	return nil
}

// newResident allocates the ensemble's matrices on the device and uploads
// the particles.
func newResident(tr *Trainer) (r *resident, err error) {
	dev := tr.cfg.Device
	m, k := len(tr.Particles), len(tr.cfg.Tasks)
	r = &resident{dev: dev, m: m, k: k}
	defer func() {
		if err != nil {
			r.free()
		}
	}()
	newMatrix := func(rows, cols int) (matrix, error) {
		p, err := dev.Alloc(8 * max(1, rows*cols))
		return matrix{p: p, rows: rows, cols: cols}, err
	}
	widest := len(tr.Particles[0].Trunk)
	d := widest
	if r.trunk, err = newMatrix(m, d); err != nil {
		return nil, err
	}
	if r.trunkScore, err = newMatrix(k*m, d); err != nil {
		return nil, err
	}
	if r.trunkDir, err = newMatrix(m, d); err != nil {
		return nil, err
	}
	if err := r.allocHeads(tr, newMatrix, &widest); err != nil {
		return nil, err
	}
	if r.ones, err = dev.Alloc(8 * widest); err != nil {
		return nil, err
	}
	if err := dev.Launch("fill_f64", widest, r.ones, 1.0, widest); err != nil {
		return nil, err
	}
	r.stats = models.Size(tr.cfg.Model.TrunkStats())
	// Room for the products of any device rule: G (M×M), P (KM×KM) and
	// Q (KM×M) for the trunks, and as much for each task's heads (K = 1).
	r.gramsCap = m*m + k*m*k*m + k*m*m + k*3*m*m
	if r.back, err = dev.Alloc(8 * (r.headLen() + r.gramsCap)); err != nil {
		return nil, err
	}
	discard := r.back + gpu.Ptr(8*m*(k+r.stats))
	r.sums = discard + gpu.Ptr(8*m)
	r.dirSums = r.sums + gpu.Ptr(8*2*k*m)
	r.grams = r.dirSums + gpu.Ptr(8*(k+1)*m)
	for i, p := range tr.Particles {
		if err := r.upload(r.trunk, i, p.Trunk); err != nil {
			return nil, err
		}
		rows := deviceRows{trunk: r.trunk.row(i), loss: r.back + gpu.Ptr(8*i*k),
			stats: r.back + gpu.Ptr(8*(m*k+i*r.stats)), discard: discard + gpu.Ptr(8*i)}
		for j := range k {
			if err := r.upload(r.heads[j], i, p.Heads[j]); err != nil {
				return nil, err
			}
			rows.heads = append(rows.heads, r.heads[j].row(i))
			rows.trunkScore = append(rows.trunkScore, r.trunkScore.row(j*m+i))
			rows.headScore = append(rows.headScore, r.headScore[j].row(i))
		}
		r.rows = append(r.rows, rows)
	}
	return r, nil
}

// allocHeads allocates each task's heads (newMatrix), and their scores
// and directions, which lie one after another in one allocation each
// (headScores, headDirs), so that their row sums are one product
// (rowSums) where the heads have one width. It widens *widest to the
// widest head.
func (r *resident) allocHeads(tr *Trainer, newMatrix func(rows, cols int) (matrix, error), widest *int) error {
	m, heads := r.m, 0
	for j := range r.k {
		heads += len(tr.Particles[0].Heads[j])
	}
	for _, b := range []*gpu.Ptr{&r.headScores, &r.headDirs} {
		var err error
		if *b, err = r.dev.Alloc(8 * max(1, m*heads)); err != nil {
			return err
		}
	}
	at := 0
	for j := range r.k {
		d := len(tr.Particles[0].Heads[j])
		*widest = max(*widest, d)
		mat, err := newMatrix(m, d)
		r.heads = append(r.heads, mat)
		if err != nil {
			return err
		}
		r.headScore = append(r.headScore, matrix{p: r.headScores + gpu.Ptr(8*at), rows: m, cols: d})
		r.headDir = append(r.headDir, matrix{p: r.headDirs + gpu.Ptr(8*at), rows: m, cols: d})
		at += m * d
	}
	return nil
}

// headLen is the number of values back holds before the products: the
// losses, statistics, discarded values and row sums.
func (r *resident) headLen() int {
	return r.m*(r.k+r.stats) + r.m + 2*r.k*r.m + (r.k+1)*r.m
}

func (r *resident) upload(x matrix, i int, v []float64) error {
	if len(v) == 0 {
		return nil
	}
	return r.dev.Upload(x.row(i), gpu.Bytes(v))
}

func (r *resident) download(v []float64, x matrix, i int) error {
	if len(v) == 0 {
		return nil
	}
	return r.dev.Download(gpu.Bytes(v), x.row(i))
}

// free releases the device memory.
func (r *resident) free() error {
	var errs []error
	for _, x := range append([]matrix{r.trunk, r.trunkScore, r.trunkDir}, r.heads...) {
		if x.p != 0 {
			errs = append(errs, r.dev.Free(x.p))
		}
	}
	for _, p := range []gpu.Ptr{r.headScores, r.headDirs, r.ones, r.back} {
		if p != 0 {
			errs = append(errs, r.dev.Free(p))
		}
	}
	errs = append(errs, r.work.Release())
	return errors.Join(errs...)
}

// Sync brings the parameters and the optimisers' state of an ensemble
// held on the device back to Particles and the optimisers' State; the
// device keeps them for the next step. Without a device, or when the
// host is current, it does nothing. Evaluate calls it; so must anything
// else that reads Particles or the optimisers' State after a step with a
// device.
//
// A step's directions are checked with the next step's copy back; Sync
// reads back the last step's check first (settle), and reports a
// non-finite direction, as every later call does, without syncing the
// parameters that moved along it.
func (tr *Trainer) Sync() error {
	if err := tr.settle(); err != nil {
		return err
	}
	r := tr.res
	if r == nil || !r.hostStale {
		return nil
	}
	for i, p := range tr.Particles {
		if err := r.download(p.Trunk, r.trunk, i); err != nil {
			return fmt.Errorf("engine: particle %d from %s: %w", i, r.dev.Name(), err)
		}
		for j := range p.Heads {
			if err := r.download(p.Heads[j], r.heads[j], i); err != nil {
				return fmt.Errorf("engine: particle %d from %s: %w", i, r.dev.Name(), err)
			}
		}
		for _, o := range append([]optim.Optimizer{tr.trunkOpt[i]}, tr.headOpt[i]...) {
			if err := o.(optim.DeviceOptimizer).Fetch(); err != nil {
				return fmt.Errorf("engine: particle %d optimiser from %s: %w", i, r.dev.Name(), err)
			}
		}
	}
	r.hostStale = false
	return nil
}

// Close frees, after Sync, all the trainer holds on a device: the
// ensemble held there, the optimisers' state and every graph's buffers
// (the workers', the particles' lanes' and the prediction graphs'). The
// particles stay readable on the host, but the trainer must not step or
// predict again. After a failed Sync (a non-finite direction) it still
// frees the memory, and reports that failure. On the CPU it frees nothing.
func (tr *Trainer) Close() error {
	errs := []error{tr.Sync()}
	for i := range tr.Particles {
		for _, o := range append([]optim.Optimizer{tr.trunkOpt[i]}, tr.headOpt[i]...) {
			if d, ok := o.(optim.DeviceOptimizer); ok {
				errs = append(errs, d.Release())
			}
		}
	}
	if tr.res != nil {
		errs = append(errs, tr.res.free())
		tr.res = nil
	}
	if tr.held != nil {
		errs = append(errs, tr.held.free())
		tr.held = nil
	}
	if tr.lanes != nil {
		for _, mc := range tr.lanes.machines {
			errs = append(errs, mc.closeDevices())
		}
		tr.lanes = nil
	}
	for _, mc := range tr.machines {
		errs = append(errs, mc.closeDevices())
	}
	return errors.Join(errs...)
}

// rowSums writes the row sums x·1 of the matrices xs to dst, one after
// another, and returns how many there are: one matrix product for each
// run of matrices of one width that lie one after another in memory (the
// heads' scores, or their directions, of every task: newResident), which
// is a matrix of their rows. A row's sum is finite unless the row holds a
// NaN or Inf (or the sum overflows, which the row's own check then
// clears: firstNotFinite).
func (r *resident) rowSums(dst gpu.Ptr, xs []matrix) (int, error) {
	n := 0
	for i := 0; i < len(xs); {
		x := xs[i]
		rows := x.rows
		for i++; x.cols > 0 && i < len(xs) && xs[i].cols == x.cols && xs[i].p == x.p+gpu.Ptr(8*rows*x.cols); i++ {
			rows += xs[i].rows
		}
		if x.cols == 0 {
			continue
		}
		if err := r.dev.Gemm(gpu.Float64, false, false, rows, 1, x.cols, 1, x.p, x.cols, r.ones, 1, 0, dst+gpu.Ptr(8*n), 1); err != nil {
			return 0, err
		}
		n += rows
	}
	return n, nil
}

// firstNotFinite reports the first row of the matrices xs with a NaN or
// Inf, as which matrix, row and index, or which −1, from their row sums
// (rowSums) on the host: only rows whose sum is not finite are read back.
func (r *resident) firstNotFinite(xs []matrix, sums []float64) (which, row, index int, err error) {
	if finite(sums) < 0 {
		return -1, -1, -1, nil
	}
	for which, x := range xs {
		if x.cols == 0 {
			continue
		}
		var v []float64
		for i, s := range sums[:x.rows] {
			if finite([]float64{s}) < 0 {
				continue
			}
			if v == nil {
				v = make([]float64, x.cols)
			}
			if err := r.download(v, x, i); err != nil {
				return 0, 0, 0, err
			}
			if at := finite(v); at >= 0 {
				return which, i, at, nil
			}
		}
		sums = sums[x.rows:]
	}
	return -1, -1, -1, nil
}

// checkFinite reports the first row of the matrices xs with a NaN or Inf
// (firstNotFinite), their row sums read back in one copy.
func (r *resident) checkFinite(xs ...matrix) (which, row, index int, err error) {
	n, err := r.rowSums(r.sums, xs)
	if err != nil || n == 0 {
		return -1, -1, -1, err
	}
	sums := r.hostFloats(n)
	if err := r.dev.Download(gpu.Bytes(sums), r.sums); err != nil {
		return 0, 0, 0, err
	}
	return r.firstNotFinite(xs, sums)
}

// hostFloats returns n float64 of host memory, reused.
func (r *resident) hostFloats(n int) []float64 {
	if cap(r.hostBack) < n {
		r.hostBack = make([]float64, n)
	}
	return r.hostBack[:n]
}
