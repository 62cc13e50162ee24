package particles

// Warmup is the rule of the authors' warm-up epochs: no kernel and no
// interaction. Particle i moves along a fixed mix of its own task scores,
// Σ_k w_ik s_ik / M with w_ik = WarmupWeight(i, M, K, k), so that the
// particles start spread along the trade-off between the tasks before a
// kernel rule takes over. The 1/M is the authors' (their linear mix
// returns g/n); it makes the step the size of a kernel rule's
// own-particle term. Heads warm up with Linear: each follows its own
// task's score.
type Warmup struct{}

// Direction implements Rule.
func (Warmup) Direction(dst [][]float64, e Ensemble) error {
	m, k, d, err := e.dims(dst)
	if err != nil {
		return err
	}
	s := e.scores()
	for i := range m {
		clear(dst[i])
	}
	// A block of coordinates at a time, for normalised scores' norms.
	var buf [blockSize]float64
	for lo := 0; lo < d; lo += blockSize {
		hi := min(lo+blockSize, d)
		for j := range k {
			c := s.columns(j, lo, hi-lo, buf[:])
			for i := range m {
				s.addMean(dst[i][lo:hi], WarmupWeight(i, m, k, j), j, i, lo, m, c)
			}
		}
	}
	return nil
}

// WarmupWeight is the weight of task j in the fixed mix of the k task
// scores that particle i of m follows during warm-up. With two tasks, as
// in the authors' code, particle i weighs the first task i/(m−1) and the
// second 1 − i/(m−1); a single particle and other task counts weigh the
// tasks equally.
func WarmupWeight(i, m, k, j int) float64 {
	if k != 2 || m < 2 {
		return 1 / float64(k)
	}
	first := float64(i) / float64(m-1)
	if j == 0 {
		return first
	}
	return 1 - first
}
