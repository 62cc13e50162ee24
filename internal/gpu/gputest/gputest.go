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
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/optim"
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

// kit holds one check's device buffers and helpers.
type kit struct {
	t     *testing.T
	dev   gpu.Device
	dt    gpu.Dtype
	rng   *rand.Rand
	alloc []gpu.Ptr
}

// randoms returns n values uniform in [lo, hi), rounded to the dtype.
func (k *kit) randoms(n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = k.round(lo + (hi-lo)*k.rng.Float64())
	}
	return v
}

func (k *kit) round(x float64) float64 {
	if k.dt == gpu.Float32 {
		return float64(float32(x))
	}
	return x
}

// upload copies v to a new device buffer in the check's dtype.
func (k *kit) upload(v []float64) gpu.Ptr { return k.uploadAs(k.dt, v) }

// uploadAs copies v to a new device buffer of dtype dt.
func (k *kit) uploadAs(dt gpu.Dtype, v []float64) gpu.Ptr {
	k.t.Helper()
	p := k.buffer(dt, len(v))
	var err error
	if dt == gpu.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		err = k.dev.Upload(p, gpu.Bytes(f))
	} else {
		err = k.dev.Upload(p, gpu.Bytes(v))
	}
	if err != nil {
		k.t.Fatal(err)
	}
	return p
}

// buffer allocates n elements of dt.
func (k *kit) buffer(dt gpu.Dtype, n int) gpu.Ptr {
	k.t.Helper()
	p, err := k.dev.Alloc(max(1, n) * dt.Size())
	if err != nil {
		k.t.Fatal(err)
	}
	k.alloc = append(k.alloc, p)
	return p
}

// download reads n elements of the check's dtype.
func (k *kit) download(p gpu.Ptr, n int) []float64 { return k.downloadAs(k.dt, p, n) }

func (k *kit) downloadAs(dt gpu.Dtype, p gpu.Ptr, n int) []float64 {
	k.t.Helper()
	if err := k.dev.Sync(); err != nil {
		k.t.Fatal(err)
	}
	out := make([]float64, n)
	if dt == gpu.Float32 {
		f := make([]float32, n)
		if err := k.dev.Download(gpu.Bytes(f), p); err != nil {
			k.t.Fatal(err)
		}
		for i, x := range f {
			out[i] = float64(x)
		}
		return out
	}
	if err := k.dev.Download(gpu.Bytes(out), p); err != nil {
		k.t.Fatal(err)
	}
	return out
}

func (k *kit) downloadInts(p gpu.Ptr, n int) []int32 {
	k.t.Helper()
	out := make([]int32, n)
	if err := k.dev.Download(gpu.Bytes(out), p); err != nil {
		k.t.Fatal(err)
	}
	return out
}

// launch runs the typed kernel name (the dtype's suffix added).
func (k *kit) launch(name string, threads int, args ...any) {
	k.t.Helper()
	k.launchRaw(name+k.dt.Suffix(), threads, args...)
}

func (k *kit) launchRaw(name string, threads int, args ...any) {
	k.t.Helper()
	if err := k.dev.Launch(name, threads, args...); err != nil {
		k.t.Fatal(err)
	}
}

func (k *kit) freeAll() {
	for _, p := range k.alloc {
		if err := k.dev.Free(p); err != nil {
			k.t.Error(err)
		}
	}
}

// tol is the relative tolerance of the dtype (see the package doc).
func (k *kit) tol() float64 {
	if k.dt == gpu.Float32 {
		return 2e-6
	}
	return 1e-12
}

// near fails unless got and want agree to the dtype's tolerance relative
// to the largest |want| (so that values near 0 among large ones are
// judged on the scale of the result).
func (k *kit) near(what string, got, want []float64) {
	k.t.Helper()
	if len(got) != len(want) {
		k.t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 1e-300
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= k.tol()*scale) {
			k.t.Fatalf("%s[%d] = %.17g, want %.17g (|Δ| %.3g > %.3g·%.3g)", what, i, got[i], want[i], d, k.tol(), scale)
		}
	}
}

// same fails unless got and want are equal (values the kernel only moves).
func (k *kit) same(what string, got, want []float64) {
	k.t.Helper()
	for i := range want {
		if got[i] != want[i] {
			k.t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

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

// checkSumColumns2 checks sum_columns2_to against two sum_columns_to
// launches, one per block of partial sums, bit for bit.
func checkSumColumns2(k *kit) {
	const rows, cols = 6, 5
	part := k.uploadAs(gpu.Float64, k.randoms(2*rows*cols, -1, 1))
	a, b, wantA, wantB := k.buffer(k.dt, cols), k.buffer(k.dt, cols), k.buffer(k.dt, cols), k.buffer(k.dt, cols)
	k.launch("sum_columns2_to", 2*cols, a, b, part, rows, cols)
	k.launch("sum_columns_to", cols, wantA, part, rows, cols)
	k.launch("sum_columns_to", cols, wantB, part+gpu.Ptr(8*rows*cols), rows, cols)
	k.same("sum_columns2_to, first", k.download(a, cols), k.download(wantA, cols))
	k.same("sum_columns2_to, second", k.download(b, cols), k.download(wantB, cols))
}

// checkColumnSums checks column_sums against channel_partial (mode 2,
// one value per partial) and sum_columns_to, the two launches it
// replaces for a linear layer's bias gradient: bit for bit.
func checkColumnSums(k *kit) {
	const rows, cols = 9, 7
	g := k.randoms(rows*cols, -1, 1)
	pg, out, part, want := k.upload(g), k.buffer(k.dt, cols), k.buffer(gpu.Float64, rows*cols), k.buffer(k.dt, cols)
	k.launch("column_sums", cols, out, pg, rows, cols)
	k.launch("channel_partial", rows*cols, part, gpu.Ptr(0), pg, gpu.Ptr(0), gpu.Ptr(0), gpu.Ptr(0), 2, rows, cols, 1)
	k.launch("sum_columns_to", cols, want, part, rows, cols)
	k.same("column_sums", k.download(out, cols), k.download(want, cols))
	sums := make([]float64, cols)
	for i := range rows {
		for j := range cols {
			sums[j] += g[i*cols+j]
		}
	}
	k.near("column_sums against the sums", k.download(out, cols), sums)
}

// reduce is channel_partial then sum_columns: per channel, the sum over
// examples of their partial sums. It checks that sum_columns_to writes
// those sums, rounded to the kit's type, bit for bit.
func (k *kit) reduce(mode int, x, g, w gpu.Ptr, mean, inv gpu.Ptr, n, c, inner int) []float64 {
	part, out, typed := k.buffer(gpu.Float64, n*c), k.buffer(gpu.Float64, c), k.buffer(k.dt, c)
	k.launch("channel_partial", n*c, part, x, g, w, mean, inv, mode, n, c, inner)
	k.launchRaw("sum_columns", c, out, part, n, c)
	k.launch("sum_columns_to", c, typed, part, n, c)
	sums := k.downloadAs(gpu.Float64, out, c)
	want := make([]float64, c)
	for i, v := range sums {
		want[i] = k.round(v)
	}
	k.same(fmt.Sprintf("sum_columns_to, mode %d", mode), k.download(typed, c), want)
	return sums
}

func checkChannelPartial(k *kit) {
	const n, c, inner = 4, 3, 10
	x, g, w := k.randoms(n*c*inner, -1, 1), k.randoms(n*c*inner, -1, 1), k.randoms(n, 0, 1)
	mean, inv := []float64{0.1, -0.2, 0.3}, []float64{2, 0.5, 1.5}
	px, pg, pw := k.upload(x), k.upload(g), k.upload(w)
	pm, pi := k.uploadAs(gpu.Float64, mean), k.uploadAs(gpu.Float64, inv)
	for mode := range 4 {
		want := make([]float64, c)
		for ch := range c {
			for e := range n {
				var s float64
				for p := range inner {
					i := (e*c+ch)*inner + p
					switch mode {
					case 0:
						s += x[i]
					case 1:
						s += (x[i] - mean[ch]) * (x[i] - mean[ch])
					case 2:
						s += g[i]
					case 3:
						s += g[i] * (x[i] - mean[ch]) * inv[ch]
					}
				}
				if mode < 2 {
					s *= w[e] / inner
				}
				want[ch] += s
			}
		}
		weights := pw
		if mode >= 2 {
			weights = 0
		}
		k.near(fmt.Sprintf("mode %d", mode), k.reduce(mode, px, pg, weights, pm, pi, n, c, inner), want)
	}
}

// checkSumRows sums long rows as a bias gradient does on the device:
// channel_partial over chunks of each row, then sum_rows_to adding the
// chunks' sums in order, against each row's sum in float64.
func checkSumRows(k *kit) {
	const rows, chunks, inner = 3, 4, 5
	g := k.randoms(rows*chunks*inner, -1, 1)
	pg, part, out := k.upload(g), k.buffer(gpu.Float64, rows*chunks), k.buffer(k.dt, rows)
	k.launch("channel_partial", rows*chunks, part, gpu.Ptr(0), pg, gpu.Ptr(0), gpu.Ptr(0), gpu.Ptr(0), 2, rows, chunks, inner)
	k.launch("sum_rows_to", rows, out, part, rows, chunks)
	parts := k.downloadAs(gpu.Float64, part, rows*chunks)
	want, exact := make([]float64, rows), make([]float64, rows)
	for r := range rows {
		var s float64
		for j := range chunks {
			s += parts[r*chunks+j] // the kernel's order: chunks in turn
		}
		want[r] = k.round(s)
		for i := range chunks * inner {
			exact[r] += g[r*chunks*inner+i]
		}
	}
	got := k.download(out, rows)
	k.same("sum_rows_to", got, want)
	k.near("sum_rows_to against each row's sum", got, exact)
}

// checkBatchNorm runs batch normalisation's forward and backward passes
// from the kernels, as models/ops does on the CPU, against the formulas
// (models/ops BatchNorm's doc).
func checkBatchNorm(k *kit) {
	const n, c, inner, eps = 3, 4, 6, 1e-5
	x, g := k.randoms(n*c*inner, -2, 2), k.randoms(n*c*inner, -1, 1)
	gamma, beta, w := k.randoms(c, 0.5, 1.5), k.randoms(c, -0.5, 0.5), []float64{0.5, 0.25, 0.25}
	px, pg, pgamma, pbeta, pw := k.upload(x), k.upload(g), k.upload(gamma), k.upload(beta), k.upload(w)
	mean := k.reduce(0, px, 0, pw, 0, 0, n, c, inner)
	pmean := k.uploadAs(gpu.Float64, mean)
	variance := k.reduce(1, px, 0, pw, pmean, 0, n, c, inner)
	pvar, pinv := k.uploadAs(gpu.Float64, variance), k.buffer(gpu.Float64, c)
	k.launchRaw("bn_inverse", c, pinv, pvar, eps, c)
	inv := k.downloadAs(gpu.Float64, pinv, c)
	py := k.buffer(k.dt, len(x))
	k.launch("bn_forward", len(x), py, px, pgamma, pbeta, pmean, pinv, n, c, inner)
	dbeta := k.reduce(2, px, pg, 0, pmean, pinv, n, c, inner)
	dgamma := k.reduce(3, px, pg, 0, pmean, pinv, n, c, inner)
	// Both partial sums in one pass: channel_partial's, bit for bit.
	both, one := k.buffer(gpu.Float64, 2*n*c), k.buffer(gpu.Float64, n*c)
	k.launch("bn_param_partials", n*c, both, px, pg, pmean, pinv, n, c, inner)
	parts := k.downloadAs(gpu.Float64, both, 2*n*c)
	for mode := 2; mode <= 3; mode++ {
		k.launch("channel_partial", n*c, one, px, pg, gpu.Ptr(0), pmean, pinv, mode, n, c, inner)
		k.same(fmt.Sprintf("bn_param_partials, channel_partial's mode %d", mode), parts[(mode-2)*n*c:(mode-1)*n*c], k.downloadAs(gpu.Float64, one, n*c))
	}
	pdb, pdg, pdx := k.upload(dbeta), k.upload(dgamma), k.buffer(k.dt, len(x))
	k.launch("bn_grad_input", len(x), pdx, px, pg, pgamma, pw, pmean, pinv, pdg, pdb, n, c, inner)

	wantMean, wantVar, wantInv := make([]float64, c), make([]float64, c), make([]float64, c)
	wantY, wantDx := make([]float64, len(x)), make([]float64, len(x))
	wantDb, wantDg := make([]float64, c), make([]float64, c)
	at := func(e, ch, p int) int { return (e*c+ch)*inner + p }
	for ch := range c {
		for e := range n {
			for p := range inner {
				wantMean[ch] += w[e] / inner * x[at(e, ch, p)]
			}
		}
		for e := range n {
			for p := range inner {
				d := x[at(e, ch, p)] - wantMean[ch]
				wantVar[ch] += w[e] / inner * d * d
			}
		}
		wantInv[ch] = 1 / math.Sqrt(wantVar[ch]+eps)
		for e := range n {
			for p := range inner {
				i := at(e, ch, p)
				xh := (x[i] - wantMean[ch]) * wantInv[ch]
				wantY[i] = gamma[ch]*xh + beta[ch]
				wantDb[ch] += g[i]
				wantDg[ch] += g[i] * xh
			}
		}
		for e := range n {
			for p := range inner {
				i := at(e, ch, p)
				xh := (x[i] - wantMean[ch]) * wantInv[ch]
				wantDx[i] = wantInv[ch] * gamma[ch] * (g[i] - w[e]/inner*(wantDb[ch]+xh*wantDg[ch]))
			}
		}
	}
	k.near("mean", mean, wantMean)
	k.near("variance", variance, wantVar)
	k.near("inverse", inv, wantInv)
	k.near("y", k.download(py, len(x)), wantY)
	k.near("∂β", dbeta, wantDb)
	k.near("∂γ", dgamma, wantDg)
	k.near("∂x", k.download(pdx, len(x)), wantDx)
}

// geoms are convolution and pooling shapes: LeNet's, ResNet's stride-2
// layers with padding, and odd sizes.
var geoms = []gpu.Geom{
	{N: 2, C: 1, H: 12, W: 12, O: 3, K: 5, Stride: 1, Pad: 0},
	{N: 2, C: 3, H: 9, W: 8, O: 4, K: 3, Stride: 2, Pad: 1},
	{N: 1, C: 2, H: 7, W: 7, O: 2, K: 7, Stride: 2, Pad: 3},
	{N: 3, C: 2, H: 5, W: 6, O: 2, K: 1, Stride: 2, Pad: 0},
}

func withOutput(g gpu.Geom) gpu.Geom {
	g.OH = (g.H+2*g.Pad-g.K)/g.Stride + 1
	g.OW = (g.W+2*g.Pad-g.K)/g.Stride + 1
	return g
}

// checkIm2col checks im2col against its definition and col2im as its
// adjoint: ⟨im2col(x), C⟩ = ⟨x, col2im(C)⟩ for random x and C.
func checkIm2col(k *kit) {
	for _, g := range geoms {
		g = withOutput(g)
		p := g.OH * g.OW
		rows, cols := g.C*g.K*g.K, g.N*p
		x, cm := k.randoms(g.N*g.C*g.H*g.W, -1, 1), k.randoms(rows*cols, -1, 1)
		px, pc, pcols, pdx := k.upload(x), k.upload(cm), k.buffer(k.dt, rows*cols), k.buffer(k.dt, len(x))
		k.launch("im2col", rows*cols, pcols, px, g)
		want := make([]float64, rows*cols)
		for ch := range g.C {
			for i := range g.K {
				for j := range g.K {
					for e := range g.N {
						for oy := range g.OH {
							for ox := range g.OW {
								y, xx := oy*g.Stride-g.Pad+i, ox*g.Stride-g.Pad+j
								if y >= 0 && y < g.H && xx >= 0 && xx < g.W {
									want[((ch*g.K+i)*g.K+j)*cols+e*p+oy*g.OW+ox] = x[((e*g.C+ch)*g.H+y)*g.W+xx]
								}
							}
						}
					}
				}
			}
		}
		got := k.download(pcols, rows*cols)
		k.same(fmt.Sprintf("im2col %+v", g), got, want)
		k.launch("col2im", len(x), pdx, pc, g)
		dx := k.download(pdx, len(x))
		var lhs, rhs float64
		for i := range want {
			lhs += want[i] * cm[i]
		}
		for i := range x {
			rhs += x[i] * dx[i]
		}
		if d := math.Abs(lhs - rhs); d > 100*k.tol()*(1+math.Abs(lhs)) {
			k.t.Fatalf("col2im %+v: ⟨im2col(x), C⟩ = %v, ⟨x, col2im(C)⟩ = %v", g, lhs, rhs)
		}
	}
}

func checkMaxPool(k *kit) {
	pools := []gpu.Geom{
		{N: 2, C: 3, H: 8, W: 8, K: 2, Stride: 2},
		{N: 2, C: 2, H: 9, W: 7, K: 3, Stride: 2, Pad: 1},
	}
	for gi, g := range pools {
		g = withOutput(g)
		planes, p, hw := g.N*g.C, g.OH*g.OW, g.H*g.W
		x, dy := k.randoms(planes*hw, -1, 1), k.randoms(planes*p, -1, 1)
		if gi == 1 {
			// Values on a coarse grid make ties, zeros among them: the
			// first maximum must win, and a window of zeros has none.
			for i := range x {
				x[i] = math.Round(2*x[i]) / 2
			}
		}
		px, pdy := k.upload(x), k.upload(dy)
		py, parg, pdx := k.buffer(k.dt, planes*p), k.buffer(gpu.Float32, planes*p), k.buffer(k.dt, planes*hw)
		k.launch("relu_maxpool", planes*p, py, parg, px, g)
		k.launch("maxpool_grad", planes*hw, pdx, pdy, parg, g)
		wantY, wantArg, wantDx := make([]float64, planes*p), make([]int32, planes*p), make([]float64, planes*hw)
		for pl := range planes {
			for oy := range g.OH {
				for ox := range g.OW {
					best, at := 0.0, int32(-1)
					for i := range g.K {
						for j := range g.K {
							y, xx := oy*g.Stride-g.Pad+i, ox*g.Stride-g.Pad+j
							if y < 0 || y >= g.H || xx < 0 || xx >= g.W {
								continue
							}
							// The first maximum in row-major order wins.
							if v := x[pl*hw+y*g.W+xx]; v > best {
								best, at = v, int32(y*g.W+xx)
							}
						}
					}
					o := pl*p + oy*g.OW + ox
					wantY[o], wantArg[o] = best, at
					if at >= 0 {
						wantDx[pl*hw+int(at)] += dy[o]
					}
				}
			}
		}
		k.same("y", k.download(py, planes*p), wantY)
		args := k.downloadInts(parg, planes*p)
		for i := range args {
			if args[i] != wantArg[i] {
				k.t.Fatalf("argmax[%d] = %d, want %d", i, args[i], wantArg[i])
			}
		}
		k.near("∂x", k.download(pdx, planes*hw), wantDx)
	}
}

func checkAvgPool(k *kit) {
	const planes, inner = 6, 9
	x, dy := k.randoms(planes*inner, -1, 1), k.randoms(planes, -1, 1)
	px, pdy, py, pdx := k.upload(x), k.upload(dy), k.buffer(k.dt, planes), k.buffer(k.dt, planes*inner)
	k.launch("avgpool", planes, py, px, planes, inner)
	k.launch("avgpool_grad", planes*inner, pdx, pdy, planes, inner)
	wantY, wantDx := make([]float64, planes), make([]float64, planes*inner)
	for i := range planes {
		for p := range inner {
			wantY[i] += x[i*inner+p] / inner
			wantDx[i*inner+p] = dy[i] / inner
		}
	}
	k.near("y", k.download(py, planes), wantY)
	k.near("∂x", k.download(pdx, planes*inner), wantDx)
}

// checkXent compares the loss with the cross-entropy of the definition,
// −Σ_r w_r Σ_k y_rk·log softmax(z_r)_k, and the gradient with central
// differences of that reference in float64.
func checkXent(k *kit) {
	const n, c = 5, 4
	z, y, w := k.randoms(n*c, -3, 3), k.randoms(n*c, 0, 1), k.randoms(n, 0, 1)
	loss := func(z []float64) float64 {
		var l float64
		for r := range n {
			var sum float64
			for j := range c {
				sum += math.Exp(z[r*c+j])
			}
			for j := range c {
				l -= w[r] * y[r*c+j] * math.Log(math.Exp(z[r*c+j])/sum)
			}
		}
		return l
	}
	pz, py, pw, up := k.upload(z), k.upload(y), k.upload(w), 1.5
	psm, prow, pout, pdz := k.buffer(k.dt, n*c), k.buffer(gpu.Float64, n), k.buffer(gpu.Float64, 1), k.buffer(k.dt, n*c)
	k.launch("xent_rows", n, psm, prow, pz, py, pw, n, c)
	k.launchRaw("sum_columns", 1, pout, prow, n, 1)
	k.near("loss", k.downloadAs(gpu.Float64, pout, 1), []float64{loss(z)})
	k.launch("xent_grad", n*c, pdz, psm, py, pw, up, n, c)
	want := make([]float64, n*c)
	for i := range z {
		const h = 1e-6
		zp, zm := append([]float64(nil), z...), append([]float64(nil), z...)
		zp[i] += h
		zm[i] -= h
		want[i] = 1.5 * (loss(zp) - loss(zm)) / (2 * h)
	}
	// Central differences are good to about 1e-9 here.
	k.nearTol("∂z", k.download(pdz, n*c), want, max(k.tol(), 1e-8))
}

func checkSqErr(k *kit) {
	const n = 9
	p, y, w := k.randoms(n, -1, 1), k.randoms(n, -1, 1), k.randoms(n, 0, 1)
	pp, py, pw, up := k.upload(p), k.upload(y), k.upload(w), 0.5
	prow, pout, pd := k.buffer(gpu.Float64, n), k.buffer(gpu.Float64, 1), k.buffer(k.dt, n)
	k.launch("sqerr_rows", n, prow, pp, py, pw, n)
	k.launchRaw("sum_columns", 1, pout, prow, n, 1)
	k.launch("sqerr_grad", n, pd, pp, py, pw, up, n)
	var loss float64
	grad := make([]float64, n)
	for i := range n {
		loss += w[i] * (p[i] - y[i]) * (p[i] - y[i])
		grad[i] = 0.5 * 2 * w[i] * (p[i] - y[i])
	}
	k.near("loss", k.downloadAs(gpu.Float64, pout, 1), []float64{loss})
	k.near("∂pred", k.download(pd, n), grad)
}

func (k *kit) nearTol(what string, got, want []float64, tol float64) {
	k.t.Helper()
	scale := 1e-300
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*scale) {
			k.t.Fatalf("%s[%d] = %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}

// checkSGD runs three steps of the kernel against package optim's SGD,
// with and without momentum.
func checkSGD(k *kit) {
	const n = 50
	for _, mu := range []float64{0, 0.9} {
		x := k.randoms(n, -1, 1)
		ref := &optim.SGD{LR: 0.1, Momentum: mu}
		want := append([]float64(nil), x...)
		px, pb := k.upload(x), k.buffer(k.dt, n)
		for step := range 3 {
			g := k.randoms(n, -1, 1)
			if err := ref.Step(want, g); err != nil {
				k.t.Fatal(err)
			}
			first := 0
			if step == 0 {
				first = 1
			}
			k.launch("sgd", n, px, pb, k.upload(g), 0.1, mu, first, n)
		}
		k.nearTol(fmt.Sprintf("x (μ = %v)", mu), k.download(px, n), want, 10*k.tol())
	}
}

// checkAdam runs three steps of the kernel against package optim's Adam.
func checkAdam(k *kit) {
	const n = 50
	x := k.randoms(n, -1, 1)
	ref := optim.NewAdam(0.01)
	want := append([]float64(nil), x...)
	px, pm, pv := k.upload(x), k.upload(make([]float64, n)), k.upload(make([]float64, n))
	for step := 1; step <= 3; step++ {
		g := k.randoms(n, -1, 1)
		if err := ref.Step(want, g); err != nil {
			k.t.Fatal(err)
		}
		c1, c2 := 1-math.Pow(ref.Beta1, float64(step)), 1-math.Pow(ref.Beta2, float64(step))
		k.launch("adam", n, px, pm, pv, k.upload(g), ref.LR, ref.Beta1, ref.Beta2, ref.Eps, c1, c2, n)
	}
	k.nearTol("x", k.download(px, n), want, 10*k.tol())
}

// checkNormalizeColumns checks the kernel against the definition, with
// one column of zeros (its norm floored) and one of tiny values below the
// floor.
func checkNormalizeColumns(k *kit) {
	const rows, cols, lo = 4, 6, 1e-12
	s := k.randoms(rows*cols, -1, 1)
	for i := range rows {
		s[i*cols+2] = 0
		s[i*cols+4] = 1e-14 * float64(i+1)
	}
	want := make([]float64, len(s))
	for j := range cols {
		sq := 0.0
		for i := range rows {
			sq += s[i*cols+j] * s[i*cols+j]
		}
		for i := range rows {
			want[i*cols+j] = s[i*cols+j] / math.Max(math.Sqrt(sq), lo)
		}
	}
	p := k.uploadAs(gpu.Float64, s)
	k.launchRaw("normalize_columns", cols, p, rows, cols, lo)
	k.nearTol("s", k.downloadAs(gpu.Float64, p, len(s)), want, 1e-15)
}

// checkGemm checks the four transpose cases, with leading dimensions
// wider than the matrices, against the triple loop.
func checkGemm(k *kit) {
	const m, n, kk, pad = 5, 4, 3, 2
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			ar, ac := m, kk
			if tA {
				ar, ac = kk, m
			}
			br, bc := kk, n
			if tB {
				br, bc = n, kk
			}
			lda, ldb, ldc := ac+pad, bc+pad, n+pad
			a, b, c := k.randoms(ar*lda, -1, 1), k.randoms(br*ldb, -1, 1), k.randoms(m*ldc, -1, 1)
			pa, pb, pc := k.upload(a), k.upload(b), k.upload(c)
			if err := k.dev.Gemm(k.dt, tA, tB, m, n, kk, 2, pa, lda, pb, ldb, 0.5, pc, ldc); err != nil {
				k.t.Fatal(err)
			}
			want := append([]float64(nil), c...)
			for i := range m {
				for j := range n {
					var s float64
					for l := range kk {
						ai, bi := i*lda+l, l*ldb+j
						if tA {
							ai = l*lda + i
						}
						if tB {
							bi = j*ldb + l
						}
						av, bv := a[ai], b[bi]
						s += av * bv
					}
					want[i*ldc+j] = 2*s + 0.5*c[i*ldc+j]
				}
			}
			k.near(fmt.Sprintf("gemm tA=%v tB=%v", tA, tB), k.download(pc, m*ldc), want)
		}
	}
}
