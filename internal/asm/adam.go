package asm

import "math"

// AdamConsts are the numbers of an Adam step; the assembly reads them in
// this order.
type AdamConsts struct {
	Beta1, OneMinusBeta1, Beta2, OneMinusBeta2 float64
	C1, C2                                     float64 // 1 − βᵗ, the bias corrections
	LR, Eps                                    float64
}

// Adam is Adam's update of each coordinate of x from its gradient grad
// and its moments m and v, which it updates too: m = β₁m + (1 − β₁)g, v =
// β₂v + (1 − β₂)g², x −= lr·(m/c₁)/(√(v/c₂) + ε). With AdamAVX512 it takes
// eight coordinates a step (adam_amd64.s), the rest in Go: the same
// operations in the same order, each rounded alike (IEEE's products,
// quotients, sums and square roots), so the same bits. grad, m and v
// must hold len(x) values.
func Adam(x, grad, m, v []float64, k *AdamConsts) {
	i := 0
	if AdamAVX512 && len(x) >= 8 {
		i = len(x) &^ 7
		adamFloat64(&x[0], &grad[0], &m[0], &v[0], i, k)
	}
	k.step(x[i:], grad[i:], m[i:], v[i:])
}

// step is Adam in Go. The conversions keep the compiler from fusing a
// product and a sum (which it may do for GOAMD64=v3): each is rounded on
// its own, as in the assembly.
func (k *AdamConsts) step(x, grad, m, v []float64) {
	for i, g := range grad {
		m[i] = float64(k.Beta1*m[i]) + float64(k.OneMinusBeta1*g)
		v[i] = float64(k.Beta2*v[i]) + float64(k.OneMinusBeta2*g*g)
		x[i] -= k.LR * (m[i] / k.C1) / (math.Sqrt(v[i]/k.C2) + k.Eps)
	}
}
