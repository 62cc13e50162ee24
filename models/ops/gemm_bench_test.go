package ops

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"

	"github.com/mtsgd/mtsgd/internal/asm"
	_ "github.com/mtsgd/mtsgd/internal/openblas" // the BLAS of the README's build, with -tags openblas
)

// BenchmarkLeNetProducts times the matrix products of LeNet's
// convolutions at batch 256 as a step makes them, one particle and one
// task at a time (o = the layer's filters), and as they would be with
// the products of several tasks (filter gradients) or, for the first
// layer, whose patches are the images' and so the same for every
// particle, of several particles stacked into one product. It reports
// the arithmetic rate, to say what stacking would gain
// (docs/performance.md), in the BLAS and, with AVX-512, in our own
// routines (gemm.go, internal/asm). Filter gradients are summed in two halves, as
// the step sums them (sumOverPositions).
//
//	go test -tags openblas ./models/ops -run '^$' -bench LeNetProducts -benchtime 5x
func BenchmarkLeNetProducts(b *testing.B) {
	const batch = 256
	for _, c := range []struct {
		layer      string
		rows, cols int // the patch matrix: C·k·k × batch·positions
		filters    int
		stacks     []int // how many stacked: particles (forward), particles × tasks (filter gradients)
		filterGrad bool  // G·Pᵀ (o × rows) rather than W·P (o × cols)
	}{
		{"conv1-forward", 81, batch * 28 * 28, 10, []int{1, 2, 3, 5}, false},
		{"conv1-filter-grad", 81, batch * 28 * 28, 10, []int{1, 2, 4, 6, 10}, true},
		{"conv2-forward", 250, batch * 10 * 10, 20, []int{1}, false},
		{"conv2-filter-grad", 250, batch * 10 * 10, 20, []int{1, 2}, true},
	} {
		patches := sawtooth(c.rows*c.cols, 13)
		for _, s := range c.stacks {
			o := c.filters * s
			for _, by := range productPaths() {
				b.Run(fmt.Sprintf("%s/o=%d/%s", c.layer, o, by), func(b *testing.B) {
					defer func(own bool) { asm.UseAVX512 = own }(asm.UseAVX512)
					asm.UseAVX512 = by == "own"
					if c.filterGrad {
						g, dw := sawtooth(o*c.cols, 7), make([]float32, o*c.rows)
						for range b.N {
							sumOverPositions(o, c.rows, c.cols, g, c.cols, patches, c.cols, dw, c.rows, new(scratch[float32]))
						}
					} else {
						w, prod := sawtooth(o*c.rows, 5), make([]float32, o*c.cols)
						for range b.N {
							gemm(blas.NoTrans, blas.NoTrans, o, c.cols, c.rows, w, c.rows, patches, c.cols, 0, prod, c.cols)
						}
					}
					flops := 2 * float64(o) * float64(c.rows) * float64(c.cols) * float64(b.N)
					b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/float64(s)*1e3, "ms/product")
				})
			}
		}
	}
}

// productPaths names what BenchmarkLeNetProducts compares: the BLAS, and
// our own routines where the processor has AVX-512 (gemm.go).
func productPaths() []string {
	if asm.UseAVX512 {
		return []string{"blas", "own"}
	}
	return []string{"blas"}
}

// sawtooth is n values in [−0.5, 0.5) repeating with the period: inputs
// for products whose values do not matter.
func sawtooth(n, period int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%period)/float32(period) - 0.5
	}
	return v
}

// BenchmarkGEMMRate times large square float32 products, the best rate
// this machine's BLAS reaches: the rate behind the step's floor in
// docs/performance.md (the step's arithmetic divided by it). The BLAS
// runs one thread per call (internal/openblas), as the step's workers
// call it, so cores=N runs N products at once, one per core; the floor
// takes the rate of all the cores the step uses.
//
//	go test -tags openblas ./models/ops -run '^$' -bench GEMMRate -benchtime 10x
func BenchmarkGEMMRate(b *testing.B) {
	for _, cores := range []int{1, runtime.GOMAXPROCS(0)} {
		for _, n := range []int{512, 1024, 2048} {
			b.Run(fmt.Sprintf("cores=%d/n=%d", cores, n), func(b *testing.B) {
				x, y := sawtooth(n*n, 5), sawtooth(n*n, 7)
				z := make([][]float32, cores)
				for c := range z {
					z[c] = make([]float32, n*n)
				}
				b.ResetTimer()
				var wg sync.WaitGroup
				for c := range cores {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range b.N {
							gemm(blas.NoTrans, blas.NoTrans, n, n, n, x, n, y, n, 0, z[c], n)
						}
					}()
				}
				wg.Wait()
				flops := 2 * float64(cores) * float64(n) * float64(n) * float64(n) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
		if cores == 1 && runtime.GOMAXPROCS(0) == 1 {
			break
		}
	}
}
