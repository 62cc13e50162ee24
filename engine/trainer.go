package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/asm"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/models/ops"
	"github.com/mtsgd/mtsgd/optim"
	"github.com/mtsgd/mtsgd/particles"
)

// Trainer is an ensemble of M particles trained together, each with an
// optimiser for its trunk and one for each head, and the graphs of its
// workers. (particles.Ensemble is what one update rule sees of it: the
// vectors and scores of one step.)
type Trainer struct {
	Particles []*Particle
	// Steps counts the updates made so far.
	Steps int

	cfg      *Config
	in       *Inputs
	machines []*machine          // one per worker
	grads    []*Grads            // [particle], views of the buffers below
	trunkOpt []optim.Optimizer   // [particle]
	headOpt  [][]optim.Optimizer // [particle][task]

	// The rules' views of the parameters: trunks[i] is Particles[i].Trunk,
	// heads[j][i] is Particles[i].Heads[j] (the optimisers update them in
	// place, so the views stay valid).
	trunks [][]float64
	heads  [][][]float64

	kernels outputKernels // with Update.Kernel = KernelOutputs
	// kept holds each particle's trunk forward pass between a
	// heads-first step's two evaluations (keepTrunks); nil when the
	// trunk's passes cannot be kept.
	kept        []ops.SavedPass
	keepDecided bool
	// shares is each worker's particles for a step that stacks their
	// passes (workerShares).
	shares []workerShare
	res    *resident // the ensemble on Config.Device, between steps that keep it there
	lanes  *lanes    // the particles' lanes on Config.Device, made with the first res
	held   *heldSet  // the training set on Config.Device (Hold); nil when the steps upload their batches
	next   nextMoves // what the moves after the next evaluation move, for res
	// failed is set when a step of the ensemble on the device moved the
	// parameters along a non-finite direction (found by the check that
	// follows the move: dirCheck); every later Step, Sync and Predict
	// reports it.
	failed error

	// Per-step buffers. The graphs write the gradients negated, as
	// scores.
	losses      [][]float64 // [task][particle]
	trunkScores trunkScores
	headScores  [][][]float64 // [task][particle]
	trunkDir    [][]float64   // [particle]
	headDir     [][][]float64 // [task][particle]
}

// initStream separates the initialisation's random stream from the other
// uses of the run's seed.
const initStream = 0x696e6974000000

// New builds m particles initialised from seed (particle i from
// its own stream, so that the particles do not depend on m), each with
// fresh optimisers from newOpt. workers is the number of particles run at
// once, each worker with graphs of its own.
func New(cfg *Config, m int, seed uint64, newOpt func() optim.Optimizer, workers int) (*Trainer, error) {
	if m < 1 {
		return nil, fmt.Errorf("engine: %d particles", m)
	}
	tr := &Trainer{cfg: cfg, in: NewInputs(cfg)}
	for range min(max(1, workers), m) {
		mc, err := newMachine(cfg)
		if err != nil {
			return nil, err
		}
		tr.machines = append(tr.machines, mc)
	}
	for i := range m {
		p, err := NewParticle(cfg, rand.New(rand.NewPCG(seed, initStream+uint64(i))))
		if err != nil {
			return nil, err
		}
		tr.Particles = append(tr.Particles, p)
		tr.trunkOpt = append(tr.trunkOpt, newOpt())
		heads := make([]optim.Optimizer, len(cfg.Tasks))
		for j := range heads {
			heads[j] = newOpt()
		}
		tr.headOpt = append(tr.headOpt, heads)
		tr.trunks = append(tr.trunks, p.Trunk)
	}
	tr.heads = make([][][]float64, len(cfg.Tasks))
	for j := range cfg.Tasks {
		for _, p := range tr.Particles {
			tr.heads[j] = append(tr.heads[j], p.Heads[j])
		}
	}
	return tr, nil
}

// allocateStep allocates the buffers of a step, the first time one is
// made: an ensemble that only evaluates (cmd/eval) never needs their K
// gradients per particle, nor one held on the device their host copies.
func (tr *Trainer) allocateStep() {
	k := len(tr.cfg.Tasks)
	if tr.grads == nil {
		tr.losses = make([][]float64, k)
		for j := range k {
			tr.losses[j] = make([]float64, len(tr.Particles))
		}
		for i := range tr.Particles {
			g := &Grads{Loss: make([]float64, k), Stats: make([]float64, len(tr.Particles[i].Stats))}
			tr.grads = append(tr.grads, g)
		}
	}
	for i, g := range tr.grads {
		g.rows = nil
		if tr.res != nil {
			g.rows = &tr.res.rows[i]
		}
	}
	if tr.res != nil || tr.trunkDir != nil {
		return
	}
	tr.trunkScores = newTrunkScores(tr.cfg, k)
	tr.headScores = make([][][]float64, k)
	tr.headDir = make([][][]float64, k)
	for _, p := range tr.Particles {
		tr.trunkDir = append(tr.trunkDir, make([]float64, len(p.Trunk)))
	}
	for j := range k {
		for _, p := range tr.Particles {
			tr.trunkScores.add(j, len(p.Trunk))
			tr.headScores[j] = append(tr.headScores[j], make([]float64, len(p.Heads[j])))
			tr.headDir[j] = append(tr.headDir[j], make([]float64, len(p.Heads[j])))
		}
	}
	for i, g := range tr.grads {
		for j := range k {
			if s := tr.trunkScores.f32; s != nil {
				g.trunk32 = append(g.trunk32, s[j][i])
			} else {
				g.Trunk = append(g.Trunk, tr.trunkScores.f64[j][i])
			}
			g.Head = append(g.Head, tr.headScores[j][i])
		}
		g.scores, g.notFinite = true, make([][2]bool, k)
	}
}

// Optimizers returns particle i's trunk optimiser and its head optimisers,
// one per task, for saving and restoring their state (after Sync, with a
// device).
func (tr *Trainer) Optimizers(i int) (trunk optim.Optimizer, heads []optim.Optimizer) {
	return tr.trunkOpt[i], tr.headOpt[i]
}

// Gradients computes particle i's losses and gradients on in, as a step
// does before any update, without changing the ensemble.
func (tr *Trainer) Gradients(i int, in *Inputs, out *Grads) error {
	if err := tr.Sync(); err != nil {
		return err
	}
	return tr.machines[0].gradients(tr.Particles[i], in, out, true, nil)
}

// Config returns the ensemble's configuration.
func (tr *Trainer) Config() *Config { return tr.cfg }

// SetLR sets every optimiser's learning rate.
func (tr *Trainer) SetLR(lr float64) {
	for i, o := range tr.trunkOpt {
		o.SetLR(lr)
		for _, h := range tr.headOpt[i] {
			h.SetLR(lr)
		}
	}
}

// parallel runs f(w, i) for i in 0..n-1 on one goroutine per worker w
// and returns the first error.
func (tr *Trainer) parallel(n int, f func(w, i int) error) error {
	next := make(chan int)
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	return tr.onWorkers(n, f, func(w int, run func(i int)) {
		for i := range next {
			run(i)
		}
	})
}

// parallelFixed is parallel with particle i always on worker i mod the
// number of workers.
func (tr *Trainer) parallelFixed(n int, f func(w, i int) error) error {
	workers := min(len(tr.machines), n)
	return tr.onWorkers(n, f, func(w int, run func(i int)) {
		for i := w; i < n; i += workers {
			run(i)
		}
	})
}

// onWorkers runs deal(w, run) on one goroutine per worker w; deal calls
// run(i) for each particle i the worker runs, and run calls f(w, i). A
// worker whose particles are done helps the others with their matrix
// products and loops (ops.ShareWork, which changes no bit of them) until all
// are done. It returns the error of the lowest-numbered worker that had
// one, its first.
func (tr *Trainer) onWorkers(n int, f func(w, i int) error, deal func(w int, run func(i int))) error {
	workers := min(len(tr.machines), n)
	errs := make([]error, workers)
	var busy, all sync.WaitGroup
	busy.Add(workers)
	all.Add(workers)
	stop := make(chan struct{})
	for w := range workers {
		go func() {
			defer all.Done()
			deal(w, func(i int) {
				if err := f(w, i); err != nil && errs[w] == nil {
					errs[w] = err
				}
			})
			busy.Done()
			if workers > 1 && shareIdle {
				ops.ShareWork(stop)
			}
		}()
	}
	busy.Wait()
	close(stop)
	all.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// keepTrunks reports whether a heads-first step keeps each particle's
// trunk forward pass from its first evaluation for its second, which then
// runs only the trunk's backward passes; it decides, the first time, by
// whether every worker's trunk can be kept (keepingGraphs). The cost is
// memory: one set of the trunk's activations and patches per particle.
func (tr *Trainer) keepTrunks() bool {
	if tr.keepDecided {
		return tr.kept != nil
	}
	tr.keepDecided = true
	if !keepTrunkPasses || tr.res != nil || len(tr.cfg.Tasks) < 2 {
		return false
	}
	for _, mc := range tr.machines {
		if ok, err := mc.keepingGraphs(); err != nil || !ok {
			return false
		}
	}
	tr.kept = make([]ops.SavedPass, len(tr.Particles))
	return true
}

// NotFiniteError reports a NaN or Inf met during a step.
type NotFiniteError struct {
	Step     int    // 1-based number of the step
	Particle int    // −1: the whole ensemble's update
	Task     string // empty: not one task's
	What     string // "loss", "trunk gradient", …
	Index    int    // position in the vector, when it is one
}

func (e *NotFiniteError) Error() string {
	where := "ensemble"
	if e.Particle >= 0 {
		where = fmt.Sprintf("particle %d", e.Particle)
	}
	if e.Task != "" {
		where += ", task " + e.Task
	}
	return fmt.Sprintf("step %d, %s: %s is not finite (entry %d); lower the learning rate or the kernel scale", e.Step, where, e.What, e.Index)
}

// Step makes one update on batch b and returns the batch-mean loss of each
// task for each particle ([task][particle]; the slices are reused by the
// next step).
func (tr *Trainer) Step(b *data.Batch, u Update) ([][]float64, error) {
	if tr.failed != nil {
		return nil, tr.failed
	}
	step := tr.Steps + 1
	if err := tr.place(u); err != nil {
		return nil, err
	}
	if err := tr.in.Load(tr.cfg, b); err != nil {
		return nil, err
	}
	if tr.held != nil {
		var lanes *gpu.Ensemble
		if tr.lanes != nil {
			lanes = tr.lanes.ens
		}
		if err := tr.held.prepare(tr.in, b, lanes); err != nil {
			return nil, err
		}
	}
	keep := u.HeadsFirst && tr.keepTrunks()
	tr.next = nextMoves{u: u, trunks: !u.HeadsFirst, heads: true}
	if err := tr.gradients(step, true, !u.HeadsFirst, false, keep); err != nil {
		return nil, err
	}
	if u.HeadsFirst {
		if err := tr.moveHeads(u, step); err != nil {
			return nil, err
		}
		// The trunks' task gradients through the moved heads; the losses
		// reported stay those the step began with. The trunks' features
		// have not changed, so their kernel is known before that pass,
		// and each particle's repulsion is mapped right after its
		// gradients, while its trunk's forward pass is at hand.
		repulsion := false
		if u.Kernel == KernelOutputs && len(tr.trunks[0]) > 0 {
			tr.evaluateTrunkKernel(u.OutputKernel)
			repulsion = true
			u.Kernel = kernelMapped
		}
		tr.next = nextMoves{u: u, trunks: true}
		if err := tr.gradients(step, false, true, repulsion, keep); err != nil {
			return nil, err
		}
		if err := tr.moveTrunks(u, step); err != nil {
			return nil, err
		}
	} else if tr.res != nil {
		if err := tr.moveOnDevice(step, true, true); err != nil {
			return nil, err
		}
	} else {
		if err := tr.moveTrunks(u, step); err != nil {
			return nil, err
		}
		if err := tr.moveHeads(u, step); err != nil {
			return nil, err
		}
	}
	tr.Steps = step
	return tr.losses, nil
}

// gradients evaluates every particle's losses and gradients on the loaded
// batch into the scores (the graphs write them negated); the losses go to
// tr.losses if report. Without trunk the trunk scores are not computed
// (machine.gradients). With repulsion, each particle's trunk repulsion
// is mapped from the features' space (tr.kernels, see
// evaluateTrunkKernel) with its trunk's gradients, while its forward
// pass is at hand. With keep (keepTrunks), an evaluation without trunk
// keeps each particle's trunk forward pass, and the next one, with it,
// replays them.
func (tr *Trainer) gradients(step int, report, trunk, repulsion, keep bool) error {
	m := len(tr.Particles)
	tr.allocateStep()
	parallel := tr.parallel
	// Kept trunk passes stack in both evaluations of a heads-first step
	// (the first its forward products alone); otherwise only passes
	// without the repulsion riding along stack.
	shares := tr.workerShares(keep || trunk && !repulsion)
	if keep || shares != nil {
		// A worker's graphs keep what every particle's pass shares (the
		// images' patches): a particle replays on the worker it ran on,
		// and stacks its passes with the others' the worker runs.
		parallel = tr.parallelFixed
	}
	err := parallel(m, func(w, i int) error {
		mc := tr.machines[w]
		if tr.res != nil {
			mc = tr.lanes.machines[i]
		}
		var extra *vjpRequest
		if repulsion {
			extra = &vjpRequest{upstream: tr.kernels.upstream[i], dst: tr.kernels.trunk.Repulsion[i]}
		}
		var kept *ops.SavedPass
		if keep {
			kept = &tr.kept[i]
		}
		var share *workerShare
		if shares != nil {
			share = &shares[w]
		}
		if err := mc.gradientsKept(tr.Particles[i], tr.in, tr.grads[i], trunk, extra, kept, share); err != nil {
			return fmt.Errorf("step %d, particle %d: %w", step, i, err)
		}
		return nil
	})
	if shares != nil {
		for _, mc := range tr.machines {
			mc.disarmAcross()
		}
	}
	if tr.res != nil {
		// The particles' passes, recorded on their lanes, run now, side
		// by side.
		if ferr := tr.lanes.ens.Flush(); err == nil && ferr != nil {
			err = fmt.Errorf("step %d: the particles' passes: %w", step, ferr)
		}
	}
	if err != nil {
		return err
	}
	var sums []float64
	if tr.res != nil {
		// The losses, statistics and the scores' row sums the passes left
		// on the device, and what the rules of the moves to come read.
		if sums, err = tr.readBack(step, tr.grads[:m]); err != nil {
			return err
		}
	}
	// Checked once every particle's passes ran: a worker's last particle
	// writes the filter gradients its particles stacked.
	if err := tr.checkLosses(step, report); err != nil {
		return err
	}
	if tr.res == nil {
		return nil
	}
	return tr.checkScores(step, sums)
}

// checkLosses copies the particles' losses to tr.losses if report, and
// returns a *NotFiniteError for the first loss that is not finite and,
// on the CPU, for the first score the graphs noted as not finite (on a
// device, checkScores checks the scores).
func (tr *Trainer) checkLosses(step int, report bool) error {
	k, m := len(tr.cfg.Tasks), len(tr.Particles)
	for i, g := range tr.grads[:m] {
		for j := range k {
			if report {
				tr.losses[j][i] = g.Loss[j]
			}
			task := tr.cfg.Tasks[j].Name
			if at := finite(g.Loss[j : j+1]); at >= 0 {
				return &NotFiniteError{Step: step, Particle: i, Task: task, What: "loss", Index: at}
			}
			if tr.res != nil {
				continue // the scores, negated on the device: checkScores
			}
			// The graphs wrote the scores and noted where one is not
			// finite.
			if g.notFinite[j][0] {
				return &NotFiniteError{Step: step, Particle: i, Task: task, What: "trunk gradient", Index: g.firstNotFiniteInTrunkScore(j)}
			}
			if g.notFinite[j][1] {
				return &NotFiniteError{Step: step, Particle: i, Task: task, What: "head gradient", Index: finite(g.Head[j])}
			}
		}
	}
	return nil
}

// workerShares returns, when a step's evaluation may stack the passes of
// the particles a worker runs (machine.gradientsKept), each worker's
// share as parallelFixed deals them; nil otherwise: on a device, or
// with stacking turned off.
func (tr *Trainer) workerShares(may bool) []workerShare {
	if !may || !stackAcrossParticles || !stackFilterGrads || tr.res != nil || tr.cfg.Device != nil {
		return nil
	}
	m := len(tr.Particles)
	workers := min(len(tr.machines), m)
	if len(tr.shares) != workers {
		tr.shares = make([]workerShare, workers)
	}
	for w := range tr.shares {
		s := &tr.shares[w]
		s.particles, s.grads, s.extras, s.next = s.particles[:0], s.grads[:0], s.extras[:0], 0
		for i := w; i < m; i += workers {
			s.particles = append(s.particles, tr.Particles[i])
			s.grads = append(s.grads, tr.grads[i])
			s.extras = append(s.extras, nil)
		}
	}
	return tr.shares
}

// moveTrunks computes the trunks' directions from the trunk scores and
// steps the trunks' optimisers and running statistics.
func (tr *Trainer) moveTrunks(u Update, step int) error {
	if tr.res != nil {
		return tr.moveOnDevice(step, true, false)
	}
	if err := tr.scale(u, false); err != nil {
		return err
	}
	if err := tr.trunkDirections(u, step); err != nil {
		return err
	}
	return tr.parallel(len(tr.Particles), func(w, i int) error {
		p := tr.Particles[i]
		if err := tr.machines[w].updateStats(p, tr.grads[i].Stats, tr.in.N); err != nil {
			return err
		}
		negate(tr.trunkDir[i]) // the optimisers descend: gradient = −φ
		return tr.trunkOpt[i].Step(p.Trunk, tr.trunkDir[i])
	})
}

// moveHeads computes every head's direction from its task's score and
// steps the heads' optimisers.
func (tr *Trainer) moveHeads(u Update, step int) error {
	if tr.res != nil {
		return tr.moveOnDevice(step, false, true)
	}
	if err := tr.scale(u, true); err != nil {
		return err
	}
	if err := tr.headDirections(u, step); err != nil {
		return err
	}
	return tr.parallel(len(tr.Particles), func(w, i int) error {
		for j := range tr.cfg.Tasks {
			negate(tr.headDir[j][i])
			if err := tr.headOpt[i][j].Step(tr.Particles[i].Heads[j], tr.headDir[j][i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// trunkDirections computes the trunks' update directions φ from the
// trunk scores.
func (tr *Trainer) trunkDirections(u Update, step int) error {
	if len(tr.trunks[0]) == 0 { // models without a shared trunk have none
		return nil
	}
	ens := particles.Ensemble{Theta: tr.trunks, Scores: tr.trunkScores.f64, Scores32: tr.trunkScores.f32,
		Factor: tr.trunkScores.factor, Normalize: tr.trunkScores.normalize, Values: tr.losses, Step: step - 1}
	switch u.Kernel {
	case KernelOutputs:
		if err := tr.trunkKernel(u.OutputKernel); err != nil {
			return fmt.Errorf("step %d: %w", step, err)
		}
		ens.Kernel = &tr.kernels.trunk
	case kernelMapped:
		ens.Kernel = &tr.kernels.trunk
	}
	if err := u.Trunk.Direction(tr.trunkDir, ens); err != nil {
		return fmt.Errorf("step %d: trunk update: %w", step, err)
	}
	// Each particle's direction checked on a worker, the first bad one
	// reported, as a loop over them in order would.
	bad := make([]int, len(tr.trunkDir))
	if err := tr.parallel(len(tr.trunkDir), func(_, i int) error {
		bad[i] = finite(tr.trunkDir[i])
		return nil
	}); err != nil {
		return err
	}
	for i, at := range bad {
		if at >= 0 {
			return &NotFiniteError{Step: step, Particle: i, What: "trunk update direction (kernel)", Index: at}
		}
	}
	return nil
}

// headDirections computes every head's update direction φ from its
// task's scores.
func (tr *Trainer) headDirections(u Update, step int) error {
	if u.Kernel == KernelOutputs {
		if err := tr.headKernels(u.OutputKernel); err != nil {
			return fmt.Errorf("step %d: %w", step, err)
		}
	}
	for j, t := range tr.cfg.Tasks {
		ens := particles.Ensemble{Theta: tr.heads[j], Scores: [][][]float64{tr.headScores[j]}}
		if u.Kernel == KernelOutputs {
			ens.Kernel = &tr.kernels.heads[j]
		}
		if err := u.Head.Direction(tr.headDir[j], ens); err != nil {
			return fmt.Errorf("step %d: task %s head update: %w", step, t.Name, err)
		}
		for i, d := range tr.headDir[j] {
			if at := finite(d); at >= 0 {
				return &NotFiniteError{Step: step, Particle: i, Task: t.Name, What: "head update direction (kernel)", Index: at}
			}
		}
	}
	return nil
}

func negate(v []float64) {
	for i := range v {
		v[i] = -v[i]
	}
}

// negateFinite negates v in place and reports the index of its first NaN
// or Inf, or −1: one pass over a gradient instead of two.
func negateFinite(v []float64) int {
	bad := false
	for i, x := range v {
		v[i] = -x
		bad = bad || math.IsNaN(x) || math.IsInf(x, 0)
	}
	if bad {
		return finite(v)
	}
	return -1
}

// finite reports the index of the first NaN or Inf in v, or −1.
func finite[T float](v []T) int {
	if asm.AllFinite(v) {
		return -1
	}
	for i, x := range v {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return i
		}
	}
	return -1
}
