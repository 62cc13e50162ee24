package particles

// Warmup is the rule of the authors' warm-up epochs: no kernel and no
// interaction. Particle i moves along a fixed mix of its own task scores,
// Σ_k w_ik s_ik / M with w_i = WarmupWeights(i, M, K), so that the
// particles start spread along the trade-off between the tasks before a
// kernel rule takes over. The 1/M is the authors' (their linear mix
// returns g/n); it makes the step the size of a kernel rule's
// own-particle term. Heads warm up with Linear: each follows its own
// task's score.
type Warmup struct{}

// Direction implements Rule.
func (Warmup) Direction(dst [][]float64, e Ensemble) error {
	m, k, _, err := e.dims(dst)
	if err != nil {
		return err
	}
	for i := range m {
		w := WarmupWeights(i, m, k)
		clear(dst[i])
		for j := range k {
			for d, s := range e.Scores[j][i] {
				dst[i][d] += w[j] * s / float64(m)
			}
		}
	}
	return nil
}

// WarmupWeights is the fixed mix of the k task scores that particle i of m
// follows during warm-up. With two tasks, as in the authors' code,
// particle i weighs the first task i/(m−1) and the second 1 − i/(m−1); a
// single particle and other task counts weigh the tasks equally.
func WarmupWeights(i, m, k int) []float64 {
	w := make([]float64, k)
	if k == 2 && m > 1 {
		w[0] = float64(i) / float64(m-1)
		w[1] = 1 - w[0]
		return w
	}
	for j := range w {
		w[j] = 1 / float64(k)
	}
	return w
}
