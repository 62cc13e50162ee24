// Package openblas switches gonum's BLAS, which the project's own
// convolutions use for their matrix products (models/ops), to OpenBLAS
// when the program is built with -tags openblas; commands import it for
// that effect. OpenBLAS runs single-threaded here: particles already run
// on one worker per core (package engine), and a threaded BLAS inside
// each would oversubscribe the cores.
//
// OpenBLAS picks its kernels by the processor's model, and gives a model
// it does not know its oldest 64-bit kernels (SSE3), at a fifth of the
// rate AVX-512 reaches; so on such a processor this package has it pick
// again, the widest kernels the processor's features allow. A user's
// OPENBLAS_CORETYPE is left to decide.
//
// It needs cgo and Debian's libopenblas-dev (scripts/setup installs it).
// Without the tag the build is pure Go, with gonum's own BLAS, about 2.5
// times slower on the LeNet step (docs/performance.md).
package openblas
