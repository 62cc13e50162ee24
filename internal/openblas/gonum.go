//go:build !openblas

package openblas

// Name says which BLAS the products run on, for a run's log: without
// -tags openblas, gonum's own.
func Name() string { return "gonum" }
