package engine

import (
	"errors"
	"fmt"
	"runtime"
	"slices"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/ops"
)

// machine holds one worker's graphs (see the package doc) and runs
// particles through them. The step and trunk graphs are built by the
// first training step the machine runs.
type machine struct {
	cfg *Config
	// steps is one step graph for every task, or, for a model without
	// trunk parameters, one per task: Gorgonia's analysis of a second
	// Backpropagate fails on backward nodes of a first one's that are not
	// symbolically differentiable ops (its own max-pooling's, for one), and
	// without a trunk each head holds its own layers.
	steps []*stepGraph
	// headSteps is the heads-only step graph, built when first needed,
	// for a heads-first step's first evaluation (a model with a trunk).
	headSteps *stepGraph
	// With kept trunks (keepingGraphs), a step graph and a trunk graph
	// that replay headSteps' trunk, for the second evaluation.
	keptSteps *stepGraph
	keptTrunk *trunkGraph
	trunk     *trunkGraph // nil with one task or no trunk parameters
	// trunkSizes is each trunk parameter's number of values (none
	// without a trunk), where its gradient lies in a trunk vector.
	trunkSizes []int
	// Built when first needed, for the kernels over outputs: a trunk
	// graph that runs its own forward pass (m.trunk itself unless that
	// one replays), and each task's head graph.
	fullTrunk *trunkGraph
	heads     []*headGraph
	// The convolutions whose patches every particle shares
	// (ops.SharesPatches), of the step graph and of the heads-only one,
	// found when first needed.
	across, headAcross           []acrossConv
	acrossFound, headAcrossFound bool

	prediction *predictGraph
}

func newMachine(cfg *Config) (*machine, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	m := &machine{cfg: cfg}
	var err error
	if m.prediction, err = newPredictGraph(cfg); err != nil {
		return nil, err
	}
	return m, nil
}

// trainingGraphs builds the step and trunk graphs, the first time they
// are needed: a machine that only predicts never holds them.
func (m *machine) trainingGraphs() error {
	if m.steps != nil {
		return nil
	}
	cfg := m.cfg
	all := make([]int, len(cfg.Tasks))
	for j := range all {
		all[j] = j
	}
	var steps []*stepGraph
	params := cfg.Model.TrunkParams()
	m.trunkSizes = m.trunkSizes[:0]
	for i := range params {
		m.trunkSizes = append(m.trunkSizes, models.Size(params[i:i+1]))
	}
	if len(params) > 0 {
		sg, err := newStepGraph(cfg, all, false, nil)
		if err != nil {
			return err
		}
		steps = append(steps, sg)
	} else {
		for _, j := range all {
			sg, err := newStepGraph(cfg, []int{j}, false, nil)
			if err != nil {
				return err
			}
			steps = append(steps, sg)
		}
	}
	if len(cfg.Tasks) > 1 && len(params) > 0 {
		tg, err := newTrunkGraph(cfg, steps[0].trunkOps)
		if err != nil {
			return err
		}
		m.trunk = tg
	}
	m.steps = steps
	return nil
}

// Grads receive a particle's losses and gradients on a batch.
type Grads struct {
	Loss  []float64   // per task: the batch-mean loss
	Trunk [][]float64 // per task: the loss's gradient with respect to α
	Head  [][]float64 // per task j: the loss's gradient with respect to βʲ
	Stats []float64   // the batch statistics of every batch norm (mean, then variance)

	// What the kernels over outputs read, all Config.Batch rows (the
	// rows past the batch's real examples are padding): the trunk's
	// features (nil without a trunk) and each task's head outputs.
	Features []float64
	Outputs  [][]float64

	// scores, when set, has the graphs write the negated gradients
	// (scores) into Trunk and Head, and note in notFinite each task's
	// trunk [0] and head [1] score that holds a NaN or an Inf.
	scores    bool
	notFinite [][2]bool
	// trunk32, when set with scores, receives the trunk scores in float32
	// in place of Trunk.
	trunk32 [][]float32

	// rows, when set, places the particle in an ensemble held on the
	// device: the graphs read its parameters from there and write its
	// gradients there, negated (scores), instead of into Trunk and Head;
	// Features and Outputs are not read back.
	rows *deviceRows
}

// NewGrads allocates Grads for particles of cfg.
func NewGrads(cfg *Config) *Grads {
	m := cfg.Model
	g := &Grads{Loss: make([]float64, len(cfg.Tasks)), Stats: make([]float64, models.Size(m.TrunkStats()))}
	for j := range cfg.Tasks {
		g.Trunk = append(g.Trunk, make([]float64, models.Size(m.TrunkParams())))
		g.Head = append(g.Head, make([]float64, models.Size(m.HeadParams(j))))
	}
	return g
}

// gradients evaluates every task's loss on in for particle p and its
// gradients with respect to the trunk and the task's head, into out. The
// loss is the batch mean: the graphs weight each real example 1/in.N and
// padding 0. Without trunk, a heads-only step graph runs in place of the
// step graph and the trunk gradients are left as they were: a
// heads-first step moves the heads on this evaluation and takes the
// trunks' gradients from another. With extra (and trunk), one more
// vector-Jacobian product of the trunk on the same batch follows the
// tasks' (the kernel's repulsion, mapped from the features' space).
func (m *machine) gradients(p *Particle, in *Inputs, out *Grads, trunk bool, extra *vjpRequest) error {
	return m.gradientsKept(p, in, out, trunk, extra, nil, nil)
}

// gradientsKept is gradients for a heads-first step that keeps each
// particle's trunk forward pass (keepingGraphs) in kept, when it is not
// nil: the heads-only evaluation (!trunk) sets its trunk's kept values
// aside in kept, and the evaluation with the trunk replays them instead
// of running the trunk forward again. With share (with kept, or without
// extra), p is the share.next-th of the particles this machine runs on
// the batch, one after another: the convolutions on the images stack
// their passes across those particles (stackAcross), and the last
// particle's call writes every particle's filter gradients of them, an
// extra pass's into its destination. Without trunk, share stacks those
// convolutions' forward products alone.
func (m *machine) gradientsKept(p *Particle, in *Inputs, out *Grads, trunk bool, extra *vjpRequest, kept *ops.SavedPass, share *workerShare) error {
	if err := m.trainingGraphs(); err != nil {
		return err
	}
	steps, tg, rec, err := m.trunkPasses(trunk, kept)
	if err != nil {
		return err
	}
	// The K trunk passes (and extra's) read the same patches: their small
	// layers' filter gradients are one product each, after the last pass.
	stack := trunk && stackFilterGrads && tg != nil && tg.replayed && out.rows == nil && m.cfg.Device == nil
	runs := len(m.cfg.Tasks)
	if extra != nil {
		runs++
	}
	// The convolutions on the images whose passes stack across share's
	// particles too.
	across, passes := m.acrossPasses(share, kept != nil, trunk, stack, extra != nil, runs)
	if across != nil && share.next%acrossMax == 0 {
		if err := m.stackAcross(share, across, passes); err != nil {
			return err
		}
	}
	if stack {
		rec.StackFilterGrads(runs)
		defer rec.StackFilterGrads(0)
	}
	if !trunk && len(m.trunkSizes) > 0 {
		// Only the heads' gradients are wanted: a graph without the
		// trunk's backward pass computes them.
		if err := m.headsOnlyGraph(); err != nil {
			return err
		}
		steps = []*stepGraph{m.headSteps}
		for j := range out.notFinite {
			out.notFinite[j][0] = false
		}
	}
	var features []*ops.Kept // per task j ≥ 1, with a trunk
	for _, sg := range steps {
		f, err := m.runStep(sg, p, in, out)
		if err != nil {
			return err
		}
		features = append(features, f...)
	}
	if !trunk {
		if kept != nil {
			m.headSteps.trunkOps.Exchange(kept)
		}
		if across != nil {
			share.next++
		}
		return nil
	}
	if tg == nil {
		if extra != nil {
			return m.trunkVJPAfter(p, in, extra.upstream, extra.dst)
		}
		return nil
	}
	if err := tg.bind(p, out.rows, in); err != nil {
		return err
	}
	if err := m.laterTaskTrunkGrads(tg, features, out); err != nil {
		return err
	}
	switch {
	case stack:
		return m.putStacked(rec, steps[0], tg, out, extra, share, across, runs)
	case extra != nil && kept != nil:
		return tg.vjp(extra.upstream, extra.dst)
	case extra != nil:
		return m.trunkVJPAfter(p, in, extra.upstream, extra.dst)
	}
	return nil
}

// trunkPasses returns the graphs of an evaluation's passes, the trunk
// graph of its later tasks' trunk gradients, and the recording they
// replay: the step graphs', or, for the evaluation with the trunk that
// replays kept passes, the kept graphs' with kept's values put back in
// the recording.
func (m *machine) trunkPasses(trunk bool, kept *ops.SavedPass) ([]*stepGraph, *trunkGraph, *ops.Recording, error) {
	if kept == nil {
		return m.steps, m.trunk, m.steps[0].trunkOps, nil
	}
	if m.keptSteps == nil {
		return nil, nil, nil, fmt.Errorf("engine: kept trunk passes without their graphs (keepingGraphs)")
	}
	if !trunk {
		return m.steps, m.trunk, m.steps[0].trunkOps, nil
	}
	rec := m.headSteps.trunkOps
	rec.Exchange(kept)
	return []*stepGraph{m.keptSteps}, m.keptTrunk, rec, nil
}

// putStacked computes the trunk's small layers' filter gradients of the
// stacked passes (and extra's pass) as one product each, and, where the
// passes stack across share's particles, those of the group once its last
// particle has run.
func (m *machine) putStacked(rec *ops.Recording, sg *stepGraph, tg *trunkGraph, out *Grads, extra *vjpRequest, share *workerShare, across []acrossConv, runs int) error {
	var extraDst []float64
	if extra != nil {
		if err := tg.vjp(extra.upstream, extra.dst); err != nil {
			return err
		}
		extraDst = extra.dst
	}
	if err := m.putStackedFilterGrads(rec, sg, tg, out, extraDst); err != nil {
		return err
	}
	if across == nil {
		return nil
	}
	share.extras[share.next] = extraDst
	defer func() { share.next++ }()
	if _, to := share.group(); share.next+1 == to {
		return m.putAcross(share, across, sg, tg, runs)
	}
	return nil
}

// laterTaskTrunkGrads puts the trunk gradients of tasks 2..K into out:
// each task's head gradient with respect to the trunk's features
// (features[j-1]) taken back through the trunk graph tg.
func (m *machine) laterTaskTrunkGrads(tg *trunkGraph, features []*ops.Kept, out *Grads) error {
	for j := 1; j < len(m.cfg.Tasks); j++ {
		if out.rows != nil {
			err := tg.vjpOnDevice(features[j-1].OnDevice(), out.rows.trunkScore[j], 1)
			if err != nil {
				return fmt.Errorf("task %s trunk gradient: %w", m.cfg.Tasks[j].Name, err)
			}
			continue
		}
		if err := features[j-1].Fetch(); err != nil {
			return err
		}
		var err error
		if out.scores {
			err = tg.vjpScore(features[j-1].Values, out, j)
		} else {
			err = tg.vjp(features[j-1].Values, out.Trunk[j])
		}
		if err != nil {
			return fmt.Errorf("task %s trunk gradient: %w", m.cfg.Tasks[j].Name, err)
		}
	}
	return nil
}

// acrossPasses is the convolutions whose passes stack across share's
// particles, and how many passes of each: with kept passes, the
// heads-only graph's, whose ops both evaluations run (the first, without
// trunk, its forward products alone); else the step graph's, without an
// extra pass. None without share.
func (m *machine) acrossPasses(share *workerShare, kept, trunk, stack, extra bool, runs int) ([]acrossConv, int) {
	switch {
	case share == nil:
	case kept && (stack || !trunk):
		if !trunk {
			return m.headAcrossConvs(), 1
		}
		return m.headAcrossConvs(), runs
	case stack && !extra:
		return m.acrossConvs(), runs
	}
	return nil, runs
}

// headsOnlyGraph builds the heads-only step graph the first time.
func (m *machine) headsOnlyGraph() error {
	if m.headSteps != nil {
		return nil
	}
	sg, err := newStepGraph(m.cfg, m.steps[0].tasks, true, nil)
	m.headSteps = sg
	return err
}

// keepingGraphs builds, the first time, the graphs of a heads-first step
// that keeps each particle's trunk forward pass: the heads-only step
// graph, its trunk's ops made to keep what gradients read, and the step
// and trunk graphs that replay it. It reports false where that cannot
// be: on a device, for a trunk that does not replay (batch norm), or with
// one task.
func (m *machine) keepingGraphs() (bool, error) {
	if m.keptSteps != nil {
		return true, nil
	}
	if err := m.trainingGraphs(); err != nil {
		return false, err
	}
	if m.cfg.Device != nil || m.trunk == nil || !m.trunk.replayed {
		return false, nil
	}
	if err := m.headsOnlyGraph(); err != nil {
		return false, err
	}
	rec := m.headSteps.trunkOps
	if err := rec.KeepForReplay(); err != nil {
		return false, nil
	}
	sg, err := newStepGraph(m.cfg, m.steps[0].tasks, false, rec)
	if err != nil {
		return false, err
	}
	tg, err := buildTrunkGraph(m.cfg, rec)
	if err != nil {
		return false, err
	}
	m.keptSteps, m.keptTrunk = sg, tg
	return true, nil
}

// vjpRequest asks machine.gradients for one more vector-Jacobian product
// of the trunk: the gradient of ⟨features, upstream⟩ into dst.
type vjpRequest struct{ upstream, dst []float64 }

// putStackedFilterGrads computes the filter gradients the trunk passes
// stacked and writes each task's into its place in out, as the passes
// wrote the other gradients (negated for scores, in float32 for float32
// scores), noting any that is not finite; then, with extra, the extra
// pass's into it, as they are.
func (m *machine) putStackedFilterGrads(rec *ops.Recording, sg *stepGraph, tg *trunkGraph, out *Grads, extra []float64) error {
	if err := rec.FlushFilterGrads(); err != nil {
		return err
	}
	runs := len(m.cfg.Tasks)
	if extra != nil {
		runs++
	}
	for j := range runs {
		nodes := tg.trunkGrad
		if j == 0 {
			nodes = sg.trunkGrad
		}
		offset := 0
		for i, n := range nodes {
			size := m.trunkSizes[i]
			if v, ok := ops.StackedFilterGrad(n, j); ok {
				if err := m.putFilterGrad(v, out, j, offset, size, extra); err != nil {
					return err
				}
			}
			offset += size
		}
	}
	return nil
}

// putFilterGrad writes the filter gradient v of pass j into its place in
// out (at offset, size values), as the passes wrote the other gradients
// (negated for scores, in float32 for float32 scores), noting it if it
// is not finite; the pass after the tasks' (j = K) writes into extra.
func (m *machine) putFilterGrad(v *tensor.Dense, out *Grads, j, offset, size int, extra []float64) error {
	finite := true
	var err error
	switch {
	case j == len(m.cfg.Tasks):
		err = getFloats(nil, v, extra[offset:offset+size])
	case out.scores && out.trunk32 != nil:
		finite, err = negatedFloats(v, out.trunk32[j][offset:offset+size])
	case out.scores:
		finite, err = negatedFloats(v, out.Trunk[j][offset:offset+size])
	default:
		err = getFloats(nil, v, out.Trunk[j][offset:offset+size])
	}
	if err != nil {
		return fmt.Errorf("stacked trunk gradient %d: %w", j, err)
	}
	if !finite {
		out.notFinite[j][0] = true
	}
	return nil
}

// acrossMax is the most particles whose passes are stacked at once. The
// stack holds each particle's forward product and output gradients
// (about 24 MB for a LeNet particle at batch 256 in float32), and the
// products gain little past a few particles (BenchmarkLeNetProducts:
// 9.9 ms per particle for three, 9.0 for five, against 16.9 alone), so a
// worker with more particles stacks them in groups of acrossMax.
const acrossMax = 4

// workerShare is the particles one machine runs on a batch, one after
// another, and their gradients: the convolutions on the images stack
// their passes (ops.StackAcross), acrossMax particles at a time.
type workerShare struct {
	particles []*Particle
	grads     []*Grads
	extras    [][]float64 // where each particle's extra pass writes (vjpRequest.dst), if it has one
	next      int         // the particle whose passes run next
	filters   [][]float64 // each particle's filters of one convolution
}

// group is the share's particles stacked with the next one, by index.
func (s *workerShare) group() (from, to int) {
	from = s.next / acrossMax * acrossMax
	return from, min(len(s.particles), from+acrossMax)
}

// acrossConv is a convolution of the step graph whose patches every
// particle shares, and where its filters lie in a trunk vector.
type acrossConv struct {
	node          *gorgonia.Node // the forward convolution
	param, offset int            // the filters' index among the trunk's parameters, and first value
}

// acrossConvs finds, the first time, the step graph's convolutions whose
// patches every particle's pass over a batch shares.
func (m *machine) acrossConvs() []acrossConv {
	if !m.acrossFound {
		m.across, m.acrossFound = m.findAcross(m.steps[0]), true
	}
	return m.across
}

// headAcrossConvs is acrossConvs of the heads-only step graph.
func (m *machine) headAcrossConvs() []acrossConv {
	if !m.headAcrossFound {
		m.headAcross, m.headAcrossFound = m.findAcross(m.headSteps), true
	}
	return m.headAcross
}

// findAcross returns sg's convolutions whose patches every particle's
// pass over a batch shares.
func (m *machine) findAcross(sg *stepGraph) []acrossConv {
	var found []acrossConv
	for _, n := range sg.g.AllNodes() {
		filters, ok := ops.SharesPatches(n)
		if !ok {
			continue
		}
		if i := slices.Index(sg.trunkParams, filters); i >= 0 {
			offset := 0
			for _, size := range m.trunkSizes[:i] {
				offset += size
			}
			found = append(found, acrossConv{node: n, param: i, offset: offset})
		}
	}
	return found
}

// stackAcross arms convs, the convolutions on the images, for the
// share's next group of particles, each with passes backward passes.
func (m *machine) stackAcross(share *workerShare, convs []acrossConv, passes int) error {
	from, to := share.group()
	for _, c := range convs {
		size := m.trunkSizes[c.param]
		share.filters = share.filters[:0]
		for _, p := range share.particles[from:to] {
			share.filters = append(share.filters, p.Trunk[c.offset:c.offset+size])
		}
		if err := ops.StackAcross(c.node, share.filters, passes); err != nil {
			return err
		}
	}
	return nil
}

// putAcross computes, after the last particle of the share's group, the
// filter gradients of convs, armed across the group for passes passes,
// and writes each particle's into its gradients (and the pass after the
// tasks', if any, into its extra's destination).
func (m *machine) putAcross(share *workerShare, convs []acrossConv, sg *stepGraph, tg *trunkGraph, passes int) error {
	from, to := share.group()
	for _, c := range convs {
		if err := ops.FlushAcross(c.node); err != nil {
			return err
		}
		for r, out := range share.grads[from:to] {
			extra := share.extras[from+r]
			for j := range passes {
				n := tg.trunkGrad[c.param]
				if j == 0 {
					n = sg.trunkGrad[c.param]
				}
				v, ok := ops.StackedFilterGrad(n, r*passes+j)
				if !ok {
					return fmt.Errorf("engine: the worker's particle %d, pass %d, did not stack its filter gradient", from+r, j)
				}
				if err := m.putFilterGrad(v, out, j, c.offset, m.trunkSizes[c.param], extra); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// disarmAcross disarms the convolutions stackAcross armed, whether or
// not their passes all ran.
func (m *machine) disarmAcross() {
	for _, c := range slices.Concat(m.across, m.headAcross) {
		_ = ops.StackAcross(c.node, nil, 0) // disarming a convolution it armed cannot fail
	}
}

// putTrunkScore writes the negated values of nodes, on dev (nil: the
// CPU), as task j's trunk score and notes whether they are finite.
func (g *Grads) putTrunkScore(dev *ops.Device, nodes []*gorgonia.Node, j int) error {
	var finite bool
	var err error
	if g.trunk32 != nil {
		finite, err = gatherScores(dev, nodes, g.trunk32[j])
	} else {
		finite, err = gatherScores(dev, nodes, g.Trunk[j])
	}
	g.notFinite[j][0] = !finite
	return err
}

// firstNotFiniteInTrunkScore returns the index of the first NaN or Inf in task
// j's trunk score, or −1.
func (g *Grads) firstNotFiniteInTrunkScore(j int) int {
	if g.trunk32 != nil {
		return finite(g.trunk32[j])
	}
	return finite(g.Trunk[j])
}

// updateStats moves p's running statistics towards the batch statistics
// stats of a batch of n real examples.
func (m *machine) updateStats(p *Particle, stats []float64, n int) error {
	if len(p.Stats) == 0 {
		return nil
	}
	if err := m.trainingGraphs(); err != nil {
		return err
	}
	spatial := m.steps[0].spatial
	counts := make([]int, len(spatial))
	for l, hw := range spatial {
		counts[l] = n * hw
	}
	return models.UpdateRunning(p.Stats, stats, m.cfg.Model.TrunkStats(), counts, models.BatchNormMomentum)
}

// closeDevices frees the device memory of the machine's graphs
// (ops.Device.Close), which must not run again: when its trainer closes.
func (m *machine) closeDevices() error {
	var errs []error
	for _, sg := range append(slices.Clone(m.steps), m.headSteps, m.keptSteps) {
		if sg != nil && sg.dev != nil {
			errs = append(errs, sg.dev.Close())
		}
	}
	for _, tg := range []*trunkGraph{m.trunk, m.keptTrunk, m.fullTrunk} {
		if tg != nil && tg.dev != nil {
			errs = append(errs, tg.dev.Close()) // a second Close frees nothing
		}
	}
	if pg := m.prediction; pg != nil && pg.dev != nil {
		errs = append(errs, pg.dev.Close())
	}
	return errors.Join(errs...)
}

// run evaluates the graph and hands the machine to read, then resets it
// (Gorgonia's TapeMachine does nothing on its next run without a reset).
func run(vm gorgonia.VM, read func() error) error {
	defer vm.Reset()
	if err := vm.RunAll(); err != nil {
		return err
	}
	return read()
}

// newVM compiles g into a tape machine whose graph goes with it. Gorgonia
// gives every tape machine a finalizer (one that frees nothing unless
// built for CUDA, which this project never is), and an object with a
// finalizer keeps all it refers to alive one garbage collection longer:
// a dropped machine's graph and its ops' buffers, hundreds of MB for a
// run's graphs, would outlive the run, and the collector's heap goal
// would double them.
//
// A graph on a device gets the device's tape machine, which does the same.
func newVM(g *gorgonia.ExprGraph, dev *ops.Device) gorgonia.VM {
	if dev != nil {
		return dev.VM(g)
	}
	vm := gorgonia.NewTapeMachine(g)
	runtime.SetFinalizer(vm, nil)
	return vm
}
