package aggregate

import "math/bits"

// The methods' random draws (PCGrad's and GradVac's order of the tasks)
// are pure functions of the step's key (Step.Seed, Step.Particle,
// Step.Index) and a stream number that tells apart the draws of one step, so a resumed
// run draws exactly what the uninterrupted one drew and no generator
// state needs saving. The generator is SplitMix64 (Steele, Lea & Flood,
// "Fast splittable pseudorandom number generators", OOPSLA 2014; the
// constants of Vigna's reference C code): its finaliser mix64 hashes the
// key into a 64-bit state, and the state advances by the golden-ratio
// increment, each output again passed through mix64.

// golden64 is SplitMix64's increment, 2⁶⁴/φ rounded to odd.
const golden64 = 0x9e3779b97f4a7c15

// mix64 is SplitMix64's output function, a bijection of uint64 that
// spreads every input bit over the output.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// drawUint64 returns the 64-bit draw keyed by the run's seed, the
// particle, the step index and a stream number: the key's parts are
// hashed in turn, so every part changes the result.
func drawUint64(seed uint64, particle, index int, stream uint64) uint64 {
	h := mix64(seed + golden64)
	h = mix64(h ^ (uint64(particle) + golden64))
	h = mix64(h ^ (uint64(index) + golden64))
	return mix64(h ^ (stream + golden64))
}

// splitMix64 is a SplitMix64 sequence from a state drawn by drawUint64.
type splitMix64 uint64

// next returns the next 64-bit output.
func (s *splitMix64) next() uint64 {
	*s += golden64
	return mix64(uint64(*s))
}

// below returns a uniform draw in [0, n), n ≥ 1, by Lemire's
// multiply-and-reject method ("Fast random integer generation in an
// interval", ACM TOMACS 2019): the high word of a 64×64-bit product,
// rejecting the few low words that would bias it.
func (s *splitMix64) below(n uint64) uint64 {
	hi, lo := bits.Mul64(s.next(), n)
	if lo < n {
		threshold := -n % n // 2⁶⁴ mod n
		for lo < threshold {
			hi, lo = bits.Mul64(s.next(), n)
		}
	}
	return hi
}

// shuffle puts p in a uniformly random order (the Fisher-Yates shuffle,
// Knuth's Algorithm P) drawn from the sequence whose state is key, in
// practice a drawUint64 value.
func shuffle(p []int, key uint64) {
	s := splitMix64(key)
	for i := len(p) - 1; i > 0; i-- {
		j := s.below(uint64(i) + 1)
		p[i], p[j] = p[j], p[i]
	}
}
