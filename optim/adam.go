package optim

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/internal/asm"
)

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
