// Package aggregate holds the field's multi-task methods that turn one
// network's task gradients into one update of its shared parameters:
// the gradient aggregators (PCGrad, CAGrad, Nash-MTL, IMTL-G,
// Aligned-MTL, UPGrad, DualProj, ConFIG, GradVac, FairGrad) and the loss
// weightings (uncertainty weighting, GradNorm, DWA, RLW, FAMO, GLS,
// STCH, and IMTL, which weighs the losses and then aggregates), one file
// each.
//
// Every method works on a plain K×d matrix of task gradients, without a
// network, so that it can be tested against closed forms and the
// properties that define it; the particles package applies one to each
// particle of an ensemble, and the experiment package registers each as
// a -method.
//
// # Conventions
//
// g[k] is the gradient of task k's loss (not its negative), and an
// aggregator writes the direction d that replaces the gradient of the
// combined loss: the step is θ ← θ − lr·d. Published implementations of
// the same method differ in scale: some return a direction on the scale
// of the sum of the task gradients, some on the scale of their mean
// (the sum divided by K), some rescale or clip it. Each method's doc
// states its source, its formula and which scale it returns. Every
// method here is odd in the gradients (negating every row negates the
// direction), so applying one to scores (minus the gradients) gives
// minus the direction.
//
// A method with state that carries from step to step (task weights,
// loss histories, optimiser moments, moving targets) implements
// Stateful, and a checkpoint keeps its State. Random draws (PCGrad's
// and GradVac's order, RLW's weights) are functions of (Step.Seed,
// Step.Particle, Step.Index) alone, so a resumed run draws what the
// uninterrupted one drew without keeping a generator's state.
package aggregate

import "errors"

// ErrUndefined is wrapped by an Aggregate error where the gradients leave
// the method's direction undefined (IMTL-G's zero gradient or singular
// DUᵀ): a state the network reached, not a fault of the call. Training
// treats it as a divergence, as it treats a NaN: the run cannot go on at
// that rate, and a learning-rate search never chooses it. Published
// implementations run on there with infinite or NaN weights.
var ErrUndefined = errors.New("the task gradients leave the direction undefined")

// Step is what a method sees of the step besides the gradients.
type Step struct {
	// Losses[k] is task k's loss on the batch, the value whose gradient
	// is g[k]. The loss weightings read it; most aggregators do not.
	Losses []float64
	// Index counts the updates made before this one (0 at the first).
	Index int
	// StepsPerEpoch is the number of updates in an epoch, so that
	// Index/StepsPerEpoch is the epoch (0-based) the step belongs to;
	// 0 where there are no epochs (the toy problems).
	StepsPerEpoch int
	// Seed and Particle key the random draws: the run's seed and the
	// index of the particle whose gradients these are.
	Seed     uint64
	Particle int
}

// An Aggregator writes into dst (length d) the update direction of the
// shared parameters from g, K rows of length d, the gradients of the K
// task losses. It must not modify g. One value serves one network: an
// ensemble of M particles holds M of them, each with its own state.
type Aggregator interface {
	Aggregate(dst []float64, g [][]float64, s Step) error
}

// Stateful is an Aggregator whose state carries from step to step. A
// checkpoint saves State; a resumed run calls SetState on a fresh value
// before its first step and then continues exactly as the
// uninterrupted run. SetState rejects a slice of the wrong length or
// with values the method cannot hold (a NaN weight, say).
type Stateful interface {
	Aggregator
	State() []float64
	SetState(state []float64) error
}
