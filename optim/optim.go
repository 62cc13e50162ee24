// Package optim holds first-order optimisers that work on plain parameter
// vectors: SGD with momentum and Adam, with PyTorch's update formulas so that
// hyperparameters carry over from PyTorch code unchanged.
//
// An optimiser minimises: Step moves x against grad. Particle rules produce
// ascent directions φ, so the trainer passes −φ as the gradient. Each
// optimiser keeps per-coordinate state for one vector of fixed length; use one
// optimiser per parameter vector (per particle, per trunk or head). The
// state is the optimiser's to lay out and check (Stateful): checkpoints
// store it as the flat vector State returns and hand it back to SetState.
package optim

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// Optimizer updates a parameter vector from its gradient, and saves and
// restores its state so that a run can be checkpointed and resumed.
type Optimizer interface {
	// Step updates x in place from grad, which has the same length.
	Step(x, grad []float64) error
	// SetLR sets the learning rate of the following steps, for schedules.
	SetLR(lr float64)
	Stateful
}

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

// Adam is Kingma & Ba's optimiser as torch.optim.Adam (no weight decay, no
// AMSGrad):
//
//	m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²,
//	x ← x − lr·(m/(1−β1ᵗ)) / (sqrt(v/(1−β2ᵗ)) + ε).
type Adam struct {
	LR, Beta1, Beta2, Eps float64

	state []float64 // State's layout: the step count, m, then v
	m, v  []float64 // views of state
	t     int
	dev   onDevice // m and v's device copy, after StepOnDevice
}

// NewAdam returns Adam with PyTorch's defaults β1 = 0.9, β2 = 0.999, ε = 1e-8.
func NewAdam(lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// SetLR sets the learning rate.
func (o *Adam) SetLR(lr float64) { o.LR = lr }

// Step implements Optimizer.
func (o *Adam) Step(x, grad []float64) error {
	if len(x) != len(grad) {
		return fmt.Errorf("adam: %d parameters, %d gradients", len(x), len(grad))
	}
	o.dev.mustBeCurrent("adam")
	o.dev.hostChanged()
	if o.m == nil {
		o.setState(make([]float64, 1+2*len(x)))
	}
	if len(o.m) != len(x) {
		return fmt.Errorf("adam: state for %d parameters, given %d", len(o.m), len(x))
	}
	o.t++
	asm.Adam(x, grad, o.m, o.v, &asm.AdamConsts{
		Beta1: o.Beta1, OneMinusBeta1: 1 - o.Beta1,
		Beta2: o.Beta2, OneMinusBeta2: 1 - o.Beta2,
		C1: 1 - math.Pow(o.Beta1, float64(o.t)), C2: 1 - math.Pow(o.Beta2, float64(o.t)),
		LR: o.LR, Eps: o.Eps,
	})
	return nil
}

// Stateful is an optimiser whose state can be saved and restored, for
// checkpoints: SetState(State(), n) on a fresh optimiser with the same
// hyperparameters continues exactly as the original would. The state is
// one flat vector in the optimiser's own layout, which it alone reads and
// checks; a checkpoint stores it as it is.
type Stateful interface {
	// State returns the state as plain numbers, nothing before the first
	// step. The numbers are the optimiser's own, not a copy (a
	// checkpoint of five ResNet-18 particles would copy 0.9 GB of Adam's
	// moments): read them before the next Step or SetState, and do not
	// change them.
	State() []float64
	// SetState restores a state State returned for a vector of n
	// parameters, and refuses one that is not such a state (a damaged
	// or mismatched checkpoint's).
	SetState(s []float64, n int) error
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

// State is the step count followed by the first and second moment
// estimates, or nothing before the first step.
func (o *Adam) State() []float64 {
	o.dev.mustBeCurrent("adam")
	if o.m == nil {
		return nil
	}
	o.state[0] = float64(o.t)
	return o.state
}

// SetState restores the step count and moment estimates of n parameters.
func (o *Adam) SetState(s []float64, n int) error {
	o.state, o.m, o.v, o.t = nil, nil, nil, 0
	o.dev.hostChanged()
	switch {
	case len(s) == 0:
		return nil
	case len(s) != 1+2*n:
		return fmt.Errorf("adam: a state of %d numbers is not a step count and two moment vectors of %d parameters", len(s), n)
	case !(s[0] >= 1 && s[0] <= math.MaxInt32) || s[0] != math.Trunc(s[0]):
		return fmt.Errorf("adam: step count %v is not a positive whole number", s[0])
	}
	o.t = int(s[0])
	o.setState(append([]float64(nil), s...))
	return nil
}

// setState makes s (a step count, then m and v) the state.
func (o *Adam) setState(s []float64) {
	n := (len(s) - 1) / 2
	o.state, o.m, o.v = s, s[1:1+n:1+n], s[1+n:]
}
