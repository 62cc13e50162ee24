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

// Optimizer updates a parameter vector from its gradient, and saves and
// restores its state so that a run can be checkpointed and resumed.
type Optimizer interface {
	// Step updates x in place from grad, which has the same length.
	Step(x, grad []float64) error
	// SetLR sets the learning rate of the following steps, for schedules.
	SetLR(lr float64)
	Stateful
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
