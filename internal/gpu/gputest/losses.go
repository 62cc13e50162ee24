package gputest

import (
	"math"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

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
