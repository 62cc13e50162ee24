package ops

import "gorgonia.org/gorgonia"

// Products is the arithmetic of a graph's matrix products, in
// multiply-adds: those of its convolutions and linear layers in one
// forward pass, and in one backward pass through all of them (each
// one's weight gradient, and its input's gradient unless the input is a
// leaf, such as the images, whose gradient is never made). With the
// machine's rate for large products it gives the least time a step can
// take (docs/performance.md, the floor).
type Products struct{ Forward, Backward float64 }

// CountProducts counts the products of the convolutions and linear layers
// built into g, as they stand before differentiation.
func CountProducts(g *gorgonia.ExprGraph) Products {
	var p Products
	add := func(macs float64, inputGrad bool) {
		p.Forward += macs
		p.Backward += macs // the weights' gradient
		if inputGrad {
			p.Backward += macs
		}
	}
	for _, n := range g.AllNodes() {
		switch op := n.Op().(type) {
		case *convOp:
			c := op.g
			add(float64(c.o)*float64(c.rows())*float64(c.n*c.positions()), op.inputGrad)
		case *linearOp:
			add(float64(op.n)*float64(op.in)*float64(op.out), op.inputGrad)
		}
	}
	return p
}
