package gputest

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/optim"
)

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
