package gputest

import (
	"fmt"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

func checkElementwise(k *kit) {
	const n = 1000
	x, y := k.randoms(n, -2, 2), k.randoms(n, -2, 2)
	px, py := k.upload(x), k.upload(y)
	k.launch("axpy", n, py, 0.75, px, n)
	want := make([]float64, n)
	for i := range want {
		want[i] = k.round(y[i] + 0.75*x[i])
	}
	k.near("axpy", k.download(py, n), want)
	k.launch("scale", n, py, -3.0, n)
	for i := range want {
		want[i] = k.round(-3 * want[i])
	}
	k.near("scale", k.download(py, n), want)
	k.launch("fill", n, px, 0.5, n)
	for i := range want {
		want[i] = 0.5
	}
	k.same("fill", k.download(px, n), want)
}

func checkCopyAddSwap(k *kit) {
	const a, b, inner = 3, 4, 5
	const n = a * b * inner
	x, y := k.randoms(n, -2, 2), k.randoms(n, -2, 2)
	px, py, out := k.upload(x), k.upload(y), k.buffer(k.dt, n)
	k.launch("copy", n, out, px, n)
	k.same("copy", k.download(out, n), x)
	k.launch("add", n, out, px, py, n)
	want := make([]float64, n)
	for i := range want {
		want[i] = k.round(x[i] + y[i])
	}
	k.same("add", k.download(out, n), want)
	// x as (a, b, inner) into (b, a, inner), then back.
	k.launch("swap01", n, out, px, gpu.Ptr(0), a, b, inner)
	for i := range a {
		for j := range b {
			for p := range inner {
				want[(j*a+i)*inner+p] = x[(i*b+j)*inner+p]
			}
		}
	}
	k.same("swap01", k.download(out, n), want)
	k.launch("swap01", n, py, out, gpu.Ptr(0), b, a, inner)
	k.same("swap01 twice", k.download(py, n), x)
	// With a bias per value of the first axis, a, added on the way.
	bias := k.randoms(a, -1, 1)
	k.launch("swap01", n, out, px, k.upload(bias), a, b, inner)
	for i := range a {
		for j := range b {
			for p := range inner {
				want[(j*a+i)*inner+p] = k.round(x[(i*b+j)*inner+p] + bias[i])
			}
		}
	}
	k.same("swap01 with a bias", k.download(out, n), want)
}

func checkWidenNarrow(k *kit) {
	const n = 300
	x := k.randoms(n, -5, 5)
	px, pd := k.upload(x), k.buffer(gpu.Float64, n)
	k.launch("widen", n, pd, px, n)
	k.same("widen", k.downloadAs(gpu.Float64, pd, n), x)
	back := k.buffer(k.dt, n)
	k.launch("narrow", n, back, pd, n)
	k.same("narrow", k.download(back, n), x)
}

func checkReLU(k *kit) {
	const n = 777
	a, b, dy := k.randoms(n, -1, 1), k.randoms(n, -1, 1), k.randoms(n, -1, 1)
	pa, pb, pdy, py, pdx := k.upload(a), k.upload(b), k.upload(dy), k.buffer(k.dt, n), k.buffer(k.dt, n)
	k.launch("relu", n, py, pa, n)
	want, grad := make([]float64, n), make([]float64, n)
	for i := range want {
		want[i] = max(0, a[i])
	}
	k.same("relu", k.download(py, n), want)
	k.launch("add_relu", n, py, pa, pb, n)
	for i := range want {
		want[i] = max(0, k.round(a[i]+b[i]))
		if want[i] > 0 {
			grad[i] = dy[i]
		}
	}
	k.same("add_relu", k.download(py, n), want)
	k.launch("relu_grad", n, pdx, pdy, py, n)
	k.same("relu_grad", k.download(pdx, n), grad)
}

func checkBiasAdd(k *kit) {
	const outer, c, inner = 3, 5, 7
	y, b := k.randoms(outer*c*inner, -1, 1), k.randoms(c, -1, 1)
	for relu := range 2 {
		py, pb := k.upload(y), k.upload(b)
		k.launch("bias_add", outer*c*inner, py, pb, outer, c, inner, relu)
		want := make([]float64, len(y))
		for o := range outer {
			for ch := range c {
				for p := range inner {
					i := (o*c+ch)*inner + p
					want[i] = k.round(y[i] + b[ch])
					if relu == 1 {
						want[i] = max(0, want[i])
					}
				}
			}
		}
		k.near(fmt.Sprintf("bias_add, relu %d", relu), k.download(py, len(y)), want)
	}
}

// checkGatherRows takes rows of a matrix by index, scaled, with -1 for a
// row of zeros (a batch's padding), against the definition.
func checkGatherRows(k *kit) {
	const n, width = 7, 5
	src := k.randoms(n*width, -2, 2)
	idx := []int32{3, 0, 6, 3, -1, -1}
	psrc, out := k.upload(src), k.buffer(k.dt, len(idx)*width)
	pidx := k.buffer(gpu.Float32, len(idx)) // int32s, as wide as float32s
	if err := k.dev.Upload(pidx, gpu.Bytes(idx)); err != nil {
		k.t.Fatal(err)
	}
	for _, scale := range []float64{1, 0.25} {
		k.launch("gather_rows", len(idx)*width, out, psrc, pidx, len(idx), width, scale)
		want := make([]float64, len(idx)*width)
		for r, j := range idx {
			for c := range width {
				if j >= 0 {
					want[r*width+c] = k.round(scale * k.round(src[int(j)*width+c]))
				}
			}
		}
		k.same(fmt.Sprintf("gather_rows, scale %g", scale), k.download(out, len(want)), want)
	}
}
