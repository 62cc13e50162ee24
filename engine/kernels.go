package engine

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/models/ops"
	"github.com/mtsgd/mtsgd/particles"
)

// KernelSpace says what the kernel rules' kernels compare.
type KernelSpace int

const (
	// KernelParams puts the kernels on the parameter vectors, as the
	// paper's Algorithm 1: the trunks' kernel over the flat α, each task's
	// over the flat βʲ.
	KernelParams KernelSpace = iota
	// KernelOutputs puts them on what the networks compute on the
	// current batch, as the authors' code: the trunks' kernel over the
	// trunk's features of the batch's examples (flattened, N × features
	// per particle), task j's over head j's outputs (N × outputs). The
	// repulsive term −∇_{θ_m} Σ_a k(θ_m, θ_a) is mapped back to the
	// parameters by a vector-Jacobian product through the trunk (or the
	// head): one more backward pass per particle and step.
	KernelOutputs
)

// kernelMapped is KernelOutputs with the trunks' kernel already
// evaluated and mapped in this step (see Trainer.Step).
const kernelMapped KernelSpace = -1

// KernelSpaces names the spaces, in the order of their values.
var KernelSpaces = []string{"params", "outputs"}

// ParseKernelSpace returns the space called name ("" is params).
func ParseKernelSpace(name string) (KernelSpace, error) {
	if name == "" {
		return KernelParams, nil
	}
	for i, n := range KernelSpaces {
		if n == name {
			return KernelSpace(i), nil
		}
	}
	return 0, fmt.Errorf("kernel space %q is not one of %v", name, KernelSpaces)
}

func (k KernelSpace) String() string {
	if int(k) < len(KernelSpaces) {
		return KernelSpaces[k]
	}
	return fmt.Sprintf("KernelSpace(%d)", int(k))
}

// outputKernels are the kernels over outputs of one step, with their
// repulsion already mapped back to the parameters.
type outputKernels struct {
	trunk particles.Kernel
	heads []particles.Kernel // per task
	// The same kernels with their repulsion in the outputs' space, as
	// particles.RBF.Evaluate leaves them (kept apart so that both keep
	// their buffers from step to step).
	trunkOut particles.Kernel
	headsOut []particles.Kernel
	// points[m] is particle m's flattened features or outputs on the
	// batch's real rows; upstream[m] the repulsion in that space, padded
	// to the graphs' batch.
	points, upstream [][]float64
}

// headKernels evaluates task j's kernel over the heads' outputs on the
// batch's n real rows and maps its repulsion to the heads' parameters.
func (tr *Trainer) headKernels(kern particles.RBF) error {
	k, m, n := len(tr.cfg.Tasks), len(tr.Particles), tr.in.N
	ok := &tr.kernels
	if ok.heads == nil {
		ok.heads, ok.headsOut = make([]particles.Kernel, k), make([]particles.Kernel, k)
	}
	for j, t := range tr.cfg.Tasks {
		width := outputs(t)
		ok.points = ok.points[:0]
		for i := range m {
			ok.points = append(ok.points, tr.grads[i].Outputs[j][:n*width])
		}
		out, kj := &ok.headsOut[j], &ok.heads[j]
		kern.Evaluate(out, ok.points)
		ok.upstream = padded(ok.upstream, out.Repulsion, tr.cfg.Batch*width)
		kj.K, kj.Sigma = out.K, out.Sigma
		kj.Repulsion = grow2(kj.Repulsion, m, len(tr.heads[j][0]))
		err := tr.parallel(m, func(w, i int) error {
			return tr.machines[w].headVJP(j, tr.Particles[i], tr.grads[i].Features, ok.upstream[i], kj.Repulsion[i])
		})
		if err != nil {
			return fmt.Errorf("task %s: head kernel: %w", t.Name, err)
		}
	}
	return nil
}

// trunkKernel evaluates the kernel over the trunks' features on the
// batch's real rows and maps its repulsion to the trunks' parameters.
func (tr *Trainer) trunkKernel(kern particles.RBF) error {
	tr.evaluateTrunkKernel(kern)
	err := tr.parallel(len(tr.Particles), func(w, i int) error {
		return tr.machines[w].trunkVJP(tr.Particles[i], tr.in, tr.kernels.upstream[i], tr.kernels.trunk.Repulsion[i])
	})
	if err != nil {
		return fmt.Errorf("trunk kernel: %w", err)
	}
	return nil
}

// evaluateTrunkKernel evaluates the kernel over the trunks' features and
// leaves in tr.kernels.upstream the repulsion in the features' space, for
// the vector-Jacobian products that fill tr.kernels.trunk.Repulsion.
func (tr *Trainer) evaluateTrunkKernel(kern particles.RBF) {
	m, n := len(tr.Particles), tr.in.N
	ok := &tr.kernels
	width := len(tr.grads[0].Features) / tr.cfg.Batch
	ok.points = ok.points[:0]
	for i := range m {
		ok.points = append(ok.points, tr.grads[i].Features[:n*width])
	}
	kern.Evaluate(&ok.trunkOut, ok.points)
	ok.upstream = padded(ok.upstream, ok.trunkOut.Repulsion, tr.cfg.Batch*width)
	ok.trunk.K, ok.trunk.Sigma = ok.trunkOut.K, ok.trunkOut.Sigma
	ok.trunk.Repulsion = grow2(ok.trunk.Repulsion, m, len(tr.trunks[0]))
}

// padded copies each of src into a vector of length size, zero past it,
// reusing buf.
func padded(buf, src [][]float64, size int) [][]float64 {
	buf = grow2(buf, len(src), size)
	for i, v := range src {
		clear(buf[i][copy(buf[i], v):])
	}
	return buf
}

// grow2 returns n vectors of length d, reusing buf when it fits.
func grow2(buf [][]float64, n, d int) [][]float64 {
	if len(buf) == n && (n == 0 || len(buf[0]) == d) {
		return buf
	}
	buf = make([][]float64, n)
	for i := range buf {
		buf[i] = make([]float64, d)
	}
	return buf
}

// trunkVJPAfter is trunkVJP for the particle whose gradients this machine
// has just computed on in: the trunk graph is still bound to it, and a
// replaying one still holds its recorded forward pass, so no forward pass
// runs again.
func (m *machine) trunkVJPAfter(p *Particle, in *Inputs, upstream, dst []float64) error {
	if m.trunk == nil || m.steps == nil {
		return m.trunkVJP(p, in, upstream, dst)
	}
	return m.trunk.vjp(upstream, dst)
}

// trunkVJP writes the gradient of ⟨features, upstream⟩ with respect to p's
// trunk on the batch in into dst. It runs the trunk forward again: a
// replaying trunk graph would read another particle's recorded pass.
func (m *machine) trunkVJP(p *Particle, in *Inputs, upstream, dst []float64) error {
	if err := m.trainingGraphs(); err != nil {
		return err
	}
	if m.fullTrunk == nil {
		if m.trunk != nil && !m.trunk.replayed {
			m.fullTrunk = m.trunk
		} else {
			tg, err := buildTrunkGraph(m.cfg, nil)
			if err != nil {
				return err
			}
			m.fullTrunk = tg
		}
	}
	if err := m.fullTrunk.bind(p, nil, in); err != nil {
		return err
	}
	return m.fullTrunk.vjp(upstream, dst)
}

// headVJP writes the gradient of ⟨head j's outputs, upstream⟩ with respect
// to p's head j, on the trunk features (Config.Batch rows) into dst.
func (m *machine) headVJP(j int, p *Particle, features, upstream, dst []float64) error {
	if m.heads == nil {
		m.heads = make([]*headGraph, len(m.cfg.Tasks))
	}
	if m.heads[j] == nil {
		hg, err := newHeadGraph(m.cfg, j, len(features)/m.cfg.Batch)
		if err != nil {
			return err
		}
		m.heads[j] = hg
	}
	return m.heads[j].vjp(p.Heads[j], features, upstream, dst)
}

// headGraph computes one task's head vector-Jacobian product: the gradient
// of ⟨Head(F), G⟩ with respect to the head, for given features F and G.
type headGraph struct {
	vm     gorgonia.VM
	params []*tensor.Dense
	inputs [2]binding // F, G
	grads  []*gorgonia.Node
}

// newHeadGraph builds task j's head graph for features of width values
// per example.
func newHeadGraph(cfg *Config, j, width int) (*headGraph, error) {
	if width < 1 {
		return nil, fmt.Errorf("engine: head kernel without trunk features")
	}
	g := gorgonia.NewGraph()
	vals, err := newTensors(cfg.Model.HeadParams(j), cfg.Dtype, nil)
	if err != nil {
		return nil, err
	}
	hg := &headGraph{params: vals}
	params := paramNodes(g, cfg.Model.HeadParams(j), hg.params)
	f := gorgonia.NewMatrix(g, cfg.Dtype, gorgonia.WithShape(cfg.Batch, width), gorgonia.WithName("F"))
	out, err := cfg.Model.Head(f, j, params)
	if err != nil {
		return nil, err
	}
	upstream := gorgonia.NewTensor(g, cfg.Dtype, out.Dims(), gorgonia.WithShape(out.Shape()...), gorgonia.WithName("G"))
	inner, err := ops.Inner(out, upstream)
	if err != nil {
		return nil, err
	}
	if hg.grads, err = gorgonia.Grad(inner, params...); err != nil {
		return nil, fmt.Errorf("engine: head gradient: %w", err)
	}
	hg.vm = newVM(g, nil)
	hg.inputs = [2]binding{{node: f}, {node: upstream}}
	for i := range hg.inputs {
		b := &hg.inputs[i]
		b.val = tensor.New(tensor.WithShape(b.node.Shape()...), tensor.Of(cfg.Dtype))
	}
	return hg, nil
}

func (hg *headGraph) vjp(head, features, upstream, dst []float64) error {
	if err := scatter(nil, head, hg.params); err != nil {
		return err
	}
	for i, src := range [][]float64{features, upstream} {
		b := &hg.inputs[i]
		if len(src) != b.val.Shape().TotalSize() {
			return fmt.Errorf("engine: head graph input of %d values, want %d", len(src), b.val.Shape().TotalSize())
		}
		setFloats(b.val, src)
		if err := gorgonia.Let(b.node, b.val); err != nil {
			return err
		}
	}
	return run(hg.vm, func() error { return gather(nil, hg.grads, dst) })
}
