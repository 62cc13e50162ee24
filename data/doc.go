// Package data is the parent of one package per multi-task data set
// (data/multimnist, data/celeba, data/sarcos). A data set names its tasks
// (classification with C classes, or regression), its input shape and size,
// and yields shuffled batches for a seed. Multi-MNIST and its Fashion
// variants arrive with issue 3. The toy targets of the paper are not data
// sets but densities; they live in package particles/toy.
package data
