package engine

import (
	"fmt"
	"math"
	"runtime"
	"slices"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/ops"
)

// Inputs is a batch laid out as the graphs read it: always Config.Batch
// rows, the rows past N being padding with weight zero. One Inputs feeds
// every particle; each graph copies it into tensors of its own.
type Inputs struct {
	N       int
	cfg     *Config
	x       *tensor.Dense   // Batch × InputShape, in the graphs' dtype
	targets []*tensor.Dense // task j: Batch × C one-hot, or Batch values
	weight  *tensor.Dense   // Batch: 1/N for real rows, 0 for padding
	buf     []float64       // scratch for Load
}

// scratch returns n zeros, reusing the buffer.
func (in *Inputs) scratch(n int) []float64 {
	if cap(in.buf) < n {
		in.buf = make([]float64, n)
	}
	in.buf = in.buf[:n]
	clear(in.buf)
	return in.buf
}

// NewInputs allocates the tensors of one batch for cfg.
func NewInputs(cfg *Config) *Inputs {
	shape := append([]int{cfg.Batch}, cfg.Model.InputShape()...)
	in := &Inputs{
		cfg:    cfg,
		x:      tensor.New(tensor.WithShape(shape...), tensor.Of(cfg.Dtype)),
		weight: tensor.New(tensor.WithShape(cfg.Batch), tensor.Of(cfg.Dtype)),
	}
	for _, t := range cfg.Tasks {
		var y *tensor.Dense
		if t.Kind == data.Classification {
			y = tensor.New(tensor.WithShape(cfg.Batch, t.Classes), tensor.Of(cfg.Dtype))
		} else {
			y = tensor.New(tensor.WithShape(cfg.Batch), tensor.Of(cfg.Dtype))
		}
		in.targets = append(in.targets, y)
	}
	return in
}

// Load lays b out. It fails if b has more examples than the configured
// batch, or a class target outside its task's classes.
func (in *Inputs) Load(cfg *Config, b *data.Batch) error {
	n := b.Size()
	if n > cfg.Batch || n == 0 {
		return fmt.Errorf("engine: batch of %d examples, the graphs take 1 to %d", n, cfg.Batch)
	}
	in.N = n
	size := in.x.Shape().TotalSize() / cfg.Batch
	if len(b.Inputs) != n*size {
		return fmt.Errorf("engine: %d input values for %d examples of %d", len(b.Inputs), n, size)
	}
	setFloat32s(in.x, b.Inputs)
	w := in.scratch(cfg.Batch)
	for i := range n {
		w[i] = 1 / float64(n)
	}
	setFloats(in.weight, w)
	for j, t := range cfg.Tasks {
		y := b.Targets[j][:n]
		vals := in.scratch(in.targets[j].Shape().TotalSize())
		if t.Kind == data.Regression {
			for i, v := range y {
				vals[i] = float64(v)
			}
		} else {
			for i, v := range y {
				c := int(v)
				if float32(c) != v || c < 0 || c >= t.Classes {
					return fmt.Errorf("engine: task %s: target %v of example %d is not a class 0..%d", t.Name, v, b.Index[i], t.Classes-1)
				}
				vals[i*t.Classes+c] = 1
			}
		}
		setFloats(in.targets[j], vals)
	}
	return nil
}

// setFloat32s copies src into the start of t and zeroes the rest.
func setFloat32s(t *tensor.Dense, src []float32) {
	switch d := t.Data().(type) {
	case []float32:
		clear(d[copy(d, src):])
	case []float64:
		for i, v := range src {
			d[i] = float64(v)
		}
		clear(d[len(src):])
	}
}

// machine holds one worker's graphs (see the package doc) and runs
// particles through them.
type machine struct {
	cfg *Config
	// steps is one step graph for every task, or, for a model without
	// trunk parameters, one per task: Gorgonia's analysis of a second
	// Backpropagate fails on backward nodes of a first one's that are not
	// symbolically differentiable ops (its own max-pooling's, for one), and
	// without a trunk each head holds its own layers.
	steps []*stepGraph
	trunk *trunkGraph // nil with one task or no trunk parameters
	// Built when first needed, for the kernels over outputs: a trunk
	// graph that runs its own forward pass (m.trunk itself unless that
	// one replays), and each task's head graph.
	fullTrunk *trunkGraph
	heads     []*headGraph

	prediction *predictGraph
}

func newMachine(cfg *Config) (*machine, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	m := &machine{cfg: cfg}
	var err error
	all := make([]int, len(cfg.Tasks))
	for j := range all {
		all[j] = j
	}
	if len(cfg.Model.TrunkParams()) > 0 {
		sg, err := newStepGraph(cfg, all)
		if err != nil {
			return nil, err
		}
		m.steps = append(m.steps, sg)
	} else {
		for _, j := range all {
			sg, err := newStepGraph(cfg, []int{j})
			if err != nil {
				return nil, err
			}
			m.steps = append(m.steps, sg)
		}
	}
	if len(cfg.Tasks) > 1 && len(cfg.Model.TrunkParams()) > 0 {
		if m.trunk, err = newTrunkGraph(cfg, m.steps[0].trunkOps); err != nil {
			return nil, err
		}
	}
	if m.prediction, err = newPredictGraph(cfg); err != nil {
		return nil, err
	}
	return m, nil
}

// values is one graph's copy of a particle's parameters in the graph's
// dtype, loaded before each run. Graphs never share tensors: Gorgonia
// transposes a weight tensor in place while it differentiates a matrix
// product, so graphs that run at the same time must not share them.
type values struct {
	trunk []*tensor.Dense
	heads [][]*tensor.Dense // nil for the heads the graph does not use
	stats []*tensor.Dense   // running statistics, in the prediction graph
}

// newValues allocates tensors for the trunk and, if heads, every head and
// adds their nodes to g.
func newValues(g *gorgonia.ExprGraph, cfg *Config, heads bool) (v *values, trunk []*gorgonia.Node, head [][]*gorgonia.Node) {
	m := cfg.Model
	v = &values{trunk: newTensors(m.TrunkParams(), cfg.Dtype)}
	trunk = paramNodes(g, m.TrunkParams(), v.trunk)
	if heads {
		for j := range cfg.Tasks {
			v.heads = append(v.heads, newTensors(m.HeadParams(j), cfg.Dtype))
			head = append(head, paramNodes(g, m.HeadParams(j), v.heads[j]))
		}
	}
	return v, trunk, head
}

// load copies p's vectors into the tensors.
func (v *values) load(p *Particle) {
	scatter(p.Trunk, v.trunk)
	for j, h := range v.heads {
		scatter(p.Heads[j], h)
	}
	scatter(p.Stats, v.stats)
}

// stepGraph computes every task's loss on a batch and the gradients of
// the package doc.
type stepGraph struct {
	tasks  []int // the tasks it computes; the slices below follow them
	g      *gorgonia.ExprGraph
	vm     gorgonia.VM
	vals   *values
	inputs []binding // x, weight, then each task's target
	// Copied out as a run computes them (gorgonia.Read, ops.Keep): the
	// tape machine reuses the memory of a node after its last use.
	losses       []*gorgonia.Value
	featureGrads []*ops.Kept       // tasks after the first: ∂loss/∂features
	features     *ops.Kept         // the trunk's output; nil without a trunk
	outputs      []*ops.Kept       // each task's head outputs
	stats        []*ops.BatchStats // each batch norm's, filled by a run
	spatial      []int             // each batch norm's H·W
	trunkGrad    []*gorgonia.Node  // the first task's
	headGrads    [][]*gorgonia.Node
	trunkOps     *ops.Recording // the trunk's ops, for the trunk graph to replay
}

// inputNode adds the batch input (Batch × InputShape) to g.
func inputNode(g *gorgonia.ExprGraph, cfg *Config) *gorgonia.Node {
	shape := append([]int{cfg.Batch}, cfg.Model.InputShape()...)
	return gorgonia.NewTensor(g, cfg.Dtype, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName("x"))
}

// weightNode adds the examples' weights (Batch) to g.
func weightNode(g *gorgonia.ExprGraph, cfg *Config) *gorgonia.Node {
	return gorgonia.NewVector(g, cfg.Dtype, gorgonia.WithShape(cfg.Batch), gorgonia.WithName("weight"))
}

// targetNode adds task's targets to g. Names are unique per task:
// Gorgonia merges identical nodes in a graph.
func targetNode(g *gorgonia.ExprGraph, cfg *Config, task int) *gorgonia.Node {
	t := cfg.Tasks[task]
	name := fmt.Sprintf("target%d", task)
	if t.Kind == data.Classification {
		return gorgonia.NewMatrix(g, cfg.Dtype, gorgonia.WithShape(cfg.Batch, t.Classes), gorgonia.WithName(name))
	}
	return gorgonia.NewVector(g, cfg.Dtype, gorgonia.WithShape(cfg.Batch), gorgonia.WithName(name))
}

// read adds a Read of n to its graph and returns the place it fills.
func read(n *gorgonia.Node) *gorgonia.Value {
	v := new(gorgonia.Value)
	gorgonia.Read(n, v)
	return v
}

func newStepGraph(cfg *Config, only []int) (*stepGraph, error) {
	g := gorgonia.NewGraph()
	sg := &stepGraph{g: g, tasks: only}
	x, weight := inputNode(g, cfg), weightNode(g, cfg)
	sg.inputs = []binding{{node: x}, {node: weight}}
	vals, trunk, heads := newValues(g, cfg, true)
	sg.vals = vals
	norm := &models.Norm{Weight: weight}
	sg.trunkOps = ops.Record(g)
	features, err := cfg.Model.Trunk(x, trunk, norm)
	if err != nil {
		ops.Stop(g)
		return nil, err
	}
	if err := ops.Stop(g); err != nil {
		return nil, err
	}
	if 2*len(norm.Batch) != len(cfg.Model.TrunkStats()) {
		return nil, fmt.Errorf("engine: the trunk has %d batch norms, its model lists %d statistics", len(norm.Batch), len(cfg.Model.TrunkStats()))
	}
	sg.stats, sg.spatial = norm.Batch, norm.Spatial
	type task struct {
		loss, features *gorgonia.Node // features: the task's copy, j ≥ 1
		out            *gorgonia.Node
		wrt            []*gorgonia.Node
	}
	tasks := make([]task, len(only))
	for j, tj := range only {
		t := cfg.Tasks[tj]
		target := targetNode(g, cfg, tj)
		sg.inputs = append(sg.inputs, binding{node: target})
		in := features
		if j > 0 && len(trunk) > 0 {
			// Task j's own copy of the features.
			if in, err = ops.Copy(features); err != nil {
				return nil, err
			}
			tasks[j].features = in
		}
		out, err := cfg.Model.Head(in, tj, heads[tj])
		if err != nil {
			return nil, err
		}
		tasks[j].out = out
		if tasks[j].loss, err = taskLoss(t, out, target, weight); err != nil {
			return nil, fmt.Errorf("engine: task %s loss: %w", t.Name, err)
		}
		tasks[j].wrt = heads[tj]
		if j == 0 {
			tasks[j].wrt = append(slices.Clone(trunk), heads[tj]...)
		} else if tasks[j].features != nil {
			tasks[j].wrt = append([]*gorgonia.Node{in}, heads[tj]...)
		}
	}
	// Differentiate the first task, through the trunk, last: Gorgonia's
	// analysis of a later Backpropagate fails on backward nodes that are
	// not symbolically differentiable ops (models/ops declares its own, but
	// a model may use Gorgonia's max-pooling), and Reads are added after
	// every Backpropagate, which refuses nodes only a Read consumes.
	sg.headGrads = make([][]*gorgonia.Node, len(tasks))
	sg.featureGrads = make([]*ops.Kept, len(tasks))
	featureGrads := make([]*gorgonia.Node, len(tasks))
	for j := len(tasks) - 1; j >= 0; j-- {
		grads, err := grad(tasks[j].loss, tasks[j].wrt)
		if err != nil {
			return nil, fmt.Errorf("engine: task %s gradient: %w", cfg.Tasks[only[j]].Name, err)
		}
		switch {
		case j == 0:
			sg.trunkGrad, grads = grads[:len(trunk)], grads[len(trunk):]
		case tasks[j].features != nil:
			featureGrads[j], grads = grads[0], grads[1:]
		}
		sg.headGrads[j] = grads
	}
	for j, t := range tasks {
		sg.losses = append(sg.losses, read(t.loss))
		if featureGrads[j] != nil {
			if sg.featureGrads[j], err = ops.Keep(featureGrads[j]); err != nil {
				return nil, err
			}
		}
		// The kernels over outputs read each head's outputs and the
		// trunk's features (see Update.Kernel).
		kept, err := ops.Keep(t.out)
		if err != nil {
			return nil, err
		}
		sg.outputs = append(sg.outputs, kept)
	}
	if len(trunk) > 0 {
		if sg.features, err = ops.Keep(features); err != nil {
			return nil, err
		}
	}
	sg.vm = newVM(g)
	return sg, nil
}

// grad is gorgonia.Grad without its rule that one differentiates only
// with respect to input nodes: a task's copy of the features is not one.
func grad(loss *gorgonia.Node, wrt []*gorgonia.Node) (gorgonia.Nodes, error) {
	seed := loss.Graph().AddNode(gorgonia.NewConstant(models.Scalar(loss.Dtype(), 1)))
	return gorgonia.Backpropagate(gorgonia.Nodes{loss}, gorgonia.Nodes{seed}, wrt)
}

func taskLoss(t data.Task, out, target, weight *gorgonia.Node) (*gorgonia.Node, error) {
	if t.Kind == data.Classification {
		return ops.SoftmaxCrossEntropy(out, target, weight)
	}
	return squaredError(out, target, weight)
}

// trunkGraph computes the trunk's vector-Jacobian product: the gradient
// of ⟨features, G⟩ with respect to the trunk, for a given G.
//
// When the trunk is built only of models/ops ops that can replay (LeNet,
// the MLP), the trunk graph replays the step graph's: it runs no forward
// pass and its gradients read what the step graph's run of the same
// particle kept, so a step costs one trunk forward per particle, not one
// per task. The machine guarantees what that needs: a trunk graph runs
// only right after the step graph of the same particle on the same batch.
// Otherwise (ResNet-18's batch norm) it computes the trunk forward again.
type trunkGraph struct {
	g         *gorgonia.ExprGraph
	vm        gorgonia.VM
	vals      *values
	inputs    [3]binding // x, weight, G
	trunkGrad []*gorgonia.Node
	replayed  bool
}

func newTrunkGraph(cfg *Config, rec *ops.Recording) (*trunkGraph, error) {
	if rec != nil {
		if tg, err := buildTrunkGraph(cfg, rec); err == nil {
			return tg, nil
		}
	}
	return buildTrunkGraph(cfg, nil)
}

// buildTrunkGraph builds the trunk graph, replaying rec unless it is nil;
// a replay fails unless it can stand in for the whole trunk.
func buildTrunkGraph(cfg *Config, rec *ops.Recording) (*trunkGraph, error) {
	g := gorgonia.NewGraph()
	tg := &trunkGraph{g: g, replayed: rec != nil}
	x, weight := inputNode(g, cfg), weightNode(g, cfg)
	vals, trunk, _ := newValues(g, cfg, false)
	tg.vals = vals
	if rec != nil {
		ops.Replay(g, rec)
	}
	features, err := cfg.Model.Trunk(x, trunk, &models.Norm{Weight: weight})
	if rec != nil {
		if stop := ops.Stop(g); err == nil {
			err = stop
		}
	}
	if err != nil {
		return nil, err
	}
	upstream := gorgonia.NewTensor(g, cfg.Dtype, features.Dims(), gorgonia.WithShape(features.Shape()...), gorgonia.WithName("G"))
	inner, err := ops.Inner(features, upstream)
	if err != nil {
		return nil, err
	}
	if tg.trunkGrad, err = gorgonia.Grad(inner, trunk...); err != nil {
		return nil, fmt.Errorf("engine: trunk gradient: %w", err)
	}
	tg.vm = newVM(g)
	tg.inputs = [3]binding{{node: x}, {node: weight}, {node: upstream}}
	return tg, nil
}

// binding is a graph's own copy of an input. Gorgonia transposes a matrix
// operand in place while it differentiates a product, so graphs that run
// at the same time must not share input tensors any more than parameters.
type binding struct {
	node *gorgonia.Node
	val  *tensor.Dense
}

// set copies src into the graph's tensor and binds it to the node.
func (b *binding) set(src *tensor.Dense) error {
	if b.val == nil {
		b.val = src.Clone().(*tensor.Dense)
	} else {
		switch d := src.Data().(type) {
		case []float32:
			copy(b.val.Data().([]float32), d)
		case []float64:
			copy(b.val.Data().([]float64), d)
		default:
			return fmt.Errorf("engine: input of %T", d)
		}
	}
	return gorgonia.Let(b.node, b.val)
}

// squaredError is Σ_i w_i·(ŷ_i − y_i)² for predictions ŷ (batch × 1).
func squaredError(pred, y, w *gorgonia.Node) (*gorgonia.Node, error) {
	flat, err := gorgonia.Reshape(pred, tensor.Shape{pred.Shape()[0]})
	if err != nil {
		return nil, err
	}
	d, err := gorgonia.Sub(flat, y)
	if err != nil {
		return nil, err
	}
	if d, err = gorgonia.Square(d); err != nil {
		return nil, err
	}
	return weightedSum(d, w)
}

func weightedSum(v, w *gorgonia.Node) (*gorgonia.Node, error) {
	p, err := gorgonia.HadamardProd(v, w)
	if err != nil {
		return nil, err
	}
	return gorgonia.Sum(p)
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
// padding 0.
func (m *machine) gradients(p *Particle, in *Inputs, out *Grads) error {
	var features [][]float64 // per task j ≥ 1, with a trunk
	for _, sg := range m.steps {
		f, err := m.runStep(sg, p, in, out)
		if err != nil {
			return err
		}
		features = append(features, f...)
	}
	if m.trunk == nil {
		return nil
	}
	tg := m.trunk
	if err := tg.bind(p, in); err != nil {
		return err
	}
	for j := 1; j < len(m.cfg.Tasks); j++ {
		if err := tg.vjp(features[j-1], out.Trunk[j]); err != nil {
			return fmt.Errorf("task %s trunk gradient: %w", m.cfg.Tasks[j].Name, err)
		}
	}
	return nil
}

// bind loads p and the batch in into the trunk graph, for vjp.
func (tg *trunkGraph) bind(p *Particle, in *Inputs) error {
	tg.vals.load(p)
	for i, src := range []*tensor.Dense{in.x, in.weight} {
		if tg.replayed && tg.inputs[i].val != nil {
			break // a replay reads no input but G; bound once, for the machine
		}
		if err := tg.inputs[i].set(src); err != nil {
			return err
		}
	}
	return nil
}

// vjp writes the gradient of ⟨features, upstream⟩ with respect to the
// bound particle's trunk into dst.
func (tg *trunkGraph) vjp(upstream, dst []float64) error {
	g := &tg.inputs[2]
	if g.val == nil {
		g.val = tensor.New(tensor.WithShape(g.node.Shape()...), tensor.Of(g.node.Dtype()))
	}
	setFloats(g.val, upstream)
	if err := gorgonia.Let(g.node, g.val); err != nil {
		return err
	}
	return run(tg.vm, func() error { return gather(tg.trunkGrad, dst) })
}

// runStep runs one step graph for p on in, writes what it computes into
// out and returns the gradients of the losses of its tasks after the
// first with respect to the features (none without a trunk), in slices
// the graph owns and its next run overwrites.
func (m *machine) runStep(sg *stepGraph, p *Particle, in *Inputs, out *Grads) ([][]float64, error) {
	sg.vals.load(p)
	srcs := []*tensor.Dense{in.x, in.weight}
	for _, j := range sg.tasks {
		srcs = append(srcs, in.targets[j])
	}
	for i, src := range srcs {
		if err := sg.inputs[i].set(src); err != nil {
			return nil, err
		}
	}
	var features [][]float64
	err := run(sg.vm, func() error {
		for i, j := range sg.tasks {
			if err := copyValues([]gorgonia.Value{*sg.losses[i]}, out.Loss[j:j+1]); err != nil {
				return err
			}
			if err := gather(sg.headGrads[i], out.Head[j]); err != nil {
				return fmt.Errorf("task %s: %w", m.cfg.Tasks[j].Name, err)
			}
		}
		if err := gather(sg.trunkGrad, out.Trunk[sg.tasks[0]]); err != nil {
			return err
		}
		if err := copyStats(sg.stats, out.Stats); err != nil {
			return err
		}
		if sg.features != nil {
			out.Features = append(out.Features[:0], sg.features.Values...)
		}
		if out.Outputs == nil {
			out.Outputs = make([][]float64, len(m.cfg.Tasks))
		}
		for i, j := range sg.tasks {
			out.Outputs[j] = append(out.Outputs[j][:0], sg.outputs[i].Values...)
		}
		for _, fg := range sg.featureGrads[1:] {
			if fg != nil {
				features = append(features, fg.Values)
			}
		}
		return nil
	})
	return features, err
}

// updateStats moves p's running statistics towards the batch statistics
// stats of a batch of n real examples.
func (m *machine) updateStats(p *Particle, stats []float64, n int) error {
	if len(p.Stats) == 0 {
		return nil
	}
	spatial := m.steps[0].spatial
	counts := make([]int, len(spatial))
	for l, hw := range spatial {
		counts[l] = n * hw
	}
	return models.UpdateRunning(p.Stats, stats, m.cfg.Model.TrunkStats(), counts, models.BatchNormMomentum)
}

// copyStats copies each layer's batch mean, then variance, into dst.
func copyStats(stats []*ops.BatchStats, dst []float64) error {
	for _, st := range stats {
		if len(st.Mean)+len(st.Variance) > len(dst) {
			return fmt.Errorf("engine: batch statistics overflow their vector")
		}
		dst = dst[copy(dst, st.Mean):]
		dst = dst[copy(dst, st.Variance):]
	}
	if len(dst) != 0 {
		return fmt.Errorf("engine: %d batch statistics left unset", len(dst))
	}
	return nil
}

// gather copies the values of nodes into the flat vector dst, in order.
func gather(nodes []*gorgonia.Node, dst []float64) error {
	vals := make([]gorgonia.Value, len(nodes))
	for i, n := range nodes {
		vals[i] = n.Value()
	}
	return copyValues(vals, dst)
}

func copyValues(vals []gorgonia.Value, dst []float64) error {
	for _, v := range vals {
		if v == nil {
			return fmt.Errorf("engine: a value the graph did not compute")
		}
		size := v.Shape().TotalSize()
		if size > len(dst) {
			return fmt.Errorf("engine: %d values overflow their vector", size)
		}
		if err := getFloats(v, dst[:size]); err != nil {
			return err
		}
		dst = dst[size:]
	}
	if len(dst) != 0 {
		return fmt.Errorf("engine: %d values of the vector left unset", len(dst))
	}
	return nil
}

// predictGraph computes every head's outputs on a batch, without
// gradients, normalising with the running statistics.
type predictGraph struct {
	g         *gorgonia.ExprGraph
	vm        gorgonia.VM
	vals      *values
	input     binding
	outs      []*gorgonia.Node
	outValues [][]float64
}

func newPredictGraph(cfg *Config) (*predictGraph, error) {
	g := gorgonia.NewGraph()
	pg := &predictGraph{g: g}
	x := inputNode(g, cfg)
	vals, trunk, heads := newValues(g, cfg, true)
	vals.stats = newTensors(cfg.Model.TrunkStats(), cfg.Dtype)
	pg.vals = vals
	features, err := cfg.Model.Trunk(x, trunk, &models.Norm{Running: paramNodes(g, cfg.Model.TrunkStats(), vals.stats)})
	if err != nil {
		return nil, err
	}
	for j, t := range cfg.Tasks {
		out, err := cfg.Model.Head(features, j, heads[j])
		if err != nil {
			return nil, err
		}
		pg.outs = append(pg.outs, out)
		pg.outValues = append(pg.outValues, make([]float64, cfg.Batch*outputs(t)))
	}
	pg.vm = newVM(g)
	pg.input = binding{node: x}
	return pg, nil
}

// predict evaluates every head of p on in and returns, per task, the
// outputs of the in.N real examples, row-major (N × outputs): logits for a
// classification task, predictions for a regression task. The slices are
// reused by the next call.
func (m *machine) predict(p *Particle, in *Inputs) ([][]float64, error) {
	pg := m.prediction
	pg.vals.load(p)
	if err := pg.input.set(in.x); err != nil {
		return nil, err
	}
	err := run(pg.vm, func() error {
		for j, out := range pg.outs {
			if err := getFloats(out.Value(), pg.outValues[j]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := make([][]float64, len(pg.outs))
	for j, t := range m.cfg.Tasks {
		res[j] = pg.outValues[j][:in.N*outputs(t)]
	}
	return res, nil
}

// finite reports the index of the first NaN or Inf in v, or −1.
func finite(v []float64) int {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i
		}
	}
	return -1
}

// newVM compiles g into a tape machine whose graph goes with it. Gorgonia
// gives every tape machine a finalizer (one that frees nothing unless
// built for CUDA, which this project never is), and an object with a
// finalizer keeps all it refers to alive one garbage collection longer:
// a dropped machine's graph and its ops' buffers, hundreds of MB for a
// run's graphs, would outlive the run, and the collector's heap goal
// would double them.
func newVM(g *gorgonia.ExprGraph) gorgonia.VM {
	vm := gorgonia.NewTapeMachine(g)
	runtime.SetFinalizer(vm, nil)
	return vm
}
