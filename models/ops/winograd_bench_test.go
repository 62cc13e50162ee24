package ops

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// BenchmarkWinogradTransforms times the gradients' transforms on
// ResNet-18's four stage shapes at batch 64 (one channel count per
// stage), per tile or per filter, and the forward pass's input
// transform.
func BenchmarkWinogradTransforms(b *testing.B) {
	for _, side := range []int{16, 8, 4, 2} {
		c := 64 * 16 / side
		g := geometry{n: 64, c: c, h: side, w: side, o: c, k: 3, stride: 1, pad: 1, oh: side, ow: side}
		t := g.tiles()
		gm := sawtooth(g.o*g.n*g.positions(), 3)
		z := make([]float32, 16*spaced(g.o*t))
		d := sawtooth(16*spaced(g.c*t), 5)
		dx := make([]float32, g.n*g.c*g.h*g.w)
		m := sawtooth(16*spaced(g.o*g.c), 7)
		dw := make([]float32, g.o*g.c*9)
		idx, fold := gradTileIndex(g), foldTable(g)
		b.Run(fmt.Sprintf("grad/side=%d", side), func(b *testing.B) {
			for range b.N {
				gradTransform(g, gm, idx, 0, g.o, z)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*g.o*t), "ns/tile")
		})
		x := sawtooth(g.n*g.c*g.h*g.w, 11)
		v := make([]float32, 16*spaced(g.c*t))
		b.Run(fmt.Sprintf("forward-input/side=%d", side), func(b *testing.B) {
			for range b.N {
				inputTransform(g, x, 0, g.c, v)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*g.c*t), "ns/tile")
		})
		b.Run(fmt.Sprintf("input/side=%d", side), func(b *testing.B) {
			for range b.N {
				inputGradTransform(g, d, fold, 0, g.c, dx)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*g.c*t), "ns/tile")
		})
		b.Run(fmt.Sprintf("filter/side=%d", side), func(b *testing.B) {
			for range b.N {
				filterGradTransform(g, m, dw)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*g.o*g.c), "ns/pair")
		})
	}
}

// BenchmarkWinogradProducts times one convolution's 16 products of each
// kind over the whole batch on ResNet-18's four stage shapes at batch 64,
// on one core, the operands in cache: the rate the products reach
// alone, against which the step's (docs/performance.md) shows what
// memory costs them.
func BenchmarkWinogradProducts(b *testing.B) {
	for _, side := range []int{16, 8, 4, 2} {
		c := 64 * 16 / side
		g := geometry{n: 64, c: c, h: side, w: side, o: c, k: 3, stride: 1, pad: 1, oh: side, ow: side}
		t := g.tiles()
		us, vs, zs := spaced(g.o*g.c), spaced(g.c*t), spaced(g.o*t)
		u := sawtooth(16*us, 3)
		v := sawtooth(16*vs, 5)
		z := sawtooth(16*zs, 7)
		out := make([]float32, 16*max(us, vs, zs))
		flop := float64(16 * 2 * g.o * g.c * t)
		run := func(name string, f func(xi int)) {
			b.Run(fmt.Sprintf("%s/side=%d", name, side), func(b *testing.B) {
				for range b.N {
					for xi := range 16 {
						f(xi)
					}
				}
				b.ReportMetric(flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
		run("forward", func(xi int) {
			gemmWhole(blas.NoTrans, blas.NoTrans, g.o, t, g.c, u[xi*us:], g.c, v[xi*vs:], t, 0, out[xi*zs:], t)
		})
		run("filter", func(xi int) {
			gemm(blas.NoTrans, blas.Trans, g.o, g.c, t, z[xi*zs:], t, v[xi*vs:], t, 0, out[xi*us:], g.c)
		})
		run("input", func(xi int) {
			gemmWhole(blas.Trans, blas.NoTrans, g.c, t, g.o, u[xi*us:], g.c, z[xi*zs:], t, 0, out[xi*vs:], t)
		})
	}
}
