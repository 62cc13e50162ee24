package particles

import "fmt"

// PreferenceLinear is linear scalarisation with one preference per
// particle, the grid baseline of Pareto MTL (Lin et al. 2019) and the
// authors' "linear" mode: with two tasks, particle i of M moves along
// (1 − i/(M−1))·s_1 + (i/(M−1))·s_2, so the ensemble spans the trade-off
// from the first task alone to the second alone. Its members neglect a
// task each (the end particles entirely), which an ensemble's calibration
// shows; equal weights are Linear.
type PreferenceLinear struct {
	w    []float64
	cols [][]float64 // normalised scores' columns
}

// PreferenceWeight is the weight of task j of two that particle i of m
// gives: 1 − i/(m−1) for the first, i/(m−1) for the second.
func PreferenceWeight(i, m, j int) float64 {
	second := float64(i) / float64(m-1)
	if j == 0 {
		return 1 - second
	}
	return second
}

// Direction implements Rule.
func (r *PreferenceLinear) Direction(dst [][]float64, e Ensemble) error {
	m, k, d, err := e.dims(dst)
	if err != nil {
		return err
	}
	if k != 2 || m < 2 {
		return fmt.Errorf("linear with preferences: needs two tasks and at least two particles, got %d tasks and %d particles", k, m)
	}
	if len(r.w) != k {
		r.w = make([]float64, k)
	}
	s := e.scores()
	cols := s.allColumns(&r.cols, d)
	for a := range m {
		for j := range k {
			r.w[j] = PreferenceWeight(a, m, j)
		}
		combine(dst[a], r.w, s, a, cols)
	}
	return nil
}
