package network

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/models"
)

// Inputs is a batch laid out as the graphs read it: always Config.Batch
// rows, the rows past N being padding with weight zero. One Inputs feeds
// every particle; each graph copies it into tensors of its own.
type Inputs struct {
	N       int
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
		return fmt.Errorf("network: batch of %d examples, the graphs take 1 to %d", n, cfg.Batch)
	}
	in.N = n
	size := in.x.Shape().TotalSize() / cfg.Batch
	if len(b.Inputs) != n*size {
		return fmt.Errorf("network: %d input values for %d examples of %d", len(b.Inputs), n, size)
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
					return fmt.Errorf("network: task %s: target %v of example %d is not a class 0..%d", t.Name, v, b.Index[i], t.Classes-1)
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

// taskGraph computes one task's loss on a batch and its gradient with
// respect to the trunk and that task's head.
type taskGraph struct {
	task                 int
	g                    *gorgonia.ExprGraph
	vm                   gorgonia.VM
	x, target, weight    *gorgonia.Node
	inputs               [3]binding // x, target, weight
	loss                 *gorgonia.Node
	trunkGrads, headGrad []*gorgonia.Node
	batchStats           []*gorgonia.Value // each batch norm's mean, then variance
	spatial              []int             // each batch norm's H·W
}

// inputNode adds the batch input (Batch × InputShape) to g.
func inputNode(g *gorgonia.ExprGraph, cfg *Config) *gorgonia.Node {
	shape := append([]int{cfg.Batch}, cfg.Model.InputShape()...)
	return gorgonia.NewTensor(g, cfg.Dtype, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName("x"))
}

// lossInputNodes adds task's targets and the examples' weights to g.
// Names are unique per task: Gorgonia merges identical nodes in a graph.
func lossInputNodes(g *gorgonia.ExprGraph, cfg *Config, task int) (target, weight *gorgonia.Node) {
	weight = gorgonia.NewVector(g, cfg.Dtype, gorgonia.WithShape(cfg.Batch), gorgonia.WithName("weight"))
	t := cfg.Tasks[task]
	name := fmt.Sprintf("target%d", task)
	if t.Kind == data.Classification {
		target = gorgonia.NewMatrix(g, cfg.Dtype, gorgonia.WithShape(cfg.Batch, t.Classes), gorgonia.WithName(name))
	} else {
		target = gorgonia.NewVector(g, cfg.Dtype, gorgonia.WithShape(cfg.Batch), gorgonia.WithName(name))
	}
	return target, weight
}

func newTaskGraph(p *Particle, task int) (*taskGraph, error) {
	cfg := p.cfg
	g := gorgonia.NewGraph()
	tg := &taskGraph{task: task, g: g}
	tg.x = inputNode(g, cfg)
	tg.target, tg.weight = lossInputNodes(g, cfg, task)
	vals := p.newValues(task)
	trunk := paramNodes(g, cfg.Model.TrunkParams(), vals.trunk)
	head := paramNodes(g, cfg.Model.HeadParams(task), vals.heads[task])
	norm := &models.Norm{Weight: tg.weight}
	features, err := cfg.Model.Trunk(tg.x, trunk, norm)
	if err != nil {
		return nil, err
	}
	tg.batchStats, tg.spatial = norm.Batch, norm.Spatial
	if len(norm.Batch) != len(cfg.Model.TrunkStats()) {
		return nil, fmt.Errorf("network: the trunk has %d batch statistics, its model lists %d", len(norm.Batch), len(cfg.Model.TrunkStats()))
	}
	out, err := cfg.Model.Head(features, task, head)
	if err != nil {
		return nil, err
	}
	if cfg.Tasks[task].Kind == data.Classification {
		tg.loss, err = crossEntropy(out, tg.target, tg.weight)
	} else {
		tg.loss, err = squaredError(out, tg.target, tg.weight)
	}
	if err != nil {
		return nil, fmt.Errorf("network: task %s loss: %w", cfg.Tasks[task].Name, err)
	}
	grads, err := gorgonia.Grad(tg.loss, append(trunk, head...)...)
	if err != nil {
		return nil, fmt.Errorf("network: task %s gradient: %w", cfg.Tasks[task].Name, err)
	}
	tg.trunkGrads, tg.headGrad = grads[:len(trunk)], grads[len(trunk):]
	tg.vm = gorgonia.NewTapeMachine(g)
	tg.inputs = [3]binding{{node: tg.x}, {node: tg.target}, {node: tg.weight}}
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
			return fmt.Errorf("network: input of %T", d)
		}
	}
	return gorgonia.Let(b.node, b.val)
}

// crossEntropy is Σ_i w_i·(log Σ_c exp z_ic − z_i,y_i) for logits z
// (batch × C) and one-hot targets y, built from Max, BroadcastSub, Exp, Sum
// and Log: Gorgonia's SoftMax and LogSoftMax fail under differentiation
// (../shared/notes/gorgonia.md). Subtracting the row maximum keeps Exp
// finite and cancels exactly in the value and the gradient.
func crossEntropy(z, onehot, w *gorgonia.Node) (*gorgonia.Node, error) {
	m, err := gorgonia.Max(z, 1)
	if err != nil {
		return nil, err
	}
	zs, err := gorgonia.BroadcastSub(z, m, nil, []byte{1})
	if err != nil {
		return nil, err
	}
	e, err := gorgonia.Exp(zs)
	if err != nil {
		return nil, err
	}
	s, err := gorgonia.Sum(e, 1)
	if err != nil {
		return nil, err
	}
	lse, err := gorgonia.Log(s)
	if err != nil {
		return nil, err
	}
	picked, err := gorgonia.HadamardProd(zs, onehot)
	if err != nil {
		return nil, err
	}
	if picked, err = gorgonia.Sum(picked, 1); err != nil {
		return nil, err
	}
	ce, err := gorgonia.Sub(lse, picked)
	if err != nil {
		return nil, err
	}
	return weightedSum(ce, w)
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

// run evaluates the graph on in and hands the machine to read, then
// resets it (Gorgonia's TapeMachine does nothing on its next run without
// a reset).
func run(vm gorgonia.VM, read func() error) error {
	defer vm.Reset()
	if err := vm.RunAll(); err != nil {
		return err
	}
	return read()
}

// Gradients evaluates task's loss on in and writes its gradient with
// respect to the trunk into trunkGrad and with respect to task's head into
// headGrad. The loss is the batch mean: the graph weights each real
// example 1/in.N and padding 0.
func (p *Particle) Gradients(in *Inputs, task int, trunkGrad, headGrad []float64) (loss float64, err error) {
	tg := p.taskGraphs[task]
	for i, src := range []*tensor.Dense{in.x, in.targets[task], in.weight} {
		if err := tg.inputs[i].set(src); err != nil {
			return 0, err
		}
	}
	var l [1]float64
	err = run(tg.vm, func() error {
		if err := getFloats(tg.loss.Value(), l[:]); err != nil {
			return err
		}
		if err := gather(tg.trunkGrads, trunkGrad); err != nil {
			return err
		}
		if task == 0 {
			if err := gatherValues(tg.batchStats, p.batchStats); err != nil {
				return err
			}
		}
		return gather(tg.headGrad, headGrad)
	})
	if err != nil {
		return 0, fmt.Errorf("task %s: %w", p.cfg.Tasks[task].Name, err)
	}
	return l[0], nil
}

// gather copies the values of nodes into the flat vector dst, in order.
func gather(nodes []*gorgonia.Node, dst []float64) error {
	vals := make([]gorgonia.Value, len(nodes))
	for i, n := range nodes {
		vals[i] = n.Value()
	}
	return copyValues(vals, dst)
}

// gatherValues copies the values Read placed into the flat vector dst.
func gatherValues(places []*gorgonia.Value, dst []float64) error {
	vals := make([]gorgonia.Value, len(places))
	for i, v := range places {
		vals[i] = *v
	}
	return copyValues(vals, dst)
}

func copyValues(vals []gorgonia.Value, dst []float64) error {
	for _, v := range vals {
		if v == nil {
			return fmt.Errorf("network: a value the graph did not compute")
		}
		size := v.Shape().TotalSize()
		if size > len(dst) {
			return fmt.Errorf("network: %d values overflow their vector", size)
		}
		if err := getFloats(v, dst[:size]); err != nil {
			return err
		}
		dst = dst[size:]
	}
	if len(dst) != 0 {
		return fmt.Errorf("network: %d values of the vector left unset", len(dst))
	}
	return nil
}

// predictGraph computes every head's outputs on a batch, without
// gradients.
type predictGraph struct {
	g         *gorgonia.ExprGraph
	vm        gorgonia.VM
	x         *gorgonia.Node
	input     binding
	stats     []*tensor.Dense // the running statistics the graph reads
	outs      []*gorgonia.Node
	outValues [][]float64
}

func newPredictGraph(p *Particle) (*predictGraph, error) {
	cfg := p.cfg
	g := gorgonia.NewGraph()
	pg := &predictGraph{g: g}
	pg.x = inputNode(g, cfg)
	all := make([]int, len(cfg.Tasks))
	for j := range all {
		all[j] = j
	}
	vals := p.newValues(all...)
	trunk := paramNodes(g, cfg.Model.TrunkParams(), vals.trunk)
	vals.stats = newTensors(cfg.Model.TrunkStats(), cfg.Dtype)
	scatter(p.Stats, vals.stats)
	features, err := cfg.Model.Trunk(pg.x, trunk, &models.Norm{Running: paramNodes(g, cfg.Model.TrunkStats(), vals.stats)})
	if err != nil {
		return nil, err
	}
	for j, t := range cfg.Tasks {
		head := paramNodes(g, cfg.Model.HeadParams(j), vals.heads[j])
		out, err := cfg.Model.Head(features, j, head)
		if err != nil {
			return nil, err
		}
		pg.outs = append(pg.outs, out)
		pg.outValues = append(pg.outValues, make([]float64, cfg.Batch*outputs(t)))
	}
	pg.vm = gorgonia.NewTapeMachine(g)
	pg.input = binding{node: pg.x}
	pg.stats = vals.stats
	return pg, nil
}

// Predict evaluates every head on in and returns, per task, the outputs
// of the in.N real examples, row-major (N × outputs): logits for a
// classification task, predictions for a regression task. The slices are
// reused by the next call.
func (p *Particle) Predict(in *Inputs) ([][]float64, error) {
	pg := p.predict
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
	for j, t := range p.cfg.Tasks {
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
