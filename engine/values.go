package engine

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/asm"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/ops"
)

// float is the element type of a vector the graphs' values are copied
// into.
type float interface{ ~float32 | ~float64 }

// values is one graph's copy of a particle's parameters in the graph's
// dtype, loaded before each run. Graphs never share tensors: Gorgonia
// transposes a weight tensor in place while it differentiates a matrix
// product, so graphs that run at the same time must not share them.
type values struct {
	dev   *ops.Device // the graph's device; nil for the CPU
	trunk []*tensor.Dense
	heads [][]*tensor.Dense // nil for the heads the graph does not use
	stats []*tensor.Dense   // running statistics, in the prediction graph
}

// newValues allocates tensors for the trunk and, if heads, every head, on
// dev (nil: the CPU), and adds their nodes to g.
func newValues(g *gorgonia.ExprGraph, cfg *Config, heads bool, dev *ops.Device) (v *values, trunk []*gorgonia.Node, head [][]*gorgonia.Node, err error) {
	m := cfg.Model
	v = &values{dev: dev}
	if v.trunk, err = newTensors(m.TrunkParams(), cfg.Dtype, dev); err != nil {
		return nil, nil, nil, err
	}
	trunk = paramNodes(g, m.TrunkParams(), v.trunk)
	if heads {
		for j := range cfg.Tasks {
			h, err := newTensors(m.HeadParams(j), cfg.Dtype, dev)
			if err != nil {
				return nil, nil, nil, err
			}
			v.heads = append(v.heads, h)
			head = append(head, paramNodes(g, m.HeadParams(j), h))
		}
	}
	return v, trunk, head, nil
}

// loadParticle copies p's vectors into the tensors, its parameters from
// rows on the device when rows is not nil.
func (v *values) loadParticle(p *Particle, rows *deviceRows) error {
	if rows == nil {
		return v.load(p)
	}
	if err := scatterFrom(v.dev, rows.trunk, v.trunk); err != nil {
		return err
	}
	for j, h := range v.heads {
		if err := scatterFrom(v.dev, rows.heads[j], h); err != nil {
			return err
		}
	}
	return scatter(v.dev, p.Stats, v.stats) // kept on the host
}

// load copies p's vectors into the tensors.
func (v *values) load(p *Particle) error {
	if err := scatter(v.dev, p.Trunk, v.trunk); err != nil {
		return err
	}
	for j, h := range v.heads {
		if err := scatter(v.dev, p.Heads[j], h); err != nil {
			return err
		}
	}
	return scatter(v.dev, p.Stats, v.stats)
}

// newTensors allocates a tensor for each of ps, on dev (nil: the CPU),
// where they lie one after another, as in a particle's vector, so that
// one kernel loads them (scatterFrom).
func newTensors(ps []models.Param, dt tensor.Dtype, dev *ops.Device) ([]*tensor.Dense, error) {
	if dev != nil {
		shapes := make([]tensor.Shape, len(ps))
		for i, p := range ps {
			shapes[i] = tensor.Shape(p.Shape)
		}
		return dev.Tensors(dt, shapes...)
	}
	vals := make([]*tensor.Dense, len(ps))
	for i, p := range ps {
		vals[i] = tensor.New(tensor.WithShape(p.Shape...), tensor.Of(dt))
	}
	return vals, nil
}

// paramNodes adds one input node per parameter to g, bound to vals.
func paramNodes(g *gorgonia.ExprGraph, ps []models.Param, vals []*tensor.Dense) []*gorgonia.Node {
	nodes := make([]*gorgonia.Node, len(ps))
	for i, p := range ps {
		nodes[i] = gorgonia.NewTensor(g, vals[i].Dtype(), len(p.Shape),
			gorgonia.WithShape(p.Shape...), gorgonia.WithName(p.Name), gorgonia.WithValue(vals[i]))
	}
	return nodes
}

// scatter copies the flat vector src into the tensors dst, in order, on
// dev (nil: the CPU).
func scatter(dev *ops.Device, src []float64, dst []*tensor.Dense) error {
	for _, t := range dst {
		n := t.Shape().TotalSize()
		if err := setOn(dev, t, src[:n]); err != nil {
			return err
		}
		src = src[n:]
	}
	return nil
}

// scatterFrom copies the float64 vector at src in the device's memory
// into the device tensors dst, in order.
func scatterFrom(dev *ops.Device, src gpu.Ptr, dst []*tensor.Dense) error {
	return dev.LoadAllFrom(dst, src)
}

// storeTo writes a·(the values of nodes), on dev, into the float64
// vector at dst in the device's memory, in order.
func storeTo(dev *ops.Device, nodes []*gorgonia.Node, dst gpu.Ptr, a float64) error {
	vs := make([]gorgonia.Value, len(nodes))
	for i, n := range nodes {
		if vs[i] = n.Value(); vs[i] == nil {
			return fmt.Errorf("engine: a value the graph did not compute")
		}
	}
	return dev.StoreAllTo(dst, vs, a)
}

// gather copies the values of nodes, on dev (nil: the CPU), into the flat
// vector dst, in order.
func gather(dev *ops.Device, nodes []*gorgonia.Node, dst []float64) error {
	return copyValues(dev, nodeValues(nodes), dst)
}

// gatherScores is gather writing the negated values (scores) and
// reporting whether they are all finite: on the CPU in the one pass that
// converts them to dst's type (float32 scores only on the CPU).
func gatherScores[D float](dev *ops.Device, nodes []*gorgonia.Node, dst []D) (finite bool, err error) {
	if dev != nil {
		d64, ok := any(dst).([]float64)
		if !ok {
			return false, fmt.Errorf("engine: float32 scores from a device")
		}
		if err := gather(dev, nodes, d64); err != nil {
			return false, err
		}
		return negateFinite(d64) < 0, nil
	}
	finite = true
	err = fill(nodeValues(nodes), dst, func(v gorgonia.Value, part []D) error {
		ok, err := negatedFloats(v, part)
		finite = finite && ok
		return err
	})
	return finite, err
}

func nodeValues(nodes []*gorgonia.Node) []gorgonia.Value {
	vals := make([]gorgonia.Value, len(nodes))
	for i, n := range nodes {
		vals[i] = n.Value()
	}
	return vals
}

// negatedFloats writes −v into dst, converted to dst's type, and reports
// whether v is finite.
func negatedFloats[D float](v gorgonia.Value, dst []D) (bool, error) {
	switch d := v.Data().(type) {
	case []float32:
		return negateInto(d, dst)
	case []float64:
		return negateInto(d, dst)
	case float32: // a scalar
		return negateInto([]float32{d}, dst)
	case float64:
		return negateInto([]float64{d}, dst)
	}
	return false, fmt.Errorf("engine: value of %T", v.Data())
}

// negateInto writes −src into dst and reports whether src is finite
// (asm.Negate).
func negateInto[S, D float](src []S, dst []D) (bool, error) {
	if len(src) != len(dst) {
		return false, fmt.Errorf("engine: %d values for %d", len(src), len(dst))
	}
	return asm.Negate(dst, src), nil
}

func copyValues(dev *ops.Device, vals []gorgonia.Value, dst []float64) error {
	return fill(vals, dst, func(v gorgonia.Value, part []float64) error { return getFloats(dev, v, part) })
}

// fill calls put for each value with the part of dst it fills, in order,
// and checks that the values fill dst exactly.
func fill[D float](vals []gorgonia.Value, dst []D, put func(v gorgonia.Value, part []D) error) error {
	for _, v := range vals {
		if v == nil {
			return fmt.Errorf("engine: a value the graph did not compute")
		}
		size := v.Shape().TotalSize()
		if size > len(dst) {
			return fmt.Errorf("engine: %d values overflow their vector", size)
		}
		if err := put(v, dst[:size]); err != nil {
			return err
		}
		dst = dst[size:]
	}
	if len(dst) != 0 {
		return fmt.Errorf("engine: %d values of the vector left unset", len(dst))
	}
	return nil
}

// copyStats copies each layer's batch mean, then variance, into dst.
func copyStats(stats []*ops.BatchStats, dst []float64) error {
	for _, st := range stats {
		if err := st.Fetch(); err != nil {
			return err
		}
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

// setOn copies src into t, on dev (nil: the CPU), converting to t's
// dtype.
func setOn(dev *ops.Device, t *tensor.Dense, src []float64) error {
	if dev != nil {
		return dev.Set(t, src)
	}
	setFloats(t, src)
	return nil
}

// setFloats copies src into t, converting to t's dtype.
func setFloats(t *tensor.Dense, src []float64) {
	switch d := t.Data().(type) {
	case []float64:
		copy(d, src)
	case []float32:
		for i, v := range src {
			d[i] = float32(v)
		}
	default:
		panic(fmt.Sprintf("engine: tensor of %T", d))
	}
}

// getFloats copies v's values, on dev (nil: the CPU; scalars are always
// on the host), into dst, converting to float64.
func getFloats(dev *ops.Device, v gorgonia.Value, dst []float64) error {
	if _, ok := v.(gorgonia.Scalar); !ok && dev != nil {
		return dev.Get(v, dst)
	}
	switch d := v.Data().(type) {
	case []float64:
		if len(d) != len(dst) {
			return fmt.Errorf("engine: %d values for %d", len(d), len(dst))
		}
		copy(dst, d)
	case []float32:
		if len(d) != len(dst) {
			return fmt.Errorf("engine: %d values for %d", len(d), len(dst))
		}
		for i, x := range d {
			dst[i] = float64(x)
		}
	case float64:
		dst[0] = d
	case float32:
		dst[0] = float64(d)
	default:
		return fmt.Errorf("engine: value of %T", d)
	}
	return nil
}
