// Package gputest checks every kernel of a gpu.Device against a plain Go
// reference computed from the kernel's definition, in float32 and
// float64. The emulator's tests (package gpu/kernels) run it on every
// machine; the CUDA backend's (package gpu/cuda, -tags gpu) on a GPU.
//
// Tolerances: float64 results agree with the reference to 1e-12 relative
// (both accumulate in float64; only the order of sums differs); float32
// results to 2e-6 relative, a few float32 roundings (2⁻²⁴ ≈ 6e-8 each),
// of inputs that are float32 values to begin with.
package gputest

import (
	"math/rand/v2"
	"testing"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// Kernels runs every kernel check on dev, then again with every launch
// over two lanes and every matrix product a strided-batched one of two
// (twoLanes), the second lane's checked.
func Kernels(t *testing.T, dev gpu.Device) {
	for _, dt := range []gpu.Dtype{gpu.Float32, gpu.Float64} {
		for _, lanes := range []string{"", "/two-lanes"} {
			name := map[gpu.Dtype]string{gpu.Float32: "f32", gpu.Float64: "f64"}[dt] + lanes
			t.Run(name, func(t *testing.T) {
				for _, c := range checks {
					t.Run(c.name, func(t *testing.T) {
						d := dev
						if lanes != "" {
							d = &twoLanes{Device: dev}
						}
						k := &kit{t: t, dev: d, dt: dt, rng: rand.New(rand.NewPCG(1, uint64(len(c.name))))}
						defer k.freeAll()
						c.run(k)
					})
				}
			})
		}
	}
}

var checks = []struct {
	name string
	run  func(*kit)
}{
	{"fill-axpy-scale", checkElementwise},
	{"copy-add-swap01", checkCopyAddSwap},
	{"gather_rows", checkGatherRows},
	{"widen-narrow", checkWidenNarrow},
	{"relu", checkReLU},
	{"bias_add", checkBiasAdd},
	{"column_sums", checkColumnSums},
	{"sum_columns2_to", checkSumColumns2},
	{"channel_partial", checkChannelPartial},
	{"sum_rows_to", checkSumRows},
	{"batchnorm", checkBatchNorm},
	{"im2col-col2im", checkIm2col},
	{"relu_maxpool", checkMaxPool},
	{"avgpool", checkAvgPool},
	{"xent", checkXent},
	{"sqerr", checkSqErr},
	{"sgd", checkSGD},
	{"adam", checkAdam},
	{"normalize_columns", checkNormalizeColumns},
	{"gemm", checkGemm},
}
