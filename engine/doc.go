// Package engine trains and evaluates ensembles of network particles on
// Gorgonia. Each particle is a multi-task network (package models); the
// engine builds each worker's autodiff graphs, computes every particle's
// task losses and gradients, hands them as flat vectors to the update
// rules of package particles, which decide the directions, steps the
// optimisers (package optim) and scores the particles and their ensemble.
// Package experiment runs the epochs, checkpoints and resume around it.
//
// A particle is its parameters as float64 vectors, the trunk α and one
// head βʲ per task (and the running statistics of batch normalisation).
// The Gorgonia graphs belong to a machine, one per worker, which copies a
// particle's vectors into them for each run; so memory grows with the
// workers, not with the particles or the tasks. (An ensemble held on a
// device is the exception: there each particle has a machine of its own
// on a lane of a gpu.Ensemble, so that the particles' same kernels run
// as one launch; resident.go.) A machine has three graphs:
//
//   - the step graph runs the trunk once and every head and loss on its
//     features, and differentiates: task 0's loss with respect to the trunk
//     and head 0; task j's (j ≥ 1) with respect to head j and to the
//     features, through a copy of them of its own;
//   - the trunk graph runs the trunk again and differentiates ⟨features, G⟩
//     with respect to the trunk for a given G: with G the gradient of task
//     j's loss with respect to the features, that is task j's trunk
//     gradient (a vector-Jacobian product), one run per task j ≥ 1;
//   - the prediction graph runs the trunk and every head without
//     gradients, batch normalisation using the running statistics.
//
// Why so: MT-SGD needs each task's trunk gradient separately. Gorgonia's
// symbolic differentiation keeps one derivative per node, so a second Grad
// in one graph returns the first loss's gradient for every node the two
// losses share (docs/gorgonia-pitfalls.md); a node that only one loss
// reaches, like a task's own copy of the features, is differentiated
// correctly. A step costs K trunk passes forward and backward per
// particle, as K separate task graphs would, in two graphs instead of K.
// The tests check each gradient against finite differences and their sum
// against the summed loss.
//
// A heads-first step (Update.HeadsFirst) evaluates every particle twice,
// the heads' gradients, then, after the heads moved, the trunk's through
// the moved heads; the trunk, not yet moved, gives the same features. A
// heads-only step graph runs the first evaluation; where the trunk's ops
// can replay (LeNet, the MLP) it keeps each particle's trunk forward
// pass (ops.SavedPass, one set of activations and patches per particle), and
// the second evaluation replays it in a step graph and a trunk graph of
// its own, running only the trunk's backward passes (keepTrunks). The
// convolutions on the images then stack across a worker's particles in
// both evaluations, as a joint step's do (machine.gradientsKept).
//
// Workers: particle i runs on worker i mod the number of workers where
// a worker's graphs keep what its particles share (the images'
// patches), else on whichever worker is free. A worker whose particles
// are done helps the others with their large matrix products until all
// are (ops.ShareWork): with 5 particles on 2 workers the third particle of
// the first worker does not run on one core alone. Helping changes no
// bit (TestHelpingChangesNothing).
//
// Batch normalisation: the step and trunk graphs normalise with the
// batch's statistics (training mode), and the step graph reports them so
// that the running statistics move once per step, as PyTorch's forward
// pass in training mode does.
//
// Task kinds: what differs between a classification and a regression
// task (the head's width, the targets' layout, the loss, what the
// ensemble averages, the scores) is one entry of the table in tasks.go,
// keyed by data.Kind, which the graphs, the inputs and the evaluation
// read; a new kind of task is one entry there.
//
// The files follow the concerns: trainer.go (Trainer, the ensemble's
// step), update.go (what a step does: Update, score scales), each with
// its form for an ensemble held on a device beside it (trainer_device.go,
// update_device.go), resident.go (that ensemble and its lanes),
// kernels.go (the kernels over outputs), evaluate.go, machine.go (a
// worker's graphs), stepgraph.go, trunkgraph.go and predictgraph.go (one
// graph each), inputs.go (a batch as the graphs read it), values.go
// (copies between flat vectors and graph tensors), tasks.go, config.go,
// particle.go and footprint.go (the graphs' memory), switches.go (the
// faster paths tests turn off to compare).
package engine
