package optim

import "fmt"

// SGD is stochastic gradient descent with momentum, as torch.optim.SGD with
// dampening 0 and no Nesterov term:
//
//	b ← μ·b + g  (b = g on the first step),  x ← x − lr·b.
type SGD struct {
	LR       float64
	Momentum float64

	buf []float64
	dev onDevice // the buffer's device copy, after StepOnDevice
}

// SetLR sets the learning rate.
func (o *SGD) SetLR(lr float64) { o.LR = lr }

// Step implements Optimizer.
func (o *SGD) Step(x, grad []float64) error {
	if len(x) != len(grad) {
		return fmt.Errorf("sgd: %d parameters, %d gradients", len(x), len(grad))
	}
	o.dev.mustBeCurrent("sgd")
	o.dev.hostChanged()
	if o.Momentum == 0 {
		for i, g := range grad {
			x[i] -= o.LR * g
		}
		return nil
	}
	if o.buf == nil {
		o.buf = append([]float64(nil), grad...)
	} else {
		if len(o.buf) != len(x) {
			return fmt.Errorf("sgd: state for %d parameters, given %d", len(o.buf), len(x))
		}
		for i, g := range grad {
			o.buf[i] = o.Momentum*o.buf[i] + g
		}
	}
	for i, b := range o.buf {
		x[i] -= o.LR * b
	}
	return nil
}

// State is the momentum buffer, or nothing before the first step (or
// without momentum).
func (o *SGD) State() []float64 {
	o.dev.mustBeCurrent("sgd")
	return o.buf
}

// SetState restores the momentum buffer of n parameters.
func (o *SGD) SetState(s []float64, n int) error {
	o.buf = nil
	o.dev.hostChanged()
	switch {
	case len(s) == 0:
		return nil
	case len(s) != n:
		return fmt.Errorf("sgd: a state of %d numbers is not the momentum of %d parameters", len(s), n)
	}
	o.buf = append([]float64(nil), s...)
	return nil
}
