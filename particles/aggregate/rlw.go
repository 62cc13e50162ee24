package aggregate

import (
	"fmt"
	"math"
)

// RLW, random loss weighting, weighs the tasks by weights drawn afresh
// at every step (Lin, Ye, Zhang & Tsang, "Reasonable effectiveness of
// random weighting: a litmus test for multi-task learning", TMLR 2022),
// with the normal draws of LibMTL's default (weighting/RLW.py, dist
// 'Normal'):
//
//	z ~ N(0, I_K),  w = softmax(z),  d = Σₖ wₖ gₖ,
//
// on the scale of the mean of the task gradients: the weights sum to 1,
// as in LibMTL, which does not rescale them either.
//
// z is a function of (Step.Seed, Step.Particle, Step.Index) alone (see
// rlwNormals), so RLW keeps no state and a resumed run draws what the
// uninterrupted one drew. Losses are not read. g rows are loss gradients
// and d is a descent direction (θ ← θ − lr·d). On a GPU host it runs on
// the host, on float64 gradients.
type RLW struct{}

// Aggregate implements Aggregator.
func (RLW) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, err := checkWeightingInput(dst, g, s, false)
	if err != nil {
		return fmt.Errorf("rlw: %w", err)
	}
	w := make([]float64, k)
	rlwNormals(w, s.Seed, s.Particle, s.Index)
	softmaxInto(w, w)
	writeWeightedSum(dst, w, g)
	return nil
}

// rlwNormals fills z with independent standard normal draws that are a
// function of (seed, particle, index) alone: a 64-bit key hashed from
// the three (each folded in by splitmix64's finaliser, a bijection, so
// two particles or two indices never share a key under one seed), then
// the splitmix64 sequence from that key, turned into normals in pairs by
// the Box–Muller transform. It is written out here rather than taken
// from math/rand so that the draws of a checkpointed run cannot change
// with the Go release.
func rlwNormals(z []float64, seed uint64, particle, index int) {
	const rlwDomain = 0x524c57_0000_0001 // keeps RLW's draws apart from other keyed draws of one seed
	key := rlwMix(seed ^ rlwDomain)
	key = rlwMix(key ^ uint64(particle))
	key = rlwMix(key ^ uint64(index))
	next := func() uint64 {
		key += 0x9e3779b97f4a7c15
		return rlwMix(key)
	}
	const unit = 1.0 / (1 << 53)
	for k := 0; k < len(z); k += 2 {
		u1 := float64(next()>>11+1) * unit // (0, 1], so the logarithm is finite
		u2 := float64(next()>>11) * unit   // [0, 1)
		r := math.Sqrt(-2 * math.Log(u1))
		sin, cos := math.Sincos(2 * math.Pi * u2)
		z[k] = r * cos
		if k+1 < len(z) {
			z[k+1] = r * sin
		}
	}
}

// rlwMix is splitmix64's finaliser (Steele, Lea & Flood, "Fast
// splittable pseudorandom number generators", OOPSLA 2014), a bijection
// of uint64 whose output bits each depend on every input bit.
func rlwMix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
