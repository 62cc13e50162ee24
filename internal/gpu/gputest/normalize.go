package gputest

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

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
